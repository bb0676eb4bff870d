"""Runs the same TF1-API workloads on dtfnb and, when available, TensorFlow, interleaved.

A workload is a function `build(tf)` written against TensorFlow 1's API; it returns
`measure(n) -> seconds for n repetitions`. dtfnb runs in this process. TensorFlow
runs in this process if `tensorflow` imports here, otherwise in the interpreter named
by `--tf-python` (or $DTFNB_TF_PYTHON), which executes this same script in worker
mode. Rounds alternate between the two, and last about as long on both sides, so that
background load hits both alike; the reported figure is the median round, with the
range over the rounds beside it, and the ratio's median and range over the pairs of
rounds that ran side by side.

The report names numpy's BLAS and the kernel it runs: OpenBLAS picks one for the CPU,
unless OPENBLAS_CORETYPE names another (some machines set it for older OpenBLAS builds);
an older kernel can halve the speed of dtfnb's matrix products, and TensorFlow's own
kernels never read it.

For dtfnb it also counts wake-ups: the voluntary context switches (a thread that blocks
and is woken again) of this process and the children it started (`_cluster`; not
TensorFlow's interpreter and its tasks, nor the background load), per repetition.
"""

import argparse
import atexit
import glob
import importlib
import json
import os
import statistics
import subprocess
import sys
import time

import _cluster
from _load import background_load, describe, parse


def load_tf1():
    import tensorflow.compat.v1 as tf

    tf.logging.set_verbosity(tf.logging.ERROR)  # no deprecation warnings for TF1 APIs
    tf.disable_v2_behavior()
    return tf


def blas_description():
    """numpy's BLAS, its version and the kernel it runs, and OPENBLAS_CORETYPE if set."""
    import numpy  # noqa: F401  (loads the BLAS threadpoolctl looks for)
    import threadpoolctl

    libraries = [f"{lib.get('internal_api')} {lib.get('version')}, "
                 f"{lib.get('architecture')} kernel"
                 for lib in threadpoolctl.threadpool_info() if lib["user_api"] == "blas"]
    text = "; ".join(libraries) or "none found"
    chosen = os.environ.get("OPENBLAS_CORETYPE")
    if chosen:
        text += f" (chosen by OPENBLAS_CORETYPE={chosen}, not for this CPU)"
    return text


class _Local:
    def __init__(self, tf, workloads, count_wakeups=False):
        self._measures = {name: build(tf) for name, build in workloads.items()}
        self.wakeups = {name: [] for name in workloads} if count_wakeups else None

    def measure(self, name, n):
        if self.wakeups is None:
            return self._measures[name](n)
        before, start = voluntary_switches(), time.perf_counter()
        seconds = self._measures[name](n)
        elapsed, switches = time.perf_counter() - start, voluntary_switches() - before
        # per repetition as the workload counts them: an async step of any worker
        # reports the seconds of n steps divided among its workers
        self.wakeups[name].append(switches * seconds / (elapsed * n))
        return seconds


def voluntary_switches():
    """The voluntary context switches so far of this process's threads and of the
    children `_cluster` started (those that still run)."""
    pids = [os.getpid()] + _cluster.running_children()
    total = 0
    for pid in pids:
        for path in glob.glob(f"/proc/{pid}/task/*/status"):
            try:
                with open(path) as status:
                    total += next(int(line.split()[1]) for line in status
                                  if line.startswith("voluntary_ctxt_switches"))
            except (OSError, StopIteration):
                continue   # a thread that ended meanwhile
    return total


