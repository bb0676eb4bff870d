"""Frames and dead tensors: what running TF1 control flow adds to dependency counting.

A partition with control flow ops runs as TensorFlow's executor runs one: every node
runs once per *iteration* of its *frame*. The root frame has one iteration; an Enter
passes a value into a child frame (one per loop, per iteration of the enclosing
frame), a NextIteration on to the frame's next iteration, an Exit back out. A value
may be DEAD (the output a Switch did not take): a node with a dead input (data or
control) does not run and its outputs are dead, except a Merge, which runs on its
first live input and is dead only once all its inputs are (or one from an Enter is:
a loop entered dead, in an untaken branch, is dead). A NextIteration drops a dead
value; an Exit passes only its live value out, and a frame that ends with an Exit
that never was live (the loop itself was dead) passes DEAD out in its place. At most
`parallel_iterations` iterations of a frame are under way at once.

This module is the bookkeeping only, pure and without threads: `FrameState.finish`
takes a node's outputs and returns the nodes that became ready. The executor runs them.
"""

from dtfnb.kernels.control_flow import DEAD

MERGES = frozenset({"Merge", "RefMerge"})
ENTERS = frozenset({"Enter", "RefEnter"})
EXITS = frozenset({"Exit", "RefExit"})
NEXT_ITERATIONS = frozenset({"NextIteration", "RefNextIteration"})
CONTROL_FLOW_OPS = MERGES | ENTERS | EXITS | NEXT_ITERATIONS | {
    "Switch", "RefSwitch", "LoopCond"}

_NORMAL, _MERGE, _ENTER, _EXIT, _NEXT = range(5)


def has_control_flow(nodes):
    """Whether a partition needs frames: any Switch, Merge, Enter, Exit or NextIteration."""
    return any(node.op in CONTROL_FLOW_OPS for node in nodes)


class FrameGraph:
    """What a partition's nodes mean for frames, computed once: each node's kind, its
    out-edges as (consumer, output indices read, whether a control edge too), the
    dependency count each node starts an iteration with, and the Enters per frame.

    An Executor builds one for a partition with control flow (`has_control_flow`)
    and a FrameState from it for each run:

    ```python
    graph = FrameGraph(nodes, out_base)   # out_base[i]: node i's first output slot
    state = FrameState(graph)
    ready = state.start()                 # [(node, Iteration, dead), ...]
    # run each ready node, then: ready += state.finish(node, iteration, outputs)
    # until state.done
    ```
    """

    def __init__(self, nodes, out_base):
        index = {node.name: i for i, node in enumerate(nodes)}
        self.kind = [_MERGE if n.op in MERGES else _ENTER if n.op in ENTERS
                     else _EXIT if n.op in EXITS else _NEXT if n.op in NEXT_ITERATIONS
                     else _NORMAL for n in nodes]
        self.out_base = out_base
        self.num_slots = out_base[-1] + max(1, len(nodes[-1].output_types)) if nodes else 0
        self.edges = [[] for _ in nodes]
        self.pending = []          # per node: sources it waits for (a Merge: control only)
        self.data_sources = []     # per Merge: how many sources feed it data
        self.enter = {}            # Enter node → (frame name, is constant, parallel its.)
        self.enters_per_frame = {}
        for j, node in enumerate(nodes):
            reads = {}
            for src, k in node.inputs:
                reads.setdefault(index[src], []).append(k)
            controls = {index[c] for c in node.control_inputs}
            for i in reads.keys() | controls:
                self.edges[i].append((j, tuple(reads.get(i, ())), i in controls))
            if self.kind[j] == _MERGE:
                self.pending.append(len(controls - reads.keys()))
            else:
                self.pending.append(len(reads.keys() | controls))
            self.data_sources.append(len(reads))
            if self.kind[j] == _ENTER:
                name = node.attrs["frame_name"]
                name = name.decode() if isinstance(name, bytes) else name
                self.enter[j] = (name, bool(node.attrs.get("is_constant", False)),
                                 int(node.attrs.get("parallel_iterations", 10)))
                self.enters_per_frame[name] = self.enters_per_frame.get(name, 0) + 1
        self.roots = [j for j, count in enumerate(self.pending)
                      if count == 0 and not (self.kind[j] == _MERGE and self.data_sources[j])]


class Frame:
    """One execution of a loop (or the root): its live iterations, oldest first."""

    __slots__ = ("name", "parent", "parent_iter", "parallel", "iterations", "oldest",
                 "pending_enters", "invariants", "deferred", "exits_seen", "exits_live",
                 "children")

    def __init__(self, name, parent, parent_iter, parallel, pending_enters):
        self.name = name
        self.parent = parent
        self.parent_iter = parent_iter
        self.parallel = parallel
        self.iterations = {}
        self.oldest = 0
        self.pending_enters = pending_enters
        self.invariants = []       # (Enter node, its outputs): a constant in every iteration
        self.deferred = []         # (NextIteration node, outputs, iteration) over the limit
        self.exits_seen = set()
        self.exits_live = set()
        self.children = {}         # (frame name, iteration) → Frame

    def __repr__(self):
        return f"Frame({self.name!r}, iterations={sorted(self.iterations)})"


class Iteration:
    """One iteration of a frame: the values its nodes see, and its dependency counts."""

    __slots__ = ("frame", "number", "slots", "pending", "dead", "merges", "outstanding")

    def __init__(self, frame, number, graph):
        self.frame = frame
        self.number = number
        self.slots = [None] * graph.num_slots
        self.pending = list(graph.pending)
        self.dead = set()          # nodes with a dead input
        self.merges = {}           # Merge node → [dead inputs, fired]
        self.outstanding = 0       # nodes ready or running, and child frames under way


