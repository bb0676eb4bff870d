"""Executor: runs one device's partition of a step by dependency counting.

The calling thread runs ready nodes inline. When several nodes are ready, the
extra expensive ones go to the step's inter-op pool (by default the device's) and
blocking ones (queues) to the device's blocking pool, so independent work runs in
parallel and a wait never holds up ready work. A receive holds no thread: it runs
once its tensor is there, on the thread that sent it (for a tensor from another
task, the one that delivered it), which saves a thread handoff on every hop between
partitions. The first error aborts the whole step. Float errors (x/0, log 0) give
inf/nan silently, as in TensorFlow: a thread runs its nodes under one `np.errstate`,
not one per kernel.
"""

import operator
import threading
import time

import numpy as np

from dtfnb.base import dtypes, errors
from dtfnb.kernels.control_flow import DEAD
from dtfnb.kernels.registry import find_kernel, takes_refs
from dtfnb.resources.variable import value_of
from dtfnb.runtime.frames import FrameGraph, FrameState, has_control_flow
from dtfnb.runtime.pools import CALLER_THREAD
from dtfnb.runtime.stats import transfer_label
from dtfnb.runtime.step import GRACE_SECONDS


class KernelContext:
    """A node's static context, built once per plan: what a kernel needs besides inputs."""

    __slots__ = ("name", "op", "attrs", "device", "xp", "resource_mgr", "state", "session",
                 "output_types")

    def __init__(self, node, device, session_state):
        self.name = node.name
        self.op = node.op
        self.attrs = node.attrs
        self.output_types = node.output_types
        self.device = device
        self.xp = device.xp
        self.resource_mgr = device.resource_mgr
        self.session = session_state
        self.state = session_state.node_state(node.name)


class SessionState:
    """What persists across steps of one session on one task: per-node kernel state, and
    the session's traced functions (`functions`, a FunctionLibrary, set by the worker)."""

    def __init__(self, handle, functions=None):
        self.handle = handle
        self.functions = functions
        self._node_state = {}
        self._lock = threading.Lock()

    def node_state(self, name):
        """The dict a node's kernel keeps across steps of this session."""
        with self._lock:
            return self._node_state.setdefault(name, {})


def _reading_refs(fn, node, sources):
    """`fn`, reading the value of each ref input where `node` neither updates a ref in place
    nor passes one on (as `tf.scatter_add(v, ...) * 2` reads what the update left), as
    TensorFlow's executor dereferences a ref edge into a value input."""
    def is_ref(dtype):
        return dtypes.as_dtype(dtype).is_ref_dtype
    reads = [j for j, ((_, k), source) in enumerate(zip(node.inputs, sources))
             if k < len(source.output_types) and is_ref(source.output_types[k])]
    if not reads or takes_refs(node.op) or any(is_ref(t) for t in node.output_types):
        return fn

    def read_refs(ctx, step, *args):
        args = list(args)
        for j in reads:
            if j < len(args):
                args[j] = value_of(args[j])
        return fn(ctx, step, *args)
    return read_refs


class _PlanNode:
    __slots__ = ("name", "fn", "ctx", "in_slots", "gather", "out_base", "n_out", "succ", "mode",
                 "traced", "label", "passes")

    def reading(self, in_slots):
        """A copy of this node that reads `in_slots` instead."""
        node = _PlanNode()
        for name in self.__slots__:
            setattr(node, name, getattr(self, name))
        node.read(in_slots)
        return node

    def read(self, in_slots):
        """Reads its inputs from `in_slots`: `gather(slots)` gives them, one C call (the
        input itself where there is one, a tuple where there are more)."""
        self.in_slots = in_slots
        self.gather = operator.itemgetter(*in_slots) if in_slots else None


_INLINE, _POOL, _BLOCKING, _RECV = 0, 1, 2, 3
_delivering = threading.local()  # set while a thread runs nodes for a tensor it sent


