"""`python -m dtfnb.server`: run one task of a cluster until told to stop.

    python -m dtfnb.server --cluster '{"ps": ["127.0.0.1:2222"], "worker": [...]}' \\
        --job ps --task 0

The cluster comes from --cluster (JSON text or a JSON file), else from TF_CONFIG
(Kubernetes TFJob) or Slurm's environment: under `srun`, `--jobs ps=1,worker=2` gives
Slurm's tasks to jobs in rank order and each listens on `--port-base` + its rank on
its node (SlurmClusterResolver). The task binds the address the cluster gives it
(127.0.0.1 in every example), or --bind's host at its port. It logs to stderr, and
stops cleanly on SIGTERM or SIGINT (and, with --exit-with-parent, when its parent dies;
with --exit-on-eof, when its stdin closes: the ssh launcher's channel).
--secrets-from-stdin takes the cluster token and TLS PEMs from a first line on stdin
(docs/security.md).
`--link 100Mbit,2ms` and `--slow x3` emulate the task's network link and a slow task
(dtfnb's own: see dtfnb/distributed_runtime/emulation.py).
"""

import argparse
import faulthandler
import json
import logging
import os
import select
import signal
import sys
import threading
import time

from dtfnb.distributed_runtime.cluster import SERVING
from dtfnb.distributed_runtime.emulation import LINK_FORM, SLOW_FORM, parse_link, parse_slow
from dtfnb.distributed_runtime.resolvers import resolve_from_environment
from dtfnb.distributed_runtime.server_lib import Server, task_name
from dtfnb.distributed_runtime.transport.rpc import TLS_VARIABLES, TOKEN_VARIABLE
from dtfnb.protos import config_pb2

log = logging.getLogger("dtfnb.server")
_STOP_REPORT_SECONDS = 10
_SECRETS_SECONDS = 30  # how long --secrets-from-stdin waits for the launcher's line
_SIGNAL_CHECK_SECONDS = 0.2  # how soon a signal that reached another thread is handled
SCHED_BATCH_VARIABLE = "DTFNB_SCHED_BATCH"


