"""Every case of the cases_*.py modules, run on dtfnb and on TensorFlow, must agree:
values (floats to 1e-5), dtypes, shapes, names, op types and attrs, devices, error
classes and messages."""

import importlib
import json
import math
from pathlib import Path

import observe as observing
import pytest
from observe import observe

import dtfnb

MODULES = sorted(p.stem for p in Path(__file__).parent.glob("cases_*.py"))
CASES = [(module, name) for module in MODULES
         for name in importlib.import_module(module).CASES]


@pytest.mark.parametrize("module,name", CASES, ids=[f"{m[6:]}:{n}" for m, n in CASES])
def test_same_as_tensorflow(tensorflow, module, name, request):
    expected = tensorflow.observe(module, name)
    uses = len(observing.cluster_uses)
    seen = observe(importlib.import_module(module).CASES[name], dtfnb)
    # observe.cluster's servers outlive the case, and the case may have grown their pools
    request.node.keeps_threads = len(observing.cluster_uses) > uses
    # A NameError on both sides is the case's own bug, which would otherwise compare equal.
    assert not seen.get("raised") == expected.get("raised") == "NameError", seen["message"]
    difference = first_difference(seen, expected)
    assert difference is None, (
        f"{difference}\n--- dtfnb\n{json.dumps(seen, indent=1)}\n"
        f"--- TensorFlow\n{json.dumps(expected, indent=1)}")


def first_difference(seen, expected, path="$"):
    """Where two observations first differ (None if nowhere); floats to 1e-5."""
    if isinstance(expected, float) and isinstance(seen, (int, float)) \
            and not isinstance(seen, bool):
        if math.isclose(seen, expected, rel_tol=1e-5, abs_tol=1e-6):
            return None
        return f"{path}: dtfnb has {seen!r}, TensorFlow {expected!r}"
    if type(seen) is not type(expected):
        return f"{path}: dtfnb has {seen!r}, TensorFlow {expected!r}"
    elif isinstance(expected, dict):
        if seen.keys() != expected.keys():
            return f"{path}: dtfnb has keys {sorted(seen)}, TensorFlow {sorted(expected)}"
        for key in expected:
            found = first_difference(seen[key], expected[key], f"{path}.{key}")
            if found:
                return found
        return None
    elif isinstance(expected, list):
        if len(seen) != len(expected):
            return f"{path}: dtfnb has {len(seen)} items, TensorFlow {len(expected)}"
        for i, (a, b) in enumerate(zip(seen, expected)):
            found = first_difference(a, b, f"{path}[{i}]")
            if found:
                return found
        return None
    elif seen == expected:
        return None
    return f"{path}: dtfnb has {seen!r}, TensorFlow {expected!r}"
