"""The layers of ../shared/DESIGN.md: who may import whom, and where grpc and pickle may appear.

LAYERS is the table; docs/architecture.md shows it, rendered by `python -m tests.test_architecture`.
"""

import ast
import difflib
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "dtfnb"
DOC = ROOT / "docs" / "architecture.md"

# Each folder of dtfnb/, base first, then in the order a `sess.run` goes through them: what
# it holds, and the folders its modules may import. Below the GraphDef line code never sees
# graph-building code.
LAYERS = {
    "base": (
        "errors (codes equal gRPC status codes), dtypes, shapes, DeviceSpec and "
        "device-string merging, the ndarray <-> TensorProto codec, object arrays "
        "(tf.string and variant values), locks",
        {"base", "protos"}),
    "framework": (
        "Graph (`create_op` is the one choke point: names, control dependencies, device "
        "stack and functions, colocation, container), Operation, Tensor, collections, "
        "GraphDef export and import, `gradients()`",
        {"base", "framework", "protos"}),
    "ops": (
        "one file per op family: the op's definition (signature, shape function, stateful "
        "or not), its public builder and its gradient",
        {"base", "framework", "ops", "protos"}),
    "data": (
        "tf.data: Dataset and Iterator builders, the functions they trace",
        {"base", "framework", "ops", "data", "protos"}),
    "train": (
        "optimizers, SyncReplicasOptimizer, Coordinator, QueueRunner, input producers and "
        "batching, replica_device_setter, Saver, MonitoredTrainingSession: client code over "
        "ops and shared resources (it reads ClusterSpec from distributed_runtime)",
        {"base", "framework", "ops", "client", "distributed_runtime", "summary", "train",
         "protos"}),
    "summary": (
        "tf.summary: its ops re-exported, and FileWriter, which writes event files that "
        "TensorBoard reads (TFRecord framing from resources), graphs with the devices their "
        "session placed them on",
        {"base", "framework", "ops", "resources", "summary", "protos"}),
    "client": (
        "Session(target), InteractiveSession, fetch and feed structures; it reaches a master "
        "through one function of distributed_runtime, `targets.connect`",
        {"base", "framework", "client", "distributed_runtime", "protos"}),
    "launch": (
        "starting a cluster's tasks: `Cluster` (state, logs, kill, restart, stop) over a "
        "`Launcher` (the interface), LocalCluster, the local launcher (a fork server) and "
        "the ssh launcher; no Jupyter",
        {"base", "distributed_runtime", "launch", "server", "protos"}),
    "distributed_runtime": (
        "MasterInterface and WorkerInterface, each implemented in-process (Master, Worker) "
        "and for another process (RemoteMaster, RemoteWorker); MasterSession (prune, place, "
        "partition, drive its step over its Cluster), Server (one task: master, worker and "
        "devices), `targets.connect` (the master of a target), ClusterSpec, resolvers "
        "(TF_CONFIG, Slurm); `transport/`: how calls and tensors cross task boundaries, a "
        "Channel per scheme (grpc, unix), the only place grpc is imported",
        {"base", "distributed_runtime", "runtime", "resources", "protos"}),
    "runtime": (
        "`place()` and `partition()` as pure functions, Executor (pending counts, one "
        "inter-op pool per device; the first error aborts the step), rendezvous, devices, "
        "step stats, the task's event log, collectives (groups and the ring of collective "
        "ops)",
        {"base", "runtime", "kernels", "resources", "protos"}),
    "kernels": (
        "`@register_kernel(\"MatMul\", device=\"CPU\")`, one file per op family; `ctx.xp` "
        "is numpy or cupy, as the device's",
        {"base", "kernels", "resources", "protos"}),
    "resources": (
        "ResourceMgr keyed by (container, shared_name): variables, queues, readers, "
        "accumulators, iterators; plain Python with locks and conditions",
        {"base", "resources", "protos"}),
}
GRAPHDEF_LINE = "distributed_runtime"  # the first layer below the line
ALLOWED = {layer: imports for layer, (_, imports) in LAYERS.items()}


def render_layers():
    """The table of docs/architecture.md, from LAYERS."""
    order = [*LAYERS, "server", "protos"]  # server: dtfnb/server.py, the task's main
    rows = ["| folder | holds | may import |", "| --- | --- | --- |"]
    for layer, (holds, imports) in LAYERS.items():
        if layer == GRAPHDEF_LINE:
            rows.append("| — | **the GraphDef line** | |")
        others = sorted(imports - {layer}, key=order.index)
        rows.append(f"| `dtfnb/{layer}/` | {holds} | {', '.join(others)} |")
    return "\n".join(rows) + "\n"


_BEGIN = "<!-- layers: rendered from tests/test_architecture.py by " \
    "`python -m tests.test_architecture`; edit LAYERS there -->\n"