class _Remote:
    """TensorFlow in another interpreter, serving `name n` lines with seconds."""

    def __init__(self, python, script):
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONUNBUFFERED="1")
        self._proc = subprocess.Popen([python, script, "--worker"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True, env=env)
        atexit.register(self.close)
        ready = self._proc.stdout.readline()
        if ready.strip() != "ready":
            raise RuntimeError(f"TensorFlow worker failed to start: {ready!r}")

    def measure(self, name, n):
        self._proc.stdin.write(f"{name} {n}\n")
        self._proc.stdin.flush()
        return float(self._proc.stdout.readline())

    def close(self, timeout=30):
        """Ends the worker (it stops its own subprocesses); also run at exit."""
        if self._proc.poll() is not None:
            return
        try:
            self._proc.stdin.close()
            self._proc.wait(timeout=timeout)
        except (OSError, subprocess.TimeoutExpired):
            self._proc.terminate()  # the worker exits through atexit on SIGTERM
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()


def serve(workloads):
    """Worker mode: build the workloads on TensorFlow and answer measurement requests."""
    local = _Local(load_tf1(), workloads)
    print("ready", flush=True)
    for line in sys.stdin:
        name, _, n = line.rpartition(" ")
        print(local.measure(name, int(n)), flush=True)


def _tensorflow(script, tf_python, workloads):
    try:
        importlib.import_module("tensorflow")
        return _Local(load_tf1(), workloads), "in this process"
    except ImportError:
        pass
    if tf_python:
        return _Remote(tf_python, script), tf_python
    return None, "not installed (pass --tf-python PATH)"


def make_parser(doc=__doc__, rounds=7):
    """The harness's options; a benchmark may add its own before calling `main`."""
    parser = argparse.ArgumentParser(description=doc,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--tf-python", default=os.environ.get("DTFNB_TF_PYTHON"),
                        help="an interpreter with tensorflow (default $DTFNB_TF_PYTHON)")
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    add_load_option(parser)
    return parser


def add_load_option(parser):
    """`--load`: the background load the benchmark runs under (see _load.py)."""
    parser.add_argument("--load", type=parse, default=0.0, metavar="none|busy|F",
                        help="run beside one busy process ('busy') or one busy F of a core "
                             "(0 < F < 1); default none")


def _row(row):
    """(name, reps per round, unit, per_rep): per_rep items per repetition, default 1."""
    name, reps, unit, *rest = row
    return name, reps, unit, (rest[0] if rest else 1)


def main(script, workloads, rows, args=None, targets=None):
    """`rows` lists (workload, reps per round, unit[, per_rep]) with unit 'us' or '/s';
    a '/s' row reports per_rep / (seconds per rep), e.g. items per second when each
    rep moves per_rep items. `targets` maps a workload to the least ratio it should
    reach (> 1: dtfnb better); they are printed after the table. Returns the medians
    in seconds per rep, by workload and implementation."""
    if args is None:
        args = make_parser().parse_args()
    if args.worker:
        serve(workloads)
        return None
    import dtfnb

    rows = [_row(row) for row in rows]
    ours = _Local(dtfnb, workloads, count_wakeups=sys.platform.startswith("linux"))
    theirs, where = _tensorflow(script, args.tf_python, workloads)
    rounds = {}
    with background_load(args.load):
        for name, reps, _, _ in rows:
            rounds[name] = _rounds(ours, theirs, name, reps, args.rounds)
    if isinstance(theirs, _Remote):
        theirs.close()
    results = {name: {k: statistics.median(v) for k, v in r.items()}
               for name, r in rounds.items()}
    if args.json:
        print(json.dumps({"load": describe(args.load), "blas": blas_description(),
                          "seconds_per_rep": results,
                          "rounds": rounds, "dtfnb_wakeups_per_rep": _counted(ours.wakeups)}))
        return results
    print(f"TensorFlow: {where}")
    print(f"load: {describe(args.load)}")
    print(f"dtfnb's BLAS (numpy's): {blas_description()}")
    print(f"median [min–max] of {args.rounds} interleaved rounds of about equal length; "
          "spread: (max − min) / median; ratio > 1x: dtfnb is better")
    width = max([34] + [len(name) + 2 for name, *_ in rows])
    print(f"{'workload':<{width}}{'dtfnb':>24}{'spread':>8}{'TensorFlow':>24}{'spread':>8}"
          f"{'ratio':>22}")
    ratios = {}
    for name, _, unit, per_rep in rows:
        values = {k: [_value(t, unit, per_rep) for t in v] for k, v in rounds[name].items()}
        line = f"{name:<{width}}{_spread_text(values['dtfnb'], unit)}"
        if "tensorflow" in values:
            # ratio > 1 means dtfnb is better: less latency, or more per second
            pairs = [(t / o if unit == "us" else o / t)
                     for o, t in zip(values["dtfnb"], values["tensorflow"])]
            ratios[name] = statistics.median(pairs)
            line += (f"{_spread_text(values['tensorflow'], unit)}"
                     f"{ratios[name]:>8.2f}x [{min(pairs):.2f}–{max(pairs):.2f}]")
        print(line)
    if ours.wakeups:
        print()
        print("dtfnb wake-ups per repetition (voluntary context switches of its "
              "processes), median [min–max]")
        for name, counts in _counted(ours.wakeups).items():
            print(f"  {name:<{width}}{statistics.median(counts):>8.1f} "
                  f"[{min(counts):.1f}–{max(counts):.1f}]")
    if targets:
        print()
        print("targets (median ratio)")
        for name, need in targets.items():
            label = f"{name}: dtfnb >= {need:g}x TensorFlow"
            if name not in ratios:
                print(f"  {label:<{width + 26}} n/a (no TensorFlow)")
                continue
            verdict = "met" if ratios[name] >= need else "MISSED"
            print(f"  {label:<{width + 26}} {ratios[name]:.2f}x: {verdict}")
    return results


def _counted(wakeups):
    """The wake-ups of the measured rounds (the warm-up round builds plans), or None."""
    return None if wakeups is None else {name: counts[1:] for name, counts in wakeups.items()}


def _rounds(ours, theirs, name, reps, rounds):
    """{implementation: [seconds per rep in each round]} of `name` over `rounds`
    alternating rounds, after one warm-up round each (plans built, caches filled).

    The rounds last about as long on both sides: the one the warm-up found faster runs
    proportionally more than `reps` repetitions. So a round's fixed costs (starting
    workers, waiting for the last one) weigh alike on both, and load that comes and
    goes falls on rounds of one length, which makes the two spreads comparable."""
    warmup = {"dtfnb": ours.measure(name, reps)}
    if theirs is not None:
        warmup["tensorflow"] = theirs.measure(name, reps)
    longest = max(warmup.values())
    counts = {k: max(reps, round(reps * longest / seconds)) if seconds > 0 else reps
              for k, seconds in warmup.items()}
    samples = {"dtfnb": [], "tensorflow": []}
    for _ in range(rounds):
        samples["dtfnb"].append(ours.measure(name, counts["dtfnb"]) / counts["dtfnb"])
        if theirs is not None:
            samples["tensorflow"].append(
                theirs.measure(name, counts["tensorflow"]) / counts["tensorflow"])
    return {k: v for k, v in samples.items() if v}


def _spread_text(values, unit):
    """"median [min–max]" and the relative spread, (max − min) / median, as columns."""
    median = statistics.median(values)
    text = f"{_fmt(median, unit)} [{_fmt(min(values), unit, False)}–" \
           f"{_fmt(max(values), unit, False)}]"
    return f"{text:>24}{(max(values) - min(values)) / median:>8.0%}"


def _value(seconds_per_rep, unit, per_rep=1):
    return seconds_per_rep * 1e6 if unit == "us" else per_rep / seconds_per_rep


def _fmt(value, unit, with_unit=True):
    text = f"{value:.1f}" if unit == "us" else f"{value:.0f}"
    return text + (" µs" if unit == "us" else "/s") if with_unit else text