class FrameState:
    """The frames of one run of a partition. `start()` gives the first ready items and
    each `finish(...)` the items a node's outputs made ready: (node, Iteration, dead),
    dead when the node must not run. `done` once the root frame has ended.

    It keeps no threads and does no I/O, so a run's order is easy to test; see
    FrameGraph for how an executor drives it.
    """

    def __init__(self, graph):
        self.graph = graph
        self.root = Frame("", None, None, 1, 0)
        self.done = False
        self._ready = []

    def start(self):
        """Starts the run: the items ready in the root frame's first iteration."""
        self._ready = []
        iteration = self._iteration(self.root, 0)
        for j in self.graph.roots:
            self._make_ready(j, iteration, False)
        self._settle(iteration)
        return self._ready

    def finish(self, node, iteration, outputs, node_dead=False):
        """Records that `node` ran in `iteration` with `outputs` (a list, DEAD where
        dead; all DEAD when the node itself was dead)."""
        self._ready = []
        kind = self.graph.kind[node]
        frame = iteration.frame
        if kind == _ENTER:
            self._enter(node, iteration, outputs)
        elif kind == _EXIT and frame.parent is not None:
            frame.exits_seen.add(node)
            if not node_dead:
                frame.exits_live.add(node)
                self._deliver(node, outputs, False,
                              frame.parent.iterations[frame.parent_iter])
        elif kind == _NEXT:
            if not node_dead:  # deadness stops at the back edge
                self._next_iteration(node, outputs, frame, iteration.number + 1)
        else:
            self._deliver(node, outputs, node_dead, iteration)
        iteration.outstanding -= 1
        self._settle(iteration)
        return self._ready

    def _make_ready(self, node, iteration, dead):
        iteration.outstanding += 1
        self._ready.append((node, iteration, dead))

    # -- moving values -----------------------------------------------------------------

    def _deliver(self, node, outputs, node_dead, iteration):
        """Gives `node`'s outputs to its consumers in `iteration`."""
        base = self.graph.out_base[node]
        iteration.slots[base:base + len(outputs)] = outputs
        for j, reads, control in self.graph.edges[node]:
            dead = (control and node_dead) or any(outputs[k] is DEAD for k in reads)
            if self.graph.kind[j] == _MERGE:
                self._to_merge(j, node, reads, dead, iteration)
                continue
            if dead:
                iteration.dead.add(j)
            iteration.pending[j] -= 1
            if iteration.pending[j] == 0:
                self._make_ready(j, iteration, j in iteration.dead)

    def _to_merge(self, j, node, reads, dead, iteration):
        """A Merge runs on its first live input, once its control inputs are in; it is
        dead once all its data inputs are, or one from an Enter is."""
        state = iteration.merges.get(j)
        if state is None:
            state = iteration.merges[j] = [0, False, False]  # dead inputs, live, fired
        if not reads:
            iteration.pending[j] -= 1
        elif not dead:
            state[1] = True
        elif self.graph.kind[node] == _ENTER:  # a loop entered dead is dead
            state[0] = self.graph.data_sources[j]
        else:
            state[0] += 1
        if state[2] or iteration.pending[j] > 0:
            return
        if state[1] or state[0] >= self.graph.data_sources[j]:
            state[2] = True
            self._make_ready(j, iteration, not state[1])

    def _enter(self, node, iteration, outputs):
        name, constant, parallel = self.graph.enter[node]
        parent = iteration.frame
        key = (name, iteration.number)
        frame = parent.children.get(key)
        if frame is None:
            frame = parent.children[key] = Frame(
                name, parent, iteration.number, parallel, self.graph.enters_per_frame[name])
            iteration.outstanding += 1  # the child frame, until it ends
            self._iteration(frame, 0)
        frame.pending_enters -= 1
        if constant:
            frame.invariants.append((node, outputs))
            for target in list(frame.iterations.values()):
                self._deliver(node, outputs, False, target)
        else:
            self._deliver(node, outputs, False, frame.iterations[0])
        self._settle(frame.iterations[frame.oldest])

    def _next_iteration(self, node, outputs, frame, number):
        if number >= frame.oldest + frame.parallel:
            frame.deferred.append((node, outputs, number))
            return
        target = frame.iterations.get(number)
        if target is None:
            target = self._iteration(frame, number)
            for enter_node, enter_outputs in frame.invariants:
                self._deliver(enter_node, enter_outputs, False, target)
        self._deliver(node, outputs, False, target)

    def _iteration(self, frame, number):
        iteration = frame.iterations[number] = Iteration(frame, number, self.graph)
        return iteration

    # -- ending iterations and frames --------------------------------------------------

    def _settle(self, iteration):
        """Ends the oldest iterations of the frame that can receive nothing more, then the
        frame itself once none is left, and in turn what that lets end in the parent."""
        frame = iteration.frame
        while True:
            oldest = frame.iterations.get(frame.oldest)
            if oldest is None or oldest.outstanding or \
                    (frame.oldest == 0 and frame.pending_enters):
                break
            del frame.iterations[frame.oldest]
            frame.oldest += 1
            waiting, frame.deferred = frame.deferred, []
            for node, outputs, number in waiting:  # room for another iteration now
                self._next_iteration(node, outputs, frame, number)
        if frame.iterations or frame.pending_enters or frame.deferred:
            return
        if frame.parent is None:
            self.done = True
            return
        parent_iteration = frame.parent.iterations[frame.parent_iter]
        for node in sorted(frame.exits_seen - frame.exits_live):  # the loop was dead
            self._deliver(node, [DEAD], True, parent_iteration)
        del frame.parent.children[(frame.name, frame.parent_iter)]
        parent_iteration.outstanding -= 1
        self._settle(parent_iteration)
