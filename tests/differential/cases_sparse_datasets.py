"""SparseTensors as tf.data elements: from a SparseTensor (whole or sliced), returned by a
map, batched (one SparseTensor with a batch dimension), unbatched, filtered, zipped,
through every kind of iterator; the structure datasets report; and a batch of parsed
VarLenFeatures, the pipeline that needs them."""

import numpy as np
from observe import drain, outcome

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def _structure(tf, dataset):
    classes = tf.data.get_output_classes(dataset) if hasattr(tf.data, "get_output_classes") \
        else dataset.output_classes
    names = [c.__name__ for c in (classes if isinstance(classes, tuple) else (classes,))]
    return dataset.output_types, dataset.output_shapes, names


def _sparse(tf):
    return tf.SparseTensor([[0, 1], [2, 0], [2, 2]], [1.0, 2.0, 3.0], [3, 4])


@case
def sources_maps_and_batches(tf):
    """from_tensor_slices and from_tensors of a SparseTensor (and of a
    SparseTensorValue), a map returning one beside a dense component, batches of them,
    unbatch, filter on a sparse component, zip and concatenate; their structures and
    elements."""
    sliced = tf.data.Dataset.from_tensor_slices(_sparse(tf))
    whole = tf.data.Dataset.from_tensors(
        tf.SparseTensorValue([[1]], np.int64([7]), [2]))
    mapped = tf.data.Dataset.range(5).map(
        lambda i: (i, tf.SparseTensor([[0], [1]], tf.stack([i, i * 2]), [3])))
    batched = mapped.batch(2)
    datasets = [sliced, whole, mapped, batched, sliced.batch(2), batched.unbatch(),
                mapped.filter(lambda i, s: tf.reduce_sum(s.values) > 3),
                tf.data.Dataset.zip((sliced, tf.data.Dataset.range(3))),
                sliced.concatenate(sliced.skip(2)),
                batched.map(lambda i, s: (i, tf.sparse.to_dense(s) * 10))]
    nexts = [d.make_one_shot_iterator().get_next() for d in datasets]
    with tf.Session() as sess:
        elements = [drain(tf, sess, n) for n in nexts]
    return [_structure(tf, d) for d in datasets[:-1]], elements


@case
def iterators_and_errors(tf):
    """An initializable iterator and one from a structure with output_classes, each
    re-initialized; a structure without the classes refused; padded_batch of a sparse
    component refused."""
    mapped = tf.data.Dataset.range(3).map(
        lambda i: (i, tf.SparseTensor([[0]], tf.reshape(i, [1]), [2])))
    initializable = mapped.batch(2).make_initializable_iterator()
    structured = tf.data.Iterator.from_structure(mapped.output_types, mapped.output_shapes,
                                                 output_classes=mapped.output_classes)
    start = structured.make_initializer(mapped)
    with tf.Session() as sess:
        runs = []
        for init, next_element in ((initializable.initializer, initializable.get_next()),
                                   (start, structured.get_next())):
            sess.run(init)
            first = sess.run(next_element)
            sess.run(init)
            runs.append((first, drain(tf, sess, next_element)))
    dense_only = tf.data.Iterator.from_structure(mapped.output_types, mapped.output_shapes)
    return (runs, type(outcome(dense_only.make_initializer, mapped)).__name__,
            outcome(mapped.padded_batch, 2, ([], [2])))


@case
def parsed_records_batched(tf):
    """Serialized Examples parsed by a map into a VarLenFeature and a FixedLenFeature,
    then batched: each batch's SparseTensor has a row per record."""
    def example(tags, label):
        return tf.train.Example(features=tf.train.Features(feature={
            "tags": tf.train.Feature(bytes_list=tf.train.BytesList(value=tags)),
            "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label]))}))

    records = [example([b"a", b"b"], 1), example([], 2), example([b"c"], 3)]
    features = {"tags": tf.VarLenFeature(tf.string), "label": tf.FixedLenFeature([], tf.int64)}
    dataset = (tf.data.Dataset.from_tensor_slices([r.SerializeToString() for r in records])
               .map(lambda r: tf.parse_single_example(r, features)).batch(2))
    next_batch = dataset.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        batches = drain(tf, sess, next_batch)
    return batches, str(dataset.output_shapes["tags"]), str(next_batch["tags"].shape)
