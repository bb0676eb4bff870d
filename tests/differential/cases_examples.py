"""tf.train.Example records and their parsing: the protocol buffers, parse_example and
parse_single_example (VarLenFeature and FixedLenFeature, defaults, names), their graphs
and errors, and a TFRecord file read through tf.data."""

import os
import tempfile

import numpy as np
from observe import node_defs, outcome

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def _example(tf, **features):
    """An Example of lists: floats, ints or bytes by the first value; [] an empty float list;
    None a feature with no kind."""
    made = {}
    for key, values in features.items():
        if values is None:
            made[key] = tf.train.Feature()
        elif not values or isinstance(values[0], float):
            made[key] = tf.train.Feature(float_list=tf.train.FloatList(value=values))
        elif isinstance(values[0], int):
            made[key] = tf.train.Feature(int64_list=tf.train.Int64List(value=values))
        else:
            made[key] = tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
    return tf.train.Example(features=tf.train.Features(feature=made))


def _failure(err):
    return type(err).__name__, str(err).split("\n\t [[")[0].splitlines()[-1]


_FEATURES = ("x", "y", "tags")


def _features(tf):
    return {"x": tf.FixedLenFeature([2], tf.float32),
            "y": tf.FixedLenFeature([], tf.int64, default_value=-1),
            "tags": tf.VarLenFeature(tf.string)}


@case
def the_protocol_buffers(tf):
    """Examples and SequenceExamples built, serialized (the same length), parsed back, and
    read field by field."""
    example = _example(tf, x=[1.0, 2.5], y=[3, -4], tags=[b"a", b"bc"], empty=[],
                       none=None)
    copy = tf.train.Example.FromString(example.SerializeToString())
    feature = copy.features.feature
    sequence = tf.train.SequenceExample(
        context=tf.train.Features(feature={"id": tf.train.Feature(
            int64_list=tf.train.Int64List(value=[7]))}),
        feature_lists=tf.train.FeatureLists(feature_list={"frames": tf.train.FeatureList(
            feature=[tf.train.Feature(float_list=tf.train.FloatList(value=[0.5])),
                     tf.train.Feature(float_list=tf.train.FloatList(value=[1.5, 2.0]))])}))
    sequence_copy = tf.train.SequenceExample.FromString(sequence.SerializeToString())
    return (len(example.SerializeToString()), copy == example, sorted(feature),
            list(feature["x"].float_list.value), list(feature["y"].int64_list.value),
            list(feature["tags"].bytes_list.value),
            [feature[k].WhichOneof("kind") for k in ("x", "y", "tags", "empty", "none")],
            copy.HasField("features"), len(sequence.SerializeToString()),
            [list(f.float_list.value)
             for f in sequence_copy.feature_lists.feature_list["frames"].feature],
            list(sequence_copy.context.feature["id"].int64_list.value))


@case
def parsing_records_and_the_graphs(tf):
    """One record and a batch, a default used where a record lacks a feature or holds one
    with no kind, string defaults, names, and TensorFlow's graphs for them."""
    records = [_example(tf, x=[1.0, 2.0], y=[3], tags=[b"a", b"b"]).SerializeToString(),
               _example(tf, x=[5.0, 6.0], tags=[b"c"], y=None).SerializeToString()]
    one = tf.placeholder(tf.string, [])
    batch = tf.placeholder(tf.string, [None])
    single = tf.parse_single_example(one, _features(tf))
    several = tf.parse_example(batch, _features(tf), name="records")
    words = tf.parse_example(batch, {"w": tf.FixedLenFeature([], tf.string, default_value="d"),
                                     "x": tf.FixedLenFeature([1, 2], tf.float32)},
                             example_names=["first", "second"])
    shapes = {key: [str(t.shape) for t in (v if isinstance(v, tuple) else
                                          (v.indices, v.values, v.dense_shape)
                                          if isinstance(v, tf.SparseTensor) else (v,))]
              for key, v in {**single, **{k + "_batch": v for k, v in several.items()}}.items()}
    with tf.Session() as sess:
        values = [sess.run(single, {one: r}) for r in records]
        values.append(sess.run(several, {batch: records}))
        values.append(sess.run(words, {batch: records}))
    return values, shapes, node_defs(tf.get_default_graph())


@case
def errors(tf):
    """At run: a value of another type or count, a missing feature without default (with
    and without example names), a record that does not parse, an empty list where a
    FixedLenFeature needs values. At build: unknown or partly known shapes, no features,
    an unsupported feature, a serialized input that is not a scalar."""
    batch = tf.placeholder(tf.string, [None])
    names = tf.placeholder(tf.string, [None])
    fixed = {"x": tf.FixedLenFeature([2], tf.float32)}
    runs = [(fixed, [_example(tf, x=[1])]), (fixed, [_example(tf, x=[1.0, 2.0, 3.0])]),
            (fixed, [_example(tf, y=[1])]), (fixed, [_example(tf, x=None)]),
            ({"x": tf.FixedLenFeature([2], tf.float32, default_value=[7.0, 8.0])},
             [_example(tf, x=[])]),
            ({"x": tf.VarLenFeature(tf.int64)}, [_example(tf, x=[1.0])]),
            ({"x": tf.FixedLenFeature([2], tf.string)}, [_example(tf, x=[b"a"])]),
            ({"x": tf.FixedLenFeature([2], tf.int64)}, [_example(tf, x=[1])]),
            ({"x": tf.VarLenFeature(tf.float32)}, [_example(tf, x=[]), _example(tf, y=[1])])]
    with tf.Session() as sess:
        results = []
        for features, records in runs:
            parsed = tf.parse_example(batch, features)
            try:
                results.append(sess.run(parsed, {batch: [r.SerializeToString()
                                                         for r in records]}))
            except tf.errors.OpError as err:
                results.append(_failure(err))
        named = tf.parse_example(batch, fixed, example_names=names)
        results.append(outcome(sess.run, named, {batch: [_example(tf, y=[1])
                                                         .SerializeToString()],
                                                 names: ["first"]}))
        results.append(outcome(sess.run, tf.parse_example(batch, fixed), {batch: [b"garbage"]}))
    built = [outcome(tf.parse_single_example, tf.constant(b""), features) for features in (
        {"x": tf.FixedLenFeature([None], tf.float32)}, {"x": tf.FixedLenFeature(None, tf.float32)},
        {}, {"x": "nope"}, {"x": tf.FixedLenFeature([2], tf.float32, default_value=[1.0])})]
    built.append(outcome(tf.parse_single_example, tf.constant([b""]),
                         {"x": tf.VarLenFeature(tf.float32)}))
    return results, built


