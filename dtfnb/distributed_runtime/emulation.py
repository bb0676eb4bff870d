"""Emulated cluster conditions, so that a cluster on one machine behaves like one of
several: each task's network link, and slow tasks (dtfnb's own; TensorFlow has none).

The link model is a machine's network card on an ideal switch: every task has ONE
full-duplex link, `BANDWIDTH[,LATENCY]` ("100Mbit,2ms"). A message of tensors from task
A to task B uses A's outgoing direction and B's incoming one, each a token bucket of its
link's bandwidth with no depth (bytes go at the link's rate, one message after another,
never in a burst), shared by every transfer through that task in that direction: a ps
serving 8 workers sends 8 times the bytes through one link. One way takes at least
latency(A) + latency(B). Each process enforces its own link: the sender holds a message
until its bytes have left (and its latency passed), the receiver holds it until its own
direction has taken the bytes (cut through: from when they began to arrive, which the
sender states as `link_seconds`) and its latency passed. Both only ever wait, so a
transfer of N bytes over B bit/s never completes in less than N / (B/8) seconds; load
can only make it slower.

What is shaped: every message that carries tensors between two tasks (the pushes of
Send/Recv, the tensors a master feeds to another task's partition and fetches from it),
over gRPC and Unix sockets, through shared memory or not, counted as their bytes on a
wire (after transfer_float_type). What is not: calls without tensors (RegisterGraph,
a RunGraph that feeds nothing), and a client's feeds and fetches to its master, which
come from outside the cluster.

A slow task (`x3`, `+20ms`, `pareto:1.5,10ms`) delays the end of every partition it
runs for a step (RunGraph, from its own master or another's): see `parse_slow`. The
delay is a wait of the step (Step.sleep), so its deadline or an abort ends it.
"""

import heapq
import itertools
import random
import re
import threading
import time
import zlib
from concurrent.futures import ThreadPoolExecutor

LINK_FORM = ("BANDWIDTH[,LATENCY], such as 100Mbit or 100Mbit,2ms (bandwidth in bit/s: "
             "Kbit, Mbit or Gbit; latency in s, ms or us)")
SLOW_FORM = ("x3 (each step's compute takes 3 times as long), +20ms (a delay added to every "
             "step) or pareto:1.5,10ms (a heavy-tailed delay per step: Pareto of shape 1.5 and "
             "scale 10 ms)")
# A Pareto delay is capped at this many times its scale: with shape 1.5, one step in a
# thousand reaches it, and no step of a notebook waits for ever.
PARETO_CAP = 100.0

_BITS = {"bit": 1.0, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9}
_SECONDS = {"s": 1.0, "ms": 1e-3, "us": 1e-6}
_NUMBER = r"(\d+(?:\.\d*)?|\.\d+)"
_BANDWIDTH = re.compile(_NUMBER + r"\s*([kmg]?bit)(?:/s|ps)?", re.IGNORECASE)
_DURATION = re.compile(_NUMBER + r"\s*(s|ms|us)", re.IGNORECASE)


class LinkSpec:
    """A task's link: `bits_per_second` each way and its one-way `latency` in seconds."""

    __slots__ = ("bits_per_second", "latency")

    def __init__(self, bits_per_second, latency=0.0):
        self.bits_per_second = bits_per_second
        self.latency = latency

    def describe(self):
        """"100 Mbit/s, 2 ms"."""
        text = f"{_rate_text(self.bits_per_second)}"
        return f"{text}, {_duration_text(self.latency)}" if self.latency else text


class SlowSpec:
    """A task's slowness: its compute takes `factor` times as long, plus `delay` seconds,
    plus a Pareto delay of shape `pareto_shape` and scale `pareto_scale` (0: none)."""

    __slots__ = ("factor", "delay", "pareto_shape", "pareto_scale")

    def __init__(self, factor=1.0, delay=0.0, pareto_shape=0.0, pareto_scale=0.0):
        self.factor = factor
        self.delay = delay
        self.pareto_shape = pareto_shape
        self.pareto_scale = pareto_scale

    def describe(self):
        """"x3 compute", "+20 ms/step" or "Pareto(1.5, 10 ms)/step"."""
        if self.pareto_scale:
            return f"Pareto({self.pareto_shape:g}, {_duration_text(self.pareto_scale)})/step"
        if self.delay:
            return f"+{_duration_text(self.delay)}/step"
        return f"x{self.factor:g} compute"


