"""tf.data in graph mode, through real sessions: the chapter's cells, every method, iterators."""

import gc

import numpy as np
import pytest

import dtfnb as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()


def drain(sess, tensor):
    values = []
    try:
        while True:
            values.append(sess.run(tensor))
    except tf.errors.OutOfRangeError:
        return values


def elements(dataset):
    next_element = dataset.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        return drain(sess, next_element)


def write_csv(path, rows):
    path.write_text("".join(line + "\n" for line in rows))
    return str(path)


# -- the chapter's cells --------------------------------------------------------------------

def test_repeat_batch_cell(capsys):
    dataset = tf.data.Dataset.from_tensor_slices(np.arange(10))
    dataset = dataset.repeat(3).batch(7)
    print(tf.data.get_output_types(dataset), tf.data.get_output_shapes(dataset))
    iterator = dataset.make_one_shot_iterator()
    next_element = iterator.get_next()
    with tf.Session():
        try:
            while True:
                print(next_element.eval())
        except tf.errors.OutOfRangeError:
            print("Done")
    assert capsys.readouterr().out == (
        "<dtype: 'int64'> (?,)\n[0 1 2 3 4 5 6]\n[7 8 9 0 1 2 3]\n[4 5 6 7 8 9 0]\n"
        "[1 2 3 4 5 6 7]\n[8 9]\nDone\n")
    assert repr(dataset) == "<DatasetV1Adapter shapes: (?,), types: tf.int64>"


def test_end_of_sequence_again_and_one_shot_restarts_in_a_new_session():
    next_element = tf.data.Dataset.range(2).make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert [sess.run(next_element), sess.run(next_element)] == [0, 1]
        for _ in range(2):
            with pytest.raises(tf.errors.OutOfRangeError, match="^End of sequence"):
                sess.run(next_element)
    with tf.Session() as sess:
        assert sess.run(next_element) == 0


def test_fetching_next_element_twice_in_one_run_gives_the_same_element():
    next_element = tf.data.Dataset.range(4).make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert sess.run([next_element, next_element]) == [0, 0]
        assert sess.run([next_element, next_element]) == [1, 1]


def test_interleave_cell(capsys):
    dataset = tf.data.Dataset.from_tensor_slices(np.arange(10))
    dataset = dataset.repeat(3).batch(7)
    dataset = dataset.interleave(lambda v: tf.data.Dataset.from_tensor_slices(v),
                                 cycle_length=3, block_length=2)
    next_element = dataset.make_one_shot_iterator().get_next()
    with tf.Session():
        try:
            while True:
                print(next_element.eval(), end=",")
        except tf.errors.OutOfRangeError:
            print("Done")
    assert capsys.readouterr().out == \
        "0,1,7,8,4,5,2,3,9,0,6,7,4,5,1,2,8,9,6,3,0,1,2,8,9,3,4,5,6,7,Done\n"


def decode_csv_line(line):
    x1, x2, y = tf.decode_csv(line, record_defaults=[[-1.], [-1.], [-1.]])
    X = tf.stack([x1, x2])  # noqa: N806 - the chapter's name
    return X, y


def test_decode_csv_map_cell(tmp_path, capsys):
    filenames = [write_csv(tmp_path / "my_test.csv", ["x1,x2,target", "1.,,0", "4.,5.,1",
                                                      "7.,8.,0"])]
    dataset = tf.data.TextLineDataset(filenames)
    dataset = dataset.skip(1).map(decode_csv_line)
    it = dataset.make_one_shot_iterator()
    X, y = it.get_next()  # noqa: N806
    with tf.Session() as sess:
        try:
            while True:
                X_val, y_val = sess.run([X, y])  # noqa: N806
                print(X_val, y_val)
        except tf.errors.InvalidArgumentError as ex:
            print("Error", ex)
        except tf.errors.OutOfRangeError:
            print("Done")
    assert capsys.readouterr().out == "[ 1. -1.] 0.0\n[4. 5.] 1.0\n[7. 8.] 0.0\nDone\n"


def test_decode_error_inside_map_is_invalid_argument(tmp_path):
    path = write_csv(tmp_path / "bad.csv", ["x1,x2,target", "7. ,    , 0"])
    X, y = tf.data.TextLineDataset(path).skip(1).map(decode_csv_line) \
        .make_one_shot_iterator().get_next()  # noqa: N806
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(X)
    assert "Field 1 in record 0 is not a valid float:    " in info.value.message
    assert "IteratorGetNext" in info.value.message


