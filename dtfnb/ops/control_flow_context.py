"""Where a cond branch or a loop body is being built: CondContext and WhileContext.

While a context is the graph's control flow context, every op created joins it
(`Graph.create_op` calls `add_op`). An input from outside reaches a cond branch
through a Switch on the predicate, so that the branch runs only when taken, and a loop
body through a constant Enter into the loop's frame; an op with no inputs waits for
the context's pivot. These are TensorFlow 1's rules, so graphs get its op types and
names.
"""

from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.operation import Operation
from dtfnb.ops import control_flow_ops as flow
from dtfnb.ops import nest
from dtfnb.ops.array_ops import identity

LOOP_ENTERS = ("Enter", "RefEnter")
LOOP_EXITS = ("Exit", "RefExit")


def is_loop_constant_enter(op):
    """Whether `op` enters a loop invariant (a constant Enter) into a loop's frame."""
    return op.type in LOOP_ENTERS and op.get_attr("is_constant")


def output_context(op):
    """The context an op's outputs live in: a loop's Exit gives them to the outer one."""
    context = op._get_control_flow_context()
    if context is not None and op.type in LOOP_EXITS:
        context = context.outer_context
    return context


def op_in_context(op, context):
    """Whether `op` was built in `context` or in a context nested within it."""
    found = op._get_control_flow_context()
    while found is not None:
        if found is context:
            return True
        found = found.outer_context
    return False


def while_context_of(op):
    """The innermost loop `op` was built in, or None."""
    context = op._get_control_flow_context()
    return None if context is None else context.get_while_context()


class ControlFlowContext:
    """What every context keeps: its outer context, and the tensors it already knows."""

    def __init__(self, graph):
        self.graph = graph
        self.outer_context = graph._get_control_flow_context()
        self._values = set()          # names of the tensors usable here as they are
        self._external_values = {}    # an outer tensor's name → its stand-in here
        self._saved = []

    def enter(self):
        """Makes this context the graph's current one (until `exit`)."""
        self._saved.append(self.graph._get_control_flow_context())
        self.graph._set_control_flow_context(self)

    def exit(self):
        """Restores the context that was current before `enter`."""
        self.graph._set_control_flow_context(self._saved.pop())

    def exit_result(self, result):
        """Makes the tensors of `result` known to the outer context."""
        if self.outer_context is not None:
            self.outer_context._values.update(x.name for x in nest.flatten(result))

    def get_while_context(self):
        """The innermost WhileContext this context is, or is nested in (None outside a loop)."""
        return None if self.outer_context is None else self.outer_context.get_while_context()

    def control_pivot(self):
        """The tensor an op with no inputs here waits on (None at this level)."""
        return None

    def add_inner_op(self, op):
        """Tells the enclosing contexts that `op` was built within them."""
        if self.outer_context is not None:
            self.outer_context.add_inner_op(op)

    def _mark_outputs(self, op):
        names = [x.name for x in op.outputs]
        context = self
        while context is not None:
            context._values.update(names)
            context = context.outer_context

    def _remove_external_control_edges(self, op):
        """Drops the control inputs of `op` from outside the enclosing loop: inside a loop
        they would wait in another frame. Returns (internal, external) control inputs."""
        loop = self.get_while_context()
        if loop is None:
            return op.control_inputs, []
        internal, external = [], []
        for x in op.control_inputs:
            context = output_context(x)
            inside = context is not None and context.get_while_context() is loop
            (internal if inside else external).append(x)
        if len(internal) != len(op.control_inputs):
            op._remove_all_control_inputs()
            op._add_control_inputs(internal)
        return internal, external


