"""TensorFlow's random numbers: the Philox4x32-10 generator and the distributions its
random kernels draw from it, computed on arrays of any `xp`, so that a seeded graph
gives the values TensorFlow gives.

Philox is counter-based: a draw maps a 128-bit counter and a 64-bit key to four uint32
words, and the next draw is the counter's next value. An op's generator starts with its
`seed` as the key and its `seed2` in the counter's upper half; each run of the op
starts where the last one left off and moves the generator on by 256 draws per output
element, so that runs never share draws. Within a run, output group g (four floats, or
two doubles or int64s) comes from the draw at counter + g; a truncated normal, which
rejects some normals, from the draws at counter + g * 256 onwards (counter + g * 128
for doubles), its group's own stretch.
"""

import secrets
import threading

import numpy as np

_MASK32 = 0xFFFFFFFF
_MASK64 = (1 << 64) - 1
_MASK128 = (1 << 128) - 1
_MULTIPLIERS = (0xD2511F53, 0xCD9E8D57)
_KEY_STEPS = (0x9E3779B9, 0xBB67AE85)
_ROUNDS = 10
_RESERVED_PER_OUTPUT = 256   # draws a run takes per output element
_TRUNCATE = 2.0              # a truncated normal keeps what lies within this
_WORDS = 4                   # per draw
_STREAM_DRAWS = 256
# 16-bit floats take their random bits from a word's low end: (mantissa bits, the
# biased exponent of 1).
_HALF_BITS = {"float16": (10, 15), "bfloat16": (7, 127)}


class Generator:
    """One op's generator: its key and the counter its next run starts from. Seeds
    (0, 0) ask for seeds from OS entropy, as TensorFlow's."""

    def __init__(self, seed, seed2):
        if not (seed or seed2):
            seed, seed2 = secrets.randbits(64), secrets.randbits(64)
        self.key = seed & _MASK64
        self._counter = (seed2 & _MASK64) << 64
        self._lock = threading.Lock()

    def reserve(self, count):
        """The counter of a run that takes `count` draws; the next run starts after them."""
        with self._lock:
            counter = self._counter
            self._counter = (counter + count) & _MASK128
        return counter

    def reserve_outputs(self, count):
        """The counter of a run of `count` output elements."""
        return self.reserve(count * _RESERVED_PER_OUTPUT)


def draws(xp, key, counter, offsets):
    """The draws at `counter` + each of `offsets` (uint64s) under `key`: (n, 4) uint32.

    A counter's four words are two pairs of rows: (c0, c2), which each round multiplies,
    and (c3, c1); the rounds write into the same three arrays, since a dropout mask
    takes thousands of draws at every step (300 us for a 128 x 300 mask)."""
    low = offsets + np.uint64(counter & _MASK64)             # wraps modulo 2**64
    high = (low < offsets).astype(np.uint64) + np.uint64(counter >> 64)
    multiplied = xp.stack([low & _MASK32, high & _MASK32])
    kept = xp.stack([high >> 32, low >> 32])
    product, high_halves = xp.empty_like(kept), xp.empty_like(kept)
    multipliers = xp.asarray(_MULTIPLIERS, dtype=np.uint64)[:, None]
    for round_key in xp.asarray(_round_keys(key), dtype=np.uint64)[:, :, None]:
        xp.multiply(multiplied, multipliers, out=product)
        xp.right_shift(product, 32, out=high_halves)
        multiplied = high_halves[::-1]
        xp.bitwise_xor(multiplied, kept[::-1], out=multiplied)
        xp.bitwise_xor(multiplied, round_key, out=multiplied)
        xp.bitwise_and(product, _MASK32, out=kept)
    (c0, c2), (c3, c1) = multiplied, kept
    return xp.stack([c0, c1, c2, c3], axis=-1).astype(np.uint32)


def _round_keys(key):
    """The key of each round: its two words, each stepped by a constant per round."""
    k0, k1 = key & _MASK32, key >> 32
    keys = []
    for _ in range(_ROUNDS):
        keys.append((k0, k1))
        k0, k1 = (k0 + _KEY_STEPS[0]) & _MASK32, (k1 + _KEY_STEPS[1]) & _MASK32
    return keys


def words(xp, key, counter, count):
    """The words of `count` draws from `counter` on, in order: (count * 4,) uint32."""
    return draws(xp, key, counter, xp.arange(count, dtype=np.uint64)).reshape(-1)


