"""The runtime's view of a GraphDef: plain Node records with decoded attrs."""

from dtfnb.base import codec, dtypes
from dtfnb.base.errors import InvalidArgumentError
from dtfnb.kernels.registry import known_op
from dtfnb.protos import graph_pb2

OUTPUT_TYPES_ATTR = "_output_types"


class Node:
    """One node: `inputs` are (source node name, output index); attrs are Python values.

    What the runtime sees of a NodeDef once decoded: placement, partitioning and the
    executor work on lists of Nodes, never on a Python Graph.

    ```python
    from dtfnb.base import dtypes
    from dtfnb.runtime.nodes import Node, node_from_node_def

    node = Node("y", "Square", [("x", 0)], attrs={"T": dtypes.float32},
                output_types=[dtypes.float32])
    node_def = node.to_node_def(device="/job:localhost/replica:0/task:0/device:CPU:0")
    print(node_from_node_def(node_def).inputs)          # [('x', 0)]
    ```
    """

    __slots__ = ("name", "op", "inputs", "control_inputs", "requested_device", "attrs",
                 "output_types")

    def __init__(self, name, op, inputs=(), control_inputs=(), requested_device="", attrs=None,
                 output_types=()):
        self.name = name
        self.op = op
        self.inputs = list(inputs)
        self.control_inputs = list(control_inputs)
        self.requested_device = requested_device
        self.attrs = attrs or {}
        self.output_types = list(output_types)

    def to_node_def(self, device=""):
        """The NodeDef of this node, placed on `device`, with its output types as an attr."""
        node = graph_pb2.NodeDef(name=self.name, op=self.op, device=device)
        node.input.extend(src if idx == 0 else f"{src}:{idx}" for src, idx in self.inputs)
        node.input.extend("^" + name for name in self.control_inputs)
        for key, value in self.attrs.items():
            node.attr[key].CopyFrom(codec.attr_to_proto(value))
        node.attr[OUTPUT_TYPES_ATTR].CopyFrom(codec.attr_to_proto(self.output_types))
        return node

    def __repr__(self):
        return f"Node({self.name!r}, {self.op!r})"


def parse_input(text):
    """'x' → ('x', 0); 'x:1' → ('x', 1); '^x' is handled by the caller."""
    name, sep, index = text.rpartition(":")
    if sep and index.isdigit():
        return name, int(index)
    return text, 0


def node_from_node_def(node_def):
    """The Node of a NodeDef: inputs parsed, attrs decoded to Python values."""
    inputs, controls = [], []
    for text in node_def.input:
        if text.startswith("^"):
            controls.append(text[1:])
        else:
            inputs.append(parse_input(text))
    attrs = {key: codec.attr_from_proto(value) for key, value in node_def.attr.items()}
    output_types = attrs.pop(OUTPUT_TYPES_ATTR, [])
    return Node(node_def.name, node_def.op, inputs, controls, node_def.device, attrs,
                output_types)


def nodes_from_graph_def(graph_def, known=()):
    """Decodes the nodes of a GraphDef; every input must name a node here or in `known`."""
    nodes = [node_from_node_def(n) for n in graph_def.node]
    names = set(known)
    for node in nodes:
        if not node.name or node.name in names:
            raise InvalidArgumentError(None, None, f"Duplicate or empty node name "
                                       f"'{node.name}' in GraphDef")
        names.add(node.name)
    for node in nodes:
        for src in [s for s, _ in node.inputs] + node.control_inputs:
            if src not in names:
                raise InvalidArgumentError(None, None, f"Node '{node.name}': Unknown input "
                                           f"node '{src}'")
    return nodes


def check_registered(nodes):
    """A task runs only ops it has kernels for: anything else in a GraphDef is refused."""
    for node in nodes:
        if not known_op(node.op):
            raise InvalidArgumentError(None, None, f"Op type not registered '{node.op}' in "
                                       f"binary running on this task (node {node.name})")


def is_ref_type(dtype):
    """Whether `dtype` is a ref type (a variable's output)."""
    return dtypes.as_dtype(dtype).is_ref_dtype