def _parse(argv):
    parser = argparse.ArgumentParser(prog="python -m dtfnb.server", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cluster", help="the ClusterSpec as JSON, or a JSON file")
    parser.add_argument("--job", help="this task's job name")
    parser.add_argument("--task", type=int, help="this task's index in its job")
    parser.add_argument("--jobs", type=_checked(_job_counts), metavar="JOB=N,...",
                        help="under Slurm: the jobs of its tasks in rank order (default: "
                             "every task a worker)")
    parser.add_argument("--port-base", type=int, default=8888,
                        help="under Slurm: each task listens on this port + its rank on "
                             "its node (default 8888)")
    parser.add_argument("--cpus", type=int, default=1, help="CPU devices (default 1)")
    parser.add_argument("--emulated-gpus", type=int, default=0,
                        help="GPU devices emulated with numpy where CUDA is absent")
    parser.add_argument("--intra-op-threads", type=int, default=0,
                        help="BLAS threads (default: the host's cores shared by its tasks)")
    parser.add_argument("--bind", metavar="HOST",
                        help="listen on HOST (0.0.0.0: every interface, as TensorFlow's "
                             "servers) at the task's port, instead of on the address the "
                             "cluster gives the task: for a Kubernetes pod, whose service "
                             "name may not resolve yet when it starts")
    parser.add_argument("--link", type=_checked(parse_link), metavar="SPEC",
                        help=f"this task's emulated network link: {LINK_FORM}")
    parser.add_argument("--slow", type=_checked(parse_slow), metavar="SPEC",
                        help=f"emulate a slow task: {SLOW_FORM}")
    parser.add_argument("--exit-with-parent", nargs="?", type=int, const=0, metavar="PID",
                        help="stop when the process that started this one exits (or "
                             "process PID: a launcher that may exit before this task has "
                             "started names itself)")
    parser.add_argument("--exit-on-eof", action="store_true",
                        help="stop when stdin closes (a launcher's channel, such as ssh's, "
                             "that ends with its client)")
    parser.add_argument("--secrets-from-stdin", action="store_true",
                        help="read the cluster token and TLS PEMs as one JSON line on stdin "
                             "first ({\"DTFNB_CLUSTER_TOKEN\": ..., \"DTFNB_TLS_CERT\": "
                             "PEM text, ...}), so that they appear in no argv or environment")
    return parser.parse_args(argv)


def _checked(parse):
    """An argparse type that checks a spec with `parse` and keeps its text."""
    def check(text):
        try:
            parse(text)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None
        return text
    return check


def _job_counts(text):
    """`ps=1,worker=2` -> {"ps": 1, "worker": 2}, in the order given."""
    counts = {}
    for item in text.split(","):
        job, _, count = item.partition("=")
        if not job or not count.isdigit() or int(count) < 1 or job in counts:
            raise ValueError(f"bad job count {item!r}: expected JOB=N,... like ps=1,worker=2")
        counts[job] = int(count)
    return counts


def _cluster_and_task(args):
    if args.cluster:
        text = args.cluster
        if not text.lstrip().startswith("{"):
            with open(text) as f:
                text = f.read()
        cluster = json.loads(text)
        if args.job is None or args.task is None:
            raise SystemExit("--job and --task are required with --cluster")
        return cluster, args.job, args.task
    jobs = _job_counts(args.jobs) if args.jobs else None
    resolver = resolve_from_environment(jobs=jobs, port_base=args.port_base)
    if resolver is None:
        raise SystemExit("no cluster: pass --cluster, or set TF_CONFIG, or run under Slurm")
    job = args.job if args.job is not None else resolver.task_type
    task = args.task if args.task is not None else resolver.task_id
    return resolver.cluster_spec(), job, task


def _read_secrets(fd):
    """Takes the secrets line a launcher writes first on stdin (`fd`): the token into this
    process's environment, each PEM into a memory file only this process holds (gone with
    it, however it ends), named in DTFNB_TLS_* as Security expects."""
    line = b""
    deadline = time.monotonic() + _SECRETS_SECONDS
    while not line.endswith(b"\n"):
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        chunk = os.read(fd, 1) if ready else b""   # one byte: what follows is not ours
        if not chunk:
            raise SystemExit(f"--secrets-from-stdin: no secrets line within "
                             f"{_SECRETS_SECONDS} s")
        line += chunk
    for name, value in json.loads(line).items():
        if name == TOKEN_VARIABLE:
            os.environ[name] = value
        elif name in TLS_VARIABLES:
            memory = os.memfd_create(name.lower())
            os.write(memory, value.encode())
            os.environ[name] = f"/proc/self/fd/{memory}"
        else:
            raise SystemExit(f"--secrets-from-stdin: {name!r} is not a secret dtfnb reads")


def _watch_stdin(server, fd):
    """Stops the server once stdin (`fd`) reaches its end: the launcher's channel has
    closed. It reads the descriptor, not sys.stdin, whose lock a daemon thread would
    still hold as the interpreter exits."""
    while os.read(fd, 4096):
        pass
    log.warning("stdin closed: stopping")
    server.stop()


def _watch_parent(server, parent):
    while not server.stopped.wait(0.5):
        try:
            os.kill(parent, 0)
        except ProcessLookupError:
            log.warning("parent process %d exited: stopping", parent)
            server.stop()


def _schedule_for_throughput():
    """Puts this task's threads under SCHED_BATCH (Linux): a thread that wakes another,
    in this task or another, is then not preempted by it. A ps sends its parameters to
    every worker before any of them starts computing; with two workers on two cores the
    second otherwise waited ~2 ms for the first's tower. $DTFNB_SCHED_BATCH=0 leaves the
    scheduling as it is."""
    if not hasattr(os, "SCHED_BATCH") or os.environ.get(SCHED_BATCH_VARIABLE) == "0":
        return
    for thread_id in os.listdir("/proc/self/task"):  # BLAS's threads are already there
        try:
            os.sched_setscheduler(int(thread_id), os.SCHED_BATCH, os.sched_param(0))
        except OSError:  # gone meanwhile, or not allowed: scheduled as before
            pass


def main(argv=None):
    """Runs the task the command line (or the environment) names until it is signalled to stop."""
    parent = os.getppid()  # first: the parent may die while the server starts
    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    args = _parse(argv)
    if args.secrets_from_stdin:
        _read_secrets(sys.stdin.fileno())
    _schedule_for_throughput()
    cluster, job, task = _cluster_and_task(args)
    config = config_pb2.ConfigProto(device_count={"CPU": args.cpus},
                                    emulated_gpus=args.emulated_gpus,
                                    intra_op_parallelism_threads=args.intra_op_threads)
    # The handlers come before the server: a SIGTERM as the task comes up stops it cleanly
    # rather than killing it. They only note the request (a handler that took a lock could
    # interrupt its own thread holding it); the main thread then stops the server.
    stop_asked = []
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda signum, frame: stop_asked.append(signum))
    server = Server(cluster, job, task, config=config,
                    emulate=dict(link=args.link, slow=args.slow), bind=args.bind)
    if args.exit_with_parent is not None:
        threading.Thread(target=_watch_parent, args=(server, args.exit_with_parent or parent),
                         daemon=True).start()
    if args.exit_on_eof:
        threading.Thread(target=_watch_stdin, args=(server, sys.stdin.fileno()),
                         daemon=True).start()
    log.info("%s %s %s%s", task_name(job, task), SERVING, server.target,
             f" (emulated: {server.emulated.description})" if server.emulated.description
             else "")
    # Not a plain wait: the kernel may hand SIGTERM to any thread, and Python runs its
    # handler only when the main thread wakes, which a wait without timeout never does.
    while not (stop_asked or server.stopped.wait(_SIGNAL_CHECK_SECONDS)):
        pass
    # A stop that hangs says where: every thread's stack goes to stderr after 10 s.
    faulthandler.dump_traceback_later(_STOP_REPORT_SECONDS, exit=False)
    server.stop()
    server.stopped.wait()   # a stop that the parent's watch began ends first
    log.info("%s stopped", task_name(job, task))  # the report stays armed for the exit


if __name__ == "__main__":
    main()
