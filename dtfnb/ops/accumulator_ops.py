"""ConditionalAccumulator and SparseConditionalAccumulator.

An accumulator is a stateful handle op (dtype resource) whose resource lives in the
task that runs it, shared by `shared_name` within a container, as queues are; every
access op takes the handle as input, so the placer keeps it next to the accumulator.
Names and signatures follow TensorFlow 1's data_flow_ops.
"""

import collections

from dtfnb.base import dtypes as _dtypes
from dtfnb.base.device_spec import DeviceSpec
from dtfnb.base.shapes import TensorShape, as_shape, scalar, unknown_shape
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.indexed_slices import IndexedSlices
from dtfnb.framework.registry import NotDifferentiable, define_op
from dtfnb.ops import math_ops
from dtfnb.ops.building import make_op, make_tensor

# TensorFlow 2.21 builds dense accumulators from its resource ops and sparse ones from
# the older ops; both kinds of handle are resources here.
define_op("ResourceConditionalAccumulator", lambda op: [TensorShape([2])], stateful=True)
define_op("SparseConditionalAccumulator", lambda op: [TensorShape([2])], stateful=True)
for _op in ("ResourceAccumulatorApplyGradient", "SparseAccumulatorApplyGradient",
            "ResourceAccumulatorSetGlobalStep", "AccumulatorSetGlobalStep"):
    define_op(_op, lambda op: [], stateful=True)
# A dense take gets its static shape from the accumulator's builder; a sparse one has none.
define_op("ResourceAccumulatorTakeGradient", None, stateful=True)
define_op("SparseAccumulatorTakeGradient", lambda op: [unknown_shape()] * 3, stateful=True)
for _op in ("ResourceAccumulatorNumAccumulated", "AccumulatorNumAccumulated"):
    define_op(_op, lambda op: [scalar()], stateful=True)
for _op in ("ResourceConditionalAccumulator", "SparseConditionalAccumulator",
            "ResourceAccumulatorApplyGradient", "SparseAccumulatorApplyGradient",
            "ResourceAccumulatorSetGlobalStep", "AccumulatorSetGlobalStep",
            "ResourceAccumulatorTakeGradient", "SparseAccumulatorTakeGradient",
            "ResourceAccumulatorNumAccumulated", "AccumulatorNumAccumulated"):
    NotDifferentiable(_op)


SparseTakeGradient = collections.namedtuple("SparseAccumulatorTakeGradient",
                                            ["indices", "values", "shape"])


def _worker_of(tensor):
    """The task whose device computes `tensor` ("/job:worker/replica:0/task:1"; "" when not
    placed on one), for the monitor's events."""
    spec = DeviceSpec.from_string(tensor.device)
    if spec.job is None:
        return ""
    return f"/job:{spec.job}/replica:{spec.replica or 0}/task:{spec.task or 0}"


def _local_step(local_step):
    return math_ops.cast(convert_to_tensor(local_step), _dtypes.int64)


def _accumulator_ref(op_type, dtype, shape, shared_name, name, reduction_type):
    if reduction_type not in ("MEAN", "SUM"):
        raise ValueError(f"Attr 'reduction_type' of '{op_type}' Op passed string "
                         f"'{reduction_type}' not in: \"MEAN\", \"SUM\".")
    return make_tensor(op_type, [], _dtypes.resource, name=name, attrs={
        "dtype": dtype, "shape": shape, "container": "", "shared_name": shared_name or "",
        "reduction_type": reduction_type})


class ConditionalAccumulatorBase:
    """What both accumulators have: a handle, a dtype, a shape, a count and a global step.

    `_OPS` names the op types of the kind: (num_accumulated, set_global_step, take_grad).
    """

    _OPS = None

    def __init__(self, dtype, shape, accumulator_ref):
        self._dtype = dtype
        self._shape = unknown_shape() if shape is None else as_shape(shape)
        self._accumulator_ref = accumulator_ref
        self._name = accumulator_ref.op.name.split("/")[-1]

    @property
    def accumulator_ref(self):
        """The accumulator's handle: the tensor the accumulator's ops take as their first input."""
        return self._accumulator_ref

    @property
    def name(self):
        """The name of the accumulator's op."""
        return self._accumulator_ref.op.name

    @property
    def dtype(self):
        """The dtype of the values the accumulator averages."""
        return self._dtype

    def _graph(self):
        return self._accumulator_ref.graph

    def num_accumulated(self, name=None):
        """The number of gradients accumulated since the last take (int32)."""
        return make_tensor(self._OPS[0], [self._accumulator_ref], _dtypes.int32,
                           name=name or f"{self._name}_NumAccumulated")

    def set_global_step(self, new_global_step, name=None):
        """An op setting the global step: gradients computed before it are dropped."""
        with self._graph().as_default():
            step = _local_step(new_global_step)
            return make_op(self._OPS[1], [self._accumulator_ref, step], [],
                           name=name or self._OPS[1])

    def _take(self, num_required, dtypes, name):
        op_type = self._OPS[2]
        with self._graph().as_default(), self._graph().name_scope(name or op_type) as scope:
            num_required = convert_to_tensor(num_required, dtype=_dtypes.int32,
                                             name="num_required")
            return make_op(op_type, [self._accumulator_ref, num_required], dtypes,
                           name=scope, attrs={"dtype": self._dtype})


