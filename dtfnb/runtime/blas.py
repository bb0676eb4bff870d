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
them, never beside its BLAS. And at two looks in a row, neither after a pause in this
process's steps: the average then spans the pause (a benchmark's round of another
program), and a glance can catch the other program's threads still spinning down. BLAS
gets the cores they leave (a core is taken once more than three quarters of one is),
at least one.

Load that /proc/stat does not show slows threads that wait for each other too: a host
that runs another machine on the core under this one's second CPU, a CPU quota. So
between the threads the cores allow and half as many, the one with which the steps get
more done wins (`_Measured`): multiply-adds of big products per second of the window
between two looks, which counts the rest of a step too, as BLAS's idle threads spin
beside it. The threads allowed, once compared with half as many, until their rate falls
a fifth below the best it reached at two looks in a row; then half as many for a look,
kept while they are faster, with the threads allowed tried again every two seconds. On
a 2-core machine whose host took its second core for a while, one thread made 600 MLP
steps a second where two made 500 (and 950 once the host gave it back).

The limit is process-wide, as BLAS's threads are, and a thread started for the purpose
sets it: OpenBLAS (0.3.31) ignores a change made from any thread but the main one once
the main thread has made one, and a step runs on any thread, the main one included.
"""

import logging
import os
import threading
import time

from dtfnb.base.cores import usable_cpus
from dtfnb.kernels import blas_work

log = logging.getLogger("dtfnb.runtime")

_CHECK_SECONDS = 0.1
_PAUSE_SECONDS = 0.15   # a look this long after the last, with this process mostly idle
                        # (less than _TAKEN of its BLAS threads' cores) in between: it
                        # paused its steps
_TAKEN = 0.75   # the share of a core others use that makes it theirs (or this process)
_SLOWER = 0.8   # a rate this much of the best one: try fewer threads
_RETRY_SECONDS = 2.0
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class _Measured:
    """Between the threads the cores allow and half as many, the one with which the
    steps got more done, from the rate of each look's window (multiply-adds of big
    products per second)."""

    def __init__(self):
        self.rates = {}                    # threads: the rate they last ran at
        self.best = 0.0                    # the best rate of the threads allowed, lately;
                                           # 0: not yet compared with fewer
        self.trying = False                # this window tries the other count
        self.slow = False                  # the threads allowed were slow at the last look
        self.retry_at = float("-inf")      # when to try the threads allowed again

    def threads(self, allowed, current, rate, now):
        """The threads for the next window, which ran `current` ones at `rate` (None:
        no big product ran)."""
        fewer = max(1, allowed // 2)
        if fewer == allowed or current not in (allowed, fewer):
            self.__init__()                # nothing to choose, or the cores changed
            return allowed
        if rate is None:   # no big product: as measured, or as the cores allow
            return current if self.rates else allowed
        self.rates[current] = rate
        other = fewer if current == allowed else allowed
        if self.trying:
            self.trying = False
            faster = current if rate > self.rates[other] else other
            if faster == allowed:
                self.best = self.rates[allowed]
            else:
                self.retry_at = now + _RETRY_SECONDS
            return faster
        if current == allowed and self.best:
            slow = rate < _SLOWER * self.best
            if not slow:
                self.best = max(self.best, rate)
            if not (slow and self.slow):   # one slow look is often the host's moment
                self.slow = slow
                return allowed
            self.slow = False
        if current == fewer and now < self.retry_at:
            return fewer
        self.trying = True
        return other


class _Policy:
    def __init__(self):
        self.most = None          # the threads configured; None: never configured
        self.current = None       # the threads BLAS has now
        self.checked = float("-inf")
        self.sample = None        # (wall, cores' busy seconds, own CPU seconds) at `checked`
        self.others = 0.0         # the cores other processes took at the look before
        self.measured = _Measured()
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
        _policy.others = 0.0
        _policy.measured = _Measured()
        _limit(threads)


def adjust():
    """At most ten times a second: BLAS threads as configured, fewer while other
    processes keep this process's cores busy (at this look and the one before). Cheap
    when it is not time yet."""
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
        madds = blas_work.take()
        if previous is None or _paused(previous, sample, _policy.current):
            return   # the first look, or the first after a pause: nothing to compare yet
        # Running now, less the thread asking (this process's other threads wait at the
        # start of a step; one that spins is not counted by the average, which is less).
        others = min(other_processes_cores(previous, sample), running - 1)
        others, _policy.others = min(others, _policy.others), others
        allowed = threads_for(_policy.most, len(cpus) - int(others + 1 - _TAKEN))
        rate = madds / (now - previous[0]) if madds else None
        _limit(_policy.measured.threads(allowed, _policy.current, rate, now))


def current():
    """The threads BLAS was last limited to (None before `configure`)."""
    return _policy.current


def threads_for(most, free):
    """The BLAS threads to use: as many as configured, but no more than the cores free,
    and at least one."""
    return max(1, min(most, free))


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


def _paused(before, after, threads):
    """Whether this process paused its steps between two samples: a long window (a step
    as long is busy all through it) in which it used less than most of the cores its
    `threads` BLAS threads keep busy while it steps (an idle one spins for a while)."""
    wall = after[0] - before[0]
    return wall > _PAUSE_SECONDS and after[2] - before[2] < _TAKEN * wall * threads


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
