"""tf.case: the result of the function paired with the first true predicate, as nested
tf.conds, with tf.Asserts that the default's predicate holds and, when exclusive, that at
most one does (TensorFlow's control_flow_case)."""

import functools

from dtfnb.base import dtypes
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.tensor import Tensor
from dtfnb.ops.building import graph_of
from dtfnb.ops.check_ops import Assert
from dtfnb.ops.cond import cond
from dtfnb.ops.joining_ops import stack
from dtfnb.ops.math_ops import cast, less_equal, reduce_sum


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """The result of the function paired with the first true predicate (nested conds).

    `pred_fn_pairs` is a list of (bool Tensor, callable) or a dict of them (taken in
    the order of the predicates' names). Without `default`, the last pair is the
    default, guarded by an Assert that its predicate holds; `exclusive` asserts that at
    most one predicate holds.
    """
    predicates, actions = _case_pairs(pred_fn_pairs)
    graph = graph_of(list(predicates))
    with graph.as_default(), graph.name_scope(name or "case"):
        if default is None:
            default, predicates, actions = _default_action(predicates, actions)
        fn = default
        for predicate, action in reversed(list(zip(predicates, actions))):
            fn = functools.partial(cond, predicate, true_fn=action, false_fn=fn,
                                   strict=strict)
        if exclusive:
            check = _assert_at_most_n_true(predicates, 1, "Input error: exclusive=True")
            with graph.control_dependencies([check]):
                return fn()
        return fn()


def _case_pairs(pred_fn_pairs):
    if not isinstance(pred_fn_pairs, (list, tuple, dict)):
        raise TypeError("'pred_fn_pairs' must be a list, tuple, or dict. Received: "
                        f"{type(pred_fn_pairs)}")
    if isinstance(pred_fn_pairs, dict):
        pred_fn_pairs = sorted(pred_fn_pairs.items(), key=lambda item: item[0].name)
    for pair in pred_fn_pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"Each entry in 'pred_fn_pairs' must be a 2-tuple. Received "
                            f"{pair}.")
        pred, fn = pair
        if not isinstance(pred, Tensor):
            raise TypeError(f"pred must be a Tensor, got: {pred}")
        if pred.dtype != dtypes.bool_:
            raise TypeError(f"pred must be Tensor of type bool: {pred.name}")
        if not callable(fn):
            raise TypeError(f"fn for pred {pred.name} must be callable.")
    predicates, actions = zip(*pred_fn_pairs)
    return predicates, actions


def _default_action(predicates, actions):
    """The last pair as the default: it checks that its predicate holds, and no other."""
    k = len(predicates) - 1
    predicate, action = predicates[k], actions[k]
    others, other_actions = predicates[:k], actions[:k]

    def default_action():
        others_msg = (f"Implementation error: selected default action #{k} was called, "
                      "but some of other predicates are True: ")
        default_msg = ("Input error: None of conditions evaluated as True:",
                       stack(predicates, name="preds_c"))
        with predicate.graph.control_dependencies([
                _assert_at_most_n_true(others, 0, others_msg),
                Assert(predicate, data=default_msg)]):
            return action()

    return default_action, others, other_actions


def _assert_at_most_n_true(predicates, n, msg):
    preds_c = stack(predicates, name="preds_c")
    num_true = reduce_sum(cast(preds_c, dtypes.int32), name="num_true_conds")
    condition = less_equal(num_true, convert_to_tensor(n, name="n_true_conds"))
    names = ", ".join(getattr(p, "name", "?") for p in predicates)
    return Assert(condition, [f"{msg}: more than {n} conditions ({names}) evaluated as "
                              "True:", preds_c], summarize=len(predicates))
