"""Sparse ops: sparse_retain, sparse_tensor_to_dense, and the SparseTensorsMap ops that
carry SparseTensors through queues (see train/input.py): the add ops park SparseTensors
in a map of their task and give int64 handles, TakeManySparseFromTensorsMap rebuilds a
batch of them.

The map ops are TensorFlow's private ones (sparse_ops._add_sparse_to_tensors_map and
friends), with its signatures.
"""

import numpy as np

from dtfnb.base import dtypes
from dtfnb.base.shapes import TensorShape, scalar, unknown_shape
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.operation import Operation
from dtfnb.framework.registry import NotDifferentiable, define_op
from dtfnb.framework.sparse_tensor import SparseTensor, SparseTensorValue
from dtfnb.ops import array_ops
from dtfnb.ops.array_ops import identity, reshape, where
from dtfnb.ops.building import make_op, make_tensor, op_scope
from dtfnb.ops.shape_util import constant_value, shape_error
from dtfnb.ops.slicing_ops import gather

_ADD_OPS = ("AddSparseToTensorsMap", "AddManySparseToTensorsMap")


def _with_ranks(op, ranks):
    for tensor, rank in zip(op.inputs, ranks):
        if tensor.shape.ndims not in (None, rank):
            raise shape_error(op, f"Shape must be rank {rank} but is rank {tensor.shape.ndims}")


def _add_shape(output):
    def shape_fn(op):
        _with_ranks(op, (2, 1, 1))
        return [output]
    return shape_fn


def _take_shape(op):
    _with_ranks(op, (1,))
    return [TensorShape([None, None]), TensorShape([None]), TensorShape([None])]


define_op("AddSparseToTensorsMap", _add_shape(scalar()), stateful=True)
define_op("AddManySparseToTensorsMap", _add_shape(TensorShape([None])), stateful=True)
define_op("TakeManySparseFromTensorsMap", _take_shape, stateful=True)
for _op in (*_ADD_OPS, "TakeManySparseFromTensorsMap"):
    NotDifferentiable(_op)


def _convert_to_sparse_tensor(sp_input):
    if isinstance(sp_input, SparseTensorValue):
        return SparseTensor.from_value(sp_input)
    if not isinstance(sp_input, SparseTensor):
        raise TypeError("Input must be a SparseTensor.")
    return sp_input


def _add_to_map(op_type, sp_input, container, shared_name, name):
    sp_input = _convert_to_sparse_tensor(sp_input)
    return make_tensor(op_type, [sp_input.indices, sp_input.values, sp_input.dense_shape],
                       dtypes.int64, name=name or op_type, attrs={
                           "T": sp_input.dtype.base_dtype, "container": container or "",
                           "shared_name": shared_name or ""})


def add_sparse_to_tensors_map(sp_input, container=None, shared_name=None, name=None):
    """Puts `sp_input` in a SparseTensorsMap (by default the one named after this op);
    returns its handle, an int64 scalar."""
    return _add_to_map("AddSparseToTensorsMap", sp_input, container, shared_name, name)


def add_many_sparse_to_tensors_map(sp_input, container=None, shared_name=None, name=None):
    """Puts each row (dimension 0) of `sp_input`, of rank > 1 and in row-major order, in a
    SparseTensorsMap as a SparseTensor of one rank lower; returns their handles."""
    return _add_to_map("AddManySparseToTensorsMap", sp_input, container, shared_name, name)


def take_many_sparse_from_tensors_map(sparse_map_op, sparse_handles, rank=None, name=None):
    """The SparseTensors of `sparse_handles` (a vector), taken out of the map that
    `sparse_map_op` adds to, as one SparseTensor whose row i is the i-th of them."""
    if not isinstance(sparse_map_op, Operation):
        raise TypeError("sparse_map_op be an Operation")
    if sparse_map_op.type not in _ADD_OPS:
        raise TypeError("sparse_map_op must be one of AddSparseToTensorsMap or "
                        f"AddSparseToTensorsMap. Instead, found `{sparse_map_op.type}`.")
    graph = sparse_map_op.graph
    with graph.colocate_with(sparse_map_op):
        op_type = "TakeManySparseFromTensorsMap"
        sparse_handles = convert_to_tensor(sparse_handles, dtype=dtypes.int64)
        op = make_op(op_type, [sparse_handles],
                     [dtypes.int64, sparse_map_op.get_attr("T"), dtypes.int64],
                     name=name or op_type, graph=graph, attrs={
                         "dtype": sparse_map_op.get_attr("T"),
                         "container": sparse_map_op.get_attr("container"),
                         "shared_name": sparse_map_op.get_attr("shared_name")
                         or sparse_map_op.name})
    indices, values, dense_shape = op.outputs
    indices.set_shape([None, rank])
    dense_shape.set_shape([rank])
    return SparseTensor(indices, values, dense_shape)