class WordStream:
    """A generator's words one at a time, in order, as TensorFlow's shuffles read them
    (its SingleSampleAdapter); made 256 draws at a time, since one alone costs
    microseconds."""

    __slots__ = ("_generator", "_words")

    def __init__(self, seed, seed2):
        self._generator = Generator(seed, seed2)
        self._words = []

    def next(self):
        """The next word."""
        if not self._words:
            counter = self._generator.reserve(_STREAM_DRAWS)
            self._words = words(np, self._generator.key, counter, _STREAM_DRAWS).tolist()
            self._words.reverse()
        return self._words.pop()

    def below(self, n):
        """A random index in [0, n): the next word modulo n, as TensorFlow's shuffles
        take one."""
        return self.next() % n


def _draws_for(size, per_draw):
    return -(-size // per_draw)


# -- words to numbers, bit for bit as TensorFlow makes them ----------------------------

def _unit_float32(w):
    """[0, 1): 23 mantissa bits under the exponent of 1, less 1."""
    return ((w & np.uint32(0x7FFFFF)) | np.uint32(127 << 23)).view(np.float32) - np.float32(1)


def _unit_float64(high, low):
    """[0, 1) from two words: 20 mantissa bits of `high`, then all of `low`."""
    bits = ((high.astype(np.uint64) & np.uint64(0xFFFFF)) << np.uint64(32)
            | low.astype(np.uint64) | np.uint64(1023 << 52))
    return bits.view(np.float64) - 1.0


def _unit_half(w, dtype):
    mantissa, one = _HALF_BITS[dtype.name]
    bits = (w & np.uint32((1 << mantissa) - 1)) | np.uint32(one << mantissa)
    return bits.astype(np.uint16).view(dtype) - dtype.type(1)


def _box_muller32(xp, x0, x1):
    """Two standard normals per pair of words, as TensorFlow's float Box-Muller: the
    angle worked out in double and rounded, the rest in float. TensorFlow takes its
    log, sin and cos in float from the C library; these are rounded from double, which
    the C library's agree with but in the last bit of about one value in a hundred."""
    u1 = xp.maximum(_unit_float32(x0), np.float32(1e-7))
    angle = (2 * np.pi * _unit_float32(x1).astype(np.float64)).astype(np.float32)
    radius = xp.sqrt(np.float32(-2) * _in_double(xp.log, u1))
    return _in_double(xp.sin, angle) * radius, _in_double(xp.cos, angle) * radius


def _in_double(fn, x):
    """fn of float32s, correctly rounded (numpy's float32 versions may be 1 ulp off)."""
    return fn(x.astype(np.float64)).astype(np.float32)


def _box_muller64(xp, x0, x1, x2, x3):
    """Two standard normals in double per four words."""
    u1 = xp.maximum(_unit_float64(x0, x1), 1e-7)
    angle = 2 * np.pi * _unit_float64(x2, x3)
    radius = xp.sqrt(-2.0 * xp.log(u1))
    return xp.sin(angle) * radius, xp.cos(angle) * radius


def _pairs(xp, a, b):
    """a[0], b[0], a[1], b[1], ..."""
    return xp.stack([a, b], axis=-1).reshape(-1)


# -- distributions: `size` numbers from a run's counter --------------------------------

def uniform(xp, key, counter, size, dtype):
    """RandomUniform's [0, 1): a float per word, a double per two."""
    dtype = np.dtype(dtype)
    if dtype == np.float64:
        w = words(xp, key, counter, _draws_for(size, 2)).reshape(-1, 2)
        out = _unit_float64(w[:, 0], w[:, 1])
    elif dtype == np.float32:
        out = _unit_float32(words(xp, key, counter, _draws_for(size, _WORDS)))
    else:
        out = _unit_half(words(xp, key, counter, _draws_for(size, _WORDS)), dtype)
    return out[:size]


def normal(xp, key, counter, size, dtype):
    """RandomStandardNormal: Box-Muller of word pairs in float (16-bit floats rounded
    from it), or of four words per pair of doubles."""
    dtype = np.dtype(dtype)
    if dtype == np.float64:
        w = words(xp, key, counter, _draws_for(size, 2)).reshape(-1, 4)
        out = _pairs(xp, *_box_muller64(xp, w[:, 0], w[:, 1], w[:, 2], w[:, 3]))
    else:
        w = words(xp, key, counter, _draws_for(size, _WORDS)).reshape(-1, 2)
        out = _pairs(xp, *_box_muller32(xp, w[:, 0], w[:, 1])).astype(dtype)
    return out[:size]


def truncated_normal(xp, key, counter, size, dtype):
    """TruncatedNormal: each output group takes, from its own stretch of draws, the first
    normals (Box-Muller pairs in order) that lie strictly within two standard deviations."""
    dtype = np.dtype(dtype)
    per_group = 2 if dtype == np.float64 else _WORDS
    stride = per_group * _RESERVED_PER_OUTPUT // _WORDS
    out = xp.empty((_draws_for(size, per_group), per_group), dtype)
    pending = xp.arange(out.shape[0], dtype=np.uint64)
    count = 2   # draws per group at first: mostly enough
    while pending.size:
        offsets = pending[:, None] * np.uint64(stride) + xp.arange(count, dtype=np.uint64)
        w = draws(xp, key, counter, offsets.reshape(-1))
        if dtype == np.float64:
            normals = _pairs(xp, *_box_muller64(xp, w[:, 0], w[:, 1], w[:, 2], w[:, 3]))
        else:
            w = w.reshape(-1, 2)
            normals = _pairs(xp, *_box_muller32(xp, w[:, 0], w[:, 1]))
        normals = normals.reshape(pending.size, -1)
        kept = xp.abs(normals) < _TRUNCATE
        enough = kept.sum(axis=1) >= per_group
        taken = kept & (xp.cumsum(kept, axis=1) <= per_group) & enough[:, None]
        out[pending[enough]] = normals[taken].reshape(-1, per_group).astype(dtype)
        pending = pending[~enough]
        count *= 2
    return out.reshape(-1)[:size]


def uniform_int(xp, key, counter, size, low, high, dtype):
    """RandomUniformInt: low + a word (int64: two, the first low) modulo high - low."""
    dtype = np.dtype(dtype)
    span = np.uint64((high - low) & _MASK64)
    if dtype.itemsize == 8:
        w = words(xp, key, counter, _draws_for(size, 2)).reshape(-1, 2).astype(np.uint64)
        values = (w[:, 0] | w[:, 1] << np.uint64(32)) % span
    else:
        values = words(xp, key, counter, _draws_for(size, _WORDS)).astype(np.uint64) % span
    # low + value fits the dtype: adding modulo 2**64 and reading it signed gives it.
    return (values + np.uint64(low & _MASK64)).view(np.int64).astype(dtype)[:size]


def shuffle_draws(n):
    """The draws RandomShuffle takes for n rows: one word for each row but the last."""
    return _draws_for(n - 1, _WORDS)


def permutation(key, counter, n):
    """RandomShuffle's order of n > 1 rows: from the first row on, each swapped with one
    at or after it, a word modulo the rows left choosing which."""
    w = words(np, key, counter, shuffle_draws(n))[:n - 1].astype(np.uint64)
    picks = (w % np.arange(n, 1, -1, dtype=np.uint64)).tolist()
    order = list(range(n))
    for i, pick in enumerate(picks):
        order[i], order[i + pick] = order[i + pick], order[i]
    return np.array(order)


def multinomial_outputs(rows, samples):
    """The outputs a Multinomial run of `rows` x `samples` reserves draws for, as
    TensorFlow's CPU kernel counts them: two words per sample, four samples a row at
    least."""
    return rows * (-(-samples // 4) * 4) * 2


def categorical(logits, key, counter, samples):
    """Multinomial's classes (numpy): for each row, the running total of exp(logit - the
    row's largest finite logit), in double over its finite logits; each sample is the
    first class whose running total passes a uniform double (two words) times the total.
    The rows read one stream of words, as TensorFlow's kernel does when it runs the rows
    as one shard (it starts a later shard at ceil(samples / 4) draws a row, while a row
    reads samples / 2, so its values for a batch it splits depend on its threads)."""
    rows, classes = logits.shape
    finite = np.isfinite(logits)
    lowest = np.finfo(logits.dtype).min
    largest = np.where(finite, logits, lowest).max(axis=1, keepdims=True).astype(np.float64)
    exps = np.where(finite, np.exp(logits.astype(np.float64) - largest), 0.0)
    totals = np.cumsum(exps, axis=1)
    w = words(np, key, counter, _draws_for(rows * samples * 2, _WORDS))
    w = w[:rows * samples * 2].reshape(rows, samples, 2)
    targets = _unit_float64(w[..., 0], w[..., 1]) * totals[:, -1:]
    return np.stack([np.searchsorted(row, targets[i], side="right")
                     for i, row in enumerate(totals)])