def test_interleave_of_csv_files(tmp_path):
    filenames = [write_csv(tmp_path / f"f{i}.csv", ["x1,x2,y"] +
                           [f"{i}.,{j}.,{i * 10 + j}" for j in range(3)]) for i in range(3)]
    dataset = tf.data.Dataset.from_tensor_slices(filenames)
    dataset = dataset.interleave(lambda f: tf.data.TextLineDataset(f).skip(1), cycle_length=2)
    lines = elements(dataset)
    assert lines == [b"0.,0.,0", b"1.,0.,10", b"0.,1.,1", b"1.,1.,11", b"0.,2.,2",
                     b"1.,2.,12", b"2.,0.,20", b"2.,1.,21", b"2.,2.,22"]
    ys = elements(dataset.map(decode_csv_line).map(lambda X, y: y))  # noqa: N803
    assert ys == [0., 10., 1., 11., 2., 12., 20., 21., 22.]


# -- initializable iterators and from_structure ----------------------------------------------

NOT_INITIALIZED = ("GetNext() failed because the iterator has not been initialized. Ensure "
                   "that you have run the initializer operation for this iterator before "
                   "getting the next element.")


def test_initializable_iterator_with_a_placeholder():
    limit = tf.placeholder(tf.int64, shape=[])
    iterator = tf.data.Dataset.range(limit).make_initializable_iterator()
    next_element = iterator.get_next()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError) as info:
            sess.run(next_element)
        assert info.value.message.startswith(NOT_INITIALIZED)
        sess.run(iterator.initializer, {limit: 3})
        assert drain(sess, next_element) == [0, 1, 2]
        sess.run(iterator.initializer, {limit: 2})
        assert drain(sess, next_element) == [0, 1]


def test_from_structure_switches_datasets():
    iterator = tf.data.Iterator.from_structure(tf.int64, tf.TensorShape([]))
    next_element = iterator.get_next()
    evens = iterator.make_initializer(tf.data.Dataset.range(0, 6, 2))
    odds = iterator.make_initializer(tf.data.Dataset.range(1, 4, 2))
    with tf.Session() as sess:
        sess.run(evens)
        assert sess.run(next_element) == 0
        sess.run(odds)
        assert drain(sess, next_element) == [1, 3]
    with pytest.raises(TypeError, match="Expected output types"):
        iterator.make_initializer(tf.data.Dataset.from_tensors(1.0))
    with pytest.raises(ValueError, match="does not have an initializer"):
        _ = iterator.initializer


def test_dataset_tensors_are_neither_fed_nor_fetched():
    dataset = tf.data.Dataset.range(3)
    variant = dataset._as_variant_tensor()
    assert variant.dtype == tf.variant
    with tf.Session() as sess:
        with pytest.raises(ValueError, match="has been marked as not fetchable"):
            sess.run(variant)
        with pytest.raises(ValueError, match="may not be fed"):
            sess.run(dataset.make_one_shot_iterator().get_next(), {variant: 0})


# -- sources and transformations -------------------------------------------------------------

def test_sources():
    assert elements(tf.data.Dataset.from_tensors([1, 2])) == [pytest.approx([1, 2])]
    assert elements(tf.data.Dataset.range(3)) == [0, 1, 2]
    assert elements(tf.data.Dataset.range(2, 8, 3)) == [2, 5]
    sliced = tf.data.Dataset.from_tensor_slices((np.arange(3), np.array([b"a", b"b", b"c"])))
    assert sliced.output_types == (tf.int64, tf.string)
    assert elements(sliced) == [(0, b"a"), (1, b"b"), (2, b"c")]
    named = tf.data.Dataset.from_tensor_slices({"x": np.ones((2, 3), np.float32),
                                                "y": [7, 8]})
    assert str(named.output_shapes["x"]) == "(3,)"
    values = elements(named)
    assert [v["y"] for v in values] == [7, 8]
    assert values[0]["x"].tolist() == [1, 1, 1]


def test_zip_concatenate_skip_take_prefetch():
    a, b = tf.data.Dataset.range(4), tf.data.Dataset.range(10, 13)
    assert elements(tf.data.Dataset.zip((a, b))) == [(0, 10), (1, 11), (2, 12)]
    assert elements(a.concatenate(b)) == [0, 1, 2, 3, 10, 11, 12]
    assert elements(a.skip(1).take(2).prefetch(1)) == [1, 2]
    assert elements(a.skip(-1)) == []
    assert elements(a.take(-1).repeat(2)) == [0, 1, 2, 3] * 2
    with pytest.raises(TypeError, match="different types"):
        a.concatenate(tf.data.Dataset.from_tensors(1.0))


