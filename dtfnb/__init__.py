"""dtfnb: TensorFlow 1's distributed dataflow model in pure Python. `import dtfnb as tf`.

This module only re-exports, under TensorFlow's names.
"""

from dtfnb import kernels as _kernels  # noqa: F401 - registers every kernel
from dtfnb.base import errors
from dtfnb.base.device_spec import DeviceSpec
from dtfnb.base.dtypes import (
    DType, as_dtype, bfloat16, bool_ as bool, complex64, complex128, double, float16,
    float32, float64, half, int8, int16, int32, int64, resource, string, uint8, uint16,
    uint32, uint64, variant)
from dtfnb.base.shapes import Dimension, TensorShape
from dtfnb.client.session import InteractiveSession, Session
from dtfnb.framework.convert import convert_to_tensor, register_tensor_conversion_function
from dtfnb.framework.default_session import get_default_session
from dtfnb.framework.graph import Graph, get_default_graph, reset_default_graph
from dtfnb.framework.graph_keys import GraphKeys
from dtfnb.framework.operation import Operation
from dtfnb.framework.versions import (
    GRAPH_DEF_VERSION, GRAPH_DEF_VERSION_MIN_CONSUMER, GRAPH_DEF_VERSION_MIN_PRODUCER, VERSION,
    __version__)
from dtfnb.framework.registry import NotDifferentiable, RegisterGradient
from dtfnb.framework.tensor import Tensor
from dtfnb.ops.array_ops import identity, placeholder, placeholder_with_default
from dtfnb.ops.case import case
from dtfnb.ops.check_ops import (
    Assert, assert_equal, assert_greater, assert_greater_equal, assert_integer, assert_less,
    assert_less_equal, assert_negative, assert_non_negative, assert_non_positive,
    assert_none_equal, assert_positive, assert_scalar, assert_type)
from dtfnb.ops.constant_op import constant
from dtfnb.ops.control_flow_ops import group, no_op, tuple
from dtfnb.ops.cond import cond
from dtfnb.ops.while_loop import while_loop
from dtfnb.ops.state_ops import (
    assign, assign_add, assign_sub, count_up_to, scatter_add, scatter_div, scatter_max,
    scatter_min, scatter_mul, scatter_sub, scatter_update)
from dtfnb.ops.variables import (
    Variable, all_variables, global_variables, global_variables_initializer,
    initialize_all_variables, initialize_local_variables, is_variable_initialized,
    local_variables, local_variables_initializer, model_variables, trainable_variables,
    variables_initializer)
from dtfnb.protos.config_pb2 import (
    ConfigProto, GPUOptions, GraphOptions, RunMetadata, RunOptions)
from dtfnb.protos.event_pb2 import Event, LogMessage, SessionLog
from dtfnb.protos.graph_pb2 import AttrValue, GraphDef, NodeDef
from dtfnb.protos.summary_pb2 import HistogramProto, Summary, SummaryMetadata

# scopes, collections and devices on the default graph
from dtfnb.framework.api import (
    add_to_collection, add_to_collections, colocate_with, container, control_dependencies,
    device, executing_eagerly, get_collection, get_collection_ref, name_scope,
    set_random_seed)

# array and math ops
from dtfnb.ops.variables import report_uninitialized_variables
from dtfnb.framework.gradients import gradients
from dtfnb.ops.array_ops import (
    expand_dims, fill, newaxis, ones, ones_like, rank, reshape, shape, size, squeeze,
    stop_gradient, unique, where, where_v2, zeros, zeros_like, one_hot)
from dtfnb.ops.joining_ops import concat, shape_n, split, stack, unstack
from dtfnb.ops.nd_indexing import gather_nd, scatter_nd
from dtfnb.ops.slicing_ops import (
    boolean_mask, gather, invert_permutation, pad, segment_sum, slice, sparse_segment_mean,
    sparse_segment_sqrt_n, sparse_segment_sum, strided_slice, tile, transpose,
    unsorted_segment_sum)
from dtfnb.ops.math_ops import (
    add, add_n, broadcast_to, cast, div, div_no_nan, divide, equal, floordiv, floormod,
    greater, greater_equal, less, less_equal, logical_and, logical_not, logical_or,
    logical_xor, maximum, minimum, mod, multiply, not_equal, pow, range, realdiv,
    reduce_all, reduce_any, reduce_max, reduce_mean, reduce_min, reduce_prod, reduce_sum,
    scalar_mul, squared_difference, subtract, to_double, to_float, to_int32, to_int64,
    truediv, truncatediv, truncatemod)
