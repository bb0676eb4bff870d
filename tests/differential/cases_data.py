"""tf.data in graph mode, as the chapter uses it: datasets from tensors and files,
transformations, iterators, their structure (types, shapes) and their end."""

import os
import tempfile

import numpy as np
from observe import outcome


def _drain(tf, dataset, limit=50, initializable=False):
    """Every element of one pass (OutOfRange ends it), with the iterator's structure."""
    if initializable:
        iterator = tf.data.make_initializable_iterator(dataset)
    else:
        iterator = tf.data.make_one_shot_iterator(dataset)
    element = iterator.get_next()
    values = []
    with tf.Session() as sess:
        if initializable:
            sess.run(iterator.initializer)
        for _ in range(limit):
            try:
                values.append(sess.run(element))
            except tf.errors.OutOfRangeError as end:
                values.append(end)
                break
    return (values, tf.data.get_output_types(dataset),
            tf.data.get_output_shapes(dataset))


PIPELINES = {
    "slices": lambda tf: tf.data.Dataset.from_tensor_slices(np.arange(5, dtype=np.int64)),
    "slices_tuple": lambda tf: tf.data.Dataset.from_tensor_slices(
        (np.arange(4, dtype=np.int32), np.array([b"a", b"b", b"c", b"d"]))),
    "slices_dict": lambda tf: tf.data.Dataset.from_tensor_slices(
        {"x": np.arange(6, dtype=np.float32).reshape(3, 2), "y": np.array([1, 0, 1])}),
    "tensors": lambda tf: tf.data.Dataset.from_tensors(np.ones((2, 3), np.float32)),
    "range": lambda tf: tf.data.Dataset.range(3, 11, 3),
    "repeat_batch": lambda tf: tf.data.Dataset.range(5).repeat(2).batch(3),
    "batch_drop_remainder": lambda tf: tf.data.Dataset.range(7).batch(3,
                                                                       drop_remainder=True),
    "map": lambda tf: tf.data.Dataset.range(4).map(lambda x: (x * 2, tf.cast(x, tf.float32))),
    "filter": lambda tf: tf.data.Dataset.range(10).filter(lambda x: tf.equal(x % 3, 0)),
    "flat_map": lambda tf: tf.data.Dataset.range(3).flat_map(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(x)),
    "interleave": lambda tf: tf.data.Dataset.range(1, 4).interleave(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(4), cycle_length=2, block_length=2),
    "zip": lambda tf: tf.data.Dataset.zip((tf.data.Dataset.range(3),
                                           tf.data.Dataset.range(10, 20))),
    "concatenate": lambda tf: tf.data.Dataset.range(2).concatenate(tf.data.Dataset.range(5, 7)),
    "skip_take": lambda tf: tf.data.Dataset.range(10).skip(3).take(4),
    "prefetch_cache": lambda tf: tf.data.Dataset.range(4).cache().prefetch(2).repeat(2),
    "padded_batch": lambda tf: tf.data.Dataset.range(1, 5).map(
        lambda x: tf.fill([x], x)).padded_batch(2, padded_shapes=[None]),
    "padded_batch_fixed": lambda tf: tf.data.Dataset.range(1, 4).map(
        lambda x: tf.fill([x], x)).padded_batch(2, padded_shapes=[4],
                                                padding_values=tf.constant(-1, tf.int64)),
    "padded_batch_wrong_padding_type": lambda tf: tf.data.Dataset.range(1, 4).map(
        lambda x: tf.fill([x], x)).padded_batch(2, padded_shapes=[4], padding_values=-1),
    # a shuffle's order is TensorFlow's RNG's; what it keeps is compared
    "shuffle_sum": lambda tf: tf.data.Dataset.range(6).shuffle(100, seed=3).batch(6).map(
        tf.reduce_sum),
    # one worker's part of the input, for between-graph replication
    "shard": lambda tf: tf.data.Dataset.range(10).shard(3, 1),
    "shard_first": lambda tf: tf.data.Dataset.range(10).shard(3, 0),
    "shard_no_shards": lambda tf: tf.data.Dataset.range(3).shard(0, 0),
    "shard_index_too_large": lambda tf: tf.data.Dataset.range(3).shard(2, 2),
    "shard_index_negative": lambda tf: tf.data.Dataset.range(3).shard(2, -1),
    "enumerate": lambda tf: tf.data.Dataset.from_tensor_slices([b"a", b"b"]).enumerate(5),
    "unbatch": lambda tf: tf.data.Dataset.from_tensor_slices(
        ([[1, 2], [3, 4], [5, 6]], [7, 8, 9])).batch(2).unbatch(),
    "apply": lambda tf: tf.data.Dataset.range(4).apply(lambda d: d.skip(1)),
    "apply_not_a_dataset": lambda tf: tf.data.Dataset.range(3).apply(lambda d: 5),
}


