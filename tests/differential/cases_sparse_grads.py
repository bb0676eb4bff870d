"""Sparse gradients: tf.gather's and tf.nn.embedding_lookup's gradients as IndexedSlices,
how tf.gradients adds them up, the optimizers' sparse updates (their ops and values), and
embedding_lookup over a table split into parts by "mod" and "div"."""

import numpy as np
from observe import node_defs, optimizers, outcome, run

TABLE = np.arange(14 * 2, dtype=np.float32).reshape(14, 2) / 10
IDS = np.array([[0, 13, 5], [5, 7, 1]], np.int32)


def _kind(tf, grad):
    return "IndexedSlices" if isinstance(grad, tf.IndexedSlices) else "Tensor"


def _slices(grad, value):
    """What an IndexedSlices gradient is, statically and as fetched."""
    return ("IndexedSlices" if hasattr(grad, "dense_shape") else "Tensor",
            grad.values.dtype, grad.values.get_shape(),
            grad.indices.dtype, grad.indices.get_shape(), grad.dense_shape.get_shape(),
            value.values, value.indices, value.dense_shape)


def _gather_gradient(params_shape, indices, index_dtype):
    def case(tf):
        params = tf.Variable(np.ones(params_shape, np.float32), name="params")
        gathered = tf.gather(params, tf.constant(indices, getattr(tf, index_dtype)))
        shape = gathered.get_shape().as_list()
        weights = np.arange(1.0, 1.0 + np.prod(shape), dtype=np.float32).reshape(shape)
        grad = tf.gradients(tf.reduce_sum(gathered * weights), params)[0]
        with tf.Session() as sess:
            sess.run(params.initializer)
            return _slices(grad, sess.run(grad)), grad.name
    return case


def gather_gradient_along_axis_1_is_dense(tf):
    params = tf.Variable(np.ones((3, 4), np.float32), name="params")
    grad = tf.gradients(tf.reduce_sum(tf.gather(params, [3, 0, 3], axis=1)), params)[0]
    with tf.Session() as sess:
        sess.run(params.initializer)
        return _kind(tf, grad), grad.get_shape(), sess.run(grad)


def gradients_of_two_gathers_concatenate(tf):
    params = tf.Variable(TABLE, name="params")
    loss = (tf.reduce_sum(tf.gather(params, [1, 3])) +
            tf.reduce_sum(tf.square(tf.gather(params, tf.constant([3, 0], tf.int64)))))
    grad = tf.gradients(loss, params)[0]
    with tf.Session() as sess:
        sess.run(params.initializer)
        return _slices(grad, sess.run(grad)), grad.values.op.type, grad.indices.op.type


def gather_and_dense_use_sum_to_a_tensor(tf):
    params = tf.Variable(TABLE, name="params")
    loss = tf.reduce_sum(tf.gather(params, [1, 3, 1])) + tf.reduce_sum(params * params)
    grad = tf.gradients(loss, params)[0]
    with tf.Session() as sess:
        sess.run(params.initializer)
        return _kind(tf, grad), grad.op.type, grad.get_shape(), sess.run(grad)


def indexed_slices_convert_to_a_dense_tensor(tf):
    params = tf.Variable(TABLE[:4], name="params")
    grad = tf.gradients(tf.reduce_sum(tf.gather(params, [2, 0, 2])), params)[0]
    dense = tf.convert_to_tensor(grad)
    with tf.Session() as sess:
        sess.run(params.initializer)
        return dense.op.type, dense.get_shape(), sess.run(dense)


def _optimizers(tf):
    """The training cases' optimizers, RMSProp with momentum."""
    return {**optimizers(tf), "rmsprop": lambda: tf.train.RMSPropOptimizer(0.05, momentum=0.5)}


def _sparse_training(name):
    """Three steps on an embedding whose rows 1 and 3 are looked up (1 twice: duplicate
    indices are summed before the update), and a dense bias beside it."""
    def case(tf):
        table = tf.Variable(TABLE[:5], name="table")
        bias = tf.Variable([0.5, -0.5], name="bias")
        rows = tf.nn.embedding_lookup(table, [1, 3, 1])
        loss = tf.reduce_sum(tf.square(rows + bias - 1.0))
        train = _optimizers(tf)[name]().minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([train, loss])[1] for _ in range(3)]
            slots = {v.op.name: sess.run(v) for v in tf.global_variables()}
            values = sess.run([table, bias])
        updates = [n for n in node_defs(tf.get_default_graph())
                   if "/update_table/" in n["name"] and n["type"] not in ("Const",)]
        return losses, values, slots, updates
    return case


