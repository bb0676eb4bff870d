"""Graph-construction shape errors: their class and whole message, which names the failing
node as TensorFlow summarizes it ('{{node add}} = AddV2[T=DT_FLOAT](a, b)': op type, attrs
sorted with TensorFlow's value formats, inputs with control inputs) and the input shapes.

Every input is a placeholder or variable named here, so the messages do not depend on how
builders name the constants they make."""

import numpy as np

CASES = {}


def _ph(tf, shape, name, dtype="float32"):
    return tf.placeholder(getattr(tf, dtype), shape, name=name)


def _building(build):
    """A case: the error `build(tf)` raises while building (or its outputs' shapes)."""
    def case(tf):
        out = build(tf)
        return [t.get_shape() for t in (out if isinstance(out, (list, tuple)) else [out])]
    return case


# -- binary element-wise ops with shapes that do not broadcast: each op type and dtype --

_BINARY = {
    "add": ("add", "float32"), "subtract": ("subtract", "float64"),
    "multiply": ("multiply", "int32"), "divide": ("div", "float32"),
    "realdiv": ("realdiv", "float64"), "floordiv": ("floordiv", "int64"),
    "floormod": ("floormod", "int32"), "truncatediv": ("truncatediv", "int32"),
    "truncatemod": ("truncatemod", "int64"), "pow": ("pow", "float32"),
    "maximum": ("maximum", "float32"), "minimum": ("minimum", "int64"),
    "squared_difference": ("squared_difference", "float64"),
    "equal": ("equal", "int32"), "not_equal": ("not_equal", "float32"),
    "less": ("less", "float32"), "less_equal": ("less_equal", "int64"),
    "greater": ("greater", "float64"), "greater_equal": ("greater_equal", "int32"),
    "logical_and": ("logical_and", "bool"), "logical_or": ("logical_or", "bool"),
}


def _binary(fn, dtype):
    return _building(lambda tf: getattr(tf, fn)(_ph(tf, [2], "a", dtype),
                                                _ph(tf, [3], "b", dtype)))


for _name, (_fn, _dtype) in _BINARY.items():
    CASES[f"shape_errors_binary_{_name}"] = _binary(_fn, _dtype)

# The Python operators name their ops after the operator, not the op type.
for _name, _op in {"plus": lambda a, b: a + b, "minus": lambda a, b: a - b,
                   "times": lambda a, b: a * b, "over": lambda a, b: a / b,
                   "below": lambda a, b: a < b}.items():
    CASES[f"shape_errors_operator_{_name}"] = _building(
        lambda tf, op=_op: op(_ph(tf, [2, 3], "x"), _ph(tf, [4, 5], "y")))


# -- where the node stands: names, scopes, control inputs, devices ----------------------

def _named(tf):
    return tf.add(_ph(tf, [2], "a"), _ph(tf, [3], "b"), name="my_sum")


def _in_scope(tf):
    a, b = _ph(tf, [2], "a"), _ph(tf, [3], "b")
    with tf.name_scope("outer"), tf.name_scope("inner"):
        return tf.maximum(a, b)


def _second_of_its_name(tf):
    a, b = _ph(tf, [2], "a"), _ph(tf, [3], "b")
    tf.add(a, a)
    return tf.add(a, b)


def _with_control_inputs(tf):
    a, b, c, d = _ph(tf, [2], "a"), _ph(tf, [3], "b"), _ph(tf, [], "c"), _ph(tf, [], "d")
    with tf.control_dependencies([c, d.op]):
        return tf.add(a, b)


def _with_a_control_input_that_is_also_an_input(tf):
    a, b = _ph(tf, [2], "a"), _ph(tf, [3], "b")
    with tf.control_dependencies([a]):
        return tf.add(a, b)


def _on_a_device(tf):
    a, b = _ph(tf, [2], "a"), _ph(tf, [3], "b")
    with tf.device("/job:worker/task:0/cpu:0"):
        return tf.add(a, b)


def _colocated(tf):
    a, b = _ph(tf, [2], "a"), _ph(tf, [3], "b")
    with tf.colocate_with(a):
        return tf.add(a, b)


