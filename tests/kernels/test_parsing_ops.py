"""decode_csv, decode_raw and string_to_number: values, static shapes and TensorFlow's messages."""

import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dtfnb as tf


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def run_error(fetches, message):
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        run(fetches)
    assert info.value.message.split("\n")[0] == message
    return info.value


# -- decode_csv -----------------------------------------------------------------------

def test_decode_csv_the_chapter_cell():
    default1 = tf.constant([5.])
    default2 = tf.constant([6])
    default3 = tf.constant([7])
    dec = tf.decode_csv(tf.constant("1.,,44"), record_defaults=[default1, default2, default3])
    assert str(run(dec)) == "[np.float32(1.0), np.int32(6), np.int32(44)]"
    assert [t.dtype for t in dec] == [tf.float32, tf.int32, tf.int32]


def test_decode_csv_types_from_defaults_and_spaces_around_numbers():
    cols = tf.decode_csv(" 2. ,5  ,1e3,abc,7", [[0.], [0], tf.constant([0.], tf.float64), [""],
                                              tf.constant([0], tf.int64)])
    assert [c.dtype for c in cols] == [tf.float32, tf.int32, tf.float64, tf.string, tf.int64]
    values = run(cols)
    assert values == [2.0, 5, 1000.0, b"abc", 7]
    assert [v.dtype for v in values[:3]] == [np.float32, np.int32, np.float64]


def test_decode_csv_numbers_as_tensorflow_reads_them():
    values = run(tf.decode_csv("0x1F,inf,-Infinity,0x1.8p1,1e40,+5", [[0.]] * 5 + [[0]]))
    assert values[0] == 31 and values[1] == np.inf and values[2] == -np.inf
    assert values[3] == 3.0 and values[4] == np.inf and values[5] == 5


def test_decode_csv_overflows_a_plain_record_to_inf_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        one = run(tf.decode_csv("1e40,-1e40,2.5", [[0.]] * 3))
        two = run(tf.decode_csv(["1e40,-1e40,2.5", "1,2,3"], [[0.]] * 3))
    assert [v.tolist() for v in one] == [np.inf, -np.inf, 2.5]
    assert [v.tolist() for v in two] == [[np.inf, 1.0], [-np.inf, 2.0], [2.5, 3.0]]
    assert one[0].dtype == two[0].dtype == np.float32


def test_decode_csv_vector_of_records_gives_columns():
    lines = tf.placeholder(tf.string, [None])
    x, label = tf.decode_csv(lines, [[-1.], ["none"]])
    assert x.shape.as_list() == [None] and label.shape.as_list() == [None]
    xs, labels = run([x, label], {lines: ["1.5,a", ",", "3,c"]})
    assert xs.tolist() == [1.5, -1.0, 3.0] and labels.tolist() == [b"a", b"none", b"c"]
    grid = tf.decode_csv(tf.constant([["1,2"], ["3,4"]]), [[0], [0]])
    assert grid[0].shape.as_list() == [2, 1]
    assert run(grid[1]).tolist() == [[2], [4]]


def test_decode_csv_quotes_delimiters_and_options():
    assert run(tf.decode_csv('1,"a,""b""",3', [[0], [""], [0]])) == [1, b'a,"b"', 3]
    assert run(tf.decode_csv("1;2;3", [[0]] * 3, field_delim=";")) == [1, 2, 3]
    assert run(tf.decode_csv("1,NA,3", [[0], [9], [0]], na_value="NA")) == [1, 9, 3]
    assert run(tf.decode_csv("1,2,3,4", [[0], [0]], select_cols=[1, 3])) == [2, 4]
    assert run(tf.decode_csv('1,"2"', [[0], [""]], use_quote_delim=False)) == [1, b'"2"']
    assert run(tf.decode_csv("1,2,", [[0], [0], [7]])) == [1, 2, 7]
    assert run(tf.decode_csv("\n1,2", [[0], [0]])) == [1, 2]


