"""Assertions built into a graph (tf.Assert; tf.assert_equal, assert_less and their
siblings; the tests of a sign, an integer type, a type, a scalar shape): an Assert op that
fails its step when the condition is false, or an error at once when both sides are known
at build.

As TensorFlow, tf.Assert runs its op under a cond (`AssertGuard`) unless all its data are
int32 or strings, which TensorFlow keeps in host memory: the data then reach the op only
when the condition is false."""

import numpy as np

from dtfnb.base import dtypes
from dtfnb.base.errors import InvalidArgumentError
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.sparse_tensor import SparseTensor
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


def _binary(symbol, op_name, test, static_test, example):
    def check(x, y, data=None, summarize=None, message=None, name=None):
        return _binary_assert(symbol, op_name, test, static_test, x, y, data, summarize,
                              message, name)

    check.__name__ = check.__qualname__ = op_name
    check.__doc__ = (f"An op that fails its step with InvalidArgumentError unless `x "
                     f"{symbol} y` everywhere (as {example}); InvalidArgumentError at "
                     f"once when both are known at build and it does not hold.")
    return check


assert_none_equal = _binary("!=", "assert_none_equal", math_ops.not_equal, np.not_equal,
                            "[1, 2] != [2, 1]")
assert_less = _binary("<", "assert_less", math_ops.less, np.less, "[1, 2] < [2, 3]")
assert_less_equal = _binary("<=", "assert_less_equal", math_ops.less_equal, np.less_equal,
                            "[1, 2] <= [1, 3]")
assert_greater = _binary(">", "assert_greater", math_ops.greater, np.greater,
                         "[1, 2] > [0, 1]")
assert_greater_equal = _binary(">=", "assert_greater_equal", math_ops.greater_equal,
                               np.greater_equal, "[1, 2] >= [1, 0]")


def _message_prefix(message):
    return f"{message}.  " if message else ""


def _sign_assert(op_name, symbol, check, zero_first, x, data, summarize, message, name):
    """`check(0, x)` or `check(x, 0)` with TensorFlow's data for a test of x's sign (a
    message given with data of one's own is dropped, as TensorFlow drops it)."""
    message = _message_prefix(message)
    graph = graph_of(x)
    with graph.as_default(), graph.name_scope(name or op_name):
        x = convert_to_tensor(x, name="x")
        if data is None:
            condition = f"Condition x {symbol} 0 did not hold element-wise:"
            shown = f"x ({x.name}) = "
            # TensorFlow's assert_non_positive runs the two lines together
            data = ([message, condition + shown, x] if op_name == "assert_non_positive"
                    else [message, condition, shown, x])
        zero = convert_to_tensor(0, dtype=x.dtype)
        operands = (zero, x) if zero_first else (x, zero)
        return check(*operands, data=data, summarize=summarize)


def assert_positive(x, data=None, summarize=None, message=None, name=None):
    """An op that fails its step unless every element of `x` is > 0."""
    return _sign_assert("assert_positive", ">", assert_less, True, x, data, summarize,
                        message, name)


def assert_negative(x, data=None, summarize=None, message=None, name=None):
    """An op that fails its step unless every element of `x` is < 0."""
    return _sign_assert("assert_negative", "<", assert_less, False, x, data, summarize,
                        message, name)


def assert_non_negative(x, data=None, summarize=None, message=None, name=None):
    """An op that fails its step unless every element of `x` is >= 0."""
    return _sign_assert("assert_non_negative", ">=", assert_less_equal, True, x, data,
                        summarize, message, name)


def assert_non_positive(x, data=None, summarize=None, message=None, name=None):
    """An op that fails its step unless every element of `x` is <= 0."""
    return _sign_assert("assert_non_positive", "<=", assert_less_equal, False, x, data,
                        summarize, message, name)


def assert_integer(x, message=None, name=None):
    """A no-op if `x` is of an integer type, else TypeError at once."""
    graph = graph_of(x)
    with graph.as_default(), graph.name_scope(name or "assert_integer"):
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_integer:
            raise TypeError(f'{_message_prefix(message)}Expected "x" to be integer type.  '
                            f"Found: {x.name} of dtype {x.dtype}")
        return no_op("statically_determined_was_integer")


def assert_type(tensor, tf_type, message=None, name=None):
    """A no-op if `tensor` (or a SparseTensor) is of `tf_type`, else TypeError at once."""
    tf_type = dtypes.as_dtype(tf_type)
    graph = graph_of(tensor)
    with graph.as_default(), graph.name_scope(name or "assert_type"):
        if not isinstance(tensor, SparseTensor):
            tensor = convert_to_tensor(tensor, name="tensor")
        if tensor.dtype != tf_type:
            raise TypeError(f"{_message_prefix(message)}{getattr(tensor, 'name', 'tensor')} "
                            f"must be of type {tf_type!r}; got {tensor.dtype!r}")
        return no_op("statically_determined_correct_type")


def assert_scalar(tensor, name=None, message=None):
    """`tensor`, if its static shape is a scalar's; else ValueError at once."""
    graph = graph_of(tensor)
    with graph.as_default(), graph.name_scope(name or "assert_scalar") as scope:
        tensor = convert_to_tensor(tensor, name=scope)
        if tensor.shape.ndims != 0:
            raise ValueError(f"{_message_prefix(message)}Expected scalar shape for "
                             f"{tensor.name}, saw shape: {tensor.shape}.")
        return tensor


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
