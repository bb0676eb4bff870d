"""Operation: one node of a Graph."""

import numpy as np

from dtfnb.base import codec
from dtfnb.base.shapes import TensorShape
from dtfnb.framework.tensor import Tensor
from dtfnb.protos import graph_pb2

OUTPUT_TYPES_ATTR = "_output_types"


class Operation:
    """A node: its type, inputs, control inputs, attrs, requested device and outputs.

    Create ops through `Graph.create_op` (or the `tf.*` builders), never directly.
    Running an op (`sess.run(op)`) runs it for its effect and fetches nothing.

    ```python
    v = tf.Variable(0, name="v")
    inc = tf.assign_add(v, 1).op
    print(inc.type, [t.name for t in inc.inputs], inc.outputs)
    print(inc.get_attr("T"))         # <dtype: 'int32'>
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run(inc)                # None: an op is a target, not a value
    ```
    """

    def __init__(self, graph, op_type, name, inputs, output_dtypes, attrs, control_inputs):
        self._graph = graph
        self._type = op_type
        self._name = name
        self._inputs = list(inputs)
        self._control_inputs = list(control_inputs)
        self._attrs = dict(attrs or {})
        self._device = ""
        self._id = None
        self._outputs = [Tensor(self, i, dtype) for i, dtype in enumerate(output_dtypes)]
        self._control_outputs = []
        self._control_flow_context = None  # the cond or while_loop that built it, if any
        self._rewired = set()  # inputs set by _update_input: their NodeDef names say ':0'
        for tensor in self._inputs:
            tensor._consumers.append(self)
        for op in self._control_inputs:
            op._control_outputs.append(self)

    def _detach(self):
        """Undoes the links made by __init__, for an op that will not enter the graph."""
        for tensor in self._inputs:
            tensor._consumers.remove(self)
        for op in self._control_inputs:
            op._control_outputs.remove(self)

    # Control flow rewires an op just made: an input from outside a cond branch or a loop
    # body goes through a Switch or an Enter, and a loop's Merge gets its back edge.

    def _update_input(self, index, tensor):
        self._inputs[index]._consumers.remove(self)
        self._inputs[index] = tensor
        tensor._consumers.append(self)
        self._rewired.add(index)

    def _add_control_input(self, op):
        if op not in self._control_inputs:
            self._control_inputs.append(op)
            op._control_outputs.append(self)

    def _add_control_inputs(self, ops):
        for op in ops:
            self._add_control_input(op)

    def _remove_all_control_inputs(self):
        for op in self._control_inputs:
            op._control_outputs.remove(self)
        self._control_inputs = []

    def _get_control_flow_context(self):
        return self._control_flow_context

    def _set_control_flow_context(self, context):
        self._control_flow_context = context

    @property
    def graph(self):
        """The `Graph` that contains this operation."""
        return self._graph

    @property
    def type(self):
        """The type of the op (e.g. `"MatMul"`)."""
        return self._type

    @property
    def name(self):
        """The full name of this operation."""
        return self._name

    @property
    def inputs(self):
        """The sequence of `Tensor` objects representing the data inputs of this op."""
        return tuple(self._inputs)

    @property
    def outputs(self):
        """The list of `Tensor` objects representing the outputs of this op."""
        return list(self._outputs)

    @property
    def control_inputs(self):
        """The `Operation` objects on which this op has a control dependency."""
        return list(self._control_inputs)

    @property
    def device(self):
        """The name of the device to which this op has been assigned, if any."""
        return self._device

    def _set_device(self, device):
        self._device = device if isinstance(device, str) else device.to_string()

    @property
    def values(self):
        """A callable returning the outputs (TensorFlow 1's `op.values()`)."""
        return lambda: tuple(self._outputs)

    def get_attr(self, name):
        """The attr's value as TensorFlow returns it: strings as bytes, shapes as
        TensorShapeProtos, tensors as TensorProtos."""
        value = self._raw_attr(name)
        if isinstance(value, list):
            return [_as_tensorflow_returns(v) for v in value]
        return _as_tensorflow_returns(value)

    def _raw_attr(self, name):
        """The attr's value as dtfnb holds it: str, TensorShape, ndarray."""
        if name not in self._attrs:
            raise ValueError(f"Operation '{self._name}' has no attr named '{name}'.")
        return self._attrs[name]

    def _set_attr(self, name, value):
        self._attrs[name] = value

    def colocation_groups(self):
        """Returns the list of colocation groups of the op ("loc:@name")."""
        groups = [g for g in self._attrs.get("_class", ()) if g.startswith("loc:@")]
        return groups or [f"loc:@{self._name}"]

    @property
    def node_def(self):
        """The NodeDef as TensorFlow shows it."""
        node = graph_pb2.NodeDef(name=self._name, op=self._type, device=self._device)
        node.input.extend(t.name if i in self._rewired else _input_name(t)
                          for i, t in enumerate(self._inputs))
        node.input.extend("^" + op.name for op in self._control_inputs)
        for key, value in self._attrs.items():
            node.attr[key].CopyFrom(codec.attr_to_proto(value))
        return node

    def _typed_node_def(self):
        """The NodeDef that crosses the GraphDef line: with the output types, which the
        runtime and the importer cannot infer (they have no op signatures)."""
        node = self.node_def
        node.attr[OUTPUT_TYPES_ATTR].CopyFrom(
            codec.attr_to_proto([t.dtype for t in self._outputs]))
        return node

    def run(self, feed_dict=None, session=None):
        """Runs this op in `session` (default: the default session)."""
        from dtfnb.framework.default_session import run_in_session

        run_in_session(self, feed_dict, session)

    def __repr__(self):
        return f"<tf.Operation '{self._name}' type={self._type}>"

    def __str__(self):
        return str(self.node_def)


def _input_name(tensor):
    return tensor.op.name if tensor.value_index == 0 else tensor.name


def _as_tensorflow_returns(value):
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape")
    if isinstance(value, TensorShape):
        return value.as_proto()
    if isinstance(value, np.ndarray):
        return codec.tensor_to_proto(value)
    return value
