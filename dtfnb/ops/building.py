"""What every op builder needs: the graph of its inputs, its name scope, a one-call create."""

from contextlib import contextmanager

from dtfnb.framework.func_graph import FuncGraph
from dtfnb.framework.graph import get_default_graph
from dtfnb.framework.tensor import Tensor


def graph_of(*values):
    """The graph of the first Tensor (or Variable) among `values`, else the default graph.

    While a function is traced every op goes to its body, which captures outer tensors.
    """
    default = get_default_graph()
    if isinstance(default, FuncGraph):
        return default
    for value in values:
        if isinstance(value, (list, tuple)):
            for item in value:
                if isinstance(item, Tensor) or hasattr(item, "_variable"):
                    return item.graph
        elif isinstance(value, Tensor) or hasattr(value, "_variable"):
            return value.graph
    return default


@contextmanager
def op_scope(op_type, name, *values):
    """The name scope TensorFlow's generated op wrappers build in, named `name` or the op's
    type: each Python value given for an input is converted in it under the input's name
    (`Sum/reduction_indices`, `Tile/multiples`), and the op takes the scope's name. The
    scope is in the graph of `values`, made the default while it is open, so that those
    conversions land there too."""
    graph = graph_of(*values)
    with graph.as_default(), graph.name_scope(name or op_type) as scope:
        yield scope


def make_op(op_type, inputs, dtypes, name=None, attrs=None, graph=None):
    """Creates an op and returns it (the Operation)."""
    graph = graph or graph_of(*inputs)
    return graph.create_op(op_type, inputs, dtypes, name=name, attrs=attrs)


def make_tensor(op_type, inputs, dtype, name=None, attrs=None, graph=None):
    """Creates a single-output op and returns its output Tensor."""
    return make_op(op_type, inputs, [dtype], name, attrs, graph).outputs[0]