def sparse_retain(sp_input, to_retain):
    """The SparseTensor of the values of `sp_input` where the bool vector `to_retain` (one
    per value) is true, of the same dense shape."""
    sp_input = _convert_to_sparse_tensor(sp_input)
    to_retain = convert_to_tensor(to_retain)
    retain_shape = to_retain.shape.with_rank(1)
    if sp_input.values.shape.ndims is not None:
        sp_input.values.shape[0].assert_is_compatible_with(retain_shape[0])
    where_true = reshape(where(to_retain), [-1])
    return SparseTensor(gather(sp_input.indices, where_true),
                        gather(sp_input.values, where_true), identity(sp_input.dense_shape))


def _sparse_to_dense_shape(op):
    """The dense shape's value where it is known; else its length in unknown dims."""
    dims = constant_value(op.inputs[1])
    if dims is not None:
        return [TensorShape([int(d) for d in np.reshape(dims, -1)])]
    length = op.inputs[1].shape.num_elements()
    return [unknown_shape() if length is None else TensorShape([None] * length)]


define_op("SparseToDense", _sparse_to_dense_shape)
NotDifferentiable("SparseToDense")


def sparse_tensor_to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    """The dense tensor of a SparseTensor: its values at its indices, `default_value`
    (zero, or b"" for strings) elsewhere. With `validate_indices` its indices must be
    sorted, in range and distinct."""
    sp_input = _convert_to_sparse_tensor(sp_input)
    if default_value is None:
        default_value = array_ops.zeros([], dtype=sp_input.dtype)
    with op_scope("SparseToDense", name, sp_input.indices) as scope:
        default_value = convert_to_tensor(default_value, dtype=sp_input.dtype,
                                          name="default_value")
        return make_tensor("SparseToDense", [sp_input.indices, sp_input.dense_shape,
                                             sp_input.values, default_value],
                           sp_input.dtype, name=scope, attrs={
                               "T": sp_input.dtype, "Tindices": sp_input.indices.dtype,
                               "validate_indices": bool(validate_indices)})


# -- SparseTensors as tf.data components: one variant each, as TensorFlow's datasets hold
# them (SerializeSparse to a variant; DeserializeSparse back, a batch of them into one
# SparseTensor of one more dimension) -----------------------------------------------------

define_op("SerializeSparse", lambda op: [scalar()])
define_op("SerializeManySparse", lambda op: [TensorShape([None])])
define_op("DeserializeSparse", lambda op: [TensorShape([None, None]), TensorShape([None]),
                                           TensorShape([None])])
for _op in ("SerializeSparse", "SerializeManySparse", "DeserializeSparse"):
    NotDifferentiable(_op)


def _serialized(op_type, sp_input):
    sp_input = _convert_to_sparse_tensor(sp_input)
    return make_tensor(op_type, [sp_input.indices, sp_input.values, sp_input.dense_shape],
                       dtypes.variant, name=op_type,
                       attrs={"T": sp_input.dtype, "out_type": dtypes.variant})


def serialize_sparse(sp_input):
    """A SparseTensor as one variant (a dataset's component)."""
    return _serialized("SerializeSparse", sp_input)


def serialize_many_sparse(sp_input):
    """The rows of a SparseTensor (along its first dimension) as a vector of variants."""
    return _serialized("SerializeManySparse", sp_input)


def deserialize_sparse(serialized, dtype, shape):
    """The SparseTensor of a variant of serialize_sparse, or of a batch of them (one more
    leading dimension), of static `shape`."""
    op = make_op("DeserializeSparse", [serialized], [dtypes.int64, dtype, dtypes.int64],
                 name="DeserializeSparse", attrs={"dtype": dtype, "Tserialized": dtypes.variant})
    indices, values, dense_shape = op.outputs
    if shape.ndims is not None:
        indices.set_shape([None, shape.ndims])
        dense_shape.set_shape([shape.ndims])
    sparse = SparseTensor(indices, values, dense_shape)
    sparse.set_shape(shape)
    return sparse
