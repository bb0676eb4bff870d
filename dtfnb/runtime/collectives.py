"""A task's collectives: the groups its devices joined, and the ring over which all-reduce,
all-gather and broadcast move their tensors between the members.

A member is one device. The first time a device runs an op of group `group_key`, it
joins the group: it tells every task of the cluster (a push of step JOIN_STEP_ID), and
waits until `group_size` devices have joined; the members, sorted by device name, are the
ring, each sending to the next. A group keeps its members for the life of the task.

Each run of an op is an *execution*: the n-th run of (group_key, instance_key) on one
member meets the n-th on every other. The tensors of an execution travel as a step's do,
through the task-to-task streams (and an emulated link), under a step id of their own
that names the execution and the receiving member, so that clients whose steps have
different ids still meet; what a member sent and received is then counted as its step's
traffic. The first member that fails tells the others, which fail at once instead of
waiting for their deadline.
"""

import hashlib
import threading
import time

import numpy as np

from dtfnb.base.errors import (
    DeadlineExceededError,
    InvalidArgumentError,
    ResourceExhaustedError,
    exception_type_from_error_code,
)

JOIN_STEP_ID = -1   # a push that announces a member; executions' ids are below it
TIMED_OUT = "Collective has timed out waiting for other workers."
_GROUPS_KEPT = 4096   # joins of more groups than this are refused: a task's bound
_UNKNOWN, _UNAVAILABLE = 2, 14   # error codes


