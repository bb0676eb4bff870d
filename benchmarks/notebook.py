"""Bringing a local cluster up and down: `%%cluster` against ipyparallel, in one run.

    python benchmarks/notebook.py [--rounds 5]

Measures, as medians of interleaved rounds, wall-clock seconds to
1. start a LocalCluster of 2 ps + 3 workers (`dtfnb.notebook.LocalCluster`, the code
   path of `%%cluster`: five `dtfnb.server` processes forked from the fork server,
   ready once every task answers) and stop it again (every process has exited); once
   with the fork server running (as after `%load_ext dtfnb`), and once cold, in a fresh
   interpreter whose first cluster starts the fork server too;
2. start `ipyparallel.Cluster(n=5)` (a controller and five engines), wait until a client
   sees all five engines, and stop it, where ipyparallel is installed (it is not a
   dependency of dtfnb: `pip install ipyparallel` to compare).
Targets: dtfnb under 2 s and faster than ipyparallel.
"""

import argparse
import json
import statistics
import subprocess
import sys
import time

from _compare import add_load_option
from _load import background_load, describe

from dtfnb.notebook import LocalCluster

TASKS = {"ps": 2, "worker": 3}


def dtfnb_round():
    """(seconds to start, seconds to stop) of 2 ps + 3 worker processes."""
    start = time.perf_counter()
    cluster = LocalCluster(TASKS, progress=False)
    started = time.perf_counter()
    cluster.stop()
    assert all(task.state == "stopped" for task in cluster.tasks)
    return started - start, time.perf_counter() - started


def cold_dtfnb_round():
    """dtfnb_round() in a fresh interpreter, timed inside it (after its imports)."""
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import notebook; "
            "print(json.dumps(notebook.dtfnb_round()))")
    out = subprocess.run([sys.executable, "-c", code, sys.path[0]], capture_output=True,
                         text=True, check=True).stdout
    return tuple(json.loads(out.splitlines()[-1]))


def ipyparallel_round(ipp):
    start = time.perf_counter()
    cluster = ipp.Cluster(n=5, log_level=40)
    cluster.start_cluster_sync()
    client = cluster.connect_client_sync()
    client.wait_for_engines(5, timeout=120)
    started = time.perf_counter()
    client.close()
    cluster.stop_cluster_sync()
    return started - start, time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    add_load_option(parser)
    args = parser.parse_args()
    try:
        import ipyparallel as ipp
    except ImportError:
        ipp = None
    ours = "dtfnb LocalCluster (2 ps + 3 workers)"
    runs = {ours: dtfnb_round, "  the same, fork server cold": cold_dtfnb_round}
    if ipp:
        runs["ipyparallel.Cluster(n=5)"] = lambda: ipyparallel_round(ipp)
    for run in runs.values():   # warm the file cache for each, uncounted
        run()
    rounds = {name: [] for name in runs}
    with background_load(args.load):
        for _ in range(args.rounds):
            for name, run in runs.items():
                rounds[name].append(run())
    print(f"median of {args.rounds} rounds, seconds; load: {describe(args.load)}")
    print(f"{'':40} {'start':>7} {'stop':>7} {'total':>7}")
    totals = {}
    for name, results in rounds.items():
        start = statistics.median(r[0] for r in results)
        stop = statistics.median(r[1] for r in results)
        totals[name] = statistics.median(r[0] + r[1] for r in results)
        print(f"{name:40} {start:7.2f} {stop:7.2f} {totals[name]:7.2f}")
    cold = totals["  the same, fork server cold"]
    ours = totals[ours]
    print("targets:")
    print(f"  dtfnb start + stop under 2 s: {'met' if ours < 2 else 'missed'} ({ours:.2f} s;"
          f" cold {cold:.2f} s)")
    if ipp:
        theirs = totals["ipyparallel.Cluster(n=5)"]
        print(f"  faster than ipyparallel: {'met' if ours < theirs else 'missed'} "
              f"({theirs / ours:.1f}x)")
    else:
        print("  faster than ipyparallel: not measured (pip install ipyparallel)")


if __name__ == "__main__":
    main()
