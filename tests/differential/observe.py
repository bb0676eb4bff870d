"""What a differential case saw, as plain JSON, the same way in both interpreters.

A case is a function `case(tf)` written against TensorFlow 1's API. It runs once on
dtfnb (in pytest's process) and once on TensorFlow (in `tf_worker.py`, another
interpreter); `observe` turns what it returned, or the error it raised, into JSON so
that the two can be compared. This module imports neither dtfnb nor TensorFlow: both
interpreters load it, and the case modules use its helpers.
"""

import linecache
import os
import re
import socket
import struct
import zlib

import numpy as np

# TensorFlow 2.x puts a banner before every error a session raises, then where the
# failing node was defined (a Python traceback), and appends the node; none of it is
# part of what the op said.
_BANNER = "Graph execution error:\n\n"
_DEFINED_AT = re.compile(r"^Detected at node .*?\nNode: '[^'\n]*'\n", re.S)
_NODE_CONTEXT = re.compile(r"\n\t \[\[.*", re.S)


def error_message(err):
    message = getattr(err, "message", None) or str(err)
    if message.startswith(_BANNER):
        message = _DEFINED_AT.sub("", message[len(_BANNER):])
    return _NODE_CONTEXT.sub("", message).rstrip("\n")


def observe(case, tf):
    """Runs `case(tf)` in a fresh default graph; what it returned or raised, as JSON."""
    tf.reset_default_graph()
    try:
        return {"returned": canonical(case(tf))}
    except Exception as err:  # the error is what is compared
        return {"raised": type(err).__name__, "message": error_message(err),
                **_case_code(err)}
    finally:
        tf.reset_default_graph()


def _case_code(err):
    """{"in_case": "cases_x.py:12"} when the case's own code raised `err` by accident: its
    innermost frame is in a case module, not in the library under test, at a line that
    is not a `raise` (a case may raise on purpose, for a Coordinator to catch). Raised
    on both sides, such an error is a bug in the case, which would compare equal."""
    tb = err.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return {}
    path = tb.tb_frame.f_code.co_filename
    name = os.path.basename(path)
    if not name.startswith("cases_") or \
            linecache.getline(path, tb.tb_lineno).lstrip().startswith("raise"):
        return {}
    return {"in_case": f"{name}:{tb.tb_lineno}"}


def canonical(value):
    """JSON for a value a case returns: arrays, numbers, strings, dtypes, shapes, graph
    elements, errors and nests of them, each tagged with its kind."""
    if isinstance(value, np.ndarray):
        return {"array": str(value.dtype), "shape": list(value.shape),
                "values": [canonical(v) for v in value.ravel().tolist()]
                if value.dtype == object else _plain(value.ravel().tolist())}
    if isinstance(value, np.generic):
        return {"scalar": str(value.dtype), "value": _plain(value.item())}
    if isinstance(value, (bool, int, float, str)) or value is None:
        return _plain(value)
    if isinstance(value, bytes):
        return {"bytes": value.decode("latin-1")}
    if isinstance(value, BaseException):
        return {"error": type(value).__name__, "message": error_message(value),
                **_case_code(value)}
    if isinstance(value, dict):
        return {"dict": [[canonical(k), canonical(v)] for k, v in
                         sorted(value.items(), key=lambda kv: repr(kv[0]))]}
    if isinstance(value, (list, tuple)):
        kind = type(value).__name__
        return {kind if kind in ("list", "tuple") else "namedtuple:" + kind:
                [canonical(v) for v in value]}
    kind = type(value).__name__
    if kind == "DType":
        return {"dtype": value.name}
    if kind in ("TensorShape", "TensorShapeV1"):
        return {"shape": value.as_list() if value.dims is not None else None}
    if kind in ("Tensor", "SymbolicTensor"):
        return {"tensor": value.name, "dtype": value.dtype.name,
                "shape": canonical(value.get_shape())}
    if kind == "TensorShapeProto":
        return {"shape": None if value.unknown_rank else [d.size for d in value.dim]}
    if kind == "Operation":
        return {"operation": value.name, "type": value.type}
    raise TypeError(f"a differential case returned {kind}: return plain values instead")