class Collectives:
    """The collectives of one task, whose devices are members of groups.

    `task` names the task; `peers` (transport.remote.Peers, or None for a task alone)
    carries tensors to the other tasks (`peers.tasks`, to which joins are announced);
    `mailbox` (a RendezvousTable) is where the tensors of executions arrive, whether from
    another task (Worker.deliver) or from a device of this one; `traffic`
    (traffic.Traffic, or None) counts them as their steps'; `options` (TransferOptions)
    say how they cross.

    ```python
    collectives = Collectives("/job:localhost/replica:0/task:0", RendezvousTable())
    # on two threads, one per device, each in its own step:
    collectives.all_reduce(step, "/job:localhost/replica:0/task:0/device:CPU:0", x, attrs)
    collectives.all_reduce(step, "/job:localhost/replica:0/task:0/device:CPU:1", y, attrs)
    ```
    """

    def __init__(self, task, mailbox, peers=None, traffic=None, options=None):
        self._task = task
        self._mailbox = mailbox
        self._peers = peers
        self._traffic = traffic
        self._options = options
        self._groups = {}      # group key -> {device: group size it joined with}
        self._announced = set()   # (group key, device) this task told the others about
        self._runs = {}        # (group key, instance key, device) -> executions so far
        self._cond = threading.Condition()

    # -- groups --------------------------------------------------------------------------

    def joined(self, key, value):
        """A join another task announced (Worker.deliver of JOIN_STEP_ID): `key` is
        "member device;destination;join:<group key>", `value` [group size]."""
        device, _, tag = key.split(";", 2)
        with self._cond:
            self._add(int(tag.partition(":")[2]), device, int(value[0]))

    def _add(self, group_key, device, group_size):
        """Records a member (the lock held); False if the task holds too many groups."""
        members = self._groups.get(group_key)
        if members is None:
            if len(self._groups) >= _GROUPS_KEPT:
                return False
            members = self._groups[group_key] = {}
        members.setdefault(device, group_size)
        self._cond.notify_all()
        return True

    def _members(self, step, device, attrs, due):
        """The group's devices in ring order, once all have joined (by `due`, the op's
        timeout); joins `device` to it."""
        group_key, group_size = attrs["group_key"], attrs["group_size"]
        with self._cond:
            if not self._add(group_key, device, group_size):
                raise ResourceExhaustedError(None, None, (
                    f"Collective group {group_key} is one more than the {_GROUPS_KEPT} "
                    "groups a task keeps"))
            announce = (group_key, device) not in self._announced
            self._announced.add((group_key, device))
        if announce and self._peers is not None:
            join = np.array([group_size], np.int64)
            self._peers.push(JOIN_STEP_ID, [
                (f"{task}/device:CPU:0", f"{device};{task}/device:CPU:0;join:{group_key}",
                 join) for task in self._peers.tasks], self._options, _ignore)
        with self._cond:
            members = self._groups[group_key]
            _wait(step, self._cond, lambda: len(members) >= group_size, due)
            sizes = set(members.values())
            if sizes != {group_size} or len(members) > group_size:
                raise InvalidArgumentError(None, None, (
                    f"Collective group {group_key} of group_size {group_size} has "
                    f"{len(members)} members, which joined with group_size "
                    f"{sorted(sizes)}: {', '.join(sorted(members))}"))
            return sorted(members)

    # -- executions ----------------------------------------------------------------------

    def all_reduce(self, step, device, value, attrs):
        """The ring all-reduce of `value` (a numpy array) with the group's other members:
        a reduce-scatter then an all-gather of N chunks, each member sending 2(N−1) of
        them to the next."""
        merge = _MERGE.get(attrs["merge_op"])
        if merge is None or attrs["final_op"] not in ("Id", "Div"):
            raise InvalidArgumentError(None, None, (
                f"Collective merge_op {attrs['merge_op']!r} or final_op "
                f"{attrs['final_op']!r} is not one of Add, Mul, Min, Max and Id, Div"))
        with _Execution(self, step, device, attrs) as run:
            n, rank = len(run.members), run.rank
            chunks = np.array_split(np.asarray(value).reshape(-1), n)
            for s in range(n - 1):   # chunk (rank + 1) ends reduced here
                received = run.exchange(f"reduce:{s}", chunks[(rank - s) % n])
                index = (rank - s - 1) % n
                chunks[index] = merge(chunks[index], received)
            for s in range(n - 1):   # each reduced chunk goes round the ring
                chunks[(rank - s) % n] = run.exchange(f"gather:{s}", chunks[(rank + 1 - s) % n])
        total = np.concatenate(chunks).reshape(np.shape(value))
        if attrs["final_op"] == "Div":
            total = (total / n).astype(total.dtype)
        return total

    def all_gather(self, step, device, value, attrs):
        """Every member's `value` concatenated along the first dimension in ring order: each
        is passed on round the ring, so each member sends N − 1 tensors."""
        value = np.asarray(value)
        if value.ndim == 0:
            raise InvalidArgumentError(None, None, "Collective all_gather needs tensors of "
                                       "rank 1 or more, got a scalar")
        with _Execution(self, step, device, attrs) as run:
            n, rank = len(run.members), run.rank
            blocks = [None] * n
            blocks[rank] = value
            for s in range(n - 1):
                blocks[(rank - s - 1) % n] = run.exchange(f"gather:{s}", blocks[(rank - s) % n])
        for member, block in zip(run.members, blocks):
            if block.shape[1:] != value.shape[1:]:
                raise InvalidArgumentError(None, None, (
                    f"Collective all_gather of {device}'s shape {list(value.shape)} with "
                    f"{member}'s {list(block.shape)}: all but the first dimension must agree"))
        return np.concatenate(blocks)

    def broadcast(self, step, device, value, attrs):
        """Sends `value` to every other member (the sender's part of a broadcast);
        with `value` None, receives it (a receiver's part)."""
        with _Execution(self, step, device, attrs) as run:
            if value is not None:
                for member in run.members:
                    if member != device:
                        run.send(member, "broadcast", value)
                return value
            received = run.receive_any("broadcast")
        shape, dtype = list(attrs["shape"].as_list()), attrs["T"].as_numpy_dtype
        if list(received.shape) != shape or received.dtype != dtype:
            raise InvalidArgumentError(None, None, (
                f"Collective broadcast_recv of shape {shape} and type {attrs['T'].name} "
                f"received shape {list(received.shape)} of type {received.dtype}"))
        return received

    def _next_run(self, attrs, device):
        key = (attrs["group_key"], attrs["instance_key"], device)
        with self._cond:
            number = self._runs.get(key, 0)
            self._runs[key] = number + 1
        return number

    def _deliver(self, device, step_id, key, value, on_error):
        """Sends one tensor of an execution to member `device`."""
        if self._peers is None or device.startswith(self._task + "/"):
            self._mailbox.deliver(step_id, key, value)
        else:
            self._peers.push(step_id, [(device, key, value)], self._options, on_error)


