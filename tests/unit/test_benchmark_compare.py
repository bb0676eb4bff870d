"""benchmarks/_compare.py: every figure a benchmark prints is a median with the range of
its rounds beside it, and the rounds themselves go into --json, with dtfnb's wake-ups
per repetition."""

import json
import os
import subprocess
import sys
import time

from tests.helpers import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
from _compare import _rounds, _spread_text, main, make_parser  # noqa: E402


def test_a_figure_is_its_median_with_the_rounds_range_and_relative_spread():
    # values as printed: microseconds, or items per second
    assert _spread_text([10.0, 12.0, 11.0], "us").split() == ["11.0", "µs", "[10.0–12.0]",
                                                              "18%"]
    assert _spread_text([400, 500, 450], "/s").split() == ["450/s", "[400–500]", "22%"]


def _workloads():
    times = iter([0.004, 0.001, 0.002, 0.003] * 3)   # a warm-up round, then the rounds

    def build(tf):
        return lambda n: next(times) * n
    return {"made-up": build}


def test_the_table_and_json_carry_every_round(capsys):
    args = make_parser().parse_args(["--rounds", "3", "--tf-python", ""])
    main(__file__, _workloads(), [("made-up", 2, "us")], args)
    table = capsys.readouterr().out
    assert "median [min–max] of 3 interleaved rounds of about equal length" in table
    assert "2000.0 µs [1000.0–3000.0]" in table and "100%" in table
    args = make_parser().parse_args(["--rounds", "3", "--tf-python", "", "--json"])
    main(__file__, _workloads(), [("made-up", 2, "us")], args)
    report = json.loads(capsys.readouterr().out)
    assert report["rounds"] == {"made-up": {"dtfnb": [0.001, 0.002, 0.003]}}
    assert report["seconds_per_rep"] == {"made-up": {"dtfnb": 0.002}}


class _Implementation:
    """An implementation whose every repetition takes `per_rep` seconds."""

    def __init__(self, per_rep):
        self.per_rep, self.asked = per_rep, []

    def measure(self, name, n):
        self.asked.append(n)
        return self.per_rep * n


def test_the_faster_implementation_runs_more_repetitions_so_that_rounds_last_alike():
    ours, theirs = _Implementation(0.001), _Implementation(0.003)
    rounds = _rounds(ours, theirs, "made-up", 10, 2)
    assert ours.asked == [10, 30, 30] and theirs.asked == [10, 10, 10]
    assert rounds == {"dtfnb": [0.001, 0.001], "tensorflow": [0.003, 0.003]}
    ours, theirs = _Implementation(0.004), _Implementation(0.001)
    _rounds(ours, theirs, "made-up", 10, 1)
    assert ours.asked == [10, 10] and theirs.asked == [10, 40]


def _sleeping_workload():
    def build(tf):
        def measure(n):
            start = time.perf_counter()
            for _ in range(n):
                time.sleep(0.001)   # blocks and is woken: one voluntary context switch
            return time.perf_counter() - start
        return measure
    return {"sleeps": build}


def test_dtfnb_wakeups_are_its_voluntary_context_switches_per_repetition(capsys):
    args = make_parser().parse_args(["--rounds", "3", "--tf-python", "", "--json"])
    main(__file__, _sleeping_workload(), [("sleeps", 20, "us")], args)
    counts = json.loads(capsys.readouterr().out)["dtfnb_wakeups_per_rep"]["sleeps"]
    assert len(counts) == 3 and all(0.9 <= count < 3 for count in counts)
    args = make_parser().parse_args(["--rounds", "3", "--tf-python", ""])
    main(__file__, _sleeping_workload(), [("sleeps", 20, "us")], args)
    assert "dtfnb wake-ups per repetition" in capsys.readouterr().out


def _blas_line(**env):
    """The report's BLAS line from a fresh interpreter, where OpenBLAS reads `env`."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("OPENBLAS_")}
    code = ("import sys; sys.path.insert(0, 'benchmarks'); import _compare; "
            "print(_compare.blas_description())")
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**environ, **env},
                          capture_output=True, text=True, check=True).stdout.strip()


def test_the_report_names_the_blas_kernel_and_a_coretype_that_chose_it():
    chosen = _blas_line(OPENBLAS_CORETYPE="Prescott")
    assert chosen.startswith("openblas ") and "OPENBLAS_CORETYPE=Prescott" in chosen
    own = _blas_line()
    assert own.startswith("openblas ") and own.endswith(" kernel")
