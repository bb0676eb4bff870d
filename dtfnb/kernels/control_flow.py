"""Control flow kernels: Switch, Merge, Enter, Exit, NextIteration, LoopCond.

They only forward values. What makes them control flow is in the executor
(runtime/frames.py): it skips an op whose input is DEAD, makes a Merge ready on its
first live input, and moves a value between frames and iterations after an Enter,
Exit or NextIteration. The Ref forms forward a variable's reference itself.
"""

from dtfnb.kernels.registry import register_kernel
from dtfnb.resources.variable import value_of


class _Dead:
    """The value of an output that was not taken (Switch's other output, and what
    follows it): it carries no data, only the fact that nothing runs on it."""

    __slots__ = ()

    def __repr__(self):
        return "DEAD"


DEAD = _Dead()


@register_kernel("Switch")
def _switch(ctx, step, data, pred):
    data = value_of(data)
    return (DEAD, data) if pred else (data, DEAD)


@register_kernel("RefSwitch", ref_inputs=True)
def _ref_switch(ctx, step, data, pred):
    return (DEAD, data) if pred else (data, DEAD)


@register_kernel("Merge")
@register_kernel("RefMerge", ref_inputs=True)
def _merge(ctx, step, *inputs):
    """The first input that is alive; the executor runs a Merge once one is (or with all
    of them dead, not at all). An input not delivered in this iteration is None."""
    for index, value in enumerate(inputs):
        if value is not None and value is not DEAD:
            return (value if ctx.op == "RefMerge" else value_of(value)), \
                ctx.xp.asarray(index, dtype="int32")
    raise AssertionError("Merge ran without a live input")


@register_kernel("Enter")
@register_kernel("Exit")
@register_kernel("NextIteration")
@register_kernel("LoopCond")
def _forward(ctx, step, data):
    return value_of(data)


@register_kernel("RefEnter", ref_inputs=True)
@register_kernel("RefExit", ref_inputs=True)
@register_kernel("RefNextIteration", ref_inputs=True)
def _forward_ref(ctx, step, data):
    return data
