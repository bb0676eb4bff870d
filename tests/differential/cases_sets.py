"""tf.sets: size, intersection, difference and union of dense tensors and SparseTensors
(dense-dense, dense-sparse, sparse-sparse, and sparse-dense swapped): values sorted per
group with duplicates and empty groups, rank 2 and 3, the supported dtypes, static
shapes, graphs, build-time and run-time errors, and no gradient."""

import numpy as np
from observe import node_defs, outcome, run

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


# rows with duplicates, a row whose values all repeat, and rows the operations leave empty
_A = np.int32([[5, 1, 1, 3], [2, 2, 2, 2], [7, 8, 9, 4]])
_B = np.int32([[3, 3, 6, 1], [2, 0, 0, 0], [1, 1, 1, 1]])
_CUBE_A = np.int32([[[1, 2, 2], [3, 3, 3]], [[0, 4, 1], [9, 9, 8]]])
_CUBE_B = np.int32([[[2, 5, 5], [3, 3, 3]], [[6, 6, 6], [8, 7, 7]]])


def _operations(tf, a, b):
    """Each operation of a and b, in one list: intersection, difference both ways, union."""
    return [tf.sets.intersection(a, b), tf.sets.difference(a, b),
            tf.sets.difference(a, b, aminusb=False), tf.sets.union(a, b)]


def _static(sparse_tensors):
    """The static shapes of each SparseTensor and of its three tensors."""
    return [[sp.get_shape(), sp.indices.shape, sp.values.shape, sp.dense_shape.shape,
             sp.dtype] for sp in sparse_tensors]


def _sparse(tf, entries, dense_shape, dtype=None):
    """A SparseTensor of {index: value} in row-major order."""
    indices = sorted(entries)
    values = np.array([entries[i] for i in indices], dtype)
    return tf.SparseTensor(np.int64(indices).reshape(-1, len(dense_shape)), values,
                           dense_shape)


def _sparse_a(tf):
    """The sets of _A's first and last rows, as a SparseTensor whose last dimension is 5."""
    return _sparse(tf, {(0, 0): 5, (0, 1): 1, (0, 3): 1, (0, 4): 3, (2, 0): 7, (2, 1): 8,
                        (2, 2): 9, (2, 3): 4}, [3, 5], np.int32)


def _sparse_b(tf):
    """The sets of _B's last two rows, as a SparseTensor with no first row."""
    return _sparse(tf, {(1, 0): 2, (1, 2): 0, (2, 0): 1, (2, 1): 1}, [3, 3], np.int32)


@case
def dense_dense_values_and_graphs(tf):
    """Python lists and constants of rank 2 and 3; groups the operations leave empty are
    left out of the result, whose last dimension is the largest group's size."""
    results = _operations(tf, _A.tolist(), _B.tolist())
    results += _operations(tf, tf.constant(_CUBE_A), tf.constant(_CUBE_B))
    results.append(tf.sets.union(tf.constant([[1, 1]]), tf.constant([[1, 1]])))
    results.append(tf.sets.intersection(tf.constant(_A[:, :0]), tf.constant(_B[:, :1])))
    return run(tf, results), _static(results), node_defs(tf.get_default_graph())


@case
def dense_sparse_values_and_graphs(tf):
    """A dense first input and a sparse second, whose missing groups are empty sets, rank
    2 and 3, SparseTensorValue too."""
    results = _operations(tf, tf.constant(_A), _sparse_b(tf))
    cube = _sparse(tf, {(0, 0, 0): 2, (0, 0, 3): 7, (1, 1, 0): 8, (1, 1, 1): 9}, [2, 2, 4],
                   np.int32)
    results += _operations(tf, tf.constant(_CUBE_A), cube)
    results.append(tf.sets.union(_A, tf.SparseTensorValue(
        np.int64([[0, 0], [2, 1]]), np.int32([42, 7]), np.int64([3, 6]))))
    return run(tf, results), _static(results), node_defs(tf.get_default_graph())


@case
def sparse_dense_is_swapped(tf):
    """A sparse first input with a dense second builds the dense-sparse op with the
    inputs swapped, and difference's direction flipped ("b-a" for aminusb)."""
    results = _operations(tf, _sparse_b(tf), tf.constant(_A))
    return run(tf, results), _static(results), node_defs(tf.get_default_graph())


@case
def sparse_sparse_values_and_graphs(tf):
    """Groups in one input only, in both, or in neither; different last dimensions; rank
    2 and 3; SparseTensorValues."""
    results = _operations(tf, _sparse_a(tf), _sparse_b(tf))
    cube_a = _sparse(tf, {(0, 0, 0): 1, (0, 0, 1): 1, (1, 0, 2): 4, (1, 1, 0): 6}, [2, 2, 3],
                     np.int32)
    cube_b = _sparse(tf, {(0, 0, 0): 1, (0, 1, 0): 5, (1, 1, 0): 6, (1, 1, 5): 2},
                     [2, 2, 6], np.int32)
    results += _operations(tf, cube_a, cube_b)
    empty = tf.SparseTensorValue(np.zeros((0, 2), np.int64), np.int32([]), np.int64([3, 4]))
    results += [tf.sets.union(empty, _sparse_a(tf)), tf.sets.intersection(empty, empty)]
    return run(tf, results), _static(results), node_defs(tf.get_default_graph())


