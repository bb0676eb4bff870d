"""tf.py_func and tf.numpy_function: a Python function as an op of the graph (PyFunc, or
PyFuncStateless), called with numpy arrays in the process that built the graph.

As TensorFlow's: not differentiable, outputs of unknown shape, and the function named
in the graph only by a token (base/py_funcs.py), so that another process can never
run it."""

import functools
import weakref

from dtfnb.base import dtypes, py_funcs
from dtfnb.base.shapes import unknown_shape
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.func_graph import FuncGraph
from dtfnb.framework.registry import NotDifferentiable, define_op
from dtfnb.ops.building import graph_of, make_op, op_scope

_GRAPH_FUNCS = weakref.WeakKeyDictionary()   # outermost graph -> the functions it calls


def _unknown_shapes(op):
    return [unknown_shape() for _ in op.outputs]


define_op("PyFunc", _unknown_shapes, stateful=True)
define_op("PyFuncStateless", _unknown_shapes)
NotDifferentiable("PyFunc")
NotDifferentiable("PyFuncStateless")


def py_func(func, inp, Tout, stateful=True, name=None):  # noqa: N803 - TensorFlow's names
    """An op that calls `func` on the values of the tensors `inp` (numpy arrays; strings
    as bytes) and returns what it returns as tensors of the types `Tout`: a list of
    tensors if `Tout` is a list (the op itself if it is empty), else one tensor.

    `func` runs in this process when a step reaches the op; it must return a numpy
    array (or a list or tuple of them, one per output) of exactly the dtypes of `Tout`:
    a Python float is float64 ("double"), not float32. An exception it raises fails the
    step: ValueError and TypeError as InvalidArgumentError, StopIteration as
    OutOfRangeError, others as TensorFlow maps them. `stateful=False` promises the same
    outputs for the same inputs."""
    if not callable(func):
        raise ValueError(f"Expected func to be callable. Received func={func} of type "
                         f"{type(func)}.")
    inp = list(inp)
    several = isinstance(Tout, (list, tuple))
    out_types = [dtypes.as_dtype(t) for t in (Tout if several else [Tout])]
    token = py_funcs.insert(func)
    graph = graph_of(*inp)
    if isinstance(graph, FuncGraph):   # a tf.data function's body: the user's graph
        graph = graph.root_graph()
    _GRAPH_FUNCS.setdefault(graph, []).append(func)
    op_type = "PyFunc" if stateful else "PyFuncStateless"
    with op_scope(op_type, name, *inp) as scope:
        inputs = [convert_to_tensor(x, name=f"input_{i}") for i, x in enumerate(inp)]
        op = make_op(op_type, inputs, out_types, name=scope, attrs={
            "token": token, "Tin": [t.dtype.base_dtype for t in inputs], "Tout": out_types})
    if not out_types:
        return op
    return list(op.outputs) if several else op.outputs[0]


def numpy_function(func=None, inp=None, Tout=None, stateful=True, name=None):  # noqa: N803
    """tf.py_func under its TensorFlow 2 name; with `func` left out, a decorator:
    `@tf.numpy_function(Tout=tf.float32)` makes calls of the function build the op."""
    if Tout is None:
        raise TypeError("Missing required argument: 'Tout'\n"
                        "  If using tf.numpy_function as a decorator, set `Tout`\n"
                        "  **by name** above the function:\n"
                        "  `@tf.numpy_function(Tout=tout)`")
    if func is None:
        if inp is not None:
            raise TypeError("Don't set the `inp` argument when using tf.numpy_function as "
                            "a decorator (`func=None`).")

        def decorator(fun):
            @functools.wraps(fun)
            def wrapper(*args):
                return numpy_function(fun, args, Tout, stateful=stateful, name=name)

            return wrapper

        return decorator
    if inp is None:
        raise TypeError("Missing argument `inp`:\n"
                        "  You must set the `inp` argument (the list of arguments to the\n"
                        "  function), unless you use `tf.numpy_function` as a decorator"
                        "(`func=None`).")
    return py_func(func, inp, Tout, stateful=stateful, name=name)
