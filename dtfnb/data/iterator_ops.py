"""tf.data.Iterator: an iterator resource on the task that runs it, and its ops.

`OneShotIterator` makes its iterator from its dataset input at the first run of a
session; `IteratorV2` holds an empty one that `MakeIterator` (the initializer)
fills. Either lives per session, or, given a shared_name, in its device's
ResourceMgr. `IteratorGetNext` yields the next element.
"""

from dtfnb.base import dtypes
from dtfnb.base.shapes import as_shape, scalar
from dtfnb.data import nest
from dtfnb.framework.registry import define_op
from dtfnb.framework.sparse_tensor import SparseTensor
from dtfnb.framework.tensor import Tensor
from dtfnb.ops import sparse_ops
from dtfnb.ops.building import graph_of, make_op

define_op("IteratorV2", lambda op: [scalar()], stateful=True)
define_op("OneShotIterator", lambda op: [scalar()], stateful=True)
define_op("MakeIterator", lambda op: [], stateful=True)
define_op("IteratorGetNext", lambda op: [as_shape(s) for s in op._raw_attr("output_shapes")],
          stateful=True)


def structure_attrs(output_types, output_shapes, output_classes):
    """The flat output_types and output_shapes attrs of a dataset or iterator op: a
    SparseTensor component is one variant of unknown shape."""
    flat = zip(nest.flatten(output_types), nest.flatten(output_shapes),
               nest.flatten(output_classes))
    flat = [(dtypes.variant, as_shape(None)) if cls is SparseTensor else (dtype, shape)
            for dtype, shape, cls in flat]
    return {"output_types": [dtype for dtype, _ in flat],
            "output_shapes": [shape for _, shape in flat]}


def dense_classes(output_types):
    """Every component a Tensor."""
    return nest.map_structure(lambda _: Tensor, output_types)


class Structured:
    """What datasets and iterators say about their elements: types, shapes, classes."""

    @property
    def output_types(self):
        """The dtype of each component of an element, in the element's structure."""
        return self._output_types

    @property
    def output_shapes(self):
        """The shape of each component of an element, in the element's structure."""
        return self._output_shapes

    @property
    def output_classes(self):
        """The class of each component of an element: `Tensor` or `SparseTensor`."""
        return self._output_classes


class Iterator(Structured):
    """Produces the elements of a dataset, one `get_next()` run at a time."""

    def __init__(self, iterator_resource, initializer, output_types, output_shapes,
                 output_classes):
        self._iterator_resource = iterator_resource
        self._initializer = initializer
        self._output_types = output_types
        self._output_shapes = output_shapes
        self._output_classes = output_classes

    @staticmethod
    def from_structure(output_types, output_shapes=None, shared_name=None,
                       output_classes=None):
        """An iterator with no dataset yet; `make_initializer(dataset)` gives it one."""
        output_types = nest.map_structure(dtypes.as_dtype, output_types)
        if output_shapes is None:
            output_shapes = nest.map_structure(lambda _: as_shape(None), output_types)
        else:
            output_shapes = nest.map_structure(as_shape, output_shapes)
        if output_classes is None:
            output_classes = dense_classes(output_types)
        attrs = dict(structure_attrs(output_types, output_shapes, output_classes),
                     shared_name=shared_name or "", container="")
        resource = make_op("IteratorV2", [], [dtypes.resource], name="Iterator",
                           attrs=attrs).outputs[0]
        return Iterator(resource, None, output_types, output_shapes, output_classes)

    @staticmethod
    def _one_shot(dataset):
        attrs = structure_attrs(dataset.output_types, dataset.output_shapes,
                                dataset.output_classes)
        resource = make_op("OneShotIterator", [dataset._as_variant_tensor()], [dtypes.resource],
                           attrs=attrs).outputs[0]
        return Iterator(resource, None, dataset.output_types, dataset.output_shapes,
                        dataset.output_classes)

    @property
    def initializer(self):
        """The op that (re)initializes this iterator; ValueError if it has none."""
        if self._initializer is None:
            raise ValueError("Iterator does not have an initializer.")
        return self._initializer

    def make_initializer(self, dataset, name=None):
        """The op that (re)starts this iterator on `dataset`."""
        if (nest.flatten(dataset.output_types) != nest.flatten(self._output_types)
                or nest.flatten(dataset.output_classes) != nest.flatten(self._output_classes)):
            raise TypeError(f"Expected output types {self._output_types!r} but got dataset "
                            f"with output types {dataset.output_types!r}.")
        for mine, theirs in zip(nest.flatten(self._output_shapes),
                                nest.flatten(dataset.output_shapes)):
            if not mine.is_compatible_with(theirs):
                raise TypeError(f"Expected output shapes compatible with "
                                f"{self._output_shapes!r} but got dataset with output "
                                f"shapes {dataset.output_shapes!r}.")
        graph = graph_of(self._iterator_resource)
        return make_op("MakeIterator", [dataset._as_variant_tensor(), self._iterator_resource],
                       [], name=name or "MakeIterator", graph=graph)

    def get_next(self, name=None):
        """The next element (a structure of tensors and SparseTensors); OutOfRangeError at
        the end."""
        attrs = structure_attrs(self._output_types, self._output_shapes, self._output_classes)
        op = make_op("IteratorGetNext", [self._iterator_resource], attrs["output_types"],
                     name=name, attrs=attrs)
        components = [sparse_ops.deserialize_sparse(t, dtype, shape) if cls is SparseTensor
                      else t for t, dtype, shape, cls in zip(
                          op.outputs, nest.flatten(self._output_types),
                          nest.flatten(self._output_shapes),
                          nest.flatten(self._output_classes))]
        return nest.pack_sequence_as(self._output_types, components)



def get_output_types(dataset_or_iterator):
    """The `output_types` of a dataset or iterator."""
    return dataset_or_iterator.output_types


def get_output_shapes(dataset_or_iterator):
    """The `output_shapes` of a dataset or iterator."""
    return dataset_or_iterator.output_shapes


def get_output_classes(dataset_or_iterator):
    """The `output_classes` of a dataset or iterator."""
    return dataset_or_iterator.output_classes


def make_one_shot_iterator(dataset):
    """`dataset.make_one_shot_iterator()`, as tf.data's function."""
    return dataset.make_one_shot_iterator()


def make_initializable_iterator(dataset, shared_name=None):
    """`dataset.make_initializable_iterator()`, as tf.data's function."""
    return dataset.make_initializable_iterator(shared_name)
