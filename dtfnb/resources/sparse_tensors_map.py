"""SparseTensorsMap: SparseTensors parked in a task under int64 handles.

A queue holds dense tensors only, so an input pipeline batches a SparseTensor as
TensorFlow does: the op that adds it here enqueues its handle, and after the dequeue
the op that takes a batch of handles rebuilds one SparseTensor of them, a row each.
Each handle is taken once; handles count up from 0 in each map.
"""

import threading

import numpy as np

from dtfnb.base.dtypes import as_dtype, c_type_name
from dtfnb.base.errors import InvalidArgumentError


def _invalid(message):
    return InvalidArgumentError(None, None, message)


class SparseTensorsMap:
    """The SparseTensors (indices, values, dense shape) added and not yet taken."""

    def __init__(self, name):
        self.name = name
        self._lock = threading.Lock()
        self._next_handle = 0
        self._tensors = {}

    def __len__(self):
        with self._lock:
            return len(self._tensors)

    def add(self, indices, values, shape):
        """Keeps one SparseTensor (its arrays as given); returns its handle."""
        with self._lock:
            handle = self._next_handle
            self._next_handle += 1
            self._tensors[handle] = (indices, values, tuple(int(d) for d in shape))
            return handle

    def take_many(self, handles, dtype):
        """The SparseTensors of `handles` (a vector), removed from the map, as one of a rank
        higher: row i is the i-th of them, and each other dimension the largest of theirs.

        As TensorFlow's, a handle not in the map fails the take, after the handles before it
        were removed; so does a SparseTensor not of `dtype` or of another rank than the
        first, after all of them were.
        """
        if len(handles) == 0:
            raise _invalid("Must have at least 1 serialized SparseTensor, but input matrix has "
                           "0 rows")
        tensors = []
        with self._lock:
            for handle in handles.tolist():
                tensor = self._tensors.pop(handle, None)
                if tensor is None:
                    raise _invalid(f"Unable to find SparseTensor: {handle} in map: {self.name}")
                tensors.append(tensor)
        rank = len(tensors[0][2])
        for i, (_, values, shape) in enumerate(tensors):
            if as_dtype(values.dtype) != dtype:
                raise _invalid(f"Requested SparseTensor of type {c_type_name(dtype)} but "
                               f"SparseTensor[{i}].values.dtype() == "
                               f"{c_type_name(values.dtype)}")
            if len(shape) != rank:
                raise _invalid(f"Inconsistent rank across SparseTensors: rank prior to "
                               f"SparseTensor[{i}] was: {rank + 1} but rank of "
                               f"SparseTensor[{i}] is: {len(shape) + 1}")
        counts = [len(values) for _, values, _ in tensors]
        rows = np.repeat(np.arange(len(tensors), dtype=np.int64), counts)
        indices = np.concatenate([indices for indices, _, _ in tensors])
        shapes = np.array([shape for _, _, shape in tensors], np.int64).reshape(len(tensors), rank)
        return (np.concatenate([rows[:, None], indices], axis=1),
                np.concatenate([values for _, values, _ in tensors]),
                np.concatenate([[len(tensors)], shapes.max(axis=0)]).astype(np.int64))
