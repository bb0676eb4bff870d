"""Transport between tasks: dtfnb against TensorFlow (tensorflow.compat.v1), in one run.

    python benchmarks/transport.py [--tf-python /path/to/python-with-tensorflow] [--rounds 5]

Each implementation runs the same two-task cluster: this process (or, for TensorFlow,
the interpreter given by --tf-python) holds job "worker" task 0 as an in-process
`tf.train.Server` and a `tf.Session(server.target)`; job "ps" task 0 runs in a separate
OS process (`python -m dtfnb.server` for dtfnb, a `tf.train.Server(...).join()` for
TensorFlow). Printed, as medians of interleaved rounds:

1. the latency of `sess.run(v + 1.0)` with `v` and the add pinned to /job:ps/task:0;
2. the throughput (GB/s, 1 MB = 2^20 bytes) of fetching 1/16/64/256 MB float32
   variables that live on the ps task, through the same session; dtfnb both with its
   shared-memory path (default) and without (`ConfigProto(disable_shared_memory=True)`);
3. floors measured in the same run: a raw grpcio unary round trip (8 bytes, identity
   serializers, server in another process), the same round trip over a Unix socket
   to that process (the floor of dtfnb's own calls between tasks on one host), a raw
   grpcio unary download of the same sizes as bytes, and `np.copyto` into a
   pre-faulted buffer;

then the targets as ratio lines. Every subprocess is stopped on exit. Nothing is
installed: TensorFlow is used only where it already is.
"""

import argparse
import atexit
import json
import math
import os
import signal
import socket
import statistics
import sys
import threading
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _cluster import (  # noqa: E402
    exit_on_sigterm,
    free_ports,
    is_dtfnb,
    spawn,
    spawn_task,
    watch_parent,
)
from _compare import _Remote, _tensorflow, add_load_option, serve  # noqa: E402
from _load import background_load, describe  # noqa: E402

MB = 1 << 20
SIZES_MB = (1, 16, 64, 256)
LARGE_MB = 16           # sizes from here on are "large tensors" for the targets
FETCH_WARMUP = 3        # dtfnb's shared-memory path reuses blocks after two fetches
LATENCY_WARMUP = 200
TARGET_SECONDS = 0.2    # each timed measurement runs about this long

# ---------------------------------------------------------------------------
# The cluster, one per implementation; the workloads share it.

class _Cluster:
    def __init__(self, tf):
        self.tf = tf
        self.is_dtfnb = is_dtfnb(tf)
        worker_port, ps_port = free_ports(2)
        cluster = {"worker": [f"127.0.0.1:{worker_port}"], "ps": [f"127.0.0.1:{ps_port}"]}
        spawn_task(tf, cluster, "ps", 0, ps_port)
        if not self.is_dtfnb:
            cluster = tf.train.ClusterSpec(cluster)
        self.server = tf.train.Server(cluster, job_name="worker", task_index=0)
        self.graph = tf.Graph()
        with self.graph.as_default(), tf.device("/job:ps/task:0"):
            self.v = tf.Variable(1.0, name="v")
            self.y = self.v + 1.0
            self.big = {mb: tf.Variable(tf.ones([mb * MB // 4], dtype=tf.float32),
                                        name=f"big_{mb}mb") for mb in SIZES_MB}
        self.sess = tf.Session(self.server.target, graph=self.graph)
        self.sess.run([self.v.initializer] + [b.initializer for b in self.big.values()])
        self._no_shm = None
        if self.is_dtfnb:
            atexit.register(self.close)  # runs before stop_children (LIFO)

    def no_shm_session(self):
        if self._no_shm is None:
            config = self.tf.ConfigProto(disable_shared_memory=True)
            self._no_shm = self.tf.Session(self.server.target, graph=self.graph,
                                           config=config)
        return self._no_shm

    def close(self):
        for sess in (self._no_shm, self.sess):
            if sess is not None:
                sess.close()
        self.server.stop()


_clusters = {}


def _cluster(tf):
    if tf.__name__ not in _clusters:
        _clusters[tf.__name__] = _Cluster(tf)
    return _clusters[tf.__name__]


def _timer(fn):
    def measure(n):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        return time.perf_counter() - start

    return measure


def remote_op(tf):
    c = _cluster(tf)
    if c.sess.run(c.y) != 2.0:
        raise AssertionError("v + 1.0 on the ps task is not 2.0")
    return _timer(lambda: c.sess.run(c.y))


def fetch(mb, shared_memory=True):
    def build(tf):
        c = _cluster(tf)
        sess = c.sess if shared_memory else c.no_shm_session()
        var = c.big[mb]
        value = sess.run(var)
        if value.nbytes != mb * MB or value[-1] != 1.0:
            raise AssertionError(f"fetched {value.nbytes} bytes for {mb} MB")
        return _timer(lambda: sess.run(var))

    return build


# Built on both implementations (TensorFlow's in its own interpreter).
WORKLOADS = {"remote op": remote_op}
WORKLOADS.update({f"fetch {mb} MB": fetch(mb) for mb in SIZES_MB})
# dtfnb only.
DTFNB_ONLY = {f"fetch {mb} MB no-shm": fetch(mb, shared_memory=False) for mb in SIZES_MB}

# ---------------------------------------------------------------------------
# Floors: raw grpcio (server in another process) and numpy memcpy, in this process.

_GRPC_OPTIONS = [("grpc.max_send_message_length", -1),
                 ("grpc.max_receive_message_length", -1)]


def _unix_echo(listener):
    """Answers each 8-byte message on each connection with itself."""
    while True:
        connection, _ = listener.accept()
        with connection:
            while message := connection.recv(8):
                connection.sendall(message)


def grpc_floor_main(port):
    """`--grpc-floor-server PORT`: unary Echo and Download with identity serializers, and
    an echo on the Unix socket _unix_path(PORT)."""
    from concurrent import futures

    import grpc

    watch_parent()
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(_unix_path(port))
    listener.listen()
    threading.Thread(target=_unix_echo, args=(listener,), daemon=True).start()
    payloads = {str(mb * MB).encode(): b"\x01" * (mb * MB) for mb in SIZES_MB}
    handler = grpc.method_handlers_generic_handler("floor", {
        "Echo": grpc.unary_unary_rpc_method_handler(lambda request, context: request),
        "Download": grpc.unary_unary_rpc_method_handler(
            lambda request, context: payloads[request]),
    })
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4), options=_GRPC_OPTIONS)
    server.add_generic_rpc_handlers((handler,))
    server.add_insecure_port(f"127.0.0.1:{port}")
    server.start()
    signal.signal(signal.SIGTERM, lambda *_: server.stop(0))
    server.wait_for_termination()