from dtfnb.ops.unary_ops import (
    abs, ceil, cos, exp, floor, is_finite, is_inf, is_nan, log, log1p, negative, reciprocal,
    round, rsqrt, sign, sin, sqrt, square)
from dtfnb.ops.arg_ops import argmax, argmin
from dtfnb.ops.compound_reductions import count_nonzero, norm, reduce_logsumexp
from dtfnb.ops.linalg_ops import matmul, tensordot
from dtfnb.ops.scan_ops import cumprod, cumsum
from dtfnb.ops.set_ops import setdiff1d
from dtfnb.ops import autopacking as _autopacking  # noqa: F401 - [tensor, 2.0] packs
from dtfnb.ops import tensor_operators as _tensor_operators  # noqa: F401 - Tensor's +, -, @ ...
from dtfnb.ops.script_ops import numpy_function, py_func
from dtfnb.ops.string_ops import reduce_join
from dtfnb.ops.clip_ops import (
    clip_by_global_norm, clip_by_norm, clip_by_value, global_norm)

# neural networks, layers, initializers and random ops
from dtfnb import compat, initializers, layers, logging, losses, nn, random, summary, train
from dtfnb import distribute
from dtfnb.ops.init_ops import (
    constant_initializer, glorot_normal_initializer, glorot_uniform_initializer,
    ones_initializer, orthogonal_initializer, random_normal_initializer,
    random_uniform_initializer, truncated_normal_initializer, variance_scaling_initializer,
    zeros_initializer)
from dtfnb.ops.nn_ops import sigmoid, tanh
from dtfnb.ops.random_ops import (
    multinomial, random_normal, random_shuffle, random_uniform, truncated_normal)

# variable scopes and GraphDef import
from dtfnb.ops.variable_scope import (
    AUTO_REUSE, VariableScope, create_partitioned_variables, get_local_variable, get_variable,
    get_variable_scope, variable_op_scope, variable_scope)
from dtfnb.ops.partitioned_variables import (
    fixed_size_partitioner, min_max_variable_partitioner, variable_axis_size_partitioner)
from dtfnb.framework.importer import import_graph_def

# parsing ops and TFRecord files
from dtfnb import io, python_io
# the tf.data API
from dtfnb import data
from dtfnb.ops.parsing_ops import (
    FixedLenFeature, VarLenFeature, decode_csv, decode_raw, parse_example, parse_single_example,
    string_to_number)

# queues
from dtfnb.ops.data_flow_ops import (
    dynamic_partition, dynamic_stitch,
    FIFOQueue, PaddingFIFOQueue, PriorityQueue, QueueBase, RandomShuffleQueue)

# conditional accumulators (SyncReplicasOptimizer's) and sparse gradients
from dtfnb.framework.indexed_slices import IndexedSlices
from dtfnb.framework.sparse_tensor import SparseTensor, SparseTensorValue
from dtfnb.ops.array_ops import sparse_placeholder
from dtfnb.ops.sparse_ops import sparse_retain, sparse_tensor_to_dense
from dtfnb import sets, sparse, strings
from dtfnb.ops.accumulator_ops import (
    ConditionalAccumulator, ConditionalAccumulatorBase, SparseConditionalAccumulator)

# readers
from dtfnb.ops.io_ops import (
    FixedLengthRecordReader, IdentityReader, ReaderBase, TextLineReader, TFRecordReader,
    WholeFileReader, matching_files)


# tf.test: TestCase with sessions and TensorFlow's assertions
from dtfnb import test

# Jupyter: `%load_ext dtfnb` (imports IPython only then)
def load_ipython_extension(ipython):
    """`%load_ext dtfnb`: registers the notebook's magics and displays (dtfnb.notebook)."""
    from dtfnb.notebook import load_ipython_extension

    load_ipython_extension(ipython)


def unload_ipython_extension(ipython):
    """`%unload_ext dtfnb`: removes what `load_ipython_extension` registered."""
    from dtfnb.notebook import unload_ipython_extension

    unload_ipython_extension(ipython)