@pytest.mark.parametrize("record, defaults, message", [
    ("7.,   , 0", [[0.], [0.], [0]], "Field 1 in record 0 is not a valid float:    "),
    ("1,2,a", [[0]] * 3, "Field 2 in record 0 is not a valid int32: a"),
    ("1,x", [[0.], np.array([0.])], "Field 1 in record 0 is not a valid double: x"),
    ("1,12345678901", [[0], [0]], "Field 1 in record 0 is not a valid int32: 12345678901"),
    ("1,2", [[0]] * 3, "Expect 3 fields but have 2 in record 0"),
    ("", [[0]], "Expect 1 fields but have 0 in record 0"),
    ("1,,3", [[0], [], [0]], "Field 1 is required but missing in record 0!"),
    ('1, "a",3', [[0], [""], [0]], "Unquoted fields cannot have quotes/CRLFs inside"),
    ("1,2\n", [[0], [0]], "Unquoted fields cannot have quotes/CRLFs inside"),
    ('"a"b,1', [[""], [0]], "Quote inside a string has to be escaped by another quote"),
    ('"a""', [[""]], "Quoted field has to end with quote followed by delim or end"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_decode_csv_errors(record, defaults, message):
    run_error(tf.decode_csv(record, defaults), message)


def test_decode_csv_empty_string_default_means_required():
    run_error(tf.decode_csv("1,,3", [[0], tf.constant([], tf.string), [0]]),
              "Field 1 is required but missing in record 0!")


def test_decode_csv_error_names_the_record_in_a_batch():
    run_error(tf.decode_csv(["1,2", "3,x"], [[0], [0]]),
              "Field 1 in record 1 is not a valid int32: x")


_FIELDS = st.sampled_from([
    "1", "-2.5", " 3 ", "+.5", "1e3", "1e40", "-1e40", "inf", "-Infinity", "nan", "0x1p3",
    "007", "1_0", "12345678901", "99999999999999999999", "", " ", "a", "1.5.2", "\u0663",
    '"q"', 'a"b', "\t4\t", "\r", "1e", "."])


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(records=st.lists(st.lists(_FIELDS, min_size=4, max_size=6), min_size=1, max_size=40))
def test_decode_csv_plain_records_read_as_the_full_parser_reads_them(records):
    """Plain records take a fast path; a non-empty na_value turns it off. Both must give
    the same values, or the same error, for any record."""
    with tf.Graph().as_default():
        defaults = [[0.0], [0], tf.constant([0.0], tf.float64), tf.constant([0], tf.int64),
                    [""]]
        line = tf.placeholder(tf.string, [])
        fast = tf.decode_csv(line, defaults)
        full = tf.decode_csv(line, defaults, na_value="\x01")
        with tf.Session() as sess:
            def outcome(columns, record):
                try:
                    return [repr(v) for v in sess.run(columns, {line: record})]  # and types
                except tf.errors.InvalidArgumentError as err:
                    return err.message.split("\n")[0]

            for fields in records:
                record = ",".join(fields)
                assert outcome(fast, record) == outcome(full, record), record


def test_decode_csv_build_errors():
    with pytest.raises(TypeError, match="Value passed to parameter 'record_defaults' has "
                                        "DataType bool not in list of allowed values: float32, "
                                        "float64, int32, int64, string"):
        tf.decode_csv("1", [[True]])
    with pytest.raises(ValueError, match="Shape must be at most rank 1 but is rank 2"):
        tf.decode_csv("1", [[[1]]])
    with pytest.raises(ValueError, match=re.escape("Shape of a default must be a length-0 or "
                                                   "length-1 vector, or a scalar.")):
        tf.decode_csv("1", [[1, 2]])
    with pytest.raises(ValueError, match="select_cols is not strictly increasing."):
        tf.decode_csv("1", [[1], [2]], select_cols=[1, 0])
    with pytest.raises(ValueError, match="Length of select_cols and record_defaults do not"):
        tf.decode_csv("1", [[1], [2]], select_cols=[1])


def test_parsing_ops_are_not_differentiable():
    x = tf.placeholder(tf.float32)
    (col,) = tf.decode_csv("1", [x])
    assert tf.gradients(col, x) == [None]
    assert tf.gradients(tf.string_to_number("1"), tf.placeholder(tf.float32)) == [None]


# -- decode_raw, string_to_number ------------------------------------------------------

def test_decode_raw():
    data = np.array([[1.5, -2.0], [3.0, 4.25]], np.float32)
    raw = tf.constant([row.tobytes() for row in data])
    decoded = tf.decode_raw(raw, tf.float32)
    assert decoded.shape.as_list() == [2, None] and decoded.dtype == tf.float32
    np.testing.assert_array_equal(run(decoded), data)
    assert tf.decode_raw(tf.placeholder(tf.string, [None, 3]), tf.uint8).shape.as_list() == \
        [None, 3, None]
    assert run(tf.decode_raw(tf.constant([b"\x01\x02"]), tf.int16,
                             little_endian=False)).tolist() == [[258]]
    assert run(tf.decode_raw(bytes=tf.constant(b"\x01\x02"), out_type=tf.uint8)).tolist() == \
        [1, 2]
    assert run(tf.decode_raw(tf.constant([b"", b""]), tf.int16)).shape == (2, 0)


def test_decode_raw_errors():
    run_error(tf.decode_raw(tf.constant(b"12345"), tf.float32),
              "Input to DecodeRaw has length 5 that is not a multiple of 4, the size of float")
    run_error(tf.decode_raw(tf.constant([b"1234", b"12"]), tf.int16),
              "DecodeRaw requires input strings to all be the same size, but element 1 has "
              "size 4 != 2")
    with pytest.raises(TypeError, match="parameter 'out_type' has DataType string not in list"):
        tf.decode_raw("1", tf.string)


def test_string_to_number():
    assert run(tf.string_to_number([" 12 ", "1e3", "0x10", "-inf"])).tolist() == \
        [12.0, 1000.0, 16.0, -np.inf]
    as_int = tf.string_to_number(tf.constant([["7", "-3"]]), tf.int32)
    assert as_int.shape.as_list() == [1, 2] and as_int.dtype == tf.int32
    assert run(as_int).tolist() == [[7, -3]]
    assert run(tf.string_to_number("12345678901", tf.int64)) == 12345678901
    run_error(tf.string_to_number("abc"),
              "StringToNumberOp could not correctly convert string: abc")
    run_error(tf.string_to_number("3.7", tf.int32),
              "StringToNumberOp could not correctly convert string: 3.7")
    with pytest.raises(TypeError, match="DataType uint8 not in list of allowed values"):
        tf.string_to_number("1", tf.uint8)
