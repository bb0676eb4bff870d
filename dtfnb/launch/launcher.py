"""The launcher interface: what a `Cluster` asks of whatever starts its tasks.

A `Launcher` starts tasks (`python -m dtfnb.server`, one process per task) and hands back
one `TaskProcess` per task: a handle with `pid`, `poll()`, `send_signal()`, `kill()`,
`wait()`, the task's output as lines (`stdout`) and, where the launcher picks it, the
address the task serves at. A `Cluster` drives every launcher through these alone, so
a new way of starting tasks is a new Launcher, never a branch in `Cluster`.
"""

import abc
import collections
import json
import os
import signal

from dtfnb.distributed_runtime.transport.rpc import TLS_VARIABLES, TOKEN_VARIABLE

# One task to start: its job, index and the server flags the cluster gives it (CPU and GPU
# counts, emulated links); the launcher adds --cluster, --job, --task and the flags that
# tie the task's life to the client (--exit-with-parent, --exit-on-eof).
TaskStart = collections.namedtuple("TaskStart", "job index flags")


class TaskProcess(abc.ABC):
    """One started task, as its launcher sees it (the part of Popen's interface a
    Cluster uses). `stdout` is the task's output (stdout and stderr), a text stream read
    line by line; `pid` the task's process id where it runs (None until known);
    `address` the address it serves at where its launcher picked it (sbatch), else None."""

    pid = None
    stdout = None
    address = None
    returncode = None

    @abc.abstractmethod
    def poll(self):
        """The exit status if the task has ended, else None."""

    @abc.abstractmethod
    def send_signal(self, signum):
        """Sends `signum` to the task's process, wherever it runs, if it still runs."""

    @abc.abstractmethod
    def wait(self, timeout=None):
        """Waits until the task has ended and returns its exit status;
        subprocess.TimeoutExpired after `timeout` seconds."""

    def kill(self):
        """Kills the task's process with SIGKILL (as a crash would)."""
        self.send_signal(signal.SIGKILL)


class Launcher(abc.ABC):
    """Starts a cluster's tasks. `name` is what `%%cluster --launcher` calls it."""

    name = None
    # Whether the launcher picks the tasks' addresses (sbatch: the job's nodes are known
    # once it runs). A Cluster then takes its spec as task counts and each address from
    # the task's handle (TaskProcess.address) once the task reports it.
    picks_addresses = False

    @abc.abstractmethod
    def start(self, spec, tasks):
        """Starts `tasks` (TaskStarts) of the cluster `spec` ({job: [address, ...]}, or
        {job: count} where the launcher picks addresses); returns a TaskProcess per task,
        in the same order. It returns once the tasks are on their way, not when they serve."""

    def close(self):
        """Releases what the launcher holds for its cluster once every task has ended
        (an allocation, a batch job); the default holds nothing."""
        return None


def server_argv(spec, task, lifetime):
    """`python -m dtfnb.server`'s arguments for `task` of the cluster `spec`, with the
    `lifetime` flags that end it with the client."""
    return ["--cluster", json.dumps(spec), "--job", task.job, "--task", str(task.index),
            *lifetime, *task.flags]


def client_secrets(environ=os.environ):
    """The cluster token and the TLS material of this process (docs/security.md) as
    {variable: value}, PEM text in place of the files' paths, for a launcher that sends
    them to a task over its channel."""
    secrets = {}
    if environ.get(TOKEN_VARIABLE):
        secrets[TOKEN_VARIABLE] = environ[TOKEN_VARIABLE]
    for name in TLS_VARIABLES:
        if environ.get(name):
            with open(environ[name]) as f:
                secrets[name] = f.read()
    return secrets