class _Execution:
    """One run of a collective op on one member: its place in the ring, the tensors it
    exchanges, and, when it fails, the word to the others."""

    def __init__(self, collectives, step, device, attrs):
        self.collectives = collectives
        self.step = step
        self.device = device
        self.attrs = attrs
        self.due = _due(attrs)   # one timeout for the whole run, joining included
        self.members = collectives._members(step, device, attrs, self.due)
        if device not in self.members:
            raise InvalidArgumentError(None, None, (
                f"Collective group {attrs['group_key']} is full without {device}: "
                f"{', '.join(self.members)}"))
        self.rank = self.members.index(device)
        self.number = collectives._next_run(attrs, device)
        self.id = self.id_of(device)
        self.sent_to = {self.id}
        self._told = False
        self._rendezvous = collectives._mailbox.start(self.id)

    def id_of(self, member):
        """The step id under which `member` receives the tensors of this execution."""
        digest = hashlib.blake2b(
            f"{self.attrs['group_key']};{self.attrs['instance_key']};{self.number};{member}"
            .encode(), digest_size=8).digest()
        return JOIN_STEP_ID - 1 - (int.from_bytes(digest, "little") >> 2)

    def send(self, member, tag, value):
        member_id = self.id_of(member)
        self.sent_to.add(member_id)
        key = f"{self.device};{member};{tag}"
        self.collectives._deliver(member, member_id, key, value,
                                  lambda error: self._failed_push(member, error))

    def exchange(self, tag, value):
        """Sends `value` to the next member; returns what the previous one sent."""
        n = len(self.members)
        self.send(self.members[(self.rank + 1) % n], tag, value)
        return self.receive(f"{self.members[(self.rank - 1) % n]};{self.device};{tag}")

    def receive(self, key):
        return self._take(lambda items: key if key in items else None)

    def receive_any(self, tag):
        suffix = f";{self.device};{tag}"
        return self._take(lambda items: next((k for k in items if k.endswith(suffix)), None))

    def _take(self, find):
        rendezvous = self._rendezvous
        with rendezvous.cond:
            found = []

            def ready():
                found[:] = [find(rendezvous.items) or _notice(rendezvous.items)]
                return found[0] is not None

            _wait(self.step, rendezvous.cond, ready, self.due)
            key = found[0]
            tag = key.rpartition(";")[2]
            if tag.startswith(("abort:", "lost:")):
                # told by another member ("abort"), or a push of ours failed ("lost")
                self._told = tag.startswith("abort:")
                error_class = exception_type_from_error_code(int(tag.partition(":")[2]))
                raise error_class(None, None, rendezvous.items[key][0].decode())
            return rendezvous.items.pop(key)

    def _failed_push(self, member, error):
        """A push to `member` failed (it is gone): this member's wait ends with it."""
        code = getattr(error, "error_code", _UNAVAILABLE)
        self.collectives._mailbox.deliver(
            self.id, f"{member};{self.device};lost:{code}",
            _text(f"Collective ops lost {member}: {getattr(error, 'message', error)}"))

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        collectives = self.collectives
        if error is not None and not self._told:   # the first to fail tells the others
            code = getattr(error, "error_code", None) or _UNKNOWN
            message = (f"Collective ops is aborted by: {self.device}: "
                       f"{getattr(error, 'message', error)}")
            for member in self.members:
                if member != self.device:
                    key = f"{self.device};{member};abort:{code}"
                    collectives._deliver(member, self.id_of(member), key, _text(message),
                                         _ignore)
        collectives._mailbox.finish(self.id)
        if collectives._traffic is not None:
            collectives._traffic.move(self.sent_to, self.step.id)
        return False


def _text(message):
    """A message as a tensor that can cross to another task: a string vector."""
    return np.array([message.encode()], dtype=object)


def _notice(items):
    """The key of an abort or lost-member notice among `items`, or None."""
    return next((k for k in items if k.rpartition(";")[2].startswith(("abort:", "lost:"))),
                None)


def _due(attrs):
    timeout = attrs.get("timeout_seconds") or 0.0
    return time.monotonic() + timeout if timeout > 0 else None


def _wait(step, cond, ready, due):
    """Waits on `cond` (held) until `ready()`, the step ends (its deadline, an abort, a
    cancel) or the collective's own timeout passes `due`."""
    if ready():
        return
    token = step.on_abort(lambda: _notify(cond), on_cancel=True)
    try:
        while not ready():
            step.check()
            left = step.remaining()
            if due is not None:
                until_due = due - time.monotonic()
                if until_due <= 0:
                    raise DeadlineExceededError(None, None, TIMED_OUT)
                left = until_due if left is None else min(left, until_due)
            cond.wait(left)
    finally:
        step.remove_on_abort(token)


def _notify(cond):
    with cond:
        cond.notify_all()


def _ignore(error):
    """A join or an abort notice that did not reach a task: its members time out."""


_MERGE = {"Add": np.add, "Mul": np.multiply, "Min": np.minimum, "Max": np.maximum}