def _plain(value):
    if isinstance(value, float) and value != value:
        return {"float": "nan"}
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return {"float": str(value)}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, bytes):
        return {"bytes": value.decode("latin-1")}
    return value


# Helpers for the cases ------------------------------------------------------------


def run(tf, fetches, feed_dict=None, timeout_ms=None, config=None):
    """One `Session.run` in a new session; a timeout makes a blocking op fail fast."""
    options = tf.RunOptions(timeout_in_ms=timeout_ms) if timeout_ms else None
    with tf.Session(config=config) as sess:
        return sess.run(fetches, feed_dict=feed_dict, options=options)


def drain(tf, sess, fetch, limit=20):
    """`sess.run(fetch)` until OutOfRangeError (then "end"), at most `limit` times: the
    elements an iterator gives."""
    values = []
    try:
        for _ in range(limit):
            values.append(sess.run(fetch))
    except tf.errors.OutOfRangeError:
        values.append("end")
    return values


def optimizers(tf):
    """The optimizers the training cases run, by name: a factory each."""
    return {
        "sgd": lambda: tf.train.GradientDescentOptimizer(0.1),
        "momentum": lambda: tf.train.MomentumOptimizer(0.05, 0.9),
        "nesterov": lambda: tf.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True),
        "adam": lambda: tf.train.AdamOptimizer(0.05),
        "rmsprop": lambda: tf.train.RMSPropOptimizer(0.05),
        "rmsprop_centered": lambda: tf.train.RMSPropOptimizer(0.05, momentum=0.5,
                                                              centered=True),
        "adagrad": lambda: tf.train.AdagradOptimizer(0.1),
        "adadelta": lambda: tf.train.AdadeltaOptimizer(1.0),
        "proximal_sgd": lambda: tf.train.ProximalGradientDescentOptimizer(
            0.1, l1_regularization_strength=0.01, l2_regularization_strength=0.02),
        "proximal_sgd_l2": lambda: tf.train.ProximalGradientDescentOptimizer(
            0.1, l2_regularization_strength=0.02),
        "proximal_adagrad": lambda: tf.train.ProximalAdagradOptimizer(
            0.1, l1_regularization_strength=0.01, l2_regularization_strength=0.02),
        "proximal_adagrad_plain": lambda: tf.train.ProximalAdagradOptimizer(0.1),
    }


def outcome(fn, *args, **kwargs):
    """fn's result, or the error it raised, as a value a case can return among others."""
    try:
        return fn(*args, **kwargs)
    except Exception as err:  # the error is what is compared
        return err


def node_defs(graph, skip=()):
    """Every op of a graph as TensorFlow's NodeDef shows it: name, type, device, inputs
    and attrs (values through `get_attr`)."""
    return [{"name": op.name, "type": op.type, "device": op.node_def.device,
             "inputs": list(op.node_def.input),
             "attrs": {name: _attr(op, name) for name in sorted(op.node_def.attr)}}
            for op in graph.get_operations() if op.name not in skip]


def _attr(op, name):
    value = op.get_attr(name)
    kind = type(value).__name__
    if kind == "TensorProto" or kind.endswith("AttrValue") or kind == "NameAttrList":
        return kind
    return canonical(value)


def step_stats(tf, sess, fetches, feed_dict=None):
    """The StepStats of one FULL_TRACE run of `fetches`."""
    metadata = tf.RunMetadata()
    sess.run(fetches, feed_dict=feed_dict, run_metadata=metadata,
             options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE))
    return metadata.step_stats


def placed(tf, sess, fetches, feed_dict=None):
    """Where each node of the graph ran in one traced step: {node: device} from the
    step stats, only for nodes of the graph (not the sends and receives a step adds)."""
    names = {op.name for op in sess.graph.get_operations()}
    devices = {}
    for dev in step_stats(tf, sess, fetches, feed_dict).dev_stats:
        for node in dev.node_stats:
            name = node.node_name.split(":")[0]
            if name in names:
                devices[name] = dev.device
    return devices


