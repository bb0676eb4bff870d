"""BLAS threads that give way when the machine is busy.

OpenBLAS's threads spin between calls, so two of them beside one busy process on a
2-core machine fight it for the cores: a 128x784 by 784x300 matmul ran 3.4x slower than
quiet with two threads, and as fast as quiet with one. A task therefore uses the BLAS
threads it was given (its share of the cores, `configure`) only while that many cores
are free. At the start of a step, at most ten times a second, `adjust` counts the cores
other processes take: those they kept busy since the last look (the busy time of the
cores this process may run on, from /proc/stat, less this process's own CPU time), but
no more than the threads running at that instant (procs_running, less the one asking).
Both, because each alone misleads: a glance catches a process that wakes for a moment,
and the average counts the other tasks of a cluster that work while this one waits for
them, never beside its BLAS. BLAS gets the cores they leave (a core is taken once more
than three quarters of one is), at least one.

The limit is process-wide, as BLAS's threads are, and a thread started for the purpose
sets it: OpenBLAS (0.3.31) ignores a change made from any thread but the main one once
the main thread has made one, and a step runs on any thread, the main one included.
"""

import logging
import os
import threading
import time

log = logging.getLogger("dtfnb.runtime")

_CHECK_SECONDS = 0.1
_TAKEN = 0.75   # the share of a core others use that makes it theirs
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class _Policy:
    def __init__(self):
        self.most = None          # the threads configured; None: never configured
        self.current = None       # the threads BLAS has now
        self.checked = float("-inf")
        self.sample = None        # (wall, cores' busy seconds, own CPU seconds) at `checked`
        self.lock = threading.Lock()
        self.controller = None
        self.warned = False


_policy = _Policy()


def configure(threads):
    """Gives BLAS `threads` threads (a task's share of the cores) while the cores are free;
    the latest call wins, as BLAS's threads are the process's."""
    with _policy.lock:
        _policy.most = threads
        _policy.checked = float("-inf")
        _policy.sample = None
        _limit(threads)


def adjust():
    """At most ten times a second: BLAS threads as configured, fewer while other
    processes keep this process's cores busy. Cheap when it is not time yet."""
    now = time.monotonic()
    if _policy.most is None or now - _policy.checked < _CHECK_SECONDS:
        return
    with _policy.lock:
        if now - _policy.checked < _CHECK_SECONDS:
            return
        _policy.checked = now
        cpus = usable_cpus()
        stat = cpu_stat(cpus)
        if stat is None:
            return   # no /proc: as configured
        busy, running = stat
        sample = (now, busy, time.process_time())
        previous, _policy.sample = _policy.sample, sample
        if previous is None:
            return   # the first look: nothing to compare yet
        # Running now, less the thread asking (this process's other threads wait at the
        # start of a step; one that spins is not counted by the average, which is less).
        others = min(other_processes_cores(previous, sample), running - 1)
        _limit(threads_for(_policy.most, len(cpus) - int(others + 1 - _TAKEN)))


def current():
    """The threads BLAS was last limited to (None before `configure`)."""
    return _policy.current


def threads_for(most, free):
    """The BLAS threads to use: as many as configured, but no more than the cores free,
    and at least one."""
    return max(1, min(most, free))


def usable_cpus():
    """The CPUs this process may run on."""
    try:
        return os.sched_getaffinity(0)
    except AttributeError:   # not Linux
        return set(range(os.cpu_count() or 1))


def cpu_stat(cpus):
    """(seconds `cpus` have been busy since boot, threads running now), from /proc/stat;
    None where /proc cannot tell (not Linux). Busy: not idle nor waiting for I/O."""
    busy = 0
    try:
        with open("/proc/stat") as stat:
            for line in stat:
                name, *fields = line.split()
                if name.startswith("cpu") and name != "cpu" and int(name[3:]) in cpus:
                    user, nice, system, _idle, _iowait, irq, softirq, steal = map(
                        int, fields[:8])
                    busy += user + nice + system + irq + softirq + steal
                elif name == "procs_running":
                    return busy / _TICKS, int(fields[0])
    except (OSError, ValueError):
        pass
    return None


def other_processes_cores(before, after):
    """The cores other processes kept busy on average between two samples of (wall
    seconds, cores' busy seconds, this process's CPU seconds)."""
    wall = after[0] - before[0]
    if wall <= 0:
        return 0.0
    others = (after[1] - before[1]) - (after[2] - before[2])
    return max(0.0, others / wall)


def _limit(threads):
    if threads == _policy.current:
        return
    if _policy.controller is None:
        import threadpoolctl

        _policy.controller = threadpoolctl.ThreadpoolController()
    # On a thread of its own (see the module's docstring): changes are rare.
    setter = threading.Thread(target=_set, args=(threads,), name="dtfnb-blas-threads")
    setter.start()
    setter.join()
    _policy.current = threads


def _set(threads):
    controller = _policy.controller
    try:
        controller.limit(limits=threads, user_api="blas")
    except Exception:   # a BLAS threadpoolctl cannot drive keeps its threads
        log.exception("could not limit BLAS to %d threads", threads)
        return
    if not _policy.warned and any(lib.num_threads != threads
                                  for lib in controller.lib_controllers
                                  if lib.user_api == "blas"):
        _policy.warned = True
        log.warning("BLAS did not take %d threads: after the main thread sets them "
                    "(threadpoolctl?), OpenBLAS ignores other threads' changes", threads)
