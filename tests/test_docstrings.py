"""Every public class, function and method says what it is; the classes of the data path
also show how to use it."""

import ast
import importlib
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "dtfnb"

# The classes a `sess.run` goes through (docs/data-path.md), each with a usage block, as
# TensorFlow's Coordinator has: the first thing the next engineer reads about them.
DATA_PATH = {
    "dtfnb.client.session": ["BaseSession", "Session", "InteractiveSession"],
    "dtfnb.framework.graph": ["Graph"],
    "dtfnb.framework.operation": ["Operation"],
    "dtfnb.framework.tensor": ["Tensor"],
    "dtfnb.runtime.executor": ["Executor"],
    "dtfnb.runtime.step": ["Step"],
    "dtfnb.runtime.rendezvous": ["Rendezvous", "RendezvousTable"],
    "dtfnb.runtime.devices": ["Device"],
    "dtfnb.runtime.nodes": ["Node"],
    "dtfnb.runtime.frames": ["FrameGraph"],
    "dtfnb.runtime.functions": ["FunctionLibrary"],
    "dtfnb.runtime.stats": ["StepStatsCollector"],
    "dtfnb.runtime.events": ["EventLog"],
    "dtfnb.kernels.registry": ["KernelDef"],
    "dtfnb.resources.resource_mgr": ["ResourceMgr"],
    "dtfnb.resources.queues": ["FIFOQueue"],
    "dtfnb.resources.readers": ["ReaderBase"],
    "dtfnb.resources.accumulators": ["Accumulator"],
    "dtfnb.resources.variable": ["VariableResource"],
    "dtfnb.resources.datasets": ["IteratorResource"],
    "dtfnb.train.queue_runner": ["QueueRunner"],
    "dtfnb.train.coordinator": ["Coordinator"],
    "dtfnb.train.sync_replicas_optimizer": ["SyncReplicasOptimizer"],
    "dtfnb.train.saver": ["Saver"],
    "dtfnb.train.monitored_session": ["MonitoredSession"],
    "dtfnb.distributed_runtime.server_lib": ["Server"],
    "dtfnb.distributed_runtime.interfaces": ["MasterInterface", "WorkerInterface"],
    "dtfnb.distributed_runtime.master": ["Master", "MasterSession"],
    "dtfnb.distributed_runtime.worker": ["Worker"],
    "dtfnb.distributed_runtime.transport.channel": ["Channel"],
}


def _is_setter(node):
    return any(isinstance(d, ast.Attribute) and d.attr in ("setter", "deleter")
               for d in node.decorator_list)


def _public_definitions(body, prefix=""):
    """The public classes, functions and methods of a module's body, by qualified name: a
    property's setter goes without, its getter's docstring is the property's."""
    for node in body:
        if not isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) \
                or node.name.startswith("_") or _is_setter(node):
            continue
        yield prefix + node.name, node
        if isinstance(node, ast.ClassDef):
            yield from _public_definitions(node.body, prefix + node.name + ".")


def test_every_public_definition_has_a_docstring():
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if path.name.endswith("_pb2.py"):
            continue
        for name, node in _public_definitions(ast.parse(path.read_text()).body):
            if ast.get_docstring(node) is None:
                missing.append(f"{relative}:{node.lineno} {name}")
    assert not missing, ("public classes, functions and methods without a docstring:\n"
                         + "\n".join(missing))


@pytest.mark.parametrize("module, name", [(m, n) for m, names in DATA_PATH.items()
                                          for n in names])
def test_data_path_class_shows_its_use(module, name):
    doc = getattr(importlib.import_module(module), name).__doc__ or ""
    assert "```python\n" in doc, f"{module}.{name}: no ```python usage block in its docstring"