def summary_values(tf, serialized):
    """A serialized `Summary` as plain values, one dict per `Summary.Value`: its tag,
    metadata and content, numbers exact (float.hex), an image as its decoded pixels, audio
    as its WAV header and 16-bit samples, a tensor as its TensorProto's fields."""
    return [_summary_value(value) for value in tf.summary.Summary.FromString(serialized).value]


def _summary_value(value):
    kind = value.WhichOneof("value")
    metadata = value.metadata
    seen = {"tag": value.tag, "node_name": value.node_name, "kind": kind,
            "metadata": [metadata.plugin_data.plugin_name, metadata.plugin_data.content,
                         metadata.display_name, metadata.summary_description]}
    content = getattr(value, kind) if kind else None
    if kind == "simple_value":
        seen[kind] = content.hex()
    elif kind == "histo":
        seen[kind] = {field: [v.hex() for v in getattr(content, field)]
                      if field.startswith("bucket") else getattr(content, field).hex()
                      for field in ("min", "max", "num", "sum", "sum_squares", "bucket_limit",
                                    "bucket")}
    elif kind == "image":
        seen[kind] = [content.height, content.width, content.colorspace,
                      png_pixels(content.encoded_image_string).tolist()]
    elif kind == "audio":
        wav = content.encoded_audio_string
        seen[kind] = [content.sample_rate.hex(), content.num_channels, content.length_frames,
                      content.content_type, wav[:44],
                      np.frombuffer(wav[44:], "<i2").tolist()]
    elif kind == "tensor":
        seen[kind] = [content.dtype, [d.size for d in content.tensor_shape.dim],
                      content.tensor_content, list(content.string_val)]
    return seen


def png_pixels(png):
    """The pixels of an 8-bit, non-interlaced PNG as a [height, width, channels] uint8
    array: its IDAT chunks inflated and each row's filter (PNG's five) undone."""
    at, data = 8, b""
    while at < len(png):
        length, kind = struct.unpack(">I4s", png[at:at + 8])
        body = png[at + 8:at + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            data += body
        at += 12 + length
    assert depth == 8 and interlace == 0, (depth, interlace)
    channels = {0: 1, 4: 2, 2: 3, 6: 4}[color]
    raw, stride = zlib.decompress(data), width * channels
    rows, above = [], [0] * stride
    for y in range(height):
        line = raw[y * (stride + 1):(y + 1) * (stride + 1)]
        kind, row = line[0], list(line[1:])
        for i in range(stride):
            a = row[i - channels] if i >= channels else 0
            b, c = above[i], above[i - channels] if i >= channels else 0
            if kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                predicted = a if pa <= pb and pa <= pc else b if pb <= pc else c
            else:
                predicted = (0, a, b, (a + b) // 2)[kind]
            row[i] = (row[i] + predicted) % 256
        rows.append(row)
        above = row
    return np.array(rows, np.uint8).reshape(height, width, channels)


# In-process servers, started once per interpreter and cluster shape: TensorFlow's cannot
# be stopped, so both sides keep theirs until the process exits.
_clusters = {}
cluster_uses = []  # one entry per call, so that a test knows it ran on such servers


def cluster(tf, ps=1, workers=2):
    """{"ps": [server, ...], "worker": [server, ...]}: in-process tf.train.Servers on free
    127.0.0.1 ports, shared by the cases that ask for the same shape. The default
    resource container of every task is emptied first, so that a case finds no
    variable or queue of an earlier one."""
    key = (ps, workers)
    cluster_uses.append(key)
    if key not in _clusters:
        addresses = _free_addresses(ps + workers)
        spec = {"ps": addresses[:ps], "worker": addresses[ps:]}
        _clusters[key] = {job: [tf.train.Server(tf.train.ClusterSpec(spec), job, task)
                                for task in range(len(spec[job]))]
                          for job in spec}
    servers = _clusters[key]
    tf.Session.reset(servers["worker"][0].target)
    return servers


def _free_addresses(count):
    probes = [socket.socket() for _ in range(count)]
    try:
        for probe in probes:  # held open together, so that no two get the same port
            probe.bind(("127.0.0.1", 0))
        return [f"127.0.0.1:{probe.getsockname()[1]}" for probe in probes]
    finally:
        for probe in probes:
            probe.close()
