"""The layers of ../shared/DESIGN.md: who may import whom, and where grpc and pickle may appear."""

import ast
import pathlib
import subprocess
import sys

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "dtfnb"

# Below the GraphDef line code never sees graph-building code.
ALLOWED = {
    "base": {"base", "protos"},
    "framework": {"base", "framework", "protos"},
    "ops": {"base", "framework", "ops", "protos"},
    "data": {"base", "framework", "ops", "data", "protos"},
    "train": {"base", "framework", "ops", "client", "distributed_runtime", "train", "protos"},
    "client": {"base", "framework", "client", "distributed_runtime", "protos"},
    "distributed_runtime": {"base", "distributed_runtime", "runtime", "resources", "protos"},
    "runtime": {"base", "runtime", "kernels", "resources", "protos"},
    "kernels": {"base", "kernels", "resources", "protos"},
    "resources": {"base", "resources", "protos"},
}


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
