"""SrunLauncher and SbatchLauncher: a cluster's tasks as the tasks of one Slurm job step.

Both run every task of the cluster as one step, `srun --ntasks=N --multi-prog`: each
Slurm task becomes the dtfnb task its rank names (`python -m dtfnb.server --jobs
ps=1,worker=2`: SLURM_PROCID through SlurmClusterResolver), listening on `port_base` +
its rank on its node, so the addresses are known once the tasks run. A small shell
wrapper around each task reports its pid and, at the end, its exit status on the step's
output, which srun labels with the rank (`--label`); each task's handle reads its own
lines from it, the address from the task's "serving at" line.

- `SrunLauncher` runs the step from this process, inside the allocation it runs in
  (`salloc`, or a notebook started by a batch job). srun hands its stdin to every task
  (`--input=all`): the cluster token and TLS PEMs go first on it, as over the ssh
  launcher's channel (`--secrets-from-stdin`), and the tasks exit on its EOF
  (`--exit-on-eof`): they die with srun, and srun, whose stdin this process holds,
  with this process.
- `SbatchLauncher` writes a batch script (`job_script()` shows it first, as
  dask-jobqueue's) and submits it; the step's output goes to a file in `directory` (on
  a file system the job's nodes share), which this process follows. `close()` cancels
  the job, and so does a watchdog when this process dies.

A task restarted alone runs as a one-task step of the same job on its node (`srun
--jobid --overlap --nodelist`) with the cluster's spec (once a batch job has ended, as a
one-task job of its own there), and a signal reaches one task
through a one-task step that runs `kill` on its node. The cluster token and TLS PEMs
reach every task as the first line on its stdin (`--secrets-from-stdin`), which srun
hands to each: from this process, or in the batch step from a file in `directory` that
only its owner can read. They are in no command line and no environment.
"""

import contextlib
import json
import os
import pathlib
import queue
import random
import re
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid

from dtfnb.distributed_runtime.cluster import SERVING
from dtfnb.distributed_runtime.transport.rpc import TOKEN_VARIABLE
from dtfnb.launch.launcher import Launcher, TaskProcess, TaskStart, client_secrets

_COMMAND_SECONDS = 30          # a Slurm command (sbatch, scancel, a signal's step) at most
_FOLLOW_SECONDS = 0.1          # how often a followed output file is read again
_JOB_CHECK_SECONDS = 1.0       # how often squeue is asked whether a followed job still runs
_STEP_END_SECONDS = 5.0        # how long srun may take to end once asked to stop
_UNSTARTED_SECONDS = 1.0       # how long a signal waits for a task to report its pid
_MARK = "dtfnb-slurm:"
# The server flags of tasks whose srun runs in this process: the cluster token and TLS PEMs
# come first on stdin (in no argv or environment), and the task ends when stdin closes.
_FROM_HERE = ("--secrets-from-stdin", "--exit-on-eof")
# Around each task: report the server's pid, job and node, then its exit status. The server
# keeps srun's stdin through fd 3: sh gives a background command /dev/null before its own
# redirections, so `<&0` would be /dev/null.
_WRAPPER = (f'exec 3<&0; "$@" <&3 3<&- & pid=$!; '
            f'echo "{_MARK} started $pid $SLURM_JOB_ID $SLURMD_NODENAME"; '
            f'wait $pid; echo "{_MARK} exited $?"')
_LINE = re.compile(r"\s*(\d+): (.*)")    # srun --label: "rank: text"
_SERVING = re.compile(rf" {SERVING} grpc://(\S+)")