def parse_link(text):
    """The LinkSpec of "BANDWIDTH[,LATENCY]"; ValueError names what is wrong in it."""
    bandwidth, comma, latency = str(text).partition(",")
    match = _BANDWIDTH.fullmatch(bandwidth.strip())
    if match is None:
        raise ValueError(f"Link {text!r}: {bandwidth.strip()!r} is not a bandwidth; write "
                         f"{LINK_FORM}")
    bits = float(match.group(1)) * _BITS[match.group(2).lower()]
    if bits <= 0:
        raise ValueError(f"Link {text!r}: the bandwidth must be above 0; write {LINK_FORM}")
    return LinkSpec(bits, _duration(latency, f"Link {text!r}", LINK_FORM) if comma else 0.0)


def parse_slow(text):
    """The SlowSpec of "x3", "+20ms" or "pareto:SHAPE,SCALE"; ValueError names what is wrong.

    `x3`: after each partition the task runs for a step, it sleeps twice the time the
    partition took (waits for other tasks' tensors included), so its steps take 3x.
    `+20ms`: 20 ms more per step, compute that needs no CPU here. `pareto:1.5,10ms`: a
    delay per step drawn from a Pareto distribution (at least the scale, mean
    shape/(shape-1) x scale for shape > 1, capped at PARETO_CAP x scale), seeded by the
    task's name, so that a run repeats its draws."""
    spec = str(text).strip()
    where = f"Slow task {text!r}"
    if spec.lower().startswith("x"):
        try:
            factor = float(spec[1:])
        except ValueError:
            raise ValueError(f"{where}: {spec[1:]!r} is not a factor; write {SLOW_FORM}") \
                from None
        if not 1 <= factor < float("inf"):
            raise ValueError(f"{where}: the factor must be at least 1 (an emulated task is "
                             f"never faster); write {SLOW_FORM}")
        return SlowSpec(factor=factor)
    if spec.startswith("+"):
        return SlowSpec(delay=_duration(spec[1:], where, SLOW_FORM))
    kind, colon, args = spec.partition(":")
    if kind.lower() == "pareto" and colon:
        shape, comma, scale = args.partition(",")
        try:
            shape = float(shape)
        except ValueError:
            shape = 0.0
        if not (comma and 0 < shape < float("inf")):
            raise ValueError(f"{where}: pareto takes a shape above 0 and a scale, such as "
                             "pareto:1.5,10ms")
        return SlowSpec(pareto_shape=shape, pareto_scale=_duration(scale, where, SLOW_FORM))
    raise ValueError(f"{where} is not a slowness; write {SLOW_FORM}")


def _duration(text, where, form):
    match = _DURATION.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{where}: {text.strip()!r} is not a duration; write {form}")
    return float(match.group(1)) * _SECONDS[match.group(2).lower()]


def _rate_text(bits):
    for unit, size in (("Gbit/s", 1e9), ("Mbit/s", 1e6), ("Kbit/s", 1e3)):
        if bits >= size:
            return f"{bits / size:g} {unit}"
    return f"{bits:g} bit/s"


def _duration_text(seconds):
    if seconds >= 1:
        return f"{seconds:g} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:g} ms"
    return f"{seconds * 1e6:g} us"


def describe(link=None, slow=None):
    """Spec strings said as views show them: "100 Mbit/s, 2 ms · +20 ms/step"; "" for none."""
    specs = (parse_link(link) if link else None, parse_slow(slow) if slow else None)
    return " · ".join(spec.describe() for spec in specs if spec is not None)


class Conditions:
    """One task's emulated conditions, from spec strings: its `link` (a Link, or None)
    and its `slow`ness (a Slowness, or None); `description` says them, "" for none."""

    def __init__(self, task="", link=None, slow=None):
        self.link = Link(parse_link(link)) if link else None
        self.slow = Slowness(parse_slow(slow), task) if slow else None
        self.description = describe(link, slow)

    def close(self):
        """Drops what the link still holds (the task stops)."""
        if self.link is not None:
            self.link.close()


class _Direction:
    """One direction of a link: a token bucket of no depth. `reserve` books a message's
    bytes after those booked before; it returns when its last byte has gone."""

    def __init__(self, bytes_per_second):
        self._rate = bytes_per_second
        self._free = 0.0   # time.monotonic() when the bytes booked so far have gone
        self._lock = threading.Lock()

    def reserve(self, nbytes, start):
        with self._lock:
            self._free = max(self._free, start) + nbytes / self._rate
            return self._free


