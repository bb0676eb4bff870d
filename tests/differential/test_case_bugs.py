"""The tier's guard against a case whose own code fails: such an error would be raised
alike on dtfnb and on TensorFlow, and compare equal while the case tests nothing."""

import importlib
import sys

import observe
from test_differential import _raised_by_the_case_on_both_sides, _without_case_marks

import dtfnb

CASE_MODULE = '''
def typo(tf):
    return tf.constant(1.0).opp.type          # the case's own mistake


def typo_in_outcome(tf):
    from observe import outcome
    return [outcome(lambda: tf.constant(1.0).opp), 2]


def on_purpose(tf):
    raise ValueError("for a Coordinator to catch")


def library_error(tf):
    return tf.reshape([1, 2, 3], [2])         # dtfnb raises it
'''


def _cases(tmp_path, monkeypatch):
    # A case module as the tier's are named: the guard knows cases by their file.
    (tmp_path / "cases_probe.py").write_text(CASE_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("cases_probe", None)
    return importlib.import_module("cases_probe")


def test_an_error_of_the_cases_own_code_is_marked_where_it_was_raised(tmp_path, monkeypatch):
    cases = _cases(tmp_path, monkeypatch)
    seen = observe.observe(cases.typo, dtfnb)
    assert seen["raised"] == "AttributeError" and seen["in_case"] == "cases_probe.py:3"
    returned = observe.observe(cases.typo_in_outcome, dtfnb)["returned"]
    assert returned["list"][0]["in_case"] == "cases_probe.py:8"


def test_a_raise_on_purpose_and_the_librarys_errors_are_not(tmp_path, monkeypatch):
    cases = _cases(tmp_path, monkeypatch)
    for case in (cases.on_purpose, cases.library_error):
        seen = observe.observe(case, dtfnb)
        assert "raised" in seen and "in_case" not in seen


def test_marks_on_both_sides_at_one_place_fail_the_case_and_are_not_compared():
    mark = {"error": "NameError", "message": "name 'x' is not defined", "in_case": "c.py:3"}
    seen = {"returned": {"list": [1, mark]}}
    assert _raised_by_the_case_on_both_sides(seen, seen) == "NameError at c.py:3"
    # One side only: the comparison shows the difference.
    other = {"returned": {"list": [1, {"error": "NameError", "message": "..."}]}}
    assert _raised_by_the_case_on_both_sides(seen, other) is None
    assert _without_case_marks(seen) == {"returned": {"list": [1, {
        "error": "NameError", "message": "name 'x' is not defined"}]}}