class SlurmTask(TaskProcess):
    """One Slurm task of a step, as its output tells: its pid, job and node once its wrapper
    has reported them, its address once it serves, its exit status at the end."""

    def __init__(self, cancel):
        self.job_id = self.node = None
        self._cancel = cancel   # ends the step or job of a task not yet started
        self.stdout = _Lines()
        self._started = threading.Event()
        self._ended = threading.Event()

    def take(self, text):
        """Takes one line the task wrote (or its wrapper's report)."""
        if text.startswith(_MARK):
            report = text[len(_MARK):].split()
            if report[0] == "started":
                self.pid, self.job_id, self.node = int(report[1]), report[2], report[3]
                self._started.set()
            else:   # "exited N": a shell's 128 + N for a signal is Popen's -N
                code = int(report[1])
                self.end(128 - code if code > 128 else code)
            return
        serving = _SERVING.search(text)
        if serving:
            self.address = serving[1]
        self.stdout.put(text)

    def end(self, returncode):
        """Marks the task ended (the first status given holds) and closes its output."""
        if not self._ended.is_set():
            self.returncode = returncode
            self._ended.set()
            self.stdout.put(None)

    def poll(self):
        """The exit status if the task has ended, else None."""
        return self.returncode

    def wait(self, timeout=None):
        """Waits until the task has ended; subprocess.TimeoutExpired after `timeout` s."""
        if not self._ended.wait(timeout):
            raise subprocess.TimeoutExpired(f"Slurm task {self.pid}", timeout)
        return self.returncode

    def send_signal(self, signum):
        """Sends `signum` to the task's process on its node, through a one-task step."""
        # A running step's tasks report their pids at once; a task that has not is waiting
        # for its step or job to start: the signal ends that instead.
        if not self._started.wait(_UNSTARTED_SECONDS):
            if not self._ended.is_set():
                self._cancel()
            return
        if self._ended.is_set():
            return
        _run(["srun", f"--jobid={self.job_id}", "--overlap", "--ntasks=1",
              f"--nodelist={self.node}", "--quiet", "kill", f"-{int(signum)}", str(self.pid)],
             check=False)


class _Lines:
    """A task's output as the stream of lines a Cluster reads and then closes; a None put
    ends it."""

    def __init__(self):
        self._queue = queue.Queue()

    def put(self, line):
        self._queue.put(line)

    def __iter__(self):
        while (line := self._queue.get()) is not None:
            yield line + "\n"

    def close(self):
        """Nothing to release: the lines are in memory."""


def _demultiplex(lines, tasks):
    """Hands each labelled line of a step's output to the task of its rank; a line of srun's
    own ("srun: error: ...") goes to every task. Returns when the output ends."""
    for line in lines:
        labelled = _LINE.fullmatch(line.rstrip("\n"))
        if labelled and int(labelled[1]) < len(tasks):
            tasks[int(labelled[1])].take(labelled[2])
        else:
            for task in tasks:
                task.stdout.put(line.rstrip("\n"))


