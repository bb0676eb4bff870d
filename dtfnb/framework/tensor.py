"""Tensor: a symbolic handle to one output of an Operation."""

from dtfnb.base import errors
from dtfnb.base.shapes import as_shape

# Filled by ops/ (math_ops, array_ops) so that framework stays below ops in the layers.
_OPERATORS = {}

_OPERATOR_NAMES = (
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
    "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__",
    "__rpow__", "__matmul__", "__rmatmul__", "__neg__", "__abs__", "__invert__", "__and__",
    "__rand__", "__or__", "__ror__", "__xor__", "__rxor__", "__lt__", "__le__", "__gt__",
    "__ge__", "__getitem__",
)


class Tensor:
    """The `value_index`-th output of `op`; evaluated by a Session.

    A Tensor holds no value: it names one output of an op in a graph, with its
    static dtype and (possibly partial) shape. Operators (`+`, `*`, `[...]`) build
    new ops.

    ```python
    x = tf.placeholder(tf.float32, shape=[None, 3], name="x")
    y = tf.reduce_sum(x * 2.0, axis=1)
    print(y.name, y.dtype, y.shape)  # Sum:0 <dtype: 'float32'> (?,)
    with tf.Session() as sess:
        print(sess.run(y, {x: [[1, 2, 3]]}))       # [12.]
        print(y.eval({x: [[0, 0, 1]]}))           # [2.], in the default session
    ```
    """

    # `assign` is set only on a slice of a variable (`v[0]`), as TensorFlow sets it, to
    # assign to that slice; other tensors have none.
    __slots__ = ("_op", "_value_index", "_dtype", "_shape", "_consumers", "assign",
                 "__weakref__")

    # Let `ndarray * tensor` call Tensor.__rmul__ instead of broadcasting elementwise.
    __array_priority__ = 100

    def __init__(self, op, value_index, dtype):
        self._op = op
        self._value_index = value_index
        self._dtype = dtype
        self._shape = as_shape(None)
        self._consumers = []

    @property
    def op(self):
        """The `Operation` that produces this tensor as an output."""
        return self._op

    @property
    def value_index(self):
        """The index of this tensor in the outputs of its `Operation`."""
        return self._value_index

    @property
    def dtype(self):
        """The `DType` of elements in this tensor."""
        return self._dtype

    @property
    def graph(self):
        """The `Graph` that contains this tensor."""
        return self._op.graph

    @property
    def name(self):
        """The string name of this tensor ("op_name:index")."""
        return f"{self._op.name}:{self._value_index}"

    @property
    def device(self):
        """The name of the device on which this tensor will be produced, or ""."""
        return self._op.device

    @property
    def shape(self):
        """Returns the `TensorShape` that represents the static shape of this tensor."""
        return self._shape

    def get_shape(self):
        """Alias of `Tensor.shape`."""
        return self._shape

    def set_shape(self, shape):
        """Updates the shape of this tensor (merged with what is known; raises if they differ)."""
        self._shape = self._shape.merge_with(shape)

    def consumers(self):
        """Returns a list of `Operation`s that consume this tensor."""
        return list(self._consumers)

    def eval(self, feed_dict=None, session=None):
        """Runs the graph up to this tensor in `session` (default: the default session)."""
        from dtfnb.framework.default_session import run_in_session

        return run_in_session(self, feed_dict, session)

    def __repr__(self):
        return f"<tf.Tensor '{self.name}' shape={self._shape} dtype={self._dtype.name}>"

    def __str__(self):
        # TensorFlow 1's form, as `print(c)` and error messages show it
        shape = f", shape={self._shape}" if self._shape.ndims is not None else ""
        device = f", device={self.device}" if self.device else ""
        return f'Tensor("{self.name}"{shape}, dtype={self._dtype.name}{device})'

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other

    def __bool__(self):
        raise TypeError(
            "Using a `tf.Tensor` as a Python `bool` is not allowed. Use `if t is not None:` "
            "instead of `if t:` to test if a tensor is defined, and use TensorFlow ops such "
            "as tf.cond to execute subgraphs conditioned on the value of a tensor.")

    def __iter__(self):
        # TensorFlow 2.21's graph mode refuses it whatever the shape: a graph has no values.
        raise errors.OperatorNotAllowedInGraphError(
            "Iterating over a symbolic `tf.Tensor` is not allowed. You can attempt the "
            "following resolutions to the problem: If you are running in Graph mode, use "
            "Eager execution mode or decorate this function with @tf.function. If you are "
            "using AutoGraph, you can try decorating this function with @tf.function. If "
            "that does not work, then you may be using an unsupported feature or your "
            "source code may not be visible to AutoGraph. See https://github.com/tensorflow/"
            "tensorflow/blob/master/tensorflow/python/autograph/g3doc/reference/"
            "limitations.md#access-to-source-code for more information.")

    def __len__(self):
        raise TypeError(f"len is not well defined for symbolic Tensors. ({self.name}) "
                        "Please call `x.shape` rather than `len(x)` for shape information.")

    @staticmethod
    def _override_operator(name, fn):
        _OPERATORS[name] = fn


def _make_operator(name):
    def operator(self, *args):
        return _OPERATORS[name](self, *args)

    operator.__name__ = name
    return operator


for _name in _OPERATOR_NAMES:
    setattr(Tensor, _name, _make_operator(_name))
