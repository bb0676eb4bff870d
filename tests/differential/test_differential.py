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
    bug = _raised_by_the_case_on_both_sides(seen, expected)
    assert bug is None, f"the case's own code raised {bug} on dtfnb and on TensorFlow"
    seen, expected = _without_case_marks(seen), _without_case_marks(expected)
    difference = first_difference(seen, expected)
    assert difference is None, (
        f"{difference}\n--- dtfnb\n{json.dumps(seen, indent=1)}\n"
        f"--- TensorFlow\n{json.dumps(expected, indent=1)}")


def _raised_by_the_case_on_both_sides(seen, expected):
    """An error both observations record at one place as raised by the case's own code
    (observe's "in_case"), as "NameError at cases_x.py:12", or None."""
    if isinstance(seen, dict) and isinstance(expected, dict):
        if "in_case" in seen and "in_case" in expected:
            return f"{seen.get('raised') or seen.get('error')} at {seen['in_case']}"
        pairs = [(seen[k], expected[k]) for k in seen.keys() & expected.keys()]
    elif isinstance(seen, list) and isinstance(expected, list):
        pairs = list(zip(seen, expected))
    else:
        return None
    return next(filter(None, (_raised_by_the_case_on_both_sides(a, b) for a, b in pairs)),
                None)


def _without_case_marks(observed):
    if isinstance(observed, dict):
        return {k: _without_case_marks(v) for k, v in observed.items() if k != "in_case"}
    if isinstance(observed, list):
        return [_without_case_marks(v) for v in observed]
    return observed


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
