"""FuncGraph: the body of a traced function, built once and shipped as a FunctionDef.

While it is the default graph every op lands in it; a tensor of an enclosing
graph used by the body is captured: it becomes one more argument (a Placeholder
here), and the caller passes the outer tensor as an input of its own op.
"""

from dtfnb.framework.graph import Graph
from dtfnb.framework.tensor import Tensor
from dtfnb.protos import graph_pb2


class FuncGraph(Graph):
    """The graph of a function body (a tf.data `map` or `filter` function), built inside
    `outer_graph`: a tensor of an outer graph used here is captured as an extra
    placeholder argument, and `to_function_def` turns the body into a FunctionDef.
    """
    def __init__(self, name, outer_graph):
        super().__init__()
        self.name = name
        self.outer_graph = outer_graph
        self.seed = outer_graph.seed
        self.inputs = []     # argument placeholders, then capture placeholders
        self.captures = {}   # outer tensor -> its placeholder here

    def create_op(self, op_type, inputs, dtypes, name=None, attrs=None):
        """Graph.create_op, capturing inputs that belong to outer graphs first."""
        inputs = [self.capture(t) if isinstance(t, Tensor) else t for t in inputs]
        return super().create_op(op_type, inputs, dtypes, name=name, attrs=attrs)

    def add_argument(self, dtype, shape, name):
        """A placeholder for the function's next argument."""
        attrs = {"dtype": dtype, "shape": shape}
        tensor = super().create_op("Placeholder", [], [dtype], name=name, attrs=attrs).outputs[0]
        tensor.set_shape(shape)
        self.inputs.append(tensor)
        return tensor

    def capture(self, tensor):
        """This graph's stand-in for `tensor`: itself if it is ours, else a placeholder fed with it.
        """
        if tensor.graph is self:
            return tensor
        placeholder = self.captures.get(tensor)
        if placeholder is None:
            dtype = tensor.dtype.base_dtype
            with self.control_dependencies(None):
                placeholder = self.add_argument(dtype, tensor.shape, "captured")
            self.captures[tensor] = placeholder
        return placeholder

    def root_graph(self):
        """The user's graph that this function (maybe nested in others) is built in."""
        graph = self.outer_graph
        return graph.root_graph() if isinstance(graph, FuncGraph) else graph

    def add_function(self, function_def):
        """Adds `function_def` to the library of the root graph, the one a session sends."""
        self.root_graph().add_function(function_def)  # one library, in the user's graph

    def to_function_def(self, outputs):
        """The FunctionDef returning `outputs` (tensors of this graph)."""
        function = graph_pb2.FunctionDef(name=self.name, ret=[t.name for t in outputs])
        for tensor in self.inputs:
            function.input_arg.add(name=tensor.op.name, type=tensor.dtype.as_datatype_enum)
        function.node.extend(op._typed_node_def() for op in self.get_operations())
        return function