def _second_output(tf):
    parts = tf.split(_ph(tf, [4], "a"), 2)
    return tf.add(parts[1], _ph(tf, [3], "b"))


for _fn in (_named, _in_scope, _second_of_its_name, _with_control_inputs,
            _with_a_control_input_that_is_also_an_input, _on_a_device, _colocated,
            _second_output):
    CASES[f"shape_errors_node{_fn.__name__}"] = _building(_fn)


# -- matmul: its bool attrs, each transpose ----------------------------------------------

for _ta, _tb in ((False, False), (True, False), (False, True), (True, True)):
    CASES[f"shape_errors_matmul_transpose_{int(_ta)}{int(_tb)}"] = _building(
        lambda tf, ta=_ta, tb=_tb: tf.matmul(_ph(tf, [2, 3], "a"), _ph(tf, [4, 5], "b"),
                                             transpose_a=ta, transpose_b=tb))

CASES["shape_errors_matmul_unknown_dims"] = _building(
    lambda tf: tf.matmul(_ph(tf, [None, 3], "a"), _ph(tf, [2, None], "b")))


# -- list and type attrs -----------------------------------------------------------------

CASES["shape_errors_squeeze_dims"] = _building(
    lambda tf: tf.squeeze(_ph(tf, [2, 3], "a"), [0, 1]))
CASES["shape_errors_squeeze_negative_dim"] = _building(
    lambda tf: tf.squeeze(_ph(tf, [1, 3], "a", "int32"), [-1]))
CASES["shape_errors_concat_axis_tensor"] = _building(
    lambda tf: tf.concat([_ph(tf, [2, 3], "a"), _ph(tf, [2], "b")], _ph(tf, [], "axis", "int32")))


# -- ref ops on variables -------------------------------------------------------------

def _variable(tf):
    return tf.Variable(np.zeros([3, 2], np.float32), name="v")


for _kind in ("scatter_update", "scatter_add", "scatter_sub", "scatter_mul", "scatter_div",
              "scatter_max", "scatter_min"):
    CASES[f"shape_errors_{_kind}"] = _building(
        lambda tf, kind=_kind: getattr(tf, kind)(_variable(tf), _ph(tf, [2], "i", "int32"),
                                                 _ph(tf, [3], "u")))
CASES["shape_errors_scatter_update_unlocked"] = _building(
    lambda tf: tf.scatter_update(_variable(tf), _ph(tf, [2], "i", "int64"),
                                 _ph(tf, [2, 3], "u"), use_locking=False, name="upd"))


# -- queues check what is enqueued in Python, before any op ------------------------------

def _enqueue(tf):
    queue = tf.FIFOQueue(3, [tf.float32], shapes=[[2]], name="q")
    return queue.enqueue(_ph(tf, [3], "a")).outputs


def _enqueue_many(tf):
    queue = tf.PaddingFIFOQueue(3, [tf.int32, tf.float32], shapes=[[None], [2]], name="q")
    return queue.enqueue_many([_ph(tf, [4, 2], "a", "int32"), _ph(tf, [4, 3], "b")]).outputs


CASES["shape_errors_queue_enqueue"] = _enqueue
CASES["shape_errors_queue_enqueue_many"] = _enqueue_many


# -- string attrs ------------------------------------------------------------------------

for _format, _shapes in {"NHWC": ([2, 3], [4]), "NCHW": ([2, 3, 4, 5], [4]),
                         "rank": ([2, 3], [3, 1]), "value_rank": ([3], [3])}.items():
    CASES[f"shape_errors_bias_add_{_format}"] = _building(
        lambda tf, f=_format, s=_shapes: tf.nn.bias_add(
            _ph(tf, s[0], "value"), _ph(tf, s[1], "bias"),
            data_format="NCHW" if f == "NCHW" else None))
for _fn in ("softmax", "log_softmax"):
    CASES[f"shape_errors_{_fn}_scalar"] = _building(
        lambda tf, fn=_fn: getattr(tf.nn, fn)(_ph(tf, [], "logits")))