class Executor:
    """Runs a fixed partition (a list of runtime Nodes) on one device, any number of times.

    Built once per partition when a worker registers a graph (kernel lookup,
    dependency counts, what may run on a pool); `run(step)` then executes it for one
    step: `_Feed` nodes read `step.feeds`, `_Fetch` nodes write `step.fetched`, and
    `_Send`/`_Recv` meet other partitions in the step's rendezvous.

    ```python
    import numpy as np
    import dtfnb.kernels             # registers every kernel
    from dtfnb.base import dtypes
    from dtfnb.runtime.devices import Device
    from dtfnb.runtime.executor import Executor, SessionState
    from dtfnb.runtime.nodes import Node
    from dtfnb.runtime.step import Step

    f32 = dtypes.float32
    nodes = [Node("x", "_Feed", attrs={"tensor_name": "x:0"}, output_types=[f32]),
             Node("y", "Square", [("x", 0)], attrs={"T": f32}, output_types=[f32]),
             Node("out", "_Fetch", [("y", 0)], attrs={"index": 0})]
    executor = Executor(nodes, Device("localhost", 0, "CPU", 0), SessionState("demo"))
    step = Step(feeds={"x:0": np.float32([1, 2, 3])})
    executor.run(step)
    print(step.fetched[0])           # [1. 4. 9.]
    ```
    """

    def __init__(self, nodes, device, session_state):
        self.device = device
        index = {node.name: i for i, node in enumerate(nodes)}
        out_base, slots = [], 0
        for node in nodes:
            out_base.append(slots)
            slots += max(1, len(node.output_types))
        self._plan = []
        pending = []
        for i, node in enumerate(nodes):
            kernel = find_kernel(node.op, device.device_type, node.attrs)
            if kernel is None:
                raise errors.InvalidArgumentError(
                    None, None, f"No OpKernel was registered to support Op '{node.op}' on "
                    f"{device.device_type} used by {{{{node {node.name}}}}}")
            p = _PlanNode()
            p.name = node.name
            p.fn = _reading_refs(kernel.fn, node, [nodes[index[src]] for src, _ in node.inputs])
            # Not one that reads a ref: what it passes on is the ref's value at that point.
            p.passes = kernel.passes and p.fn is kernel.fn and len(node.inputs) <= 1
            p.ctx = KernelContext(node, device, session_state)
            p.read([out_base[index[src]] + k for src, k in node.inputs])
            p.out_base = out_base[i]
            p.n_out = len(node.output_types)
            p.succ = []
            # A trace shows a transfer between devices as its _Send and _Recv, labelled
            # alike so that a timeline pairs them (TensorFlow's shows a RecvTensor of
            # those between tasks only); as TensorFlow's, none from or to the client.
            p.traced = not node.attrs.get("client_terminated")
            p.label = (transfer_label(node.attrs["key"]) if node.op in ("_Send", "_Recv")
                       else None)
            p.mode = (_RECV if node.op == "_Recv"
                      else _BLOCKING if kernel.blocking
                      else _POOL if kernel.expensive and device.parallel_ops else _INLINE)
            deps = {src for src, _ in node.inputs} | set(node.control_inputs)
            pending.append(len(deps))
            self._plan.append(p)
        for i, node in enumerate(nodes):
            for dep in {src for src, _ in node.inputs} | set(node.control_inputs):
                self._plan[index[dep]].succ.append(i)
        self._receives = any(p.mode == _RECV for p in self._plan)
        # Control flow (or a value that may be dead, from another partition's) needs
        # frames and dead tensors: a run of its own, so that other graphs pay nothing.
        self._frames = (FrameGraph(nodes, out_base)
                        if has_control_flow(nodes) or any(n.attrs.get("dead_ok")
                                                          for n in nodes) else None)
        # A constant gives the same array every run: a run that is not traced starts with
        # its slot filled, and a traced one runs it, so that it shows in the step stats.
        # (Not one under control dependencies: what follows it must wait for them.) So
        # does the shape arithmetic on constants alone that gradients build, which
        # TensorFlow's Grappler folds (an untraced run only: see _Schedule).
        constants = [i for i, p in enumerate(self._plan)
                     if p.ctx.op == "Const" and pending[i] == 0]
        self._untraced = _Schedule(self._plan, pending, slots, constants, skip_passes=True,
                                   fold=True)
        self._traced = _Schedule(self._plan, pending, slots)
        # Whether no kernel of the partition waits (queues, readers, collectives...), so
        # that a run of it may start on a thread that must not be held: its receives wait
        # without a thread (see `_Run.schedule`). Asked at every step.
        self.never_blocks = self._frames is None and all(p.mode != _BLOCKING
                                                         for p in self._plan)

    def start(self, step):
        """Starts the partition for `step` and runs it on this thread as far as it goes;
        returns the run, whose `wait()` waits for the rest and raises the step's first
        error. Starting every part of a step before waiting for any lets a caller wait
        once, at the end, rather than once per part."""
        if self._frames is not None:
            run = _FrameRun(self, step)
        else:
            schedule = self._untraced if step.stats is None else self._traced
            if schedule.sequence is not None:
                self._run_in_sequence(step, schedule)
                return _Ended(step)
            run = _Run(self, step, schedule)
        run.start()
        return run

    def run(self, step):
        """Runs the partition to completion; raises the step's first error."""
        self.start(step).wait()

    def _run_in_sequence(self, step, schedule):
        slots = list(schedule.slots)
        stats = None if step.stats is None else step.stats.device(self.device.name)
        with np.errstate(all="ignore"):
            if stats is None:
                failed = _run_nodes(schedule.sequence, step, slots)
            else:
                failed = None
                for node in schedule.sequence:
                    if step.error is not None:
                        break
                    try:
                        _execute(node, step, slots, stats)
                    except BaseException as exc:
                        failed = node, exc
                        break
        # No deadline check between nodes: blocking kernels honour it while they wait,
        # and failing a step after a dequeue took its items would lose them.
        if failed is not None:  # every failure aborts the step, never a hang
            node, exc = failed
            step.abort(_as_op_error(exc, node.ctx.attrs.get("source_node", node.name)))
        step.flush()


