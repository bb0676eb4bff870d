"""Summary ops (TensorFlow 1's `tf.summary`): each builds an op whose output is a serialized
`Summary` protobuf (a string scalar), tagged with its scope's name and collected in
GraphKeys.SUMMARIES; `merge` and `merge_all` join them into one. Kernels in
kernels/summary.py."""

import re
from contextlib import contextmanager

import numpy as np
from google.protobuf import json_format

from dtfnb.base import dtypes
from dtfnb.base.shapes import scalar as scalar_shape
from dtfnb.framework import api
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.graph_keys import GraphKeys
from dtfnb.framework.registry import NotDifferentiable, define_op
from dtfnb.ops.building import check_type, is_tensor, make_tensor, op_scope
from dtfnb.protos.summary_pb2 import SummaryDescription, SummaryMetadata

for _op_type in ("ScalarSummary", "HistogramSummary", "ImageSummary", "AudioSummaryV2",
                 "TensorSummaryV2", "MergeSummary"):
    define_op(_op_type, lambda op: [scalar_shape()])
    NotDifferentiable(_op_type)

_REAL_TYPES = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.uint8, dtypes.int16,
               dtypes.int8, dtypes.int64, dtypes.bfloat16, dtypes.uint16, dtypes.float16,
               dtypes.uint32, dtypes.uint64)
_IMAGE_TYPES = (dtypes.uint8, dtypes.float32, dtypes.float16, dtypes.float64)
_BAD_COLOR = np.array([255, 0, 0, 255], np.uint8)  # opaque red: ImageSummary's default
_INVALID_TAG_CHARACTERS = re.compile(r"[^-/\w\.]")


def _clean_tag(name):
    return None if name is None else _INVALID_TAG_CHARACTERS.sub("_", name).lstrip("/")


@contextmanager
def _summary_scope(name, family, values, default_name=None):
    """The name scope a summary op is built in, and its tag: the scope's name, prefixed by
    the family when there is one (`family/outer/family/name`), so that TensorBoard shows
    it in the family's tab."""
    name, family = _clean_tag(name), _clean_tag(family)
    with api.name_scope(name if family is None else f"{family}/{name}", default_name,
                        values) as scope:
        yield scope.rstrip("/") if family is None else f"{family}/{scope.rstrip('/')}", scope


def _collect(summary, collections, default=(GraphKeys.SUMMARIES,)):
    for key in (collections if collections is not None else default):
        api.add_to_collection(key, summary)
    return summary


def _summary_op(op_type, scope, inputs, **attrs):
    """The op, in its summary's scope: each of `inputs` ({name: (value, type)}) converted
    there under its name, in order, as TensorFlow's op wrappers do. `type` is the input's
    DType, or the types allowed for the input whose type is the op's attr T (None: any)."""
    with op_scope(op_type, scope, *(value for value, _ in inputs.values())) as scope:
        tensors = []
        for name, (value, dtype) in inputs.items():
            if isinstance(dtype, dtypes.DType):
                if is_tensor(value) and value.dtype.base_dtype != dtype:
                    raise TypeError(f"Input '{name}' of '{op_type}' Op has type "
                                    f"{value.dtype.base_dtype.name} that does not match "
                                    f"expected type of {dtype.name}.")
                tensors.append(convert_to_tensor(value, dtype, name=name))
            else:
                tensors.append(convert_to_tensor(value, name=name))
                attrs["T"] = tensors[-1].dtype.base_dtype if dtype is None else \
                    check_type(tensors[-1].dtype, dtype, name)
        return make_tensor(op_type, tensors, dtypes.string, name=scope, attrs=attrs)


def scalar(name, tensor, collections=None, family=None):
    """A summary of one real number, tagged with its scope's name (`family/scope` when a
    family is given), added to `collections` (default: [GraphKeys.SUMMARIES])."""
    with _summary_scope(name, family, [tensor]) as (tag, scope):
        summary = _summary_op("ScalarSummary", scope, {"tags": (tag, dtypes.string),
                                                        "values": (tensor, _REAL_TYPES)})
    return _collect(summary, collections)


def histogram(name, values, collections=None, family=None):
    """A histogram of a real tensor's values in TensorFlow's default buckets (edges growing
    by 10% from 1e-12 to 1e20, both signs); running it fails on a NaN or infinity."""
    with _summary_scope(name, family, [values], "HistogramSummary") as (tag, scope):
        summary = _summary_op("HistogramSummary", scope, {"tag": (tag, dtypes.string),
                                                           "values": (values, _REAL_TYPES)})
    return _collect(summary, collections)