class _SlurmLauncher(Launcher):
    """What srun and sbatch share: the step's command lines, restarts, signals' steps."""

    picks_addresses = True
    _step_flags = ()    # the server flags of the cluster's step (srun: _FROM_HERE)

    def __init__(self, python=None, port_base=None, options=()):
        self.python = python or sys.executable
        self.port_base = port_base
        self.options = list(options)
        self._tasks = {}        # (job, index) -> the SlurmTask that runs it now
        self._steps = []        # srun processes of this launcher

    def start(self, spec, tasks):
        """Starts every task of the cluster as one step, or restarts some of them alone (a
        one-task step each, with the addresses the cluster's tasks reported)."""
        if len(tasks) == sum(spec.values()):
            handles = self._start_step(tasks)
        else:
            handles = [self._restart(spec, task) for task in tasks]
        self._tasks.update({(task.job, task.index): h for task, h in zip(tasks, handles)})
        return handles

    def _step_lines(self, tasks):
        """The step's --multi-prog lines, one per rank: the wrapper around the server."""
        jobs = {}
        for task in tasks:
            if task.index != jobs.get(task.job, 0):
                raise ValueError(f"{type(self).__name__} starts a cluster's tasks in rank "
                                 f"order: job by job, each from index 0; got {tasks}")
            jobs[task.job] = task.index + 1
        if self.port_base is None:   # chosen once: a preview shows the ports the job uses
            self.port_base = _free_port_base(len(tasks))
        server = [self.python, "-m", "dtfnb.server",
                  "--jobs", ",".join(f"{job}={n}" for job, n in jobs.items()),
                  "--port-base", str(self.port_base), *self._step_flags]
        commands = [_multi_prog_quote(["sh", "-c", _WRAPPER, "sh", *server, *task.flags])
                    for task in tasks]
        lines, first = [], 0   # ranks with the same command share a line: "0-2 command"
        for rank, command in enumerate(commands):
            if rank + 1 == len(commands) or commands[rank + 1] != command:
                lines.append(f"{first}{'' if first == rank else f'-{rank}'} {command}")
                first = rank + 1
        return lines

    def _restart(self, spec, task):
        addresses = {key: handle.address for key, handle in self._tasks.items()}
        missing = [f"{job}:{index}" for job, count in spec.items() for index in range(count)
                   if addresses.get((job, index)) is None]
        if missing:
            raise ValueError(f"Cannot restart {task.job}:{task.index} alone: "
                             f"{', '.join(missing)} never reported an address")
        cluster = {job: [addresses[(job, index)] for index in range(count)]
                   for job, count in spec.items()}
        old = self._tasks[(task.job, task.index)]
        server = [self.python, "-m", "dtfnb.server", "--cluster", json.dumps(cluster),
                  "--job", task.job, "--task", str(task.index), *_FROM_HERE, *task.flags]
        # In its job while the job lives (an allocation always does); once a batch job
        # has ended with its every task, in a job of its own on the same node.
        job = [f"--jobid={old.job_id}", "--overlap"] if _job_runs(old.job_id) else []
        [handle] = self._run_step(
            [*job, "--ntasks=1", f"--nodelist={old.node}", "sh", "-c", _WRAPPER, "sh",
             *server], 1)
        return handle

    def _run_step(self, srun_args, ntasks, read_first=None):
        """Runs `srun --label --input=all srun_args` from this process (in a session of its
        own: a ^C in a terminal is not for it), its tasks started with _FROM_HERE: the
        secrets line goes to srun's stdin, which it hands to every task. Their output goes
        to `ntasks` handles. The file `read_first` goes once a task has started: srun has
        read it by then."""
        environ = {k: v for k, v in os.environ.items() if k != TOKEN_VARIABLE}
        step = subprocess.Popen(["srun", "--label", "--input=all", "--kill-on-bad-exit=0",
                                 *srun_args], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True, env=environ)
        self._steps.append(step)
        with contextlib.suppress(BrokenPipeError):   # srun failed at once: its tasks say why
            step.stdin.write(json.dumps(client_secrets()) + "\n")
            step.stdin.flush()
        tasks = [SlurmTask(lambda: _kill_group(step)) for _ in range(ntasks)]

        def lines():
            first = next(step.stdout, None)
            if read_first is not None:
                os.unlink(read_first)
            if first is not None:
                yield first
                yield from step.stdout

        def follow():
            with step.stdout:
                _demultiplex(lines(), tasks)
            for task in tasks:
                task.end(step.wait())
        threading.Thread(target=follow, daemon=True, name="dtfnb-srun").start()
        return tasks

    def close(self):
        """Waits for the srun processes to end (their tasks have ended, or are ending), and
        kills those that do not, with the helper process each forks (its process group)."""
        deadline = time.monotonic() + _STEP_END_SECONDS
        for step in self._steps:
            try:
                step.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _kill_group(step)
                step.wait()
        self._steps = []


