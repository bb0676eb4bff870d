"""The Python side of Dataset.from_generator: the generator's passes by id, and the
three functions its GeneratorDataset op calls through tf.numpy_function ops (start a
pass, next element, end a pass). They run in the process that built the graph.

An element the generator yields is checked against the dataset's types and shapes as
TensorFlow checks it (TypeError, which fails the step as InvalidArgumentError); the
generator's end (StopIteration) ends the pass (OutOfRangeError)."""

import itertools
import threading

import numpy as np

from dtfnb.base import dtypes
from dtfnb.base.shapes import TensorShape
from dtfnb.data import nest
from dtfnb.ops.constant_op import to_array


class GeneratorState:
    """`generator`'s passes: each iterator initialization starts one, under a new id."""

    def __init__(self, generator):
        self._generator = generator
        self._ids = itertools.count()
        self._args = {}
        self._iterators = {}
        self._lock = threading.Lock()

    def next_id(self, *args):
        """A new pass's id (int64), for the generator called with `args`."""
        with self._lock:
            pass_id = next(self._ids)
            self._args[pass_id] = args
        return np.array(pass_id, dtype=np.int64)

    def _iterator(self, pass_id):
        pass_id = int(pass_id)
        with self._lock:
            iterator = self._iterators.get(pass_id)
            if iterator is None:
                iterator = self._iterators[pass_id] = iter(
                    self._generator(*self._args.pop(pass_id)))
            return iterator

    def next_values(self, pass_id, output_types, output_shapes):
        """The pass's next element as arrays of `output_types`, checked."""
        values = next(self._iterator(pass_id))
        if isinstance(output_shapes, TensorShape) and output_shapes.ndims is None:
            # TensorFlow converts a lone component of unknown shape as tf.constant does
            try:
                return [to_array(values, output_types)]
            except (TypeError, ValueError) as err:
                raise TypeError(f"`generator` yielded an element that did not match the "
                                f"expected structure. The expected structure was "
                                f"TensorSpec(shape={output_shapes}, dtype={output_types!r}, "
                                f"name=None), but the yielded element was {values}.") from err
        try:
            flat = _flatten_up_to(output_types, values)
        except (TypeError, ValueError) as err:
            raise TypeError(f"`generator` yielded an element that did not match the expected "
                            f"structure. The expected structure was {output_types}, but the "
                            f"yielded element was {values}.") from err
        arrays = []
        for value, dtype, shape in zip(flat, nest.flatten(output_types),
                                       nest.flatten(output_shapes)):
            try:
                array = _as_array(value, dtypes.as_dtype(dtype))
            except (TypeError, ValueError) as err:
                raise TypeError(f"`generator` yielded an element that could not be "
                                f"converted to the expected type. The expected type was "
                                f"{dtype.name}, but the yielded element was "
                                f"{value}.") from err
            if not shape.is_compatible_with(array.shape):
                raise TypeError(f"`generator` yielded an element of shape {array.shape} "
                                f"where an element of shape {shape} was expected.")
            arrays.append(array)
        return arrays

    def completed(self, pass_id):
        """Forgets a finished pass; returns 0 (the op needs an output)."""
        with self._lock:
            self._iterators.pop(int(pass_id), None)
        return np.array(0, dtype=np.int64)


def _flatten_up_to(structure, value):
    """`value`'s leaves where `structure` has them (tf.data's: tuples and dicts only)."""
    if isinstance(structure, tuple):
        if not isinstance(value, tuple) or len(value) != len(structure):
            raise ValueError(f"The two structures don't have the same sequence length: "
                             f"{structure} and {value}")
        return [leaf for s, v in zip(structure, value) for leaf in _flatten_up_to(s, v)]
    if isinstance(structure, dict):
        if not isinstance(value, dict) or set(value) != set(structure):
            raise ValueError(f"The two structures don't have the same keys: {structure} and "
                             f"{value}")
        return [leaf for key in sorted(structure)
                for leaf in _flatten_up_to(structure[key], value[key])]
    return [value]


def _as_array(value, dtype):
    """`value` as an array of `dtype`, as TensorFlow's registry converts it (numbers cast,
    integers wrapping around); text is bytes in a string array."""
    numpy_dtype = dtype.as_numpy_dtype
    if np.issubdtype(numpy_dtype, np.number):
        return np.asarray(value, order="C").astype(numpy_dtype)
    array = np.asarray(value, dtype=numpy_dtype, order="C")
    if array.dtype == object:
        array = np.vectorize(lambda s: s.encode("utf8") if isinstance(s, str) else s,
                             otypes=[object])(array)
    return array
