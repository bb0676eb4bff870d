"""tf.cond: TF1's conditional, built from Switch and Merge ops (tf.case nests them).

Each branch is built in its own CondContext: its inputs from outside pass through a
Switch on the predicate and its input-free ops wait for the branch's pivot, so only the
taken branch's ops run (the other's are dead, side effects included). A Merge per
result forwards the taken branch's value.
"""

from dtfnb.framework.graph_keys import GraphKeys
from dtfnb.framework.registry import RegisterGradient
from dtfnb.ops import nest
from dtfnb.ops.array_ops import identity
from dtfnb.ops.building import graph_of, is_tensor
from dtfnb.ops.control_flow_context import CondContext, WhileContext, output_context
from dtfnb.ops.control_flow_ops import merge, switch, switch_ref_or_tensor
from dtfnb.ops.math_ops import equal
from dtfnb.ops.shape_util import constant_value


def cond(pred, true_fn=None, false_fn=None, strict=False, name=None, fn1=None, fn2=None):
    """`true_fn()` if `pred` else `false_fn()`, deciding at run time: only the ops the
    taken function built run.

    Args:
      pred: a scalar bool Tensor.
      true_fn, false_fn: callables returning the same structure of Tensors (or ops).
      strict: when False, a one-element list or tuple result is unpacked.
      name: the name scope of the ops ("cond").
      fn1, fn2: TensorFlow's deprecated names of true_fn and false_fn.

    Returns:
      The Merge outputs, in the structure `true_fn` returned.

    Raises:
      TypeError: a function is not callable, `pred` is a Python bool, or the two
        results are sequences of different types.
      ValueError: a function returns nothing, or the results differ in structure or
        dtype.
    """
    true_fn = _one_of(true_fn, fn1, "true_fn", "fn1")
    false_fn = _one_of(false_fn, fn2, "false_fn", "fn2")
    if not callable(true_fn):
        raise TypeError("'true_fn' must be callable.")
    if not callable(false_fn):
        raise TypeError("'false_fn' must be callable.")
    graph = graph_of(pred)
    with graph.as_default(), graph.name_scope(name or "cond"):
        if isinstance(pred, bool):
            raise TypeError("'pred' must not be a Python bool.")
        p_false, p_true = switch(pred, pred)
        pivot_true = identity(p_true, name="switch_t")
        pivot_false = identity(p_false, name="switch_f")
        pred = identity(pred, name="pred_id")
        for tensor in (p_true, p_false, pivot_true, pivot_false, pred):
            graph.prevent_fetching(tensor.op)
        branches = []
        for branch, pivot, fn, fn_name in ((1, pivot_true, true_fn, "true_fn"),
                                           (0, pivot_false, false_fn, "false_fn")):
            context = CondContext(graph, pred, pivot, branch)
            context.enter()
            try:
                original, result = context.build_branch(fn)
                if original is None:
                    raise ValueError(f"'{fn_name}' must have a return value.")
                context.exit_result(result)
            finally:
                context.exit()
            branches.append((context, original, result))
        (context_t, orig_t, res_t), (context_f, orig_f, res_f) = branches
        if not strict:
            orig_t, orig_f = _unpack_singleton(orig_t), _unpack_singleton(orig_f)
        nest.assert_same_structure(orig_t, orig_f)
        if not res_t:
            raise ValueError("'true_fn' and 'false_fn' must return at least one result.")
        for x, y in zip(nest.flatten(res_t), nest.flatten(res_f)):
            if x.dtype.base_dtype != y.dtype.base_dtype:
                raise ValueError(
                    "Outputs of 'true_fn' and 'false_fn' must have the same type(s). "
                    f"Received {x.dtype.name} from 'true_fn' and {y.dtype.name} from "
                    "'false_fn'.")
        merges = [merge(pair)[0] for pair in zip(nest.flatten(res_f), nest.flatten(res_t))]
        if context_t.outer_context is None:
            graph.add_to_collection(GraphKeys.COND_CONTEXT, context_t)
            graph.add_to_collection(GraphKeys.COND_CONTEXT, context_f)
        merges = nest.pack_sequence_as(orig_t, merges)
        return merges if strict else _unpack_singleton(merges)


def smart_cond(pred, true_fn, false_fn, name=None):
    """`true_fn()` or `false_fn()` when `pred` is a Python bool (or 1 or 0) or a constant
    tensor, else a tf.cond of them (TensorFlow's smart_cond: a graph built for a known
    choice has no Switch)."""
    if is_tensor(pred):
        value = constant_value(pred)
    elif pred in {0, 1}:   # True and False among them
        value = bool(pred)
    else:
        raise TypeError("Argument `pred` must be a Tensor, or a Python bool, or 1 or 0. "
                        f"Received: pred={pred} of type {type(pred).__name__}")
    if value is None:
        return cond(pred, true_fn, false_fn, name=name)
    return true_fn() if value else false_fn()


def _one_of(fn, old, name, old_name):
    if old is not None:
        if fn is not None:
            raise TypeError(f"cond(): '{name}' and '{old_name}' may not be set "
                            "simultaneously.")
        return old
    if fn is None:
        raise TypeError(f"cond(): '{name}' argument required")
    return fn


def _unpack_singleton(value):
    if isinstance(value, (list, tuple)) and len(value) == 1:
        return value[0]
    return value


# -- gradients: through a cond, not through a while_loop -------------------------------
#
# The gradient of a cond's Merge is a Switch of the incoming gradient on the cond's
# predicate: each branch gets it only when taken. A Switch inside a branch gets a
# gradient from the branch's side and a zero one from the other (the zeros of its
# untaken output, dead when the branch is taken): their Merge is whichever is alive.


@RegisterGradient("Merge")
@RegisterGradient("RefMerge")
def _merge_grad(op, grad, _):
    context = output_context(op.inputs[0].op)
    if isinstance(context, CondContext):
        return list(switch_ref_or_tensor(grad, context.pred, name="cond_grad"))
    if isinstance(context, WhileContext):
        raise _no_loop_gradient(op)
    chosen = [equal(op.outputs[1], i) for i in range(len(op.inputs))]
    return [switch(grad, c)[1] for c in chosen]


@RegisterGradient("Switch")
@RegisterGradient("RefSwitch")
def _switch_grad(op, *grads):
    context = op._get_control_flow_context()
    if isinstance(context, CondContext):
        if grads[1 - context.branch] is None:
            return None, None
        return merge(list(grads), name="cond_grad")[0], None
    if isinstance(context, WhileContext):
        raise _no_loop_gradient(op)
    false_grad = switch(grads[0], op.inputs[1])[0]
    true_grad = switch(grads[1], op.inputs[1])[1]
    return merge([false_grad, true_grad])[0], None


@RegisterGradient("Enter")
@RegisterGradient("RefEnter")
@RegisterGradient("Exit")
@RegisterGradient("RefExit")
@RegisterGradient("NextIteration")
@RegisterGradient("RefNextIteration")
def _loop_grad(op, *grads):
    raise _no_loop_gradient(op)


def _no_loop_gradient(op):
    return LookupError(f"No gradient defined for operation '{op.name}' (op type: "
                       f"{op.type}): dtfnb does not differentiate through tf.while_loop")
