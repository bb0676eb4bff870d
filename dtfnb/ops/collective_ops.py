"""Collective ops, as TensorFlow 1.x's `tensorflow.python.ops.collective_ops`: all-reduce,
all-gather and broadcast among `group_size` members, one per device, that name the same
`group_key` and `instance_key`.

Each member runs its own op on its own device, in one graph (in-graph replication) or in
one graph per client (between-graph); the n-th run of an instance on one member meets the
n-th run on every other. Kernels: kernels/collective.py; the ring: runtime/collectives.py.
"""

from dtfnb.base import dtypes as _dtypes
from dtfnb.base.shapes import as_shape
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.graph import get_default_graph
from dtfnb.framework.registry import define_op
from dtfnb.ops.building import make_tensor


def _input_shape(op):
    return [op.inputs[0].shape]


def _gathered_shape(op):
    shape = op.inputs[0].shape
    if shape.ndims is None:
        return [shape]
    first = shape.as_list()[0]
    group_size = op.get_attr("group_size")
    return [as_shape([None if first is None else first * group_size] + shape.as_list()[1:])]


define_op("CollectiveReduce", _input_shape, stateful=True)
define_op("CollectiveGather", _gathered_shape, stateful=True)
define_op("CollectiveBcastSend", _input_shape, stateful=True)
define_op("CollectiveBcastRecv", lambda op: [op._raw_attr("shape")], stateful=True)


def _check_group_size(group_size, least, op):
    if group_size < least:
        raise ValueError(f"Parameter `group_size` to {op} must be at least {least}. "
                         f"Received: {group_size}.")


def _attrs(group_size, group_key, instance_key, communication_hint, timeout, **more):
    return {"group_size": int(group_size), "group_key": int(group_key),
            "instance_key": int(instance_key), **more,
            "communication_hint": communication_hint.lower(),
            "timeout_seconds": float(timeout)}


def all_reduce(t, group_size, group_key, instance_key, merge_op="Add", final_op="Id",
               subdiv_offsets=(0,), communication_hint="auto", timeout=0):
    """Reduces `t` across the group with `merge_op` ("Add", "Mul", "Min" or "Max"), then
    applies `final_op` ("Id", or "Div": divides by `group_size`): every member gets the
    same tensor. A ring: each member sends 2(N−1)/N of the tensor's bytes. `timeout`
    (seconds, 0: none) fails a member left waiting for the others with
    DeadlineExceededError."""
    _check_group_size(group_size, 1, "all_reduce")
    t = convert_to_tensor(t)
    return make_tensor("CollectiveReduce", [t], t.dtype.base_dtype, name="CollectiveReduce",
                       attrs=_attrs(group_size, group_key, instance_key, communication_hint,
                                    timeout, T=t.dtype.base_dtype, merge_op=merge_op,
                                    final_op=final_op, subdiv_offsets=list(subdiv_offsets),
                                    wait_for=[]))


def all_gather(t, group_size, group_key, instance_key, communication_hint="auto", timeout=0):
    """Concatenates every member's `t` along the first dimension, in the members' order
    (their device names, sorted): every member gets the whole."""
    _check_group_size(group_size, 1, "all_gather")
    t = convert_to_tensor(t)
    return make_tensor("CollectiveGather", [t], t.dtype.base_dtype, name="CollectiveGather",
                       attrs=_attrs(group_size, group_key, instance_key, communication_hint,
                                    timeout, T=t.dtype.base_dtype, shape=as_shape([0])))


def broadcast_send(t, shape, dtype, group_size, group_key, instance_key,
                   communication_hint="auto", timeout=0):
    """Sends `t` to every other member of the group, whose broadcast_recv returns it; returns
    `t`. The group has one sender."""
    _check_group_size(group_size, 2, "broadcast_send")
    t = convert_to_tensor(t)
    shape, dtype = as_shape(shape), _dtypes.as_dtype(dtype)
    if t.shape != shape:
        raise ValueError(f"Shape of broadcast_send tensor `t` not equal to declared shape. "
                         f"Received {t.shape}, expected {shape}.")
    if t.dtype != dtype:
        raise ValueError(f"Type of broadcast_send tensor `t` not equal to declared type. "
                         f"Received {t.dtype}, expected {dtype}.")
    return make_tensor("CollectiveBcastSend", [t], dtype, name="CollectiveBcastSend",
                       attrs=_attrs(group_size, group_key, instance_key, communication_hint,
                                    timeout, T=dtype, shape=shape))


def broadcast_recv(shape, dtype, group_size, group_key, instance_key,
                   communication_hint="auto", timeout=0):
    """The tensor the group's broadcast_send sends."""
    _check_group_size(group_size, 2, "broadcast_send")   # sic, as TensorFlow's
    dtype = _dtypes.as_dtype(dtype)
    return make_tensor("CollectiveBcastRecv", [], dtype, name="CollectiveBcastRecv",
                       graph=get_default_graph(),
                       attrs=_attrs(group_size, group_key, instance_key, communication_hint,
                                    timeout, T=dtype, shape=as_shape(shape)))