class _Ended:
    """A run that ended on the thread that started it."""

    __slots__ = ("step",)

    def __init__(self, step):
        self.step = step

    def wait(self):
        if self.step.error is not None:
            raise self.step.error

    def add_done_callback(self, fn):
        fn()


def _run_nodes(nodes, step, slots):
    """Runs `nodes` in order, each one's kernel on its input slots with its outputs stored
    in `slots`, while the step has no error: the loop of an untraced step in a fixed
    order, with no call per node. (the node, the exception) for one that raised."""
    node = None
    try:
        for node in nodes:
            if step.error is not None:
                break
            if node.gather is None:
                out = node.fn(node.ctx, step)
            elif len(node.in_slots) == 1:
                out = node.fn(node.ctx, step, node.gather(slots))
            else:
                out = node.fn(node.ctx, step, *node.gather(slots))
            if node.n_out == 1:
                slots[node.out_base] = out
            elif node.n_out > 1:
                slots[node.out_base:node.out_base + node.n_out] = out
    except BaseException as exc:
        return node, exc
    return None


def _execute(node, step, slots, stats):
    """Runs one node (see _run_nodes), timed into `stats` if given; raises what it raised."""
    start = time.perf_counter() if stats is not None else 0.0
    failed = _run_nodes((node,), step, slots)
    if failed is not None:
        raise failed[1]
    if stats is not None and node.traced:
        stats.record(node.name, start, time.perf_counter(),
                     slots[node.out_base:node.out_base + node.n_out], node.label)


