"""The kernel table: one function per (op type, device type).

A kernel is `fn(ctx, step, *inputs)` returning its output (or a tuple of outputs
for multi-output ops, nothing for none). `ctx` is the node's static context
(attrs, device, `xp`, resources); `step` is the running step (deadline,
cancellation, rendezvous, feeds and fetches).
"""

_KERNELS = {}
_REF_INPUT_OPS = set()


class KernelDef:
    """One kernel in the table: its function, the attr values it accepts, and how it runs.

    `register_kernel` makes them; the executor takes `fn` and whether it is
    `blocking` (waits on a resource: runs on the device's blocking pool) or
    `expensive` (may run on the inter-op pool beside other work) or `passes` (only passes
    its input on, or orders others: a run in a fixed order may skip it), and the placer asks
    `has_kernel` which device types can run a node.

    ```python
    from dtfnb.base import dtypes
    from dtfnb.kernels.registry import find_kernel, register_kernel

    @register_kernel("MyCube", device="CPU", constraints={"T": [dtypes.float32]})
    def _my_cube(ctx, step, x):       # ctx.xp is numpy or cupy, as the device's
        return x ** 3

    kernel = find_kernel("MyCube", "CPU", {"T": dtypes.float32})
    print(kernel.fn(None, None, 2.0), kernel.blocking)   # 8.0 False
    ```
    """
    __slots__ = ("fn", "constraints", "blocking", "expensive", "passes")

    def __init__(self, fn, constraints, blocking, expensive, passes):
        self.fn = fn
        self.constraints = constraints
        self.blocking = blocking
        self.expensive = expensive
        self.passes = passes

    def accepts(self, attrs):
        """Whether this kernel takes a node with these attrs (its dtype constraints hold)."""
        for attr, allowed in self.constraints.items():
            value = attrs.get(attr)
            if value is not None and getattr(value, "base_dtype", value) not in allowed:
                return False
        return True


def register_kernel(op_type, device=("CPU", "GPU"), constraints=None, blocking=False,
                    expensive=False, ref_inputs=False, passes=False):
    """Decorator registering `fn` for `op_type` on each device type in `device`.

    `constraints` maps an attr (e.g. "dtype") to the dtypes this kernel accepts;
    `blocking` kernels may wait (queues, Recv) and never hold an inter-op thread
    that other ready work needs; `expensive` ones may run in parallel on the pool.
    `ref_inputs`: the op's ref-typed inputs are refs it uses in place (as Assign's), so
    it runs where they live; other ops only read a ref's value, wherever they run.
    `passes`: the kernel returns its one input's value as it is (Identity) or nothing
    (NoOp), so that a run whose order already keeps its dependencies may skip it.
    """
    device_types = (device,) if isinstance(device, str) else tuple(device)
    if ref_inputs:
        _REF_INPUT_OPS.add(op_type)

    def decorate(fn):
        for device_type in device_types:
            _KERNELS.setdefault((op_type, device_type), []).append(
                KernelDef(fn, constraints or {}, blocking, expensive, passes))
        return fn

    return decorate


def find_kernel(op_type, device_type, attrs):
    """The kernel for `op_type` on `device_type` that accepts `attrs`, or None."""
    for kernel in _KERNELS.get((op_type, device_type), ()):
        if kernel.accepts(attrs):
            return kernel
    return None


def has_kernel(op_type, device_type, attrs):
    """Whether a device of `device_type` can run such a node (what the placer asks)."""
    return find_kernel(op_type, device_type, attrs) is not None


def takes_refs(op_type):
    """Whether `op_type` changes its ref inputs in place, so it must run where they live."""
    return op_type in _REF_INPUT_OPS


def known_op(op_type):
    """Whether any kernel is registered for `op_type`: a task runs only known ops."""
    return any(key[0] == op_type for key in _KERNELS)