class SrunLauncher(_SlurmLauncher):
    """Runs a cluster's tasks as one job step of the allocation this process runs in.

    Args:
      python: the tasks' interpreter (default: this one; the nodes must have it).
      port_base: each task listens on port_base + its rank on its node (default: a base
        whose ports are free on this machine when the tasks first start).
      options: more srun options, as ["--cpus-per-task=2", ...].
    """

    name = "srun"
    _step_flags = _FROM_HERE

    def _start_step(self, tasks):
        # srun reads the --multi-prog file and sends its lines to the nodes: it stays here.
        fd, programs = tempfile.mkstemp(prefix="dtfnb-srun-", suffix=".conf")
        with os.fdopen(fd, "w") as f:
            f.write("\n".join(self._step_lines(tasks)) + "\n")
        return self._run_step([f"--ntasks={len(tasks)}", *self.options,
                               "--multi-prog", programs], len(tasks), read_first=programs)

    def __repr__(self):
        return f"SrunLauncher(python={self.python!r})"


class SbatchLauncher(_SlurmLauncher):
    """Submits a cluster's tasks as a batch job: `job_script(spec)` is its script.

    ```python
    launcher = SbatchLauncher(options=["--time=01:00:00", "--partition=debug"])
    cluster = Cluster({"ps": 1, "worker": 2}, launcher, timeout=600, start=False)
    print(launcher.job_script(cluster))
    cluster.start()
    ```

    Args:
      python: the tasks' interpreter (default: this one; the nodes must have it).
      port_base: each task listens on port_base + its rank on its node (default: a base
        whose ports are free on this machine when the script is first written).
      directory: where the script, the tasks' output and the secrets file go; the job's
        nodes must see it at the same path (default: a new folder under ~/.dtfnb/slurm).
      options: more `#SBATCH` options, as ["--time=01:00:00", ...].
    """

    name = "sbatch"
    _step_flags = ("--secrets-from-stdin",)

    def __init__(self, python=None, port_base=None, directory=None, options=()):
        super().__init__(python, port_base, options)
        self.directory = pathlib.Path(directory or pathlib.Path.home() / ".dtfnb" / "slurm" /
                                      f"{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}")
        self.job_id = None
        self._watchdog = None

    def job_script(self, cluster):
        """The batch script that runs `cluster`, one task per Slurm task: a Cluster not yet
        started (the script it will submit, with its tasks' flags), or task counts
        ({"ps": 1, "worker": 2}: each task with the server's default flags)."""
        if isinstance(cluster, dict):
            tasks = [TaskStart(job, index, ()) for job, count in cluster.items()
                     for index in range(count)]
        else:
            tasks = [TaskStart(task.job, task.index, task.flags(cluster.cpus, cluster.gpus))
                     for task in cluster.tasks]
        return self._script(tasks)

    def _script(self, tasks):
        lines = self._step_lines(tasks)
        programs = _sh(self.directory / "tasks.conf")
        return "\n".join([
            "#!/bin/sh",
            "#SBATCH --job-name=dtfnb",
            f"#SBATCH --ntasks={len(tasks)}",
            f"#SBATCH --output={self.directory / 'job.log'}",
            *(f"#SBATCH {option}" for option in self.options),
            "# A line per Slurm task; each learns its role from SLURM_PROCID",
            f"cat > {programs} <<'TASKS'",
            *lines,
            "TASKS",
            "# Every task reads the cluster token and TLS PEMs on its stdin first, from a",
            "# file only their owner can read: they are in no argv and no environment",
            f"exec srun --label --input=all --kill-on-bad-exit=0 --multi-prog {programs} "
            f"< {_sh(self.directory / 'secrets')} > {_sh(self.directory / 'tasks.log')} 2>&1",
            ""])

    def _start_step(self, tasks):
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)   # only its owner's
        (self.directory / "tasks.log").unlink(missing_ok=True)   # a former start's
        secrets = os.open(self.directory / "secrets", os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
                          0o600)
        with os.fdopen(secrets, "w") as f:
            f.write(json.dumps(client_secrets()) + "\n")
        script = self.directory / "job.sh"
        script.write_text(self._script(tasks))
        environ = {k: v for k, v in os.environ.items() if k != TOKEN_VARIABLE}
        submitted = _run(["sbatch", "--parsable", str(script)], env=environ)
        self.job_id = submitted.strip().split(";")[0]   # "id" or "id;cluster"
        # Cancels the job when this process dies, however it dies: its stdin is our pipe.
        self._watchdog = subprocess.Popen(
            ["sh", "-c", 'read _; exec scancel "$1" 2>/dev/null', "sh", self.job_id],
            stdin=subprocess.PIPE, start_new_session=True)
        handles = [SlurmTask(self._cancel_job) for _ in tasks]
        threading.Thread(target=self._follow, args=(self.directory / "tasks.log", handles),
                         daemon=True, name="dtfnb-sbatch").start()
        return handles

    def _follow(self, path, tasks):
        """Hands the step's output file to `tasks` as it grows, until they or the job end."""
        offset, part, checked = 0, b"", time.monotonic()
        while any(task.poll() is None for task in tasks):
            ended = False
            if time.monotonic() - checked > _JOB_CHECK_SECONDS:
                checked = time.monotonic()
                ended = not _job_runs(self.job_id)   # before reading: its last words are read below
            try:
                with open(path, "rb") as f:
                    f.seek(offset)
                    text = f.read()
                    offset = f.tell()
            except FileNotFoundError:   # the job has not started yet
                text = b""
            *whole, part = (part + text).split(b"\n")
            _demultiplex([line.decode(errors="replace") for line in whole], tasks)
            if ended:
                break
            time.sleep(_FOLLOW_SECONDS)
        for task in tasks:
            task.end(-signal.SIGKILL)   # its job ended before it could report its exit

    def _cancel_job(self):
        _run(["scancel", self.job_id], check=False)

    def close(self):
        """Cancels the batch job (and so every task still running) and ends the steps of
        tasks restarted alone."""
        if self.job_id is not None:
            self._cancel_job()
        (self.directory / "secrets").unlink(missing_ok=True)
        if self._watchdog is not None:
            self._watchdog.stdin.close()
            self._watchdog.wait()
            self._watchdog = None
        super().close()

    def __repr__(self):
        return f"SbatchLauncher(directory={str(self.directory)!r})"