class _Schedule:
    """How a run starts: its slots with the `preset` nodes' outputs already in them, the
    dependency counts left, the nodes ready at once, how many nodes it runs, and, without
    pool or receive nodes and with the blocking ones on one chain, a fixed order that
    does the same work without counting dependencies (see _sequential_order), less the
    nodes that only pass a value on where `skip_passes` (a run that is not traced)."""

    __slots__ = ("slots", "pending", "roots", "count", "sequence")

    def __init__(self, plan, pending, num_slots, preset=(), skip_passes=False, fold=False):
        self.slots = [None] * num_slots
        self.pending = list(pending)
        constants = set(preset)
        ready, done = list(preset), set()
        while ready:   # the constants, then, where `fold`, what they alone decide
            i = ready.pop()
            node = plan[i]
            if not _fold(node, self.slots, None if i in constants else _FOLDED_BYTES):
                continue
            done.add(i)
            for j in node.succ:
                self.pending[j] -= 1
                if fold and self.pending[j] == 0 and plan[j].ctx.op in _FOLDED_OPS:
                    ready.append(j)
        self.roots = [i for i, count in enumerate(self.pending)
                      if count == 0 and i not in done]
        self.count = len(plan) - len(done)
        self.sequence = (_sequential_order(plan, self.pending, self.roots)
                         if all(p.mode in (_INLINE, _BLOCKING) for p in plan) else None)
        if self.sequence is not None and skip_passes:
            self.sequence = _without_passes(self.sequence)


# Pure shape arithmetic, whose kernels read nothing but their inputs: run once, before
# any step, where constants alone decide a node's inputs (the gradient of a mean: its
# axes modulo the rank, the ones of its default grad_ys).
_FOLDED_OPS = frozenset({
    "Shape", "Size", "Rank", "Fill", "Reshape", "ExpandDims", "Cast", "Pack", "ConcatV2",
    "StridedSlice", "GatherV2", "Range", "AddV2", "Sub", "Mul", "FloorMod", "FloorDiv",
    "Maximum", "Prod", "BroadcastGradientArgs", "DynamicStitch"})
_FOLDED_BYTES = 1 << 16   # larger outputs are made by each run, not kept


def _fold(node, slots, limit):
    """Runs `node` on the constant inputs in `slots` and keeps its outputs there; whether
    it did (not where its kernel fails or its outputs pass `limit` bytes: each run then
    makes them, and fails as it would have)."""
    try:
        with np.errstate(all="ignore"):
            out = node.fn(node.ctx, None, *[slots[s] for s in node.in_slots])
    except Exception:   # the run raises it, as TensorFlow raises what Grappler met
        return False
    outs = [out] if node.n_out == 1 else list(out)
    if limit is not None and sum(getattr(o, "nbytes", 0) for o in outs) > limit:
        return False
    slots[node.out_base:node.out_base + node.n_out] = outs
    return True


def _without_passes(sequence):
    """`sequence` without the nodes that only pass a value on (Identity) or order others
    (NoOp): the order keeps what they ordered, and their readers read what they would
    have passed. A graph's gradients and groups are full of them."""
    passed = {}   # an output slot skipped: the slot its value is in
    kept = []
    for node in sequence:
        in_slots = [passed.get(slot, slot) for slot in node.in_slots]
        if node.passes:
            if node.n_out:
                passed[node.out_base] = in_slots[0]
            continue
        kept.append(node if in_slots == node.in_slots else node.reading(in_slots))
    return kept


def _sequential_order(plan, pending, roots):
    """A topological order, from `roots`, in which each blocking node comes once
    everything else that can run has run, so that what is left waits for it anyway: one
    thread running the order waits only where TensorFlow would. None when two blocking
    nodes are ready together (independent: one may wait for the other, as a dequeue for
    an enqueue of the same step), which needs the concurrent run."""
    pending = list(pending)
    ready = list(roots)
    blocked = []
    order = []
    while ready or blocked:
        if ready:
            i = ready.pop()
            if plan[i].mode == _BLOCKING:
                blocked.append(i)
                continue
        elif len(blocked) > 1:
            return None
        else:
            i = blocked.pop()
        order.append(plan[i])
        for j in plan[i].succ:
            pending[j] -= 1
            if pending[j] == 0:
                ready.append(j)
    return order


