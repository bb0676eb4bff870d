"""BLAS threads that give way when the machine is busy.

OpenBLAS's threads spin between calls, so two of them beside one busy process on a
2-core machine fight it for the cores: a 128x784 by 784x300 matmul ran 3.4x slower than
quiet with two threads, and as fast as quiet with one. A task therefore uses the BLAS
threads it was given (its share of the cores, `configure`) only while that many cores
are free: at the start of a step, at most twice a second, `adjust` counts the threads
of other processes that are running (procs_running of /proc/stat, less this process's
own), and limits BLAS to the cores they leave (at least one). The limit is
process-wide, as BLAS's threads are.
"""

import glob
import os
import threading
import time

_CHECK_SECONDS = 0.5


class _Policy:
    def __init__(self):
        self.most = None          # the threads configured; None: never configured
        self.current = None       # the threads BLAS has now
        self.checked = float("-inf")
        self.lock = threading.Lock()
        self.controller = None


_policy = _Policy()


def configure(threads):
    """Gives BLAS `threads` threads (a task's share of the cores) while the cores are free;
    the latest call wins, as BLAS's threads are the process's."""
    with _policy.lock:
        _policy.most = threads
        _policy.checked = float("-inf")
        _limit(threads)


def adjust(cores=None):
    """At most twice a second: BLAS threads as configured, fewer while other processes
    keep cores busy (`cores`: the host's, by default). Cheap when it is not time yet."""
    now = time.monotonic()
    if _policy.most is None or now - _policy.checked < _CHECK_SECONDS:
        return
    with _policy.lock:
        if now - _policy.checked < _CHECK_SECONDS:
            return
        _policy.checked = now
        _limit(threads_for(_policy.most, free_cores(cores or os.cpu_count() or 1)))


def current():
    """The threads BLAS was last limited to (None before `configure`)."""
    return _policy.current


def threads_for(most, free):
    """The BLAS threads to use: as many as configured, but no more than the cores free,
    and at least one."""
    return max(1, min(most, free))


def free_cores(cores):
    """The cores that other processes' running threads leave: `cores` less the running
    threads of the host that are not this process's; all of them where /proc cannot
    tell (not Linux)."""
    try:
        with open("/proc/stat") as stat:
            running = next(int(line.split()[1]) for line in stat
                           if line.startswith("procs_running"))
    except (OSError, StopIteration, ValueError):
        return cores
    return cores - max(0, running - _own_running_threads())


def _own_running_threads():
    count = 0
    for path in glob.glob("/proc/self/task/*/stat"):
        try:
            with open(path) as stat:
                # The state follows the command name, which may hold spaces: after ")".
                count += stat.read().rsplit(")", 1)[1].split()[0] == "R"
        except (OSError, IndexError):
            continue   # a thread that ended meanwhile
    return count


def _limit(threads):
    if threads == _policy.current:
        return
    if _policy.controller is None:
        import threadpoolctl

        _policy.controller = threadpoolctl.ThreadpoolController()
    _policy.controller.limit(limits=threads, user_api="blas")
    _policy.current = threads
