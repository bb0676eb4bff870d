"""A documented background load, so that every benchmark can be run quiet and loaded.

`--load busy` starts one process that spins on a core for the whole run: a learner's
machine with a browser, JupyterLab or another kernel busy beside the notebook. `--load F`
(0 < F < 1) spins the same process for F of every 10 ms and sleeps the rest: a fraction of
a core. The process is unpinned and runs at normal priority, as another program would;
it is stopped when the benchmark ends. `--load none` (the default) runs quiet.
"""

import argparse
import contextlib
import subprocess
import sys

PERIOD_SECONDS = 0.01

# The load's own program: spin for `busy` of every period, sleep the rest; end on stdin EOF
# too, so that a benchmark killed without cleanup leaves no spinner behind.
_SPIN = """
import sys, threading, time, os
busy, period = float(sys.argv[1]) * float(sys.argv[2]), float(sys.argv[2])
threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
while True:
    start = time.perf_counter()
    while time.perf_counter() - start < busy:
        pass
    if busy < period:
        time.sleep(period - busy)
"""


def parse(spec):
    """The fraction of a core `spec` asks for: "none" 0.0, "busy" 1.0, or a number in
    (0, 1]; otherwise an error that names the problem (argparse shows it as is)."""
    if spec in (None, "none", "quiet"):
        return 0.0
    if spec == "busy":
        return 1.0
    try:
        fraction = float(spec)
    except ValueError:
        fraction = -1.0
    if not 0.0 < fraction <= 1.0:
        raise argparse.ArgumentTypeError(
            f"--load takes 'none', 'busy' or a fraction of a core in (0, 1], not {spec!r}")
    return fraction


def describe(fraction):
    """How a report names the load: "quiet", "one busy process", "one process busy 50%"."""
    if fraction == 0.0:
        return "quiet"
    if fraction == 1.0:
        return "one busy process"
    return f"one process busy {fraction:.0%} of each {PERIOD_SECONDS * 1000:.0f} ms"


@contextlib.contextmanager
def background_load(fraction):
    """Runs the load of `fraction` of a core (see `parse`) while the block runs; yields
    the spinning process (None when quiet)."""
    if fraction == 0.0:
        yield None
        return
    spinner = subprocess.Popen([sys.executable, "-c", _SPIN, str(fraction),
                                str(PERIOD_SECONDS)], stdin=subprocess.PIPE)
    try:
        yield spinner
    finally:
        spinner.terminate()
        spinner.wait()
        spinner.stdin.close()
