"""benchmarks/_load.py: the background load every benchmark can run under (--load)."""

import argparse
import os
import sys
import time

import pytest

from tests.helpers import ROOT, poll_for

sys.path.insert(0, str(ROOT / "benchmarks"))
from _load import background_load, describe, parse  # noqa: E402


def _cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")   # utime + stime


def test_load_specs_and_their_names():
    assert [parse(spec) for spec in ("none", "busy", "0.25")] == [0.0, 1.0, 0.25]
    assert describe(0.0) == "quiet" and describe(1.0) == "one busy process"
    assert describe(0.25) == "one process busy 25% of each 10 ms"
    for bad in ("2", "0", "-0.5", "half"):
        with pytest.raises(argparse.ArgumentTypeError, match=f"not '{bad}'"):
            parse(bad)


@pytest.mark.parametrize("fraction", [1.0, 0.5])
def test_a_load_spins_while_the_benchmark_runs_and_is_gone_after(fraction):
    with background_load(fraction) as spinner:
        # It burns CPU: some of it, whatever else the machine is doing.
        assert poll_for(lambda: _cpu_seconds(spinner.pid) > 0.05, 10)
    assert spinner.poll() is not None


def test_no_load_starts_nothing():
    with background_load(0.0) as spinner:
        assert spinner is None


def test_a_load_ends_with_its_benchmark_even_without_cleanup():
    """A benchmark killed without running its cleanup: the spinner sees its stdin close."""
    context = background_load(1.0)
    spinner = context.__enter__()
    spinner.stdin.close()   # what the benchmark's death does to the pipe
    deadline = time.monotonic() + 10
    while spinner.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert spinner.returncode == 0
    context.__exit__(None, None, None)
