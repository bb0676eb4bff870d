"""Per-op-type rule tables for graph building: shape functions, gradients, statefulness.

An op is added by calling `define_op` next to its builder in `ops/`, and
`RegisterGradient` next to that; nothing central lists the ops.
"""

from dtfnb.base.shapes import unknown_shape


class OpDef:
    """`ref_inputs`: its ref-typed inputs are refs it uses in place (TensorFlow's `is_ref`
    input args, as Assign's), not values it reads: it is built colocated with them."""

    __slots__ = ("name", "shape_fn", "stateful", "ref_inputs")

    def __init__(self, name, shape_fn, stateful, ref_inputs=False):
        self.name = name
        self.shape_fn = shape_fn
        self.stateful = stateful
        self.ref_inputs = ref_inputs


_OP_DEFS = {}
_GRADIENTS = {}


def define_op(name, shape_fn=None, stateful=False, ref_inputs=False):
    """Declares an op type; `shape_fn(op)` returns one TensorShape per output."""
    _OP_DEFS[name] = OpDef(name, shape_fn, stateful, ref_inputs)


def op_def(name):
    """The OpDef registered for op type `name`; KeyError for an unknown type."""
    try:
        return _OP_DEFS[name]
    except KeyError:
        raise ValueError(f"Op type not registered '{name}'") from None


def infer_shapes(op):
    """The static output shapes of `op` from its type's shape function (unknown if none)."""
    fn = op_def(op.type).shape_fn
    if fn is None:
        return [unknown_shape() for _ in op.outputs]
    return fn(op)


class RegisterGradient:
    """Decorator: `@RegisterGradient("MatMul") def _grad(op, grad): ...`."""

    def __init__(self, op_type):
        self._op_type = op_type

    def __call__(self, fn):
        if self._op_type in _GRADIENTS:
            raise KeyError(f"Registering two gradient with name '{self._op_type}'!")
        _GRADIENTS[self._op_type] = fn
        return fn


def NotDifferentiable(op_type):  # noqa: N802 - TensorFlow's name
    """Specifies that ops of type `op_type` are not differentiable: gradients stop there."""
    _GRADIENTS[op_type] = None


def gradient_function(op_type):
    """The gradient of an op type; None if it is not differentiable.

    Raises LookupError when no gradient was registered at all.
    """
    if op_type not in _GRADIENTS:
        raise LookupError(f"No gradient defined for operation type: {op_type}")
    return _GRADIENTS[op_type]