@case
def a_tfrecord_file_through_tf_data(tf):
    """Examples written to a TFRecord file, read back by a TFRecordDataset mapped through
    parse_single_example (the VarLenFeature made dense), padded into batches: the values
    and the end."""
    path = os.path.join(tempfile.mkdtemp(), "data.tfrecord")
    with tf.python_io.TFRecordWriter(path) as writer:
        for i in range(5):
            tags = {"tags": [b"t"] * (i % 3)} if i % 3 else {}   # none: an empty list
            writer.write(_example(tf, x=[float(i), i / 2], y=[i], **tags).SerializeToString())
    def parse(record):
        parsed = tf.parse_single_example(record, _features(tf))
        parsed["tags"] = tf.sparse.to_dense(parsed["tags"], default_value="-")
        return parsed

    dataset = tf.data.TFRecordDataset(path).map(parse).padded_batch(
        2, {"x": [2], "y": [], "tags": [None]}, {"x": 0.0, "y": np.int64(0), "tags": "."})
    next_batch = dataset.make_one_shot_iterator().get_next()
    batches = []
    with tf.Session() as sess:
        try:
            while True:
                batches.append(sess.run(next_batch))
        except tf.errors.OutOfRangeError:
            batches.append("end")
    return batches, {k: str(v) for k, v in dataset.output_shapes.items()}


@case
def sparse_tensors_made_dense(tf):
    """tf.sparse.to_dense (tf.sparse_tensor_to_dense): defaults, strings, a fed
    SparseTensor, static shapes, and indices out of order, repeated or out of range."""
    sparse = tf.sparse_placeholder(tf.float32)
    built = [tf.sparse.to_dense(tf.SparseTensor([[0, 1], [2, 0]], ["a", "b"], [3, 2]),
                                default_value=""),
             tf.sparse_tensor_to_dense(tf.SparseTensor([[0], [2]], [1.5, 2.5], [4])),
             tf.sparse.to_dense(sparse, default_value=-1.0),
             tf.sparse.to_dense(tf.SparseTensor([[1], [0]], [1, 2], [3]),
                                validate_indices=False)]
    wrong = [tf.sparse.to_dense(tf.SparseTensor(indices, [1, 2][:len(indices)], [3]))
             for indices in ([[1], [0]], [[1], [1]], [[5]])]
    with tf.Session() as sess:
        values = sess.run(built, {sparse: tf.SparseTensorValue([[0, 0], [1, 2]], [1.0, 2.0],
                                                               [2, 3])})
        failures = [outcome(sess.run, t) for t in wrong]
    return values, failures, [str(t.shape) for t in built], node_defs(tf.get_default_graph())


@case
def errors_of_one_record(tf):
    """parse_single_example's own messages: a list of another count or type, a missing
    feature, with and without a name."""
    record = tf.placeholder(tf.string, [])
    name = tf.placeholder(tf.string, [])
    lists = {tf.float32: lambda n: [1.0] * n, tf.int64: lambda n: [1] * n,
             tf.string: lambda n: [b"a"] * n}
    runs = [({"x": tf.FixedLenFeature([2], dtype)}, _example(tf, x=make(n)) if n else
             tf.train.Example(features=tf.train.Features(feature={"x": tf.train.Feature(
                 **{{tf.float32: "float_list", tf.int64: "int64_list",
                     tf.string: "bytes_list"}[dtype]: {}})})))
            for dtype, make in lists.items() for n in (1, 3, 0)]
    runs += [({"x": tf.FixedLenFeature([2], tf.string)}, _example(tf, x=[1, 2])),
             ({"x": tf.VarLenFeature(tf.string)}, _example(tf, x=[1.0])),
             ({"x": tf.FixedLenFeature([2], tf.float32)}, _example(tf, y=[1])),
             ({"x": tf.FixedLenFeature([2], tf.float32)}, _example(tf, x=None))]
    results = []
    with tf.Session() as sess:
        for features, example in runs:
            for names in (None, name):
                parsed = tf.parse_single_example(record, features, example_names=names)
                feed = {record: example.SerializeToString(),
                        **({name: "named"} if names is not None else {})}
                try:
                    results.append(sess.run(parsed, feed))
                except tf.errors.OpError as err:
                    results.append(_failure(err))
    return results