def _unix_path(port):
    return f"\0dtfnb-transport-floor-{port}"  # abstract: nothing left on disk


class _Floors:
    def __init__(self):
        import grpc

        (port,) = free_ports(1)
        spawn([sys.executable, os.path.abspath(__file__), "--grpc-floor-server", str(port)],
              "grpcio floor server", port)
        self._channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=_GRPC_OPTIONS)
        atexit.register(self._channel.close)
        echo = self._channel.unary_unary("/floor/Echo")
        download = self._channel.unary_unary("/floor/Download")
        message = b"8 bytes!"
        if echo(message) != message:
            raise AssertionError("grpcio echo")
        self.measures = {"grpc echo": _timer(lambda: echo(message))}
        self._unix = socket.socket(socket.AF_UNIX)
        self._unix.connect(_unix_path(port))
        atexit.register(self._unix.close)

        def unix_echo():
            self._unix.sendall(message)
            if self._unix.recv(8) != message:
                raise AssertionError("unix echo")
        self.measures["unix echo"] = _timer(unix_echo)
        for mb in SIZES_MB:
            request = str(mb * MB).encode()
            if len(download(request)) != mb * MB:
                raise AssertionError("grpcio download")
            self.measures[f"grpc {mb} MB"] = _timer(lambda r=request: download(r))
            src = np.ones(mb * MB // 4, dtype=np.float32)
            dst = np.empty_like(src)
            np.copyto(dst, src)  # pre-faults dst
            self.measures[f"memcpy {mb} MB"] = _timer(
                lambda d=dst, s=src: np.copyto(d, s))

    def measure(self, name, n):
        return self.measures[name](n)


# ---------------------------------------------------------------------------

class _Dtfnb:
    def __init__(self, tf):
        self._measures = {name: build(tf) for name, build in
                          {**WORKLOADS, **DTFNB_ONLY}.items()}

    def measure(self, name, n):
        return self._measures[name](n)


def _plan():
    """(key, side, workload name, warm-up reps) in the order each round measures them."""
    plan = [("remote op", "dtfnb", "remote op", LATENCY_WARMUP),
            ("remote op tf", "tensorflow", "remote op", LATENCY_WARMUP),
            ("grpc echo", "floor", "grpc echo", LATENCY_WARMUP),
            ("unix echo", "floor", "unix echo", LATENCY_WARMUP)]
    for mb in SIZES_MB:
        plan += [(f"{mb} shm", "dtfnb", f"fetch {mb} MB", FETCH_WARMUP),
                 (f"{mb} no-shm", "dtfnb", f"fetch {mb} MB no-shm", FETCH_WARMUP),
                 (f"{mb} tf", "tensorflow", f"fetch {mb} MB", FETCH_WARMUP),
                 (f"{mb} grpc", "floor", f"grpc {mb} MB", FETCH_WARMUP),
                 (f"{mb} memcpy", "floor", f"memcpy {mb} MB", FETCH_WARMUP)]
    return plan


def run(args):
    import dtfnb

    sides = {"dtfnb": _Dtfnb(dtfnb), "floor": _Floors()}
    theirs, where = _tensorflow(os.path.abspath(__file__), args.tf_python, WORKLOADS)
    if theirs is not None:
        sides["tensorflow"] = theirs  # a _Remote worker is also ended at exit
    plan = [step for step in _plan() if step[1] in sides]
    # Warm up, and size each measurement to run about TARGET_SECONDS.
    reps = {}
    for key, side, name, warmup in plan:
        seconds = sides[side].measure(name, warmup)
        reps[key] = max(1, min(5000, math.ceil(TARGET_SECONDS * warmup / seconds)))
    # Interleaved rounds: every measurement once per round; medians of the rounds.
    samples = {key: [] for key, *_ in plan}
    with background_load(args.load):
        for _ in range(args.rounds):
            for key, side, name, _ in plan:
                samples[key].append(sides[side].measure(name, reps[key]) / reps[key])
    if isinstance(theirs, _Remote):
        theirs.close()
    return {key: statistics.median(v) for key, v in samples.items()}, where


def _gbps(seconds, mb):
    return mb * MB / seconds / 1e9 if seconds else None


def report(medians, where, rounds):
    def us(key):
        return medians[key] * 1e6 if key in medians else None

    def cell(value, fmt, width):
        return f"{'-' if value is None else format(value, fmt):>{width}}"

    def ratio(a, b):
        return a / b if a is not None and b is not None else None

    def times(value, width):
        return f"{'-' if value is None else f'{value:.2f}x':>{width}}"

    print(f"TensorFlow: {where}")
    print(f"medians of {rounds} interleaved rounds; ratio > 1x: dtfnb is better")
    print()
    print(f"{'remote op latency (µs)':<34}{'dtfnb':>10}{'TensorFlow':>12}{'TF/dtfnb':>10}"
          f"{'grpcio 8 B echo':>17}{'unix 8 B echo':>15}")
    lat, lat_tf, echo = us("remote op"), us("remote op tf"), us("grpc echo")
    print(f"{'sess.run(v + 1.0) on /job:ps/task:0':<34}{cell(lat, '.1f', 10)}"
          f"{cell(lat_tf, '.1f', 12)}{times(ratio(lat_tf, lat), 10)}"
          f"{cell(echo, '.1f', 17)}{cell(us('unix echo'), '.1f', 15)}")
    print()
    print("fetch a float32 variable from /job:ps/task:0 (GB/s, 1 MB = 2^20 B)")
    print(f"{'size':<8}{'dtfnb shm':>11}{'dtfnb no-shm':>14}{'TensorFlow':>12}"
          f"{'grpcio bytes':>14}{'np.copyto':>11}{'shm/TF':>9}{'no-shm/TF':>11}"
          f"{'no-shm/grpc':>13}")
    rows = {}
    for mb in SIZES_MB:
        r = {name: _gbps(medians.get(f"{mb} {name}"), mb)
             for name in ("shm", "no-shm", "tf", "grpc", "memcpy")}
        rows[mb] = r
        print(f"{f'{mb} MB':<8}{cell(r['shm'], '.2f', 11)}{cell(r['no-shm'], '.2f', 14)}"
              f"{cell(r['tf'], '.2f', 12)}{cell(r['grpc'], '.2f', 14)}"
              f"{cell(r['memcpy'], '.2f', 11)}{times(ratio(r['shm'], r['tf']), 9)}"
              f"{times(ratio(r['no-shm'], r['tf']), 11)}"
              f"{times(ratio(r['no-shm'], r['grpc']), 13)}")
    print()
    print("targets")
    large = [mb for mb in SIZES_MB if mb >= LARGE_MB]

    def target(label, values, need):
        if any(v is None for _, v in values):
            print(f"  {label:<55} n/a (no TensorFlow)")
            return
        verdict = "met" if all(v >= need for _, v in values) else "MISSED"
        shown = ", ".join(f"{k} {v:.2f}x" for k, v in values)
        print(f"  {label:<55} {shown}  (need >= {need:g}x): {verdict}")

    target("remote-op latency, dtfnb <= TensorFlow (TF/dtfnb)",
           [("latency", ratio(lat_tf, lat))], 1.0)
    target(f"throughput >= {LARGE_MB} MB, dtfnb shm >= 3x TensorFlow",
           [(f"{mb} MB", ratio(rows[mb]["shm"], rows[mb]["tf"])) for mb in large], 3.0)
    target(f"throughput >= {LARGE_MB} MB, dtfnb no-shm >= 0.8x grpcio bytes",
           [(f"{mb} MB", ratio(rows[mb]["no-shm"], rows[mb]["grpc"])) for mb in large],
           0.8)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--grpc-floor-server", type=int, metavar="PORT",
                        help=argparse.SUPPRESS)
    parser.add_argument("--tf-python", default=os.environ.get("DTFNB_TF_PYTHON"),
                        help="an interpreter with tensorflow (default $DTFNB_TF_PYTHON)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    add_load_option(parser)
    args = parser.parse_args()
    if args.grpc_floor_server:
        grpc_floor_main(args.grpc_floor_server)
        return
    exit_on_sigterm()
    if args.worker:
        serve(WORKLOADS)  # TensorFlow's side; its ps task is stopped at exit
        return
    medians, where = run(args)
    if args.json:
        print(json.dumps({"tensorflow": where, "load": describe(args.load),
                          "seconds_per_rep": medians}))
    else:
        print(f"load: {describe(args.load)}")
        report(medians, where, args.rounds)


if __name__ == "__main__":
    main()