def sparse_update_errors(tf):
    """Rows outside the table, applied by Adagrad (SparseApplyAdagrad) and gradient
    descent (ScatterSub); rows wider than the table's (only the class: the message is
    TensorFlow's graph-wide shape format)."""
    table = tf.Variable(TABLE[:4], name="table")
    found = []
    for optimizer in (tf.train.AdagradOptimizer(0.1), tf.train.GradientDescentOptimizer(0.1)):
        outside = tf.IndexedSlices(tf.constant([[1.0, 1.0]]), tf.constant([7]),
                                   tf.constant([4, 2]))
        train = optimizer.apply_gradients([(outside, table)])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            found.append(outcome(sess.run, train))
            found.append(sess.run(table))
    wide = tf.IndexedSlices(tf.constant([[1.0, 1.0, 1.0]]), tf.constant([0]))
    found.append(type(outcome(tf.train.AdagradOptimizer(0.1).apply_gradients,
                              [(wide, table)])).__name__)
    return found


def _lookup(strategy, parts, ids):
    """embedding_lookup of IDS over TABLE dealt into `parts` parts as `strategy` deals
    them (uneven sizes where the parts do not divide 14 rows), with each part's gradient."""
    def case(tf):
        if strategy == "mod":
            pieces = [TABLE[i::parts] for i in range(parts)]
        else:
            sizes = [14 // parts + (i < 14 % parts) for i in range(parts)]
            pieces = np.split(TABLE, np.cumsum(sizes)[:-1])
        variables = [tf.Variable(p, name=f"part_{i}") for i, p in enumerate(pieces)]
        # Fed, as a model's ids are (TensorFlow folds constant ids into static shapes).
        fed = tf.placeholder(tf.as_dtype(np.asarray(ids).dtype), np.shape(ids), name="ids")
        out = tf.nn.embedding_lookup(variables, fed, partition_strategy=strategy)
        grads = tf.gradients(tf.reduce_sum(out * out), variables)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            value, grad_values = sess.run([out, grads], {fed: ids})
        return (out.name, out.get_shape(), value,
                [_slices(g, v) for g, v in zip(grads, grad_values)])
    return case


def lookup_with_max_norm(tf):
    table = tf.constant(TABLE)
    parts = [tf.constant(TABLE[i::2]) for i in range(2)]
    return [run(tf, tf.nn.embedding_lookup(p, IDS, max_norm=1.5)) for p in (table, parts)]


def lookup_errors(tf):
    table = tf.constant(TABLE)
    return [outcome(tf.nn.embedding_lookup, [], IDS),
            outcome(tf.nn.embedding_lookup, [table, table], IDS, partition_strategy="rows"),
            outcome(run, tf, tf.nn.embedding_lookup(table, [[0, 14]]))]


def ids_outside_their_range(tf):
    """Negative and too large ids, int32 and int64: gather and the sparse segment sums
    refuse both, the unsorted segment sum drops the data of a negative id, the sparse
    cross entropy refuses a negative label. Each with TensorFlow's words."""
    data = tf.constant(np.arange(8, dtype=np.float32).reshape(4, 2))
    ids = tf.placeholder(tf.int32, [None], name="ids")
    wide = tf.placeholder(tf.int64, [None], name="wide_ids")
    matrix = tf.placeholder(tf.int32, [2, 2], name="matrix_ids")
    logits = tf.constant(np.zeros((2, 3), np.float32))
    seen = []
    for fed in (ids, wide):
        fetches = [tf.gather(data, fed), tf.unsorted_segment_sum(data[:2], fed, 3),
                   tf.sparse_segment_sum(data, fed, [0, 1]),
                   tf.sparse_segment_sqrt_n(data, fed, [0, 0]),
                   tf.nn.sparse_softmax_cross_entropy_with_logits(labels=fed, logits=logits)]
        seen += [outcome(run, tf, fetch, {fed: values}) for fetch in fetches
                 for values in ([0, 2], [0, -1], [3, -2], [1, 4])]
    seen += [outcome(run, tf, tf.unsorted_segment_sum(tf.ones((2, 2, 3)), matrix, 3),
                     {matrix: values}) for values in ([[0, -1], [-3, 2]], [[0, -1], [7, 2]])]
    seen.append(outcome(run, tf, tf.gather(data, matrix), {matrix: [[0, 1], [-1, 2]]}))
    return seen


def unsorted_segment_sum_gradient_drops_negative_ids(tf):
    """The gradient of a segment sum gives the rows of a negative id zeros: its graph and
    values."""
    data = tf.Variable(np.arange(12, dtype=np.float32).reshape(2, 3, 2), name="data")
    ids = tf.placeholder(tf.int64, [2, 3], name="ids")
    summed = tf.unsorted_segment_sum(data, ids, 3)
    grad = tf.gradients(tf.reduce_sum(summed * [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), data)[0]
    with tf.Session() as sess:
        sess.run(data.initializer)
        return (sess.run([summed, grad], {ids: [[0, -1, 2], [-3, 2, 1]]}),
                sess.run(tf.ones_like(data, dtype=tf.bool)),
                node_defs(tf.get_default_graph()))


def _lookup_sparse(combiner, weighted, parts):
    """embedding_lookup_sparse of three rows of ids (one of them empty, one with an id
    twice), over TABLE whole or in 2 "div" parts, and the gradient of each part."""
    def case(tf):
        pieces = [TABLE] if parts == 1 else np.split(TABLE, [7])
        variables = [tf.Variable(p, name=f"part_{i}") for i, p in enumerate(pieces)]
        indices = [[0, 0], [0, 1], [0, 2], [2, 0], [2, 1]]
        # Fed, as a model's ids are (TensorFlow folds constant ids into static shapes).
        fed = tf.placeholder(tf.int64, [None], name="ids")
        sp_ids = tf.SparseTensor(indices, fed, [3, 3])
        sp_weights = tf.SparseTensor(indices, [0.5, 2.0, 1.0, -1.0, 3.0], [3, 3]) \
            if weighted else None
        out = tf.nn.embedding_lookup_sparse(variables if parts > 1 else variables[0], sp_ids,
                                            sp_weights, combiner=combiner,
                                            partition_strategy="div")
        grads = tf.gradients(tf.reduce_sum(out * out), variables)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            value, grad_values = sess.run([out, grads], {fed: [3, 9, 3, 12, 0]})
        return (out.name, out.op.type, out.get_shape(), value,
                [_slices(g, v) if hasattr(g, "dense_shape") else (g.op.type, v)
                 for g, v in zip(grads, grad_values)])
    return case


def lookup_sparse_errors(tf):
    table = tf.constant(TABLE)
    ids = tf.SparseTensor([[0, 0]], tf.constant([1], tf.int64), [1, 1])
    return [outcome(tf.nn.embedding_lookup_sparse, table, ids, None, combiner="max"),
            type(outcome(tf.nn.embedding_lookup_sparse, table, [1], None)).__name__,
            type(outcome(tf.nn.embedding_lookup_sparse, table, ids, [1.0])).__name__]


def unique_and_stitch(tf):
    """The ops embedding_lookup and the optimizers build on."""
    y, idx = tf.unique(tf.constant([4, 1, 4, 7, 1, 0], tf.int64), out_idx=tf.int64)
    merged = tf.dynamic_stitch([[0, 3], [1, 3]], [[[1.0], [2.0]], [[3.0], [4.0]]])
    fed = tf.placeholder(tf.int32, [None])
    stitched = tf.dynamic_stitch([fed, [0]], [[[1.0, 2.0]], [[3.0, 4.0]]])
    return ([t.get_shape() for t in (y, idx, merged, stitched)],
            run(tf, [y, idx, merged, stitched], {fed: [1]}),
            type(outcome(tf.unique, [[1, 2]])).__name__)


CASES = {
    f"gather_gradient:{label}": _gather_gradient(shape, indices, dtype)
    for label, shape, indices, dtype in (
        ("rows", (5, 2), [3, 1, 3], "int32"),
        ("int64_indices", (5, 2), [4, 0], "int64"),
        ("matrix_indices", (6, 3), [[0, 5], [2, 0]], "int32"),
        ("vector_params", (4,), [2, 2, 1], "int32"),
        ("rank3_params", (3, 2, 2), [1], "int64"))}
CASES.update({
    "gather_gradient_along_axis_1_is_dense": gather_gradient_along_axis_1_is_dense,
    "gradients_of_two_gathers_concatenate": gradients_of_two_gathers_concatenate,
    "gather_and_dense_use_sum_to_a_tensor": gather_and_dense_use_sum_to_a_tensor,
    "indexed_slices_convert_to_a_dense_tensor": indexed_slices_convert_to_a_dense_tensor,
})
CASES.update({f"sparse_training:{name}": _sparse_training(name)
              for name in ("sgd", "momentum", "nesterov", "adagrad", "rmsprop",
                           "rmsprop_centered", "adam", "adadelta", "proximal_sgd",
                           "proximal_sgd_l2", "proximal_adagrad", "proximal_adagrad_plain")})
CASES.update({f"lookup:{strategy}:{parts}": _lookup(strategy, parts, IDS)
              for strategy in ("mod", "div") for parts in (1, 2, 3)})
CASES.update({
    "lookup:div:3:int64_ids": _lookup("div", 3, np.array([13, 4, 5, 9], np.int64)),
    "lookup_with_max_norm": lookup_with_max_norm,
    "lookup_errors": lookup_errors,
    "ids_outside_their_range": ids_outside_their_range,
    "unsorted_segment_sum_gradient_drops_negative_ids":
        unsorted_segment_sum_gradient_drops_negative_ids,
    "sparse_update_errors": sparse_update_errors,
    "unique_and_stitch": unique_and_stitch,
    "lookup_sparse_errors": lookup_sparse_errors,
})
CASES.update({f"lookup_sparse:{combiner}:{'weighted' if weighted else 'ones'}:{parts}":
              _lookup_sparse(combiner, weighted, parts)
              for combiner in ("sum", "mean", "sqrtn") for weighted in (False, True)
              for parts in (1, 2)})
