"""Subprocesses for the benchmarks: tasks of a cluster and line-protocol children.

Every child started here is stopped when this process exits (normally, by an
exception, or by SIGTERM once `exit_on_sigterm()` ran), and children started with
`watch_parent()` or `--exit-with-parent` exit on their own if this process is killed.

Run as a script, this file is TensorFlow's side of a task:

    python _cluster.py --tf-server CLUSTER_JSON JOB TASK

serves `tf.train.Server(CLUSTER, job_name=JOB, task_index=TASK).join()` until terminated
or until the process that started it exits.
"""

import atexit
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_children = []


def stop_children():
    """Terminates (then kills) every child still running, newest first."""
    while _children:
        proc, log = _children.pop()
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if log is not None:
            log.close()


atexit.register(stop_children)


def running_children():
    """The pids of the children started here that still run."""
    return [proc.pid for proc, _ in _children if proc.poll() is None]


def exit_on_sigterm():
    """SIGTERM exits through atexit, so that the children are stopped too."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def _log_tail(log):
    log.seek(0)
    return log.read()[-3000:]


def spawn(argv, what, port=None, env=None):
    """Starts `argv` (stdout to nowhere, stderr to a log) and waits for `port` to listen."""
    log = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=log, cwd=REPO, env=env)
    _children.append((proc, log))
    if port is not None:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not start (exit {proc.returncode}):\n"
                                   f"{_log_tail(log)}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
    return proc


def free_ports(n):
    """`n` distinct ports that were free on 127.0.0.1 a moment ago."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def watch_parent():
    """In a child: exit when the process that started it goes away."""
    parent = os.getppid()

    def watch():
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


def is_dtfnb(tf):
    return tf.__name__.split(".")[0] == "dtfnb"


def dtfnb_env():
    """This environment with the repository on PYTHONPATH, for `python -m dtfnb...`."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [REPO, env.get("PYTHONPATH")]))
    return env


def spawn_task(tf, cluster, job, task, port, flags=()):
    """Starts task `job`/`task` of `cluster` (a dict) in another process of the same
    implementation as `tf`, and waits until it listens on `port`. `flags`: more options
    of `python -m dtfnb.server` (dtfnb's only)."""
    text = json.dumps(cluster)
    if is_dtfnb(tf):
        return spawn([sys.executable, "-m", "dtfnb.server", "--cluster", text, "--job", job,
                      "--task", str(task), "--exit-with-parent", *flags], f"dtfnb {job} task",
                     port, dtfnb_env())
    return spawn([sys.executable, os.path.abspath(__file__), "--tf-server", text, job,
                  str(task)], f"TensorFlow {job} task", port)


class LineChild:
    """A child that prints `ready`, then answers each line on its stdin with one line.

    Its stderr goes to a log that errors quote; closing its stdin asks it to finish.
    """

    def __init__(self, argv, what, env=None):
        self.what = what
        self._log = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._log, cwd=REPO, env=env, text=True)
        _children.append((self.proc, self._log))

    def send(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def reply(self):
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait()
            raise RuntimeError(f"{self.what} exited ({self.proc.returncode}):\n"
                               f"{_log_tail(self._log)}")
        return line.strip()

    def wait_ready(self):
        line = self.reply()
        if line != "ready":
            raise RuntimeError(f"{self.what} said {line!r} instead of 'ready'")

    def finish(self, timeout=10):
        """Closes its stdin and waits for it to exit (stop_children kills a laggard)."""
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=timeout)
            except (OSError, subprocess.TimeoutExpired):
                pass


def _tf_server_main(cluster_json, job, task):
    import tensorflow.compat.v1 as tf

    watch_parent()
    tf.train.Server(tf.train.ClusterSpec(json.loads(cluster_json)),
                    job_name=job, task_index=int(task)).join()


if __name__ == "__main__":
    if len(sys.argv) != 5 or sys.argv[1] != "--tf-server":
        raise SystemExit(__doc__)
    _tf_server_main(*sys.argv[2:])