class _Run:
    __slots__ = ("plan", "step", "slots", "pending", "remaining", "lock", "done", "device",
                 "stats", "roots", "receives", "callbacks")

    def __init__(self, executor, step, schedule):
        self._bind(executor, step)
        self.slots = list(schedule.slots)
        self.pending = list(schedule.pending)
        self.remaining = schedule.count
        self.roots = schedule.roots

    def _bind(self, executor, step):
        """What every kind of run keeps: the plan, the step, the device, how it ends."""
        self.plan = executor._plan
        self.step = step
        self.device = executor.device
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.stats = None if step.stats is None else step.stats.device(self.device.name)
        self.receives = executor._receives
        self.callbacks = None

    def start(self):
        if self.remaining == 0:
            self._set_done()
            return
        self.process(self.schedule(list(self.roots), busy=False))

    def wait(self):
        step = self.step
        # A receive still waiting for its tensor holds no thread that an abort could wake.
        token = step.on_abort(self._set_done) if self.receives else None
        try:
            # Its blocking kernels decide the deadline; this wait is a backstop.
            if not self.done.wait(step.remaining(GRACE_SECONDS)):
                step.expire()
        finally:
            if token is not None:
                step.remove_on_abort(token)
        if step.error is not None:
            raise step.error

    def schedule(self, ready, busy, may_block=True):
        """Returns the nodes this thread runs inline; hands the others to the pools.

        Cheap nodes always run inline, and so do receives whose tensor is there (the
        others run when it comes). When this thread has other work (`busy`), or
        several nodes became ready at once, expensive and blocking ones go to pools;
        blocking ones always do on a thread that must not wait (`may_block` false: it
        delivers tensors, maybe the very one the wait is for).
        """
        lone = not busy and len(ready) == 1
        keep = []
        for i in ready:
            mode = self.plan[i].mode
            if mode == _RECV:
                if self.step.rendezvous.when_ready(self.plan[i].ctx.attrs["key"],
                                                   lambda i=i: self.received(i)):
                    keep.append(i)
            elif (mode == _INLINE or (mode == _POOL and not keep and not busy)
                  or (mode == _BLOCKING and lone and may_block)):
                keep.append(i)
            elif mode == _BLOCKING:
                self.device.blocking_pool.submit(self.process, [i])
            else:
                pool = self.step.inter_op_pool or self.device.pool
                if pool is CALLER_THREAD:
                    keep.append(i)
                else:
                    pool.submit(self.process, [i])
        return keep

    def received(self, i):
        """The tensor of receive `i` was sent: runs it, and what follows, on this thread,
        unless the thread is already inside such a run (no unbounded nesting)."""
        if getattr(_delivering, "active", False):
            self.device.blocking_pool.submit(self.process, [i], False)
            return
        _delivering.active = True
        try:
            self.process([i], may_block=False)
        finally:
            _delivering.active = False

    def process(self, ready, may_block=True):
        """Runs `ready` and what they make ready, then passes on the step's held sends:
        every thread that may have sent flushes before it waits or leaves."""
        try:
            with np.errstate(all="ignore"):
                self._process(ready, may_block)
        finally:
            self.step.flush()

    def _process(self, ready, may_block):
        plan, slots, step = self.plan, self.slots, self.step
        while ready:
            if step.error is not None:
                self._finish_aborted()
                return
            i = ready.pop()
            node = plan[i]
            if node.mode == _BLOCKING:
                step.flush()  # what it waits for may depend on them
            try:
                _execute(node, step, slots, self.stats)
            except BaseException as exc:  # every failure aborts the step, never a hang
                step.abort(_as_op_error(exc, node.ctx.attrs.get("source_node", node.name)))
                self._finish_aborted()
                return
            newly = []
            with self.lock:
                for j in node.succ:
                    self.pending[j] -= 1
                    if self.pending[j] == 0:
                        newly.append(j)
                self.remaining -= 1
                finished = self.remaining == 0
            if finished:
                self._set_done()
                return
            if len(newly) == 1 and plan[newly[0]].mode == _INLINE:
                ready.append(newly[0])  # the common case needs no scheduling
            elif newly:
                ready.extend(self.schedule(newly, busy=bool(ready), may_block=may_block))

    def _finish_aborted(self):
        self._set_done()

    def add_done_callback(self, fn):
        """Calls `fn()` once the run has ended, on the thread that ends it (at once if it
        has): for a caller that would rather not wait. An abort ends a run whose
        receives still wait for their tensors. Like `wait`, but for the deadline, which
        the caller watches."""
        token = self.step.on_abort(self._set_done) if self.receives else None
        with self.lock:
            if not self.done.is_set():
                self.callbacks = self.callbacks or []
                self.callbacks.append((fn, token))
                return
        if token is not None:
            self.step.remove_on_abort(token)
        fn()

    def _set_done(self):
        with self.lock:
            if self.done.is_set():
                return
            self.done.set()
            callbacks, self.callbacks = self.callbacks or (), None
        for fn, token in callbacks:
            if token is not None:
                self.step.remove_on_abort(token)
            fn()


