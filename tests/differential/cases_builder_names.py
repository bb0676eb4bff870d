"""Op builders given Python values for their inputs (an axis, a shape, multiples,
paddings, perm, a fill value, reduction indices...): TensorFlow converts each inside the
op's name scope under the input's name (`s/reduction_indices`, `Tile/multiples`), so the
graph's nodes are the same by name, type, inputs and attrs."""

from observe import node_defs

CASES = {}


def _graph_case(build):
    """A case: the NodeDefs of a fresh graph holding `x` (2x3 float32), `i` (int32 [3]) and
    what `build(tf, x, i)` adds."""
    def run_case(tf):
        with tf.Graph().as_default() as graph:
            x = tf.placeholder(tf.float32, [2, 3], name="x")
            i = tf.placeholder(tf.int32, [3], name="i")
            build(tf, x, i)
        return node_defs(graph)
    return run_case


_BUILDERS = {
    # reductions and argmax/argmin, with and without a name
    "reduce_sum_axis": lambda tf, x, i: tf.reduce_sum(x, 1),
    "reduce_sum_named": lambda tf, x, i: tf.reduce_sum(x, 1, name="s"),
    "reduce_sum_all": lambda tf, x, i: tf.reduce_sum(x),
    "reduce_sum_keepdims": lambda tf, x, i: tf.reduce_sum(x, [0, 1], keepdims=True),
    "reduce_mean_axis": lambda tf, x, i: tf.reduce_mean(x, 0),
    "reduce_mean_all": lambda tf, x, i: tf.reduce_mean(x),
    "reduce_max_axis": lambda tf, x, i: tf.reduce_max(x, 1),
    "reduce_min_all": lambda tf, x, i: tf.reduce_min(x),
    "reduce_prod_axis": lambda tf, x, i: tf.reduce_prod(x, -1),
    "reduce_all": lambda tf, x, i: tf.reduce_all(x > 0, 1),
    "reduce_any": lambda tf, x, i: tf.reduce_any(x > 0),
    "argmax": lambda tf, x, i: tf.argmax(x, 1),
    "argmax_named": lambda tf, x, i: tf.argmax(x, 0, name="am"),
    "argmin": lambda tf, x, i: tf.argmin(x, 1),
    "argmax_default_axis": lambda tf, x, i: tf.argmax(x),
    # shapes, tiles, pads, transposes
    "reshape": lambda tf, x, i: tf.reshape(x, [3, 2]),
    "tile": lambda tf, x, i: tf.tile(x, [2, 1]),
    "tile_named": lambda tf, x, i: tf.tile(x, [1, 2], name="t"),
    "pad": lambda tf, x, i: tf.pad(x, [[1, 0], [0, 1]]),
    "pad_constant_value": lambda tf, x, i: tf.pad(x, [[1, 0], [0, 1]], constant_values=2.0),
    "pad_reflect": lambda tf, x, i: tf.pad(x, [[1, 0], [0, 1]], mode="REFLECT"),
    "transpose_perm": lambda tf, x, i: tf.transpose(x, [1, 0]),
    "transpose_default": lambda tf, x, i: tf.transpose(x),
    "transpose_named": lambda tf, x, i: tf.transpose(x, [1, 0], name="tr"),
    "expand_dims": lambda tf, x, i: tf.expand_dims(x, 1),
    "squeeze": lambda tf, x, i: tf.squeeze(tf.expand_dims(x, 0)),
    "broadcast_to": lambda tf, x, i: tf.broadcast_to(x, [4, 2, 3]),
    # joining and splitting
    "concat": lambda tf, x, i: tf.concat([x, x], 1),
    "concat_named": lambda tf, x, i: tf.concat([x, x], 0, name="c"),
    "concat_one": lambda tf, x, i: tf.concat([x], 0),
    "stack": lambda tf, x, i: tf.stack([x, x], 1),
    "unstack": lambda tf, x, i: tf.unstack(x, axis=1),
    "split_count": lambda tf, x, i: tf.split(x, 3, 1),
    "split_sizes": lambda tf, x, i: tf.split(x, [1, 2], 1),
    "split_named": lambda tf, x, i: tf.split(x, 2, 0, name="sp"),
    # filling
    "fill": lambda tf, x, i: tf.fill([2, 3], 1.5),
    "fill_named": lambda tf, x, i: tf.fill([2], 7, name="f"),
    "zeros": lambda tf, x, i: tf.zeros([2, 3]),
    "zeros_large": lambda tf, x, i: tf.zeros([40, 40]),
    "ones": lambda tf, x, i: tf.ones([2, 3], tf.int32),
    "ones_large": lambda tf, x, i: tf.ones([40, 40]),
    "zeros_like": lambda tf, x, i: tf.zeros_like(x),
    "ones_like": lambda tf, x, i: tf.ones_like(x),
    "zeros_like_named": lambda tf, x, i: tf.zeros_like(x, name="z"),
    "ones_like_int": lambda tf, x, i: tf.ones_like(i),
    "one_hot": lambda tf, x, i: tf.one_hot(i, 4),
    "one_hot_values": lambda tf, x, i: tf.one_hot(i, 4, on_value=5.0, off_value=-1.0),
    "range": lambda tf, x, i: tf.range(5),
    "range_start": lambda tf, x, i: tf.range(1, 7, 2),
    # slicing and gathering
    "slice": lambda tf, x, i: tf.slice(x, [0, 1], [2, 2]),
    "strided_slice": lambda tf, x, i: tf.strided_slice(x, [0, 1], [2, 3], [1, 1]),
    "getitem": lambda tf, x, i: x[0, 1:],
    "gather": lambda tf, x, i: tf.gather(x, [1, 0]),
    "gather_axis": lambda tf, x, i: tf.gather(x, [2, 0], axis=1),
    # math with Python operands
    "clip_by_value": lambda tf, x, i: tf.clip_by_value(x, 0.0, 1.0),
    "maximum_python": lambda tf, x, i: tf.maximum(x, 0.0),
    "add_n": lambda tf, x, i: tf.add_n([x, x]),
    "matmul_transpose": lambda tf, x, i: tf.matmul(x, x, transpose_b=True),
    # random
    "random_uniform": lambda tf, x, i: tf.random_uniform([2, 3], seed=1),
    "random_uniform_range": lambda tf, x, i: tf.random_uniform([2], 1.0, 3.0, seed=1),
    "random_uniform_int": lambda tf, x, i: tf.random_uniform([2], 0, 9, tf.int32, seed=1),
    "random_normal": lambda tf, x, i: tf.random_normal([2, 3], seed=1),
    "random_normal_params": lambda tf, x, i: tf.random_normal([2], 1.0, 2.0, seed=1),
    "truncated_normal": lambda tf, x, i: tf.truncated_normal([2, 3], seed=1),
    "random_shuffle": lambda tf, x, i: tf.random_shuffle(x, seed=1),
    # nn
    "softmax": lambda tf, x, i: tf.nn.softmax(x),
    "log_softmax": lambda tf, x, i: tf.nn.log_softmax(x),
    "relu6": lambda tf, x, i: tf.nn.relu6(x),
    "leaky_relu": lambda tf, x, i: tf.nn.leaky_relu(x),
    "bias_add": lambda tf, x, i: tf.nn.bias_add(x, [1.0, 2.0, 3.0]),
    "in_top_k": lambda tf, x, i: tf.nn.in_top_k(x, i[:2], 1),
}

