"""A session's traced functions (FunctionDefs) and the runner that calls them.

A function body is a small graph: its argument nodes become `_Arg` nodes that
read the call's arguments, and each returned tensor goes to a `_Retval` node.
One Executor per (function, device) runs it, a fresh Step per call.
"""

import threading

from dtfnb.base import errors
from dtfnb.runtime.executor import Executor, SessionState
from dtfnb.runtime.nodes import Node, check_registered, nodes_from_graph_def, parse_input
from dtfnb.runtime.step import Step


class FunctionLibrary:
    """The FunctionDefs one session registered on one task, instantiated on demand.

    tf.data traces the functions given to `map`, `filter`... into FunctionDefs; they
    travel in the GraphDef's library with each registered graph, and a dataset
    kernel asks for a callable on its device when it first needs one:

    ```python
    library = FunctionLibrary()
    library.add(graph_def.library.function)
    square = library.instantiate("square_fn", device)
    outputs = square([np.float32(3)])     # runs the body's nodes in an Executor
    ```
    """

    def __init__(self):
        self._defs = {}
        self._instances = {}
        self._lock = threading.Lock()

    def add(self, function_defs):
        """Registers FunctionDefs (a GraphDef's library), replacing ones of the same name."""
        with self._lock:
            self._defs.update((f.name, f) for f in function_defs)

    def instantiate(self, name, device):
        """A callable running function `name` on `device`: list of arguments → outputs."""
        key = (name, device.name)
        with self._lock:
            function = self._instances.get(key)
            if function is None:
                if name not in self._defs:
                    raise errors.NotFoundError(None, None, f"Function {name} is not defined.")
                function = self._instances[key] = _Function(self._defs[name], device, self)
        return function


class _Function:
    def __init__(self, function_def, device, library):
        self.name = function_def.name
        self._args = [arg.name for arg in function_def.input_arg]
        # A FunctionDef may come from a peer: checked like a GraphDef before it runs.
        nodes = [Node(node.name, "_Arg", attrs={"name": node.name},
                      output_types=node.output_types) if node.name in self._args else node
                 for node in nodes_from_graph_def(function_def)]
        outputs = {node.name: len(node.output_types) for node in nodes}
        for node in nodes:
            for src, index in node.inputs:
                if index >= outputs[src]:
                    raise errors.InvalidArgumentError(
                        None, None, f"Node '{node.name}': Connecting to invalid output "
                        f"{index} of source node {src} which has {outputs[src]} outputs")
        for i, ret in enumerate(function_def.ret):
            src, index = parse_input(ret)
            if index >= outputs.get(src, 0):
                raise errors.InvalidArgumentError(
                    None, None, f"Function {self.name}: return {i} -> {ret} is not found.")
        _check_acyclic(self.name, nodes)
        nodes.extend(Node(f"_retval_{i}", "_Retval", [parse_input(ret)], attrs={"index": i})
                     for i, ret in enumerate(function_def.ret))
        check_registered(nodes)
        self._num_outputs = len(function_def.ret)
        self._executor = Executor(nodes, device, SessionState(self.name, library))

    def __call__(self, args):
        step = Step(feeds=dict(zip(self._args, args)))
        try:
            self._executor.run(step)
        except errors.OpError as err:
            # re-raised without a node name, so that the calling node is named as well
            raise type(err)(None, None, err.message) from None
        return [step.fetched[i] for i in range(self._num_outputs)]


def _check_acyclic(name, nodes):
    """Raises InvalidArgumentError naming the nodes of a cycle, as TensorFlow's graph
    check words it: they would never become ready."""
    pending = {node.name: len(node.inputs) + len(node.control_inputs) for node in nodes}
    consumers = {}
    for node in nodes:
        for src in [s for s, _ in node.inputs] + node.control_inputs:
            consumers.setdefault(src, []).append(node.name)
    ready = [n for n, count in pending.items() if count == 0]
    while ready:
        for consumer in consumers.get(ready.pop(), ()):
            pending[consumer] -= 1
            if pending[consumer] == 0:
                ready.append(consumer)
    cycle = sorted(n for n, count in pending.items() if count > 0)
    if cycle:
        raise errors.InvalidArgumentError(
            None, None, f"Function {name} is invalid, contains a cycle with {len(cycle)} "
            f"nodes, including: {', '.join(cycle[:3])}")