@case
def dtypes(tf):
    """int64, int8, int16, uint8, uint16 and strings (sorted by their bytes), dense and
    sparse."""
    results = [tf.sets.union(np.int64([[2 ** 40, -3, 2 ** 40]]), np.int64([[-3, 0, 7]]))]
    for dtype in (np.int8, np.int16, np.uint8, np.uint16):
        results += _operations(tf, _A.astype(dtype), _B.astype(dtype))
    words = tf.constant([["pear", "apple", "Zebra", "apple"], ["", "b", "ab", "a"]])
    other = _sparse(tf, {(0, 0): "zebra", (0, 1): "pear", (1, 0): "", (1, 1): "ab"}, [2, 3])
    results += _operations(tf, words, other)
    results += _operations(tf, other, other)
    results.append(tf.sets.difference(words, tf.constant([["apple"], ["ab"]])))
    return run(tf, results), _static(results)


@case
def set_size(tf):
    """Distinct values per group (0 for an empty one), rank 2 and 3, both names, a
    SparseTensorValue, strings; its shape is unknown."""
    sizes = [tf.sets.size(_sparse_a(tf)), tf.sets.set_size(_sparse_b(tf)),
             tf.sets.size(_sparse(tf, {(0, 1, 0): 3, (0, 1, 1): 3, (0, 1, 2): 4, (1, 0, 0): 1},
                                  [2, 3, 4], np.int64)),
             tf.sets.size(tf.SparseTensorValue(np.int64([[0, 0], [0, 1]]),
                                               np.array([b"x", b"x"], object),
                                               np.int64([2, 2]))),
             tf.sets.size(tf.SparseTensorValue(np.zeros((0, 3), np.int64), np.uint8([]),
                                               np.int64([2, 0, 3])))]
    names = [tf.sets.set_intersection, tf.sets.set_difference, tf.sets.set_union]
    results = [fn(_A, _B) for fn in names]
    return (run(tf, sizes + results), [s.shape for s in sizes],
            node_defs(tf.get_default_graph()))


@case
def static_shapes_of_partly_known_inputs(tf):
    """The result's rank from whichever input knows it; nothing else is known."""
    unknown = tf.placeholder(tf.int32)
    rank3 = tf.placeholder(tf.int32, [None, 2, None])
    matrix = tf.placeholder(tf.int32, [4, None])
    sparse = tf.sparse_placeholder(tf.int32)
    sparse3 = tf.sparse_placeholder(tf.int32, shape=[2, None, 5])
    results = [tf.sets.union(unknown, unknown), tf.sets.union(unknown, rank3),
               tf.sets.union(rank3, unknown), tf.sets.union(matrix, matrix),
               tf.sets.union(unknown, sparse), tf.sets.union(unknown, sparse3),
               tf.sets.union(rank3, sparse), tf.sets.union(sparse, sparse),
               tf.sets.union(sparse, sparse3), tf.sets.union(sparse3, sparse)]
    sizes = [tf.sets.size(sparse), tf.sets.size(sparse3)]
    return _static(results), [s.shape for s in sizes], node_defs(tf.get_default_graph())


@case
def errors_at_build(tf):
    """sets_impl's TypeErrors (dtypes; set_size of a dense tensor; a validate_indices
    that is no bool, where None is the default), and the shape functions' ValueErrors
    (ranks and leading dimensions); the op built after them takes the next name."""
    floats = tf.constant([[1.0, 2.0]])
    ints = tf.constant([[1, 2]])
    sparse_floats = tf.SparseTensor([[0, 0]], [1.0], [1, 2])
    sparse_ints = tf.SparseTensor([[0, 0]], [1], [1, 2])
    vector = tf.SparseTensor([[0]], [1], [3])
    at_build = [
        outcome(tf.sets.union, floats, floats), outcome(tf.sets.intersection, [[1.5]], [[1]]),
        outcome(tf.sets.difference, sparse_floats, ints),
        outcome(tf.sets.size, sparse_floats), outcome(tf.sets.size, ints),
        outcome(tf.sets.size, [[1, 2]]),
        outcome(tf.sets.union, ints, tf.constant([[1]], tf.int64)),
        outcome(tf.sets.union, ints, sparse_floats),
        outcome(tf.sets.union, tf.constant(["a"]), ["a"]),
        outcome(tf.sets.union, [1, 2], [1]),
        outcome(tf.sets.union, tf.placeholder(tf.int32), [1, 2]),
        outcome(tf.sets.union, ints, [[[1]]]),
        outcome(tf.sets.union, ints, [[1], [2]]),
        outcome(tf.sets.union, tf.zeros([2, 3, 4], tf.int32), tf.zeros([2, 4, 4], tf.int32)),
        outcome(tf.sets.union, ints, tf.SparseTensor([[0, 0, 0]], [1], [1, 1, 1])),
        outcome(tf.sets.union, [1, 2], vector),
        outcome(tf.sets.union, vector, vector),
        outcome(tf.sets.union, sparse_ints, tf.SparseTensor([[0, 0, 0]], [1], [1, 1, 1])),
        outcome(tf.sets.union, tf.sparse_placeholder(tf.int32), vector),
        outcome(tf.sets.union, vector, tf.sparse_placeholder(tf.int32)),
        outcome(tf.sets.union, ints, ints, validate_indices=1),
        outcome(tf.sets.size, sparse_ints, validate_indices=None),
    ]
    after = tf.sets.union(tf.placeholder(tf.int32), vector)
    return at_build, _static([after]), node_defs(tf.get_default_graph())