class CondContext(ControlFlowContext):
    """One branch of a cond: `pivot` is alive only when the branch is taken."""

    def __init__(self, graph, pred, pivot, branch):
        super().__init__(graph)
        self.name = graph.unique_name("cond_text")
        self.pred = pred
        self.pivot = pivot
        self.branch = branch
        self._values.add(pred.name)
        self._external_values[pred.name] = pred
        self._values.add(pivot.name)
        pivot.op._set_control_flow_context(self)

    def control_pivot(self):
        """The branch's pivot: the Switch output that is live only when the branch is taken."""
        return self.pivot

    def add_value(self, val):
        """`val` as this branch sees it: through a Switch when it comes from outside."""
        if val.name in self._values:
            return self._external_values.get(val.name, val)
        result = val
        self._values.add(val.name)
        if self.outer_context is not None:
            result = self.outer_context.add_value(val)
            self._values.add(result.name)
            self._external_values[result.name] = result
        with self.graph.control_dependencies(None):
            result = flow.switch_ref_or_tensor(result, self.pred)[self.branch]
            if self.outer_context is not None:
                self.outer_context.add_inner_op(result.op)
        self.graph.prevent_fetching(result.op)
        result.op._set_control_flow_context(self)
        context = self
        while context is not None:
            context._values.add(result.name)
            context = context.outer_context
        self._external_values[val.name] = result
        return result

    def add_op(self, op):
        """Joins `op` to this branch: outer inputs come through a Switch, and an op with no inputs
        waits on the pivot."""
        if not op.inputs:
            self._remove_external_control_edges(op)
            if not any(op_in_context(x, self) for x in op.control_inputs):
                op._add_control_input(self.pivot.op)
        else:
            for index, x in enumerate(op.inputs):
                # A loop imported here gets its back edge later, from its own context.
                if op.type == "Merge" and x.op.type == "NextIteration":
                    continue
                real = self.add_value(x)
                if real is not x:
                    op._update_input(index, real)
            self._remove_external_control_edges(op)
        self._mark_outputs(op)
        if self.outer_context is not None or op.type not in LOOP_EXITS:
            self.graph.prevent_fetching(op)
        self.add_inner_op(op)

    def build_branch(self, fn):
        """Calls `fn` in this branch: (what it returned, its tensors as the branch's list)."""
        original = fn()
        if original is None:
            return None, None
        result = nest.map_structure(self._branch_tensor, original)
        if not isinstance(result, (list, tuple)):
            result = [result]
        return original, result

    def _branch_tensor(self, value):
        if isinstance(value, Operation):
            return flow.with_dependencies([value], self.pivot)  # the pivot stands for the op
        value = convert_to_tensor(value)
        if value.name not in self._values:  # a tensor from outside, e.g. `lambda: x`
            self._values.add(value.name)
            real = value
            if self.outer_context is not None:
                real = self.outer_context.add_value(value)
                self._values.add(real.name)
                self._external_values[real.name] = real
            real = flow.switch_ref_or_tensor(real, self.pred)[self.branch]
            self._external_values[value.name] = real
            return real
        return self._external_values.get(value.name, value)