def test_batch_and_padded_batch():
    ds = tf.data.Dataset.range(7)
    assert [b.tolist() for b in elements(ds.batch(3))] == [[0, 1, 2], [3, 4, 5], [6]]
    dropped = ds.batch(3, drop_remainder=True)
    assert str(dropped.output_shapes) == "(3,)"
    assert [b.tolist() for b in elements(dropped)] == [[0, 1, 2], [3, 4, 5]]
    ragged = tf.data.Dataset.range(1, 4).map(lambda n: tf.fill(tf.stack([n]), n))
    padded = ragged.padded_batch(2, padded_shapes=[None])
    assert str(padded.output_shapes) == "(?, ?)"
    assert [b.tolist() for b in elements(padded)] == [[[1, 0], [2, 2]], [[3, 3, 3]]]
    fixed = ragged.padded_batch(3, padded_shapes=[4], padding_values=tf.constant(-1, tf.int64))
    assert elements(fixed)[0].tolist() == [[1, -1, -1, -1], [2, 2, -1, -1], [3, 3, 3, -1]]


def test_shuffle_is_reproducible_with_seeds():
    def order(seed, reshuffle=True):
        tf.reset_default_graph()
        ds = tf.data.Dataset.range(20).shuffle(5, seed=seed,
                                               reshuffle_each_iteration=reshuffle).repeat(2)
        values = elements(ds)
        return values[:20], values[20:]

    first, second = order(42)
    assert sorted(first) == list(range(20)) and sorted(second) == list(range(20))
    assert first != list(range(20)) and first != second  # each pass reshuffles
    assert order(42) == (first, second)                   # a new session repeats them
    assert order(7) != (first, second)
    same_first, same_second = order(42, reshuffle=False)
    assert same_first == same_second
    tf.set_random_seed(3)
    ds = tf.data.Dataset.range(20).shuffle(20)
    assert elements(ds) == elements(ds)


def test_map_with_captured_tensors_constants_and_variables():
    scale = tf.constant(10, tf.int64)
    offset = tf.Variable(tf.constant(3, tf.int64))
    ds = tf.data.Dataset.range(3).map(lambda x: scale * x + offset + 1)
    pairs = tf.data.Dataset.range(3).map(lambda x: (x, tf.cast(x, tf.float32) * 0.5),
                                         num_parallel_calls=2)
    assert pairs.output_types == (tf.int64, tf.float32)
    next_element = ds.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        sess.run(offset.initializer)
        assert drain(sess, next_element) == [4, 14, 24]
    assert elements(pairs) == [(0, 0.0), (1, 0.5), (2, 1.0)]
    unpacked = tf.data.Dataset.zip((tf.data.Dataset.range(3), tf.data.Dataset.range(3)))
    assert elements(unpacked.map(lambda a, b: a * b)) == [0, 1, 4]


def test_map_function_travels_in_the_graph_def_library():
    ds = tf.data.Dataset.range(3).map(lambda x: x + 1).filter(lambda x: x > 1)
    graph_def = tf.get_default_graph().as_graph_def()
    names = [f.name for f in graph_def.library]
    assert len(names) == 2 and "map" in names[0] and "filter" in names[1]
    map_op = next(n for n in graph_def.node if n.op == "MapDataset")
    assert map_op.attr["f"].s.decode() == names[0]
    body = graph_def.library[0]
    assert [(a.name, a.type) for a in body.input_arg] == [("args_0", tf.int64.as_datatype_enum)]
    assert [n.op for n in body.node] == ["Placeholder", "Const", "AddV2"]
    assert list(body.ret) == ["add:0"]
    assert elements(ds) == [2, 3]


def test_filter_flat_map_and_cache():
    ds = tf.data.Dataset.range(10)
    assert elements(ds.filter(lambda x: tf.equal(x % 3, 0))) == [0, 3, 6, 9]
    with pytest.raises(ValueError, match="scalar boolean"):
        ds.filter(lambda x: x)
    flat = tf.data.Dataset.range(1, 4).flat_map(
        lambda n: tf.data.Dataset.from_tensors(n).repeat(n))
    assert elements(flat) == [1, 2, 2, 3, 3, 3]
    with pytest.raises(TypeError, match="must return a `Dataset`"):
        ds.flat_map(lambda x: x)
    noisy = tf.data.Dataset.range(3).map(lambda x: tf.random_uniform([])).cache().repeat(2)
    values = elements(noisy)
    assert values[:3] == values[3:]


