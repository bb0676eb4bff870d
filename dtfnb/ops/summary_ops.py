"""Summary ops: `tf.summary.scalar` builds a ScalarSummary, a serialized `Summary`
protobuf (string scalar) collected in GraphKeys.SUMMARIES, as TensorFlow 1's does."""

import re

from dtfnb.base import dtypes
from dtfnb.base.shapes import scalar as scalar_shape
from dtfnb.framework import api
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.graph_keys import GraphKeys
from dtfnb.framework.registry import NotDifferentiable, define_op
from dtfnb.ops.building import make_tensor

define_op("ScalarSummary", lambda op: [scalar_shape()])
NotDifferentiable("ScalarSummary")

_INVALID_TAG_CHARACTERS = re.compile(r"[^-/\w\.]")


def _clean_tag(name):
    return None if name is None else _INVALID_TAG_CHARACTERS.sub("_", name).lstrip("/")


def scalar_summary(tags, values, name=None):
    """The raw op: one `Summary.Value` per element of `tags` and `values` (same shape)."""
    tags = convert_to_tensor(tags, dtypes.string, name="tags")
    values = convert_to_tensor(values, name="values")
    return make_tensor("ScalarSummary", [tags, values], dtypes.string, name=name or "ScalarSummary",
                       attrs={"T": values.dtype.base_dtype})


def scalar(name, tensor, collections=None, family=None):
    """A summary of one real number, tagged with its scope's name (`family/scope` when a
    family is given), added to `collections` (default: [GraphKeys.SUMMARIES])."""
    name, family = _clean_tag(name), _clean_tag(family)
    with api.name_scope(name if family is None else f"{family}/{name}", None,
                        [tensor]) as scope:
        tag = scope.rstrip("/") if family is None else f"{family}/{scope.rstrip('/')}"
        summary = scalar_summary(tag, tensor, name=scope)
    for key in (collections if collections is not None else [GraphKeys.SUMMARIES]):
        api.add_to_collection(key, summary)
    return summary