def _pipeline_case(name, initializable):
    return lambda tf: _drain(tf, PIPELINES[name](tf), initializable=initializable)


def text_line_dataset(tf):
    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for i in range(2):
            paths.append(os.path.join(folder, f"f{i}.csv"))
            with open(paths[-1], "w") as f:
                f.write("x,y\n" + "".join(f"{i}{j},{j}\n" for j in range(3)))
        dataset = tf.data.Dataset.from_tensor_slices(paths).flat_map(
            lambda path: tf.data.TextLineDataset(path).skip(1)).map(
            lambda line: tf.decode_csv(line, [[0], [0.0]]))
        return _drain(tf, dataset)


def tfrecord_dataset(tf):
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "r.tfrecord")
        with tf.python_io.TFRecordWriter(path) as writer:
            for record in (b"one", b"two", b"three"):
                writer.write(record)
        return _drain(tf, tf.data.TFRecordDataset([path]).repeat(2))


def reinitializable_iterator(tf):
    train = tf.data.Dataset.range(3)
    valid = tf.data.Dataset.range(10, 12)
    iterator = tf.data.Iterator.from_structure(tf.data.get_output_types(train),
                                               tf.data.get_output_shapes(train))
    element = iterator.get_next()
    out = []
    with tf.Session() as sess:
        for dataset in (train, valid, train):
            sess.run(iterator.make_initializer(dataset))
            out.append([sess.run(element) for _ in range(2)])
    return out


def initializable_with_placeholder(tf):
    limit = tf.placeholder(tf.int64, [])
    iterator = tf.data.make_initializable_iterator(tf.data.Dataset.range(limit))
    element = iterator.get_next()
    with tf.Session() as sess:
        sess.run(iterator.initializer, {limit: 2})
        first = [sess.run(element) for _ in range(2)]
        sess.run(iterator.initializer, {limit: 3})
        return first, [sess.run(element) for _ in range(3)], outcome(sess.run, element)


def uninitialized_iterator(tf):
    iterator = tf.data.make_initializable_iterator(tf.data.Dataset.range(2))
    with tf.Session() as sess:
        return outcome(sess.run, iterator.get_next())


def mismatched_structure(tf):
    iterator = tf.data.Iterator.from_structure(tf.int64, tf.TensorShape([]))
    return outcome(iterator.make_initializer, tf.data.Dataset.range(2).batch(2))


def wrong_type_structure(tf):
    iterator = tf.data.Iterator.from_structure(tf.int32, tf.TensorShape([]))
    return outcome(iterator.make_initializer, tf.data.Dataset.range(2))


CASES = {f"{name}{'_initializable' if init else ''}": _pipeline_case(name, init)
         for name in PIPELINES for init in (False, True)}
CASES.update({f.__name__: f for f in (
    text_line_dataset, tfrecord_dataset, reinitializable_iterator,
    initializable_with_placeholder, uninitialized_iterator, mismatched_structure,
    wrong_type_structure)})