class ConditionalAccumulator(ConditionalAccumulatorBase):
    """Aggregates gradients of one shape, dropping those computed before its global step.

    Usage (what SyncReplicasOptimizer builds for each variable):
        accum = tf.ConditionalAccumulator(tf.float32, shape=w.shape, shared_name="w/acc")
        apply = accum.apply_grad(grad, local_step=local_step)   # run by each replica
        mean = accum.take_grad(2)      # waits for 2 fresh gradients, advances the step
    """

    _OPS = ("ResourceAccumulatorNumAccumulated", "ResourceAccumulatorSetGlobalStep",
            "ResourceAccumulatorTakeGradient")

    def __init__(self, dtype, shape=None, shared_name=None, name="conditional_accumulator",
                 reduction_type="MEAN"):
        dtype = _dtypes.as_dtype(dtype)
        shape = unknown_shape() if shape is None else as_shape(shape)
        ref = _accumulator_ref("ResourceConditionalAccumulator", dtype, shape, shared_name,
                               name, reduction_type)
        super().__init__(dtype, shape, ref)

    def apply_grad(self, grad, local_step=0, name=None):
        """An op offering `grad`, computed at `local_step`; a stale one is dropped.

        Raises:
          ValueError: if `grad`'s static shape does not fit the accumulator's.
        """
        with self._graph().as_default():
            grad = convert_to_tensor(grad, self._dtype)
            grad.shape.assert_is_compatible_with(self._shape)
            local_step = _local_step(local_step)
            return make_op("ResourceAccumulatorApplyGradient",
                           [self._accumulator_ref, local_step, grad], [],
                           name=name or "ResourceAccumulatorApplyGradient",
                           attrs={"dtype": self._dtype, "_worker": _worker_of(grad)})

    def take_grad(self, num_required, name=None):
        """The mean (or sum) of `num_required` gradients: waits for them, then resets the
        accumulator and advances its global step."""
        op = self._take(num_required, [self._dtype], name)
        op.outputs[0].set_shape(self._shape)
        return op.outputs[0]


class SparseConditionalAccumulator(ConditionalAccumulatorBase):
    """A ConditionalAccumulator of sparse gradients (IndexedSlices): rows are averaged over
    the gradients that touched them."""

    _OPS = ("AccumulatorNumAccumulated", "AccumulatorSetGlobalStep",
            "SparseAccumulatorTakeGradient")

    def __init__(self, dtype, shape=None, shared_name=None,
                 name="sparse_conditional_accumulator", reduction_type="MEAN"):
        dtype = _dtypes.as_dtype(dtype)
        shape = unknown_shape() if shape is None else as_shape(shape)
        ref = _accumulator_ref("SparseConditionalAccumulator", dtype, shape, shared_name, name,
                               reduction_type)
        super().__init__(dtype, shape, ref)

    def apply_indexed_slices_grad(self, grad, local_step=0, name=None):
        """apply_grad of an IndexedSlices."""
        return self.apply_grad(grad.indices, grad.values, grad.dense_shape, local_step, name)

    def apply_grad(self, grad_indices, grad_values, grad_shape=None, local_step=0, name=None):
        """An op offering the rows `grad_indices` of a gradient, `grad_values`."""
        graph = self._graph()
        with graph.as_default():
            local_step = _local_step(local_step)
            indices = math_ops.cast(grad_indices, _dtypes.int64)
            shape = math_ops.cast([] if grad_shape is None else grad_shape, _dtypes.int64)
            op_type = "SparseAccumulatorApplyGradient"
            with graph.name_scope(name or op_type) as scope:
                values = convert_to_tensor(grad_values, self._dtype, name="gradient_values")
                return make_op(op_type,
                               [self._accumulator_ref, local_step, indices, values, shape], [],
                               name=scope, attrs={
                                   "dtype": self._dtype, "has_known_shape": grad_shape is not None,
                                   "_worker": _worker_of(values)})

    def take_grad(self, num_required, name=None):
        """(indices, values, shape) of the mean (or sum) of `num_required` gradients."""
        op = self._take(num_required, [_dtypes.int64, self._dtype, _dtypes.int64], name)
        return SparseTakeGradient(*op.outputs)

    def take_indexed_slices_grad(self, num_required, name=None):
        """take_grad as an IndexedSlices."""
        indices, values, shape = self.take_grad(num_required, name)
        return IndexedSlices(values, indices, shape)
