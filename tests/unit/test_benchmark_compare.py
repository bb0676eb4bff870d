"""benchmarks/_compare.py: every figure a benchmark prints is a median with the range of
its rounds beside it, and the rounds themselves go into --json, with dtfnb's wake-ups
per repetition."""

import json
import sys
import time

from tests.helpers import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
from _compare import _spread_text, main, make_parser  # noqa: E402


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
    assert "median [min–max] of 3 interleaved rounds" in table
    assert "2000.0 µs [1000.0–3000.0]" in table and "100%" in table
    args = make_parser().parse_args(["--rounds", "3", "--tf-python", "", "--json"])
    main(__file__, _workloads(), [("made-up", 2, "us")], args)
    report = json.loads(capsys.readouterr().out)
    assert report["rounds"] == {"made-up": {"dtfnb": [0.001, 0.002, 0.003]}}
    assert report["seconds_per_rep"] == {"made-up": {"dtfnb": 0.002}}


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