class WhileContext(ControlFlowContext):
    """The body and condition of one while_loop: the frame `name` that the executor runs
    iteration by iteration."""

    def __init__(self, graph, parallel_iterations=10, back_prop=True, swap_memory=False,
                 maximum_iterations=None):
        super().__init__(graph)
        if not isinstance(parallel_iterations, int) or parallel_iterations <= 0:
            raise ValueError(f"'parallel_iterations' must be a positive integer: "
                             f"{parallel_iterations}")
        self.name = graph.unique_name("while_context")
        self.parallel_iterations = parallel_iterations
        self.back_prop = back_prop
        self.swap_memory = swap_memory
        self.maximum_iterations = maximum_iterations
        self.pivot = None              # the LoopCond
        self._pivot_for_pred = None    # the first Merge
        self._pivot_for_body = None    # the first Identity of the body
        self.loop_enters = []
        self.loop_exits = []

    def get_while_context(self):
        """This loop is its own innermost loop."""
        return self

    def control_pivot(self):
        """The tensor an op with no inputs waits on: the body's pivot, or the predicate's before the
        body is built."""
        return self._pivot_for_body if self._pivot_for_body is not None \
            else self._pivot_for_pred

    def add_value(self, val):
        """`val` as the loop sees it: through a constant Enter when it comes from outside."""
        if val.name in self._values or val.op._get_control_flow_context() is self:
            return self._external_values.get(val.name, val)
        self._values.add(val.name)
        result = val
        if self.outer_context is not None:
            result = self.outer_context.add_value(val)
        with self.graph.control_dependencies(None):
            result = flow.enter(result, self.name, is_constant=True,
                           parallel_iterations=self.parallel_iterations)
            result.set_shape(val.shape)
            self.graph.prevent_feeding(result)
            if self.outer_context is not None:
                self.outer_context.add_inner_op(result.op)
        self._fix_control_inputs_and_context([result])
        self._values.add(result.name)
        self._external_values[val.name] = result
        return result

    def add_op(self, op):
        """Joins `op` to the loop: outer inputs enter the frame as constants, and outer control
        inputs become data through an Identity."""
        if not op.inputs:
            internal, external = self._remove_external_control_edges(op)
            if not internal:
                op._add_control_input(self.control_pivot().op)
        else:
            for index, x in enumerate(op.inputs):
                real = self.add_value(x)
                if real is not x:
                    op._update_input(index, real)
            _, external = self._remove_external_control_edges(op)
            # An op fed only by loop invariants would otherwise run once, not per iteration.
            if not op.control_inputs and all(is_loop_constant_enter(x.op) for x in op.inputs):
                op._add_control_input(self.control_pivot().op)
        self._values.update(x.name for x in op.outputs)
        if external:
            # An outside control input reaches the loop as data, through an Identity.
            with self.graph.control_dependencies(None):
                self.enter()
                try:
                    external = [identity(x.outputs[0]).op for x in external if x.outputs]
                finally:
                    self.exit()
            op._add_control_inputs(external)
        if self.outer_context is not None or op.type not in LOOP_EXITS:
            self.graph.prevent_fetching(op)
            for x in op.outputs:
                self.graph.prevent_feeding(x)
        self.add_inner_op(op)

    def _fix_control_inputs_and_context(self, enters):
        """Gives each Enter the control dependencies in force around the loop that belong
        to an enclosing context (not to an enclosing loop's other frames)."""
        outer_loop = None if self.outer_context is None \
            else self.outer_context.get_while_context()
        for x in enters:
            inputs = self.graph._current_control_inputs([x.op.inputs[0].op])
            keep = []
            for op in inputs:
                op_context, context = output_context(op), self.outer_context
                while context is not op_context:
                    if context is None or context is outer_loop:
                        break
                    context = context.outer_context
                else:
                    keep.append(op)
            x.op._set_control_flow_context(self)
            x.op._add_control_inputs(keep)
            self.graph._record_control_seen(x.op)

    def build_loop(self, pred, body, loop_vars, shape_invariants, return_same_structure):
        """Builds the loop's Enter, Merge, Switch, NextIteration and Exit ops around `pred` and
        `body`; returns the Exit tensors in the structure of `loop_vars`."""
        flat_vars = [convert_to_tensor(x) for x in nest.flatten(loop_vars)]
        structure = nest.pack_sequence_as(loop_vars, flat_vars)
        flat_invariants = [x.shape for x in flat_vars] if shape_invariants is None \
            else nest.flatten(shape_invariants)
        self.enter()
        try:
            exits, result_structure = self._build_loop(pred, body, structure, flat_vars,
                                                       flat_invariants)
        finally:
            self.exit()
        packed = nest.pack_sequence_as(result_structure, exits)
        if return_same_structure:
            return packed
        return packed[0] if len(exits) == 1 else packed

    def _build_loop(self, pred, body, structure, flat_vars, flat_invariants):
        self._values = {x.name for x in flat_vars}
        real_vars = flat_vars if self.outer_context is None \
            else [self.outer_context.add_value(x) for x in flat_vars]
        enters = []
        with self.graph.control_dependencies(None):
            for real, invariant in zip(real_vars, flat_invariants):
                entered = flow.enter(real, self.name, is_constant=False,
                                parallel_iterations=self.parallel_iterations)
                if not _shape_less_or_equal(real.shape, invariant):
                    raise ValueError(
                        f"The shape invariant specified for {real.name} is not compatible "
                        f"with the initial shape of the loop variable. It enters the loop "
                        f"with shape {real.shape}, but the specified shape invariant is "
                        f"{invariant}.")
                entered._shape = invariant
                self.graph.prevent_feeding(entered)
                if self.outer_context is not None:
                    self.outer_context.add_inner_op(entered.op)
                enters.append(entered)
        # A loop inside a cond branch starts only when the branch is taken.
        context, pivot = self.outer_context, None
        while context is not None and pivot is None:
            pivot = context.control_pivot()
            context = context.outer_context
        if pivot is not None:
            for x in enters:
                if is_loop_constant_enter(x.op.inputs[0].op):
                    x.op._add_control_input(pivot.op)
        self._fix_control_inputs_and_context(enters)
        self._values = {x.name for x in enters}
        self.loop_enters = enters

        merges = [flow.merge([x, x])[0] for x in enters]
        self._pivot_for_pred = merges[0]
        condition = convert_to_tensor(pred(*nest.pack_sequence_as(structure, merges)))
        self.pivot = flow.loop_cond(condition, name="LoopCond")
        switches = [flow.switch_ref_or_tensor(x, self.pivot) for x in merges]
        body_vars = [identity(x[1]) for x in switches]
        self._pivot_for_body = body_vars[0]
        result = body(*nest.pack_sequence_as(structure, body_vars))
        if not nest.is_nested(result):
            result = [result]
        nest.assert_same_structure(list(nest.pack_sequence_as(structure, body_vars)),
                                   list(result))
        flat_result = [convert_to_tensor(x) for x in nest.flatten(result)]
        for m, v in zip(merges, flat_result):
            nxt = flow.next_iteration(v)
            if not _shape_less_or_equal(nxt.shape, m.shape):
                entered = m.op.inputs[0].op.inputs[0]
                raise ValueError(
                    f"Input tensor '{entered.name}' enters the loop with shape "
                    f"{entered.shape}, but has shape {nxt.shape} after one iteration. To "
                    f"allow the shape to vary across iterations, use the `shape_invariants` "
                    f"argument of tf.while_loop to specify a less-specific shape.")
            if nxt.dtype.base_dtype != m.dtype.base_dtype:
                raise TypeError(
                    f"Input 1 of node {m.op.name} was passed {nxt.dtype.base_dtype.name} "
                    f"from {nxt.op.name}:0 incompatible with expected "
                    f"{m.dtype.base_dtype.name}.")
            m.op._update_input(1, nxt)
        exits = [flow.exit(x[0]) for x in switches]
        self.loop_exits = exits
        self.exit_result(exits)
        return exits, result


def _shape_less_or_equal(shape, invariant):
    """Whether `shape` is at least as specific as `invariant`."""
    if invariant.ndims is None:
        return True
    if shape.ndims != invariant.ndims:
        return False
    return all(b is None or a == b for a, b in zip(shape.as_list(), invariant.as_list()))
