"""IndexedSlices: a sparse gradient, as rows of a dense tensor; IndexedSlicesValue, what a
session returns for one and accepts as its feed.

Its conversion to a dense Tensor (a sum of the rows) needs an op, so ops/slicing_ops.py
registers it, beside unsorted_segment_sum.
"""

import collections

IndexedSlicesValue = collections.namedtuple("IndexedSlicesValue",
                                            ["values", "indices", "dense_shape"])


class IndexedSlices:
    """A sparse gradient: the rows `indices` of a tensor of shape `dense_shape` are `values`.

    Converting one to a Tensor sums its rows into the dense shape, as TensorFlow does.
    """

    def __init__(self, values, indices, dense_shape=None):
        self._values = values
        self._indices = indices
        self._dense_shape = dense_shape

    @property
    def values(self):
        """A `Tensor` containing the values of the slices."""
        return self._values

    @property
    def indices(self):
        """A 1-D `Tensor` containing the indices of the slices."""
        return self._indices

    @property
    def dense_shape(self):
        """A 1-D `Tensor` containing the shape of the corresponding dense tensor."""
        return self._dense_shape

    @property
    def name(self):
        """The name of this `IndexedSlices` (that of its values)."""
        return self._values.name

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
        """The `Graph` that contains the values, indices, and shape tensors."""
        return self._values.graph

    @property
    def device(self):
        """The name of the device on which `values` will be produced, or `None`."""
        return self._values.device

    def __repr__(self):
        shape = "" if self._dense_shape is None else f", dense_shape={self._dense_shape}"
        return f"IndexedSlices(indices={self._indices}, values={self._values}{shape})"