def image(name, tensor, max_outputs=3, collections=None, family=None):
    """PNG images of the first `max_outputs` of a [batch, height, width, channels] tensor
    (1, 3 or 4 channels), tagged `name/image` (max_outputs 1) or `name/image/<i>`. uint8
    pixels are kept; floats are scaled per image to [0, 255] (all >= 0: the largest
    becomes 255; else 0 becomes 128 and the largest magnitude 127 away), and a pixel with
    a non-finite channel is drawn in red."""
    with _summary_scope(name, family, [tensor]) as (tag, scope):
        summary = _summary_op("ImageSummary", scope, {"tag": (tag, dtypes.string),
                                                       "tensor": (tensor, _IMAGE_TYPES)},
                              max_images=int(max_outputs), bad_color=_BAD_COLOR)
    return _collect(summary, collections)


def audio(name, tensor, sample_rate, max_outputs=3, collections=None, family=None):
    """16-bit PCM WAV clips of the first `max_outputs` of a float32 [batch, frames] or
    [batch, frames, channels] tensor in [-1, 1] at `sample_rate` Hz, tagged `name/audio`
    (max_outputs 1) or `name/audio/<i>`."""
    with _summary_scope(name, family, [tensor]) as (tag, scope):
        sample_rate = convert_to_tensor(sample_rate, dtypes.float32, name="sample_rate")
        summary = _summary_op("AudioSummaryV2", scope, {
            "tag": (tag, dtypes.string), "tensor": (tensor, dtypes.float32),
            "sample_rate": (sample_rate, dtypes.float32)}, max_outputs=int(max_outputs))
    return _collect(summary, collections)


def text(name, tensor, collections=None):
    """A string tensor for TensorBoard's text dashboard (markdown; tables for 1-D and 2-D):
    a tensor summary whose metadata names the "text" plugin."""
    if tensor.dtype != dtypes.string:
        raise ValueError(f"Expected tensor {tensor.name} to have dtype string, got "
                         f"{tensor.dtype}")
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="text"))
    return tensor_summary(name, tensor, summary_metadata=metadata, collections=collections)


def tensor_summary(name, tensor, summary_description=None, collections=None,
                   summary_metadata=None, family=None, display_name=None):
    """A whole tensor (any type and shape) as a TensorProto, with `summary_metadata` (a
    SummaryMetadata: which TensorBoard plugin reads it) and its description and display
    name."""
    metadata = SummaryMetadata()
    if summary_metadata is not None:
        metadata.CopyFrom(summary_metadata)
    if summary_description is not None:
        metadata.summary_description = summary_description
    if display_name is not None:
        metadata.display_name = display_name
    with _summary_scope(name, family, [tensor]) as (tag, scope):
        summary = _summary_op("TensorSummaryV2", scope, {
            "tag": (tag, dtypes.string), "tensor": (tensor, None),
            "serialized_summary_metadata": (metadata.SerializeToString(), dtypes.string)})
    return _collect(summary, collections)


def merge(inputs, collections=None, name=None):
    """One Summary holding the values of all `inputs` (serialized Summaries); running it
    fails when two values have the same (non-empty) tag. Added to `collections`, none by
    default."""
    if not inputs:
        raise ValueError("List argument 'inputs' to 'MergeSummary' Op with length 0 shorter "
                         "than minimum length 1.")
    name = _clean_tag(name)
    with api.name_scope(name, "Merge", inputs), \
            op_scope("MergeSummary", name, inputs) as scope:
        inputs = [convert_to_tensor(value, dtypes.string, name=f"inputs_{i}")
                  for i, value in enumerate(inputs)]
        summary = make_tensor("MergeSummary", inputs, dtypes.string, name=scope,
                              attrs={"N": len(inputs)})
    return _collect(summary, collections, default=())


def merge_all(key=GraphKeys.SUMMARIES, scope=None, name=None):
    """`merge` of the summaries collected under `key` (those whose name `scope` matches,
    if given), or None when there are none."""
    summaries = api.get_collection(key, scope=scope)
    return merge(summaries, name=name) if summaries else None


def get_summary_description(node_def):
    """The SummaryDescription of a `TensorSummary` node (its `description` attr, JSON)."""
    if node_def.op != "TensorSummary":
        raise ValueError(f"Can't get_summary_description on {node_def.op}")
    return json_format.Parse(node_def.attr["description"].s.decode(), SummaryDescription())