@case
def errors_at_run(tf):
    """The kernels' errors: leading dimensions that differ, ranks below 2, sparse indices
    out of order, repeated or out of bounds, bad dense shapes and parts that do not match;
    and, with validate_indices false, groups as the indices bring them (a group twice, or
    skipped), only a sanity check of each group's indices failing."""
    dense, other = tf.placeholder(tf.int32), tf.placeholder(tf.int32)
    sparse, other_sparse = tf.sparse_placeholder(tf.int32), tf.sparse_placeholder(tf.int32)

    def value(indices, values, dense_shape):
        return tf.SparseTensorValue(np.int64(indices), np.int32(values), np.int64(dense_shape))

    ok = value([[0, 0], [1, 0], [1, 1]], [1, 2, 3], [2, 2])
    unordered = value([[1, 0], [0, 0], [1, 1]], [1, 2, 3], [2, 2])
    union = tf.sets.union(dense, other)
    dense_sparse = tf.sets.intersection(dense, sparse)
    sparse_sparse = tf.sets.difference(sparse, other_sparse)
    size = tf.sets.size(sparse)
    checked = [
        (union, {dense: [[1, 2], [3, 4]], other: [[1], [2], [3]]}),
        (union, {dense: [[[1]], [[2]]], other: [[[1]], [[2]], [[3]]]}),
        (union, {dense: [[1, 2]], other: [[[1]]]}),
        (union, {dense: [1, 2], other: [1]}),
        (dense_sparse, {dense: [[1, 2], [3, 4], [5, 6]], sparse: ok}),
        (dense_sparse, {dense: [[1, 2]], sparse: value([[0, 0, 0]], [1], [1, 1, 1])}),
        (dense_sparse, {dense: [[1, 2]], sparse: value([[0], [1]], [1, 2], [3])}),
        (dense_sparse, {dense: [[1, 2], [3, 4]], sparse: unordered}),
        (sparse_sparse, {sparse: ok, other_sparse: value([[0, 0]], [1], [3, 1])}),
        (sparse_sparse, {sparse: value([[0], [1]], [1, 2], [3]), other_sparse: ok}),
        (sparse_sparse, {sparse: ok, other_sparse: unordered}),
        (size, {sparse: value([[0, 0], [0, 0]], [1, 2], [2, 2])}),
        (size, {sparse: value([[0, 0], [2, 0]], [1, 2], [2, 2])}),
        (size, {sparse: value([[0, -1]], [1], [2, 2])}),
        (size, {sparse: value([[0, 0]], [1], [2, -1])}),
        (size, {sparse: value([[0, 0]], [1, 2], [2, 2])}),
        (size, {sparse: value([[0, 0, 0]], [1], [2, 2])}),
        (size, {sparse: value([[0, 0]], [1], [2])}),
    ]
    unvalidated = [tf.sets.union(dense, sparse, validate_indices=False),
                   tf.sets.union(sparse, other_sparse, validate_indices=False),
                   tf.sets.size(sparse, validate_indices=False)]
    unchecked = [
        (unvalidated[0], {dense: [[1, 2], [3, 4]], sparse: unordered}),
        (unvalidated[0], {dense: [[1, 2]], sparse: value([[0, 5]], [1], [1, 2])}),
        (unvalidated[0], {dense: [[1, 2], [3, 4]], sparse: value([[1, 0], [0, 1]], [5, 6],
                                                                 [2, 2])}),
        (unvalidated[1], {sparse: unordered, other_sparse: value([[0, 0], [1, 1]], [7, 8],
                                                                 [2, 2])}),
        (unvalidated[2], {sparse: unordered}),
        (unvalidated[2], {sparse: value([[0, 0], [0, 0], [1, 1]], [4, 4, 4], [2, 2])}),
        (unvalidated[2], {sparse: value([[0, 0], [3, 0]], [1, 2], [2, 2])}),
        (unvalidated[2], {sparse: value([[0, 0]], [1], [2, 0])}),
    ]
    return [outcome(run, tf, result, feed) for result, feed in checked + unchecked]


@case
def no_gradient(tf):
    """The set ops stop gradients, as NotDifferentiable ops."""
    values = tf.constant([1, 2, 2])
    sparse = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], values, [2, 2])
    dense = tf.constant([[1, 5]])
    results = [tf.sets.size(sparse), tf.sets.union(dense, dense).values,
               tf.sets.union(tf.constant([[1, 2], [3, 4]]), sparse).values,
               tf.sets.union(sparse, sparse).values]
    return [tf.gradients(r, [values, dense]) for r in results]
