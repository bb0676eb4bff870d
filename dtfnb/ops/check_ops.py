"""Assertions built into a graph (tf.Assert, tf.assert_equal): an Assert op that fails its
step when the condition is false, or an error at once when both sides are known at build.

As TensorFlow, tf.Assert runs its op under a cond (`AssertGuard`) unless all its data are
int32 or strings, which TensorFlow keeps in host memory: the data then reach the op only
when the condition is false."""

import numpy as np

from dtfnb.base import dtypes
from dtfnb.base.errors import InvalidArgumentError
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.tensor import Tensor
from dtfnb.ops import math_ops
from dtfnb.ops.building import graph_of
from dtfnb.ops.cond import cond
from dtfnb.ops.control_flow_ops import make_assert, no_op
from dtfnb.ops.shape_util import constant_value


def Assert(condition, data, summarize=None, name=None):  # noqa: N802 - TensorFlow's name
    """An op that fails with InvalidArgumentError, showing `data`, when `condition` is false.

    In a graph it runs only when something depends on it, e.g.::

        check = tf.Assert(tf.reduce_all(x > 0), [x])
        with tf.control_dependencies([check]):
            y = tf.log(x)

    `summarize` is how many entries of each tensor of `data` the message shows (default 3).
    """
    data = list(data)
    graph = graph_of(condition, data)
    with graph.as_default(), graph.name_scope(name or "Assert"):
        # Converted here to choose how to build the check, and again by the op: both
        # sets of constants show in TensorFlow's graphs.
        tensors = [convert_to_tensor(x) for x in data]
        if all(t.dtype.base_dtype in (dtypes.int32, dtypes.string) for t in tensors):
            return make_assert(condition, data, summarize)
        condition = convert_to_tensor(condition, name="Condition")
        guard = cond(condition, no_op, lambda: make_assert(condition, data, summarize),
                     name="AssertGuard")
        return guard.op


def assert_equal(x, y, data=None, summarize=None, message=None, name=None):
    """An op that fails its step with InvalidArgumentError unless `x == y` everywhere;
    InvalidArgumentError at once when both are known at build and differ.

    ```python
    check = tf.assert_equal(tf.shape(labels), tf.shape(logits)[:-1])
    with tf.control_dependencies([check]):
        loss = tf.identity(loss)
    ```
    """
    graph = graph_of(x, y)
    # As TensorFlow: a scope of this name first (holding the no-op for `x is y`), then
    # the assertion in another, which is why its ops are under `assert_equal_1`.
    with graph.as_default(), graph.name_scope(name or "assert_equal"):
        if x is y:
            return no_op()
    return _binary_assert("==", "assert_equal", math_ops.equal, np.equal, x, y, data,
                          summarize, message, name)


def _binary_assert(symbol, op_name, test, static_test, x, y, data, summarize, message,
                   name):
    graph = graph_of(x, y)
    with graph.as_default(), graph.name_scope(name or op_name):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y")
        if data is None:
            data = [f"Condition x {symbol} y did not hold element-wise:",
                    f"x ({x.name}) = ", x, f"y ({y.name}) = ", y]
        if message is not None:
            data = [message, *data]
        condition = math_ops.reduce_all(test(x, y))
        x_value, y_value = constant_value(x), constant_value(y)
        if x_value is not None and y_value is not None \
                and not np.all(static_test(x_value, y_value)):
            raise InvalidArgumentError(None, None, "\n".join(_static_string(d) for d in data))
        return Assert(condition, data, summarize=summarize)


def _static_string(item):
    """An item of an assertion's data as a failure at build shows it."""
    if not isinstance(item, Tensor):
        return str(item)
    value = constant_value(item)
    return str(item) if value is None else str(value)