_END = "<!-- end of layers -->\n"


def _doc_parts():
    text = DOC.read_text()
    head, rest = text.split(_BEGIN)
    table, tail = rest.split(_END)
    return head, table, tail


def test_docs_show_the_layers():
    _, table, _ = _doc_parts()
    diff = "".join(difflib.unified_diff(table.splitlines(True), render_layers().splitlines(True),
                                        "docs/architecture.md", "LAYERS"))
    assert not diff, f"docs/architecture.md is stale: `python -m tests.test_architecture`\n{diff}"


def _imported(node):
    """The modules an import statement names; none for any other node."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.module:
        return [node.module]
    return []


def _imports(path):
    for node in ast.walk(ast.parse(path.read_text())):
        yield from _imported(node)


def _modules():
    return [p for p in PACKAGE.rglob("*.py") if not p.name.endswith("_pb2.py")]


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_imports_only_what_it_may(layer):
    for path in (PACKAGE / layer).rglob("*.py"):
        for module in _imports(path):
            parts = module.split(".")
            if parts[0] == "dtfnb" and len(parts) > 1:
                assert parts[1] in ALLOWED[layer], \
                    f"{path.relative_to(PACKAGE)} imports {module}: not allowed for {layer}/"


def test_the_client_reaches_the_runtime_through_one_function():
    """client/ asks targets.connect for "a master" and knows no transport."""
    for path in (PACKAGE / "client").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and \
                    node.module.startswith("dtfnb.distributed_runtime"):
                names = [alias.name for alias in node.names]
                assert (node.module, names) == ("dtfnb.distributed_runtime.targets",
                                                ["connect"]), \
                    f"{path.relative_to(PACKAGE)} imports {names} from {node.module}"


def _is_gradient(function):
    return any(isinstance(d, ast.Call) and getattr(d.func, "id", None) == "RegisterGradient"
               for d in function.decorator_list)


def test_op_families_import_each_other_only_at_module_level():
    """ops/__init__.py's rule: an op family imports another only at module level (so the
    order array_ops < math_ops < slicing_ops has no circle), except in a gradient body."""
    for path in (PACKAGE / "ops").glob("*.py"):
        tree = ast.parse(path.read_text())
        functions = [n for n in ast.walk(tree)
                     if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        in_gradients = {id(n) for f in functions if _is_gradient(f) for n in ast.walk(f)}
        for function in functions:
            for node in ast.walk(function):
                if id(node) in in_gradients:
                    continue
                for module in _imported(node):
                    assert not module.startswith("dtfnb.ops"), \
                        f"ops/{path.name}: {function.name} imports {module} at call time"


def test_shared_op_helpers_import_no_op_family():
    for name in ("building.py", "shape_util.py"):
        for module in _imports(PACKAGE / "ops" / name):
            assert not module.startswith("dtfnb.ops"), f"ops/{name} imports {module}"


def test_only_the_transport_imports_grpc():
    for path in _modules():
        if "transport" in path.parts:
            continue
        for module in _imports(path):
            assert module.split(".")[0] != "grpc", f"{path} imports grpc"


def test_nothing_unpickles():
    for path in _modules():
        for module in _imports(path):
            assert module.split(".")[0] not in ("pickle", "cloudpickle", "dill"), \
                f"{path} imports {module}"


_JUPYTER = ("IPython", "ipywidgets", "ipykernel", "matplotlib", "comm")


def test_nothing_imports_the_notebook_layer():
    """notebook/ is the top layer: below it nothing knows Jupyter exists. The facade's
    `%load_ext` hooks import it only when IPython calls them."""
    for path in _modules():
        relative = path.relative_to(PACKAGE)
        if relative.parts[0] == "notebook":
            continue
        tree = ast.parse(path.read_text())
        nodes = tree.body if relative == pathlib.Path("__init__.py") else list(ast.walk(tree))
        modules = [a.name for n in nodes if isinstance(n, ast.Import) for a in n.names] + \
            [n.module for n in nodes if isinstance(n, ast.ImportFrom) and n.module]
        for module in modules:
            assert not module.startswith("dtfnb.notebook"), f"{relative} imports {module}"
            assert module.split(".")[0] not in _JUPYTER, f"{relative} imports {module}"


def test_import_dtfnb_loads_nothing_of_jupyter():
    code = ("import sys, dtfnb; print(sorted(m for m in sys.modules if m.split('.')[0] in "
            f"{_JUPYTER!r} or m.startswith('dtfnb.notebook')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, cwd=PACKAGE.parent)
    assert result.stdout.strip() == "[]"


if __name__ == "__main__":
    head, _, tail = _doc_parts()
    DOC.write_text(head + _BEGIN + render_layers() + _END + tail)