def _job_runs(job_id):
    """Whether Slurm job `job_id` is pending or running (or squeue cannot say: it is then
    taken to run)."""
    result = subprocess.run(["squeue", "--noheader", f"--jobs={job_id}", "--format=%T"],
                            capture_output=True, text=True, timeout=_COMMAND_SECONDS)
    if result.returncode != 0:
        return "Invalid job id" not in result.stderr
    return bool(result.stdout.strip())


def _run(argv, check=True, env=None):
    """Runs a Slurm command with a deadline; its stdout, or an error with its message."""
    result = subprocess.run(argv, capture_output=True, text=True, timeout=_COMMAND_SECONDS,
                            env=env)
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:2])} failed: {result.stderr.strip()}")
    return result.stdout


def _kill_group(step):
    """Kills an srun and the helper it forks (its process group: srun leads its session)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(step.pid, signal.SIGKILL)


def _free_port_base(n):
    """A port p such that p .. p + n - 1 are free on this machine now."""
    for _ in range(100):
        base = random.randrange(20000, 60000 - n)
        try:
            for port in range(base, base + n):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", port))
        except OSError:
            continue
        return base
    raise RuntimeError(f"No {n} consecutive free ports found")


def _multi_prog_quote(argv):
    """A --multi-prog command line: Slurm splits at spaces outside single quotes."""
    if any("'" in arg or "\n" in arg for arg in argv):
        raise ValueError(f"srun --multi-prog cannot pass an argument with a ' in it: {argv}")
    return " ".join(f"'{arg}'" for arg in argv)


def _sh(path):
    return shlex.quote(str(path))
