"""Emulated links (dtfnb's own: TensorFlow has none): how close a transfer comes to the
bandwidth a link is given.

    python benchmarks/emulated_link.py [--rounds 7] [--load busy] [--json]

For each link of 10, 100 and 1000 Mbit (no latency), a ps task and a worker task run as
`python -m dtfnb.server --link` processes, and this process's session on the worker
sums a float32 variable of the ps: one transfer of N bytes ps -> worker per step, N
sized so that the link needs 0.1 s for it. Each round times `--steps` steps; printed
per link, the median round's achieved throughput (N / seconds per step) with the
spread of the rounds, against the configured bandwidth, and beside it the same
transfer with no emulated link (the transport's own speed, the ceiling of the emulated
ones). The emulation guarantees only the lower bound, never more than the configured
bandwidth: what it loses below that is the step's own cost and the machine's load.
"""

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _cluster import exit_on_sigterm, free_ports, spawn_task, stop_children  # noqa: E402
from _compare import add_load_option  # noqa: E402
from _load import background_load, describe  # noqa: E402

MBITS = (10, 100, 1000)
LINK_SECONDS = 0.1   # each transfer takes this long at the configured bandwidth
WARMUP = 3


def measure(tf, mbit, rounds, steps, link):
    """Seconds per step of each round: a transfer of mbit's N bytes ps -> worker, through
    links of `mbit` (or none)."""
    nbytes = int(mbit * 1e6 / 8 * LINK_SECONDS)
    ps_port, worker_port = free_ports(2)
    cluster = {"ps": [f"127.0.0.1:{ps_port}"], "worker": [f"127.0.0.1:{worker_port}"]}
    flags = ["--link", f"{mbit}Mbit"] if link else []
    spawn_task(tf, cluster, "ps", 0, ps_port, flags)
    spawn_task(tf, cluster, "worker", 0, worker_port, flags)
    graph = tf.Graph()
    with graph.as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(np.ones(nbytes // 4, np.float32))
        with tf.device("/job:worker/task:0"):
            total = tf.reduce_sum(v)
    try:
        with tf.Session(f"grpc://127.0.0.1:{worker_port}", graph=graph) as sess:
            sess.run(v.initializer)
            for _ in range(WARMUP):
                sess.run(total.op)
            per_step = []
            for _ in range(rounds):
                start = time.perf_counter()
                for _ in range(steps):
                    sess.run(total.op)
                per_step.append((time.perf_counter() - start) / steps)
            return nbytes, per_step
    finally:
        stop_children()


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=5, help="steps per round")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    add_load_option(parser)
    args = parser.parse_args()
    exit_on_sigterm()
    import dtfnb as tf

    results = {}
    with background_load(args.load):
        for mbit in MBITS:
            results[f"{mbit}Mbit"] = entry = {}
            for link in (True, False):
                nbytes, per_step = measure(tf, mbit, args.rounds, args.steps, link)
                rates = sorted(nbytes * 8 / 1e6 / s for s in per_step)   # Mbit/s
                entry["bytes"] = nbytes
                entry["emulated" if link else "no_link"] = {
                    "median_mbit_s": statistics.median(rates), "min_mbit_s": rates[0],
                    "max_mbit_s": rates[-1]}
    if args.json:
        print(json.dumps({"load": describe(args.load), "cores": os.cpu_count(),
                          "results": results}))
        return
    print(f"load: {describe(args.load)}; {os.cpu_count()} cores; Mbit/s achieved, median of "
          f"{args.rounds} rounds of {args.steps} steps (min-max)")
    print(f"{'link':<12}{'bytes':>12}  {'emulated link':<24}{'of link':>8}  no link")
    for mbit in MBITS:
        entry = results[f"{mbit}Mbit"]
        shaped, free = entry["emulated"], entry["no_link"]
        print(f"{f'{mbit} Mbit/s':<12}{entry['bytes']:>12,}  {_rate(shaped):<24}"
              f"{shaped['median_mbit_s'] / mbit:>8.1%}  {_rate(free)}")


def _rate(stats):
    return (f"{stats['median_mbit_s']:.1f} ({stats['min_mbit_s']:.1f}-"
            f"{stats['max_mbit_s']:.1f})")


if __name__ == "__main__":
    main()