def test_file_datasets(tmp_path):
    text = tmp_path / "lines.txt"
    text.write_bytes(b"a\r\nb\nc")
    assert elements(tf.data.TextLineDataset(str(text))) == [b"a", b"b", b"c"]
    missing = tf.data.TextLineDataset(str(tmp_path / "nope.txt")).make_one_shot_iterator()
    with tf.Session() as sess, pytest.raises(tf.errors.NotFoundError, match="nope.txt"):
        sess.run(missing.get_next())
    records = str(tmp_path / "r.tfrecord")
    with tf.python_io.TFRecordWriter(records) as writer:
        for record in (b"one", b"two"):
            writer.write(record)
    assert elements(tf.data.TFRecordDataset([records])) == [b"one", b"two"]
    fixed = tmp_path / "fixed.bin"
    fixed.write_bytes(b"HHabcdefF")
    assert elements(tf.data.FixedLengthRecordDataset(
        str(fixed), 3, header_bytes=2, footer_bytes=1)) == [b"abc", b"def"]


def test_a_missing_file_names_the_path(tmp_path):
    missing = tmp_path / "nope.csv"
    next_line = tf.data.TextLineDataset(str(missing)).make_one_shot_iterator().get_next()
    with tf.Session() as sess, pytest.raises(tf.errors.NotFoundError) as info:
        sess.run(next_line)
    assert info.value.message.split("\n")[0] == f"{missing}; No such file or directory"


def _corrupt_map_function(change):
    """A map pipeline's GraphDef whose traced function `change(function_def)` spoiled, as
    a peer could send it."""
    dataset = tf.data.Dataset.range(5).map(lambda x: x * 2)
    get_next = dataset.make_one_shot_iterator().get_next()
    graph_def = tf.get_default_graph().as_graph_def()
    change(graph_def.library[0])
    return graph_def, get_next.name


def _unknown_input(function_def):
    function_def.node[2].input[1] = "x"


def _bad_output(function_def):
    function_def.node[2].input[1] = "mul/y:3"


def _cycle(function_def):
    function_def.node[1].input.append("mul")


@pytest.mark.parametrize("change, message", [
    (lambda f: f.ret.__setitem__(0, "x:0"), "return 0 -> x:0 is not found"),
    (lambda f: f.ret.__setitem__(0, "::"), "return 0 -> :: is not found"),
    (lambda f: f.ret.__setitem__(0, "mul:5"), "return 0 -> mul:5 is not found"),
    (_unknown_input, "Node 'mul': Unknown input node 'x'"),
    (_bad_output, "Connecting to invalid output 3 of source node mul/y which has 1 outputs"),
    (_cycle, "contains a cycle with 2 nodes, including: mul, mul/y"),
])
def test_a_malformed_function_from_a_peer_is_an_invalid_argument(cluster, change, message):
    graph_def, fetch = _corrupt_map_function(change)
    master = cluster({"local": 1})["local", 0].master
    handle = master.create_session(graph_def, tf.ConfigProto())
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        master.run_step(handle, {}, [fetch], [])
    master.close_session(handle)


def test_from_generator_releases_each_pass_of_the_generator():
    """A pass that ends, or that a re-initialization abandons, lets go of its generator
    (whose cleanup then runs), as TensorFlow's finalize function does."""
    cleaned = []

    def numbers(n):
        try:
            yield from range(n)
        finally:
            cleaned.append(n)

    dataset = tf.data.Dataset.from_generator(numbers, tf.int64, (), args=[3])
    iterator = dataset.make_initializable_iterator()
    next_element = iterator.get_next()
    with tf.Session() as sess:
        sess.run(iterator.initializer)
        assert [sess.run(next_element) for _ in range(3)] == [0, 1, 2]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(next_element)
        gc.collect()
        assert cleaned == [3]
        sess.run(iterator.initializer)
        assert sess.run(next_element) == 0
        sess.run(iterator.initializer)   # abandons the second pass
        gc.collect()
        assert cleaned == [3, 3]
        assert sess.run(next_element) == 0