for _name, _build in _BUILDERS.items():
    CASES[_name] = _graph_case(_build)


# -- variables and their initializers, as get_variable builds them --------------------

_INITIALIZERS = {
    "zeros": lambda tf: tf.zeros_initializer(),
    "ones": lambda tf: tf.ones_initializer(),
    "constant": lambda tf: tf.constant_initializer(0.5),
    "random_uniform": lambda tf: tf.random_uniform_initializer(-1.0, 1.0, seed=1),
    "random_normal": lambda tf: tf.random_normal_initializer(seed=1),
    "truncated_normal": lambda tf: tf.truncated_normal_initializer(seed=1),
    "glorot_uniform": lambda tf: tf.glorot_uniform_initializer(seed=1),
    "variance_scaling": lambda tf: tf.variance_scaling_initializer(seed=1),
}


def _variable_case(initializer, shape):
    def run_case(tf):
        with tf.Graph().as_default() as graph:
            tf.get_variable("v", shape, initializer=initializer(tf))
        return node_defs(graph)
    return run_case


for _name, _initializer in _INITIALIZERS.items():
    CASES[f"get_variable_{_name}"] = _variable_case(_initializer, [2, 3])
CASES["get_variable_zeros_large"] = _variable_case(_INITIALIZERS["zeros"], [40, 40])
CASES["get_variable_default_initializer"] = _variable_case(lambda tf: None, [2, 3])