class Link:
    """A task's emulated link (see the module): `send` and `receive` hold messages on a
    delay line, `sent` and `received` hold the calling thread."""

    def __init__(self, spec):
        self.spec = spec
        rate = spec.bits_per_second / 8
        self._rate = rate
        self._out = _Direction(rate)
        self._in = _Direction(rate)
        self._line = _DelayLine()

    def _send_due(self, nbytes):
        """(when the message may go, its transmit time)."""
        now = time.monotonic()
        return self._out.reserve(nbytes, now) + self.spec.latency, nbytes / self._rate

    def _receive_due(self, nbytes, link_seconds):
        """When a message that arrived now may be delivered. It began to arrive
        `link_seconds` (the sender's transmit time) ago, as far as this link knows."""
        now = time.monotonic()
        began = now - min(max(float(link_seconds), 0.0), 3600.0)  # a peer's claim, bounded
        return max(self._in.reserve(nbytes, began), now) + self.spec.latency

    def send(self, nbytes, go):
        """Calls `go(link_seconds)` on another thread once a message of `nbytes` has left
        this task; never waits."""
        due, seconds = self._send_due(nbytes)
        self._line.at(due, lambda: go(seconds))

    def receive(self, nbytes, link_seconds, deliver):
        """Calls `deliver()` on another thread once a message of `nbytes` that arrived now
        has come in through this task's link; never waits."""
        self._line.at(self._receive_due(nbytes, link_seconds), deliver)

    def sent(self, nbytes):
        """Waits until a message of `nbytes` has left this task; returns its link_seconds."""
        due, seconds = self._send_due(nbytes)
        _sleep_until(due)
        return seconds

    def received(self, nbytes, link_seconds):
        """Waits until a message of `nbytes` that arrived now has come in through the link."""
        _sleep_until(self._receive_due(nbytes, link_seconds))

    def close(self):
        """Drops the messages still held."""
        self._line.close()


class _DelayLine:
    """Runs callables at their due times (time.monotonic()), never before, on a small
    pool: a delivery that runs a step's next ops holds up no other delivery. Started on
    first use."""

    _THREADS = 4

    def __init__(self):
        self._due = []   # heap of (due, order, callable)
        self._order = itertools.count()
        self._more = threading.Condition()
        self._closed = False
        self._pool = None
        self._thread = None

    def at(self, due, run):
        with self._more:
            if self._closed:
                return
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._THREADS, thread_name_prefix="dtfnb-link")
                self._thread = threading.Thread(target=self._run, daemon=True,
                                                name="dtfnb-link-line")
                self._thread.start()
            heapq.heappush(self._due, (due, next(self._order), run))
            self._more.notify()

    def _run(self):
        while True:
            with self._more:
                while not self._closed and (not self._due or
                                            self._due[0][0] > time.monotonic()):
                    self._more.wait(self._due[0][0] - time.monotonic() if self._due else None)
                if self._closed:
                    return
                run = heapq.heappop(self._due)[2]
            self._pool.submit(run)

    def close(self):
        with self._more:
            self._closed = True
            self._due.clear()
            self._more.notify()
        if self._pool is not None:
            self._thread.join()
            self._pool.shutdown(cancel_futures=True)


def _sleep_until(due):
    while (left := due - time.monotonic()) > 0:
        time.sleep(left)


class Slowness:
    """A slow task's delays (a SlowSpec), drawn from a generator seeded by the task's name."""

    def __init__(self, spec, task=""):
        self.spec = spec
        self._random = random.Random(zlib.crc32(task.encode()))
        self._lock = threading.Lock()

    def delay(self, elapsed):
        """Seconds to add to a partition that took `elapsed` seconds."""
        spec = self.spec
        extra = (spec.factor - 1) * elapsed + spec.delay
        if spec.pareto_scale:
            with self._lock:
                draw = self._random.paretovariate(spec.pareto_shape)
            extra += spec.pareto_scale * min(draw, PARETO_CAP)
        return extra


def task_conditions(tasks, link=None, links=None, slow=None):
    """{task: (link spec, slow spec)} for the tasks ["job:index", ...] of a cluster: `link`
    for every task, `links` and `slow` by task ("worker:2") or job ("worker"), a task's
    key winning over its job's. Checks every spec; ValueError names an unknown task or
    job, and what exists."""
    def lookup(table, what):
        table = dict(table or {})
        jobs = {task.partition(":")[0] for task in tasks}
        for key in table:
            if key not in jobs and key not in tasks:
                raise ValueError(f"{what} names {key!r}, which is no job or task of the "
                                 f"cluster: it has jobs {', '.join(sorted(jobs))} and tasks "
                                 f"{', '.join(tasks)}")
        return lambda task: table.get(task, table.get(task.partition(":")[0]))

    link_of, slow_of = lookup(links, "links"), lookup(slow, "slow")
    chosen = {task: (link_of(task) or link, slow_of(task)) for task in tasks}
    for link_spec, slow_spec in chosen.values():
        if link_spec:
            parse_link(link_spec)
        if slow_spec:
            parse_slow(slow_spec)
    return chosen