class _FrameRun(_Run):
    """A run with frames and dead tensors (runtime/frames.py): its items are (node,
    Iteration, dead) and a node reads its inputs from its iteration's slots. Everything
    runs inline but receives (when their tensor is there) and, when other work is
    ready, blocking nodes (on the blocking pool)."""

    __slots__ = ("state",)

    def __init__(self, executor, step):
        self._bind(executor, step)
        self.state = FrameState(executor._frames)

    def start(self):
        with self.lock:
            ready = self.state.start()
        if self.state.done:
            self._set_done()
            return
        self.process(self.schedule(ready, busy=False))

    def schedule(self, ready, busy, may_block=True):
        lone = not busy and len(ready) == 1
        keep = []
        for item in ready:
            node = self.plan[item[0]]
            if node.mode == _RECV and not item[2]:
                if self.step.rendezvous.when_ready(node.ctx.attrs["key"],
                                                   lambda item=item: self.received(item)):
                    keep.append(item)
            elif node.mode == _BLOCKING and not item[2] and not (lone and may_block):
                self.device.blocking_pool.submit(self.process, [item])
            else:
                keep.append(item)
        return keep

    def _process(self, ready, may_block):
        plan, step = self.plan, self.step
        while ready:
            if step.error is not None:
                self._finish_aborted()
                return
            item = ready.pop()
            node = plan[item[0]]
            if node.mode == _BLOCKING:
                step.flush()
            try:
                outputs, dead = _execute_in_frame(node, step, item, self.stats)
                with self.lock:
                    newly = self.state.finish(item[0], item[1], outputs, dead)
            except BaseException as exc:  # every failure aborts the step, never a hang
                step.abort(_as_op_error(exc, node.ctx.attrs.get("source_node", node.name)))
                self._finish_aborted()
                return
            if self.state.done:
                self._set_done()
                return
            if newly:
                ready.extend(self.schedule(newly, busy=bool(ready), may_block=may_block))


def _execute_in_frame(node, step, item, stats):
    """Runs one node in its iteration: (its outputs, whether it is dead). A dead node
    does not run and its outputs are DEAD, but for a send, which passes the deadness on
    to the partition that receives."""
    _, iteration, dead = item
    if dead and node.ctx.op != "_Send":
        return [DEAD] * node.n_out, True
    args = [DEAD] if dead else [iteration.slots[s] for s in node.in_slots]
    start = time.perf_counter() if stats is not None else 0.0
    out = node.fn(node.ctx, step, *args)
    outputs = [] if node.n_out == 0 else [out] if node.n_out == 1 else list(out)
    if stats is not None and node.traced:
        stats.record(node.name, start, time.perf_counter(), outputs, node.label)
    return outputs, dead or out is DEAD


def _as_op_error(exc, node_name):
    if isinstance(exc, errors.OpError):
        err = exc
        if err.node_name is None:
            err.node_name = node_name
            err._message = f"{err.message}\n\t [[{{{{node {node_name}}}}}]]"
            err.args = (err._message,)
        return err
    if isinstance(exc, (ValueError, TypeError, IndexError, ArithmeticError,
                        np.linalg.LinAlgError)):
        cls = errors.InvalidArgumentError
    elif isinstance(exc, MemoryError):
        cls = errors.ResourceExhaustedError
    else:
        cls = errors.InternalError
    err = cls(None, None, f"{exc}\n\t [[{{{{node {node_name}}}}}]]")
    err.node_name = node_name
    return err
