"""TensorFlow's Philox generator: known answers of Philox4x32-10, counters that carry,
and the truncated normal's rejection against a draw-by-draw reading of its rule.
(Values against TensorFlow itself: the differential tier's random_values cases.)"""

import numpy as np

from dtfnb.base import philox

# (counter words, key words, the draw): Philox4x32-10's published known answers.
KNOWN_ANSWERS = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


def _joined(words):
    return sum(w << (32 * i) for i, w in enumerate(words))


def _draw(key, counter, offset=0):
    return philox.draws(np, key, counter, np.array([offset], np.uint64))[0].tolist()


def test_known_answers():
    for counter, key, expected in KNOWN_ANSWERS:
        assert _draw(_joined(key), _joined(counter)) == list(expected)


def test_an_offset_carries_into_the_counters_upper_words():
    key = 12345
    for counter in (2**64 - 1, 2**64 - 3, 2**128 - 1):
        for offset in (1, 2, 5):
            assert _draw(key, counter, offset) == _draw(key, (counter + offset) % 2**128)


def test_seeds_set_the_key_and_the_counters_upper_half_and_runs_follow_on():
    generator = philox.Generator(-1, 7)   # int64 attrs: read as unsigned, as TensorFlow does
    assert generator.key == 2**64 - 1
    assert generator.reserve_outputs(3) == 7 << 64
    assert generator.reserve(10) == (7 << 64) + 3 * 256
    assert generator.reserve(0) == (7 << 64) + 3 * 256 + 10


def _truncated_reference(key, counter, groups):
    """TruncatedNormal in doubles, read draw by draw: each group's stretch of 128 draws,
    a pair of normals per draw, the first two within 2 kept; and how many groups needed
    more than two draws."""
    out, long_ones = [], 0
    for group in range(groups):
        kept, offset = [], group * 128
        while len(kept) < 2:
            w = np.array(_draw(key, counter, offset), np.uint32)
            pair = philox._box_muller64(np, w[0:1], w[1:2], w[2:3], w[3:4])
            kept += [float(v[0]) for v in pair if abs(v[0]) < 2][:2 - len(kept)]
            offset += 1
        long_ones += offset - group * 128 > 2
        out += kept
    return np.array(out), long_ones


def test_truncated_normal_keeps_the_first_normals_within_two_of_each_stretch():
    key, counter, groups = 99, 5 << 64, 3000
    expected, long_ones = _truncated_reference(key, counter, groups)
    assert long_ones > 0   # the seed makes some groups read on past their first draws
    got = philox.truncated_normal(np, key, counter, 2 * groups - 1, np.float64)
    np.testing.assert_array_equal(got, expected[:-1])


def test_a_permutation_moves_every_row_once():
    order = philox.permutation(3, 0, 50)
    assert sorted(order.tolist()) == list(range(50))
    assert order.tolist() != list(range(50))
