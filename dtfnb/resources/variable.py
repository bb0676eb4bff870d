"""A ref variable's buffer, as VariableV2 holds it in a device's ResourceMgr.

Arrays are never changed in place: an update stores a new array, so a value read
earlier in a step (or fetched) stays what it was.
"""

import threading

from dtfnb.base.errors import FailedPreconditionError, InvalidArgumentError
from dtfnb.base.shapes import dims_string


class VariableResource:
    """The value of one ref variable, held in its device's ResourceMgr.

    `tf.Variable`'s VariableV2 op outputs this resource itself (a ref); Assign and
    the update kernels replace `value`, and any other op reads it through
    `value_of`. Reading one that was never assigned raises FailedPreconditionError.

    ```python
    import numpy as np
    from dtfnb.base import dtypes
    from dtfnb.resources.variable import VariableResource, value_of

    w = VariableResource("w", dtypes.float32, (2,))
    w.assign(np.zeros(2, np.float32))
    w.update(lambda value: value + 1)    # what AssignAdd does, under the lock
    print(value_of(w), w.initialized)    # [1. 1.] True
    ```
    """
    __slots__ = ("name", "dtype", "shape", "value", "lock", "__weakref__")

    def __init__(self, name, dtype, shape):
        self.name = name
        self.dtype = dtype
        self.shape = shape
        self.value = None
        self.lock = threading.Lock()

    @property
    def initialized(self):
        """Whether the variable has been assigned a value."""
        return self.value is not None

    def read(self):
        """The current value; FailedPreconditionError if never assigned."""
        value = self.value
        if value is None:
            raise FailedPreconditionError(None, None,
                                          f"Attempting to use uninitialized value {self.name}")
        return value

    def assign(self, value, validate_shape=True):
        """Sets the value (an array it keeps and never changes in place)."""
        if validate_shape and self.shape is not None and tuple(value.shape) != self.shape:
            raise InvalidArgumentError(
                None, None, "Assign requires shapes of both tensors to match. "
                f"lhs shape= {dims_string(self.shape)} rhs shape= {dims_string(value.shape)}")
        self.value = value

    def update(self, fn):
        """Replaces the value by fn(value) under the lock; returns the new value."""
        with self.lock:
            self.value = fn(self.read())
            return self.value


def value_of(value):
    """Dereferences a ref (a VariableResource) to its current value; passes others through."""
    return value.read() if isinstance(value, VariableResource) else value

