"""SparseTensor: a sparse value as three dense tensors (indices, values, dense_shape), and
SparseTensorValue, what a session returns for one and accepts as its feed."""

import collections

from dtfnb.base import dtypes
from dtfnb.base.shapes import TensorShape, unknown_shape
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.graph import get_default_graph
from dtfnb.framework.tensor import Tensor

SparseTensorValue = collections.namedtuple("SparseTensorValue",
                                           ["indices", "values", "dense_shape"])


class SparseTensor:
    """The values at `indices` (an [N, rank] int64 tensor) of a tensor of `dense_shape`
    (a [rank] int64 tensor), every other element being zero."""

    def __init__(self, indices, values, dense_shape):
        graph = next((t.graph for t in (indices, values, dense_shape) if isinstance(t, Tensor)),
                     get_default_graph())
        with graph.name_scope("SparseTensor"):
            self._indices = convert_to_tensor(indices, dtype=dtypes.int64, name="indices")
            self._values = convert_to_tensor(values, name="values")
            self._dense_shape = convert_to_tensor(dense_shape, dtype=dtypes.int64,
                                                  name="dense_shape")
        indices_shape = self._indices.shape.with_rank(2)
        values_shape = self._values.shape.with_rank(1)
        dense_shape_shape = self._dense_shape.shape.with_rank(1)
        indices_shape[0].assert_is_compatible_with(values_shape[0])
        indices_shape[1].assert_is_compatible_with(dense_shape_shape[0])
        self._shape = _static_shape(self._dense_shape)

    @classmethod
    def from_value(cls, value):
        """A SparseTensor from a SparseTensor or a SparseTensorValue."""
        if isinstance(value, SparseTensor):
            return value
        return cls(value.indices, value.values, value.dense_shape)

    @property
    def indices(self):
        """The indices of non-zero values in the represented dense tensor."""
        return self._indices

    @property
    def values(self):
        """The non-zero values in the represented dense tensor."""
        return self._values

    @property
    def dense_shape(self):
        """A 1-D Tensor of int64 representing the shape of the dense tensor."""
        return self._dense_shape

    @property
    def dtype(self):
        """The `DType` of elements in this tensor."""
        return self._values.dtype

    @property
    def op(self):
        """The `Operation` that produces `values` as an output."""
        return self._values.op

    @property
    def graph(self):
        """The `Graph` that contains the index, value, and dense_shape tensors."""
        return self._values.graph

    @property
    def shape(self):
        """Get the `TensorShape` representing the shape of the dense tensor."""
        return self._shape

    def get_shape(self):
        """Get the `TensorShape` representing the shape of the dense tensor."""
        return self._shape

    def set_shape(self, shape):
        """Updates the static shape of the dense tensor (merged with what is known)."""
        self._shape = self._shape.merge_with(shape)

    def with_values(self, new_values):
        """Returns a copy of `self` with `values` replaced by `new_values`."""
        return SparseTensor(self._indices, new_values, self._dense_shape)

    def consumers(self):
        """The ops that consume any of the indices, values or dense_shape tensors."""
        return sorted({op for t in (self._indices, self._values, self._dense_shape)
                       for op in t.consumers()}, key=lambda op: op.name)

    def eval(self, feed_dict=None, session=None):
        """Runs the graph up to this value in `session` (default: the default session)."""
        from dtfnb.framework.default_session import run_in_session

        return run_in_session(self, feed_dict, session)

    def __repr__(self):
        return (f"SparseTensor(indices={self._indices}, values={self._values}, "
                f"dense_shape={self._dense_shape})")


def convert_to_tensor_or_sparse_tensor(value, name=None):
    """A SparseTensor for a SparseTensor or SparseTensorValue, else `value` as a tensor."""
    if isinstance(value, (SparseTensor, SparseTensorValue)):
        return SparseTensor.from_value(value)
    return convert_to_tensor(value, name=name)


def _static_shape(dense_shape):
    """The shape `dense_shape` holds where it is a constant, or the identity of one (-1 for
    an unknown dimension), else a shape of its known rank."""
    while dense_shape.op.type == "Identity":
        dense_shape = dense_shape.op.inputs[0]
    if dense_shape.op.type == "Const":
        return TensorShape([None if d == -1 else int(d) for d in dense_shape.op._raw_attr("value")])
    return unknown_shape(dense_shape.shape[0].value)
