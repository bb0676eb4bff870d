"""tf.while_loop: TF1's loop, a frame of Enter, Merge, Switch, LoopCond, NextIteration and
Exit ops that the executor runs iteration by iteration (see control_flow_context.py)."""

from dtfnb.base.shapes import scalar
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.graph_keys import GraphKeys
from dtfnb.ops import nest
from dtfnb.ops.building import graph_of
from dtfnb.ops.constant_op import constant
from dtfnb.ops.control_flow_context import WhileContext
from dtfnb.ops.math_ops import logical_and


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10,
               back_prop=True, swap_memory=False, name=None, maximum_iterations=None,
               return_same_structure=False):
    """Repeats `body` while `cond` holds, over the loop variables `loop_vars`.

    Args:
      cond: a callable taking the loop variables, returning a scalar bool Tensor.
      body: a callable taking the loop variables, returning their next values in the
        same structure.
      loop_vars: a Tensor, or a (nested) list, tuple or dict of them.
      shape_invariants: the shapes the loop variables keep (default: their shapes).
      parallel_iterations: how many iterations may run at once.
      back_prop, swap_memory: kept for TensorFlow's signature; no effect here.
      name: the name scope of the loop's ops ("while").
      maximum_iterations: an upper bound on the number of iterations.
      return_same_structure: return a one-variable loop's result as a list too.

    Returns:
      The loop variables' values after the last iteration (the Exit ops' outputs).

    Raises:
      TypeError: `cond` or `body` is not callable, or `parallel_iterations` is not
        positive.
      ValueError: no loop variables, or `body` returns another structure or shape.
    """
    if not callable(cond):
        raise TypeError("'cond' must be callable.")
    if not callable(body):
        raise TypeError("'body' must be callable.")
    if parallel_iterations < 1:
        raise TypeError("'parallel_iterations' must be a positive integer.")
    graph = graph_of(nest.flatten(loop_vars) if nest.is_nested(loop_vars) else loop_vars)
    with graph.as_default(), graph.name_scope(name or "while"):
        if not loop_vars:
            raise ValueError("'loop_vars' must be provided.")
        if maximum_iterations is not None:
            cond, body, loop_vars, shape_invariants = _bounded(
                cond, body, loop_vars, shape_invariants, maximum_iterations,
                try_to_pack=len(loop_vars) == 1 and not return_same_structure)
        context = WhileContext(graph, parallel_iterations, back_prop, swap_memory,
                               maximum_iterations)
        if context.outer_context is None:
            graph.add_to_collection(GraphKeys.WHILE_CONTEXT, context)
        result = context.build_loop(cond, body, loop_vars, shape_invariants,
                                    return_same_structure)
        return result if maximum_iterations is None else result[1]


def _bounded(cond, body, loop_vars, shape_invariants, maximum_iterations, try_to_pack):
    """The loop with an iteration counter as a first variable, stopping at the bound."""
    maximum = convert_to_tensor(maximum_iterations, name="maximum_iterations")
    if maximum.shape.ndims != 0:
        raise ValueError(f"'maximum_iterations' must be a scalar. Received shape: "
                         f"{maximum.shape}")
    counter = constant(0, dtype=maximum.dtype, name="iteration_counter")
    if try_to_pack:
        loop_vars = (counter, loop_vars[0])
        bounded_cond = lambda i, lv: logical_and(i < maximum, cond(lv))  # noqa: E731
        bounded_body = lambda i, lv: (i + 1, body(lv))  # noqa: E731
    else:
        loop_vars = (counter, loop_vars)
        bounded_cond = lambda i, lv: logical_and(i < maximum, cond(*lv))  # noqa: E731
        bounded_body = lambda i, lv: (i + 1, body(*lv))  # noqa: E731
    if shape_invariants is not None:
        shape_invariants = (scalar(), shape_invariants)
    return bounded_cond, bounded_body, loop_vars, shape_invariants
