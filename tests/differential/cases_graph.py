"""The graph API: the ops Python operators and builders make (types, names, attrs, dtypes),
conversions of Python values and their errors, Operation and Graph accessors."""

import operator

import numpy as np
from observe import node_defs, outcome, run

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


# -- Python operators: op type, name, dtype and value, per operand kind ---------------

_OPERATORS = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul,
    "truediv": operator.truediv, "floordiv": operator.floordiv, "mod": operator.mod,
    "pow": operator.pow, "lt": operator.lt, "le": operator.le, "gt": operator.gt,
    "ge": operator.ge}
_OPERANDS = {
    "float32": lambda tf: (tf.constant([7.0, -7.5]), tf.constant([2.0, 2.0])),
    "int32": lambda tf: (tf.constant([7, -7]), tf.constant([2, 2])),
    "int64": lambda tf: (tf.constant([7, -7], tf.int64), tf.constant([2, 3], tf.int64)),
    "float_and_python": lambda tf: (tf.constant([7.0, -7.5]), 2),
    "python_and_int": lambda tf: (3, tf.constant([2, 4])),
}


def _operator_case(fn, operands):
    def run_case(tf):
        x, y = operands(tf)
        z = fn(x, y)
        return z.op.type, z.op.name, z, [t.op.type for t in z.op.inputs], run(tf, z)
    return run_case


for _op_name, _fn in _OPERATORS.items():
    for _kind, _operands in _OPERANDS.items():
        CASES[f"operator_{_op_name}_{_kind}"] = _operator_case(_fn, _operands)


def _logical_case(fn):
    def run_case(tf):
        x, y = tf.constant([True, True, False]), tf.constant([True, False, False])
        z = fn(x, y)
        return z.op.type, z.op.name, run(tf, z), node_defs(tf.get_default_graph())
    return run_case


for _op_name, _fn in {"and": operator.and_, "or": operator.or_, "xor": operator.xor}.items():
    CASES[f"operator_{_op_name}_bool"] = _logical_case(_fn)


@case
def constant_of_empty_shape(tf):
    empty = [tf.zeros([0, 2], tf.int32), tf.ones([3, 0]), tf.constant(7, shape=[0]),
             tf.constant([1, 2], shape=[2, 0]), tf.constant(["a"], shape=[0, 1])]
    return empty, run(tf, empty)


@case
def operator_unary(tf):
    x = tf.constant([1.5, -2.0])
    b = tf.constant([True, False])
    ops = [-x, abs(x), ~b, x[1], x[::-1]]
    return [(t.op.type, t.op.name) for t in ops], run(tf, ops)


@case
def operator_matmul(tf):
    a = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    c = a @ a
    return c.op.type, c.op.name, run(tf, c), node_defs(tf.get_default_graph())


@case
def operator_string_add(tf):
    s = tf.constant(["a", "b"]) + "c"
    return s.op.type, s.op.name, run(tf, s)


@case
def operator_numpy_left(tf):
    z = np.float32(2.0) * tf.constant([1.0, 2.0])
    return z.op.type, z.op.name, run(tf, z)


@case
def operator_reflected_python_left(tf):
    z = 10 - tf.constant([1, 2])
    return [(op.type, op.name) for op in tf.get_default_graph().get_operations()], run(tf, z)


@case
def integer_division_semantics(tf):
    x = tf.constant([7, -7, 7, -7])
    y = tf.constant([2, 2, -2, -2])
    return run(tf, [x // y, x % y, tf.truncatediv(x, y), tf.truncatemod(x, y), x / y,
                    tf.div(x, y), tf.floordiv(x, y), tf.floormod(x, y)])


@case
def float_division_semantics(tf):
    x = tf.constant([7.5, -7.5, 1.0])
    y = tf.constant([2.0, 2.0, 0.0])
    return run(tf, [x // y, x % y, tf.truncatediv(x, y), tf.truncatemod(x, y), x / y,
                    tf.div(x, y), tf.realdiv(x, y)])


@case
def integer_division_by_zero(tf):
    return outcome(run, tf, tf.constant([1]) // tf.constant([0]))


@case
def builders_names(tf):
    a = tf.constant([1.0, 2.0])
    ops = [tf.add(a, a), tf.subtract(a, a), tf.multiply(a, a), tf.realdiv(a, a),
           tf.truediv(a, a), tf.divide(a, a), tf.floordiv(a, a), tf.mod(a, a),
           tf.floormod(a, a), tf.pow(a, a), tf.maximum(a, a), tf.minimum(a, a),
           tf.add_n([a, a]), tf.negative(a), tf.square(a), tf.squared_difference(a, a),
           tf.truncatediv(a, a), tf.div(a, a)]
    return [(t.op.type, t.op.name) for t in ops]


@case
def add_gradient_types(tf):
    a = tf.constant([1.0, 2.0])
    g = tf.gradients(a * a + a, a)[0]
    return run(tf, g), sorted({op.type for op in tf.get_default_graph().get_operations()})


# -- operand conversion errors -----------------------------------------------------

_MISMATCHES = {
    "float_plus_str": lambda tf: tf.constant([1.0]) + "x",
    "str_plus_float": lambda tf: "x" + tf.constant([1.0]),
    "float_times_int": lambda tf: tf.constant([1.0]) * tf.constant([1]),
    "int_minus_float": lambda tf: tf.constant([1]) - tf.constant([1.0]),
    "add_builder_str": lambda tf: tf.add(tf.constant([1.0]), "x"),
    "float_div_int": lambda tf: tf.constant([1.0]) / tf.constant([1]),
    "float_floordiv_int": lambda tf: tf.constant([1.0]) // tf.constant([1]),
    "int_plus_python_float": lambda tf: tf.constant([1]) + 1.5,
    "python_float_plus_int": lambda tf: 1.5 + tf.constant([1]),
    "float_plus_none": lambda tf: tf.constant([1.0]) + None,
    "matmul_types": lambda tf: tf.matmul(tf.constant([[1.0]]), tf.constant([[1]])),
    "less_types": lambda tf: tf.constant([1.0]) < tf.constant([1]),
    "maximum_types": lambda tf: tf.maximum(tf.constant([1.0]), tf.constant([1])),
    "mod_types": lambda tf: tf.constant([1.0]) % tf.constant([1]),
    "pow_types": lambda tf: tf.constant([1.0]) ** tf.constant([1]),
}
for _name, _build in _MISMATCHES.items():
    CASES[f"mismatch_{_name}"] = _build


# -- tf.constant: inference, casting and errors -------------------------------------

_CONSTANTS = {
    "str_as_float": (["x"], "float32"), "scalar_str_as_float": ("x", "float32"),
    "float_as_int": ([1.5], "int32"), "scalar_float_as_int": (1.5, "int32"),
    "wrapping_int32": (2 ** 40, "int32"), "negative_uint8": (-1, "uint8"),
    "mixed_list": ([1, "a"], "int32"), "ragged": ([[1], [2, 3]], "int32"),
    "numpy_float_as_int": (np.array([1.5, -2.5]), "int32"), "none": (None, "float32"),
    "ints_as_string": ([1, 2], "string"), "int_as_string": (3, "string"),
    "numpy_scalar_as_int64": (np.float64(1.5), "int64"), "bool_as_int": (True, "int32"),
    "int_as_bool": (1, "bool"), "floats": ([1.0, 2.0], None), "ints": ([1, 2], None),
    "big_ints": ([1, 2 ** 40], None), "strings": (["a", b"b"], None),
    "bools": ([True, False], None), "tuple_float": ((1, 2.5), "int32"),
    "int_as_float": ([1, 2], "float64"), "float16": ([0.5], "float16"),
    "empty": ([], None), "nested_empty": ([[], []], "int32"), "object": (object, None),
}


def _constant_case(value, dtype):
    def run_case(tf):
        c = tf.constant(value, dtype=dtype)
        return c, run(tf, c)
    return run_case


for _name, (_value, _dtype) in _CONSTANTS.items():
    CASES[f"constant_{_name}"] = _constant_case(_value, _dtype)


@case
def constant_broadcast_shape(tf):
    return run(tf, [tf.constant(3, shape=[2, 2]), tf.constant([1, 2, 3, 4], shape=[2, 2])])


@case
def constant_padded_to_shape(tf):
    return run(tf, [tf.constant([1, 2, 3], shape=[2, 2]), tf.constant([], tf.float32, [2]),
                    tf.constant(["a"], shape=[3]), tf.constant(np.array([1.5]), shape=[1, 2])])


@case
def constant_too_many_values(tf):
    return outcome(tf.constant, [1, 2, 3], shape=[2])


@case
def constant_verify_shape(tf):
    return outcome(tf.constant, [1, 2], shape=[2, 1], verify_shape=True)


@case
def convert_to_tensor_errors(tf):
    a = tf.constant([1.0])
    return [outcome(tf.convert_to_tensor, a, dtype=tf.int32),
            outcome(tf.convert_to_tensor, None),
            outcome(tf.convert_to_tensor, a.op),
            outcome(tf.convert_to_tensor, [1.5], dtype=tf.int64),
            tf.convert_to_tensor(2, preferred_dtype=tf.int64).dtype,
            tf.convert_to_tensor(2.5, preferred_dtype=tf.int64).dtype]


# -- Operation and Graph accessors --------------------------------------------------

@case
def get_attr_values(tf):
    p = tf.placeholder(tf.float32, [None, 2], name="p")
    q = tf.FIFOQueue(2, tf.float32, shared_name="sq", name="q")
    with tf.colocate_with(p):
        i = tf.identity(p)
    return [p.op.get_attr("dtype"), p.op.get_attr("shape"), q.queue_ref.op.get_attr("shared_name"),
            q.queue_ref.op.get_attr("container"), q.queue_ref.op.get_attr("capacity"),
            q.queue_ref.op.get_attr("component_types"), i.op.get_attr("_class"),
            outcome(p.op.get_attr, "nope")]


@case
def common_op_node_defs(tf):
    # the shape and axis operands are tensors: the names TensorFlow gives the constants it
    # makes of Python values ("r/shape") are not dtfnb's yet
    a = tf.constant([[1.0, 2.0]], name="a")
    p = tf.placeholder(tf.int32, [None], name="p")
    d = tf.placeholder_with_default(tf.constant(1.0), [], name="d")
    k = {n: tf.constant(v, name=n) for n, v in (("one", 1), ("zero", 0), ("two", [2]),
                                                 ("shape", [2, 1]), ("perm", [1, 0]))}
    tf.identity(a, name="i")
    tf.cast(p, tf.float32, name="c")
    tf.reshape(a, k["shape"], name="r")
    tf.reduce_sum(a, axis=k["one"], name="s")
    tf.reduce_max(a, axis=k["one"], keepdims=True, name="mx")
    tf.concat([a, a], k["zero"], name="cc")
    tf.stack([p, p], name="st")
    tf.unstack(a, axis=1, name="us")
    tf.matmul(a, a, transpose_b=True, name="mm")
    tf.nn.relu(a, name="relu")
    tf.argmax(a, k["one"], name="am")
    tf.fill(k["two"], d, name="f")
    tf.transpose(a, k["perm"], name="t")
    tf.expand_dims(p, k["zero"], name="e")
    tf.shape(a, name="sh")
    tf.size(a, name="sz")
    tf.rank(a, name="rk")
    tf.squeeze(a, name="sq")
    tf.zeros_like(a, name="zl")
    tf.add_n([a, a], name="an")
    tf.sigmoid(a, name="sg")
    tf.tanh(a, name="th")
    tf.sqrt(a, name="sr")
    tf.exp(a, name="ex")
    tf.log(a, name="lg")
    tf.equal(a, a, name="eq")
    tf.where(tf.equal(a, a), a, a, name="wh")
    tf.stop_gradient(a, name="sgr")
    tf.no_op(name="n")
    return node_defs(tf.get_default_graph())


@case
def operation_accessors(tf):
    a = tf.constant(1.0, name="a")
    b = tf.identity(a, name="b")
    with tf.control_dependencies([b.op]):
        c = tf.identity(a, name="c")
    return [c.op.name, c.op.type, list(c.op.inputs), c.op.control_inputs, c.op.outputs,
            b.consumers(), a.op.values(), c.op.node_def.input[:], str(a.op.node_def.device),
            c.value_index, c.op.graph is tf.get_default_graph()]


@case
def graph_lookups(tf):
    a = tf.constant(1.0, name="a")
    g = tf.get_default_graph()
    return [g.as_graph_element("a"), g.as_graph_element("a:0"), g.as_graph_element(a),
            outcome(g.as_graph_element, "a:1"), outcome(g.as_graph_element, "b"),
            outcome(g.as_graph_element, "b:0"), outcome(g.as_graph_element, 3),
            outcome(g.as_graph_element, "a", allow_operation=False),
            outcome(g.as_graph_element, "a:0", allow_tensor=False),
            outcome(g.get_tensor_by_name, "a"), outcome(g.get_operation_by_name, "a:0"),
            outcome(g.get_operation_by_name, "zz"), outcome(g.get_tensor_by_name, "zz:0")]


@case
def unique_names(tf):
    names = [tf.constant(1, name="x").op.name for _ in range(3)]
    with tf.name_scope("s"):
        names.append(tf.constant(1, name="x").op.name)
        names.append(tf.constant(1).op.name)
    with tf.name_scope("s"):
        names.append(tf.constant(1).op.name)
    g = tf.get_default_graph()
    names += [g.unique_name("x"), g.unique_name("x", mark_as_used=False),
              g.get_name_scope()]
    return names


@case
def graph_version_and_finalize(tf):
    g = tf.Graph()
    with g.as_default():
        tf.constant(1)
        tf.constant(2)
        g.finalize()
        error = outcome(tf.constant, 3)
    return g.version, g.finalized, error


@case
def version(tf):
    return tf.__version__, tf.VERSION


@case
def name_scope_per_thread(tf):
    import threading

    g = tf.get_default_graph()
    built = []
    with g.name_scope("outer"), g.device("/cpu:0"):
        def build():
            with g.as_default():
                t = tf.constant(1.0, name="t")
                built.append((t.op.name, t.device))

        worker = threading.Thread(target=build)
        worker.start()
        worker.join()
        here = tf.constant(1.0, name="here")
    return built, here.op.name, here.device


@case
def reshape_with_zero_sizes(tf):
    """A -1 beside a 0: TensorFlow infers it from the non-zero sizes."""
    x = tf.placeholder(tf.float32, name="x")
    shape = tf.placeholder(tf.int32, name="shape")
    out = tf.reshape(x, shape)
    return [outcome(run, tf, out, {x: np.zeros(dims, np.float32), shape: sizes}) for
            dims, sizes in [((0, 0), [-1, 0]), ((2, 0), [-1, 0]), ((0,), [-1, 0]),
                            ((3, 0), [0, -1]), ((0, 5), [-1, 0]), ((0, 5), [-1, 5]),
                            ((4, 0), [2, -1, 0]), ((0,), [-1]), ((6,), [0, -1]),
                            ((5,), [-1, 2])]]



def _static_reshape(tf, dims, sizes):
    x = tf.placeholder(tf.float32, dims, name="x")
    out = tf.reshape(x, sizes)
    return out.shape.as_list() if out.shape.ndims is not None else None


@case
def reshape_static_shapes(tf):
    """What the graph knows of a reshape's result, or its build error: a known 0 makes
    the count of elements 0 however many dims are unknown; -1 is worked out from a known
    count; counts that cannot match fail, with the target as TensorFlow read it."""
    return [outcome(_static_reshape, tf, dims, sizes) for dims, sizes in [
        ((0, 0), [-1, 0]), ((None, 0), [-1, 0]), ((0,), [-1, 0]), ((2, 0), [0, -1]),
        ((None, 3), [-1, 0]), ((None,), [2, -1]), ((0, 3), [-1, 3]), ((4, 0), [-1, 5, 0]),
        ((None, 0), [5, -1]), ((5,), [2, -1]), ((6,), [4]), ((None, 5), [3, 4]),
        ((None, 5), [2, 5]), ((6,), [-1, -1]), ((None, None), [-1, 3]), ((6,), [2, 3]),
        ((6,), [-1, 4]), ((2, 3), [-1]), (None, [-1, 2]), ((3, None), [-1])]]



@case
def static_values_of_ranges_fills_unstacks_splits_and_comparisons(tf):
    """The values graph builders read at build (TensorFlow's Python constant_value): a
    range, a fill, an unstacked row, a split, a comparison of constants; each decides a
    static shape here."""
    x = tf.placeholder(tf.float32, [None, 3, 4], name="x")
    row = tf.unstack(tf.constant([[2, 3], [4, 5]]))[1]
    part = tf.split(tf.constant([5, 1, 2, 3]), 2)[0]
    same = tf.equal(tf.constant([1, 2]), [1, 3])
    shapes = [tf.reshape(x, tf.fill([2], 6)), tf.zeros(tf.range(1, 3)),
              tf.reduce_sum(x, tf.range(1, 3)), tf.ones(row),
              tf.tile(tf.zeros([2]), tf.fill([1], 3)),
              tf.reshape(tf.placeholder(tf.float32, [5]), part),
              tf.boolean_mask(tf.zeros([2, 3]), tf.not_equal(same, True))]
    return [t.shape.as_list() if t.shape.ndims is not None else None for t in shapes]

# -- tf.Assert: guarded by a cond unless its data are int32 or strings -----------------

@case
def assert_guard_graph(tf):
    x = tf.placeholder(tf.float32, [2], name="x")
    n = tf.placeholder(tf.int32, [], name="n")
    guarded = tf.Assert(tf.reduce_all(x > 0), [x, "hi"], name="check")
    alone = tf.Assert(n > 0, ["n", n], summarize=2, name="count")
    return (guarded.name, guarded.type, alone.name, alone.type,
            node_defs(tf.get_default_graph(), skip=("x", "n")))


@case
def assert_guard_at_run(tf):
    x = tf.placeholder(tf.float32, [None], name="x")
    check = tf.Assert(tf.reduce_all(x > 0), ["not positive:", x], summarize=2)
    with tf.control_dependencies([check]):
        doubled = tf.identity(x * 2)
    return [outcome(run, tf, doubled, {x: v}) for v in ([1.0, 2.5], [1.0, -2.0, 3.0], [])]

# -- tf.assert_equal: its ops, its error at build, its error at run -------------------

@case
def assert_equal_graph(tf):
    x = tf.placeholder(tf.int32, [2], name="x")
    y = tf.placeholder(tf.int32, name="y")
    check = tf.assert_equal(x, y, message="sizes", summarize=1, name="check")
    same = tf.assert_equal(x, x)
    return check.name, same.name, node_defs(tf.get_default_graph(), skip=("x", "y"))


@case
def assert_equal_known_and_different_fails_at_build(tf):
    return tf.assert_equal([1, 2], tf.constant([1, 3]))


@case
def assert_equal_known_and_equal(tf):
    return tf.assert_equal(tf.constant([4, 5]), [4, 5]).type


@case
def assert_equal_at_run(tf):
    x = tf.placeholder(tf.int32, name="x")
    y = tf.placeholder(tf.int32, name="y")
    check = tf.assert_equal(x, y, message="sizes")
    with tf.control_dependencies([check]):
        total = tf.identity(x + y)
    return [outcome(run, tf, total, {x: a, y: b})
            for a, b in [([1, 2, 3, 4], [1, 2, 3, 4]), ([1, 2, 3, 4], [1, 2, 3, 5]),
                         (7, 7), ([1, 2], [1, 2, 3])]]


@case
def variables_whose_initial_values_read_other_variables(tf):
    """A variable's initial value that reads other variables is assigned through a copy
    of its ops reading their initialized_value() (a cond), so that initializing all
    variables at once works in any order; initialized_value() is that cond."""
    a = tf.Variable(1.0, name="a")
    b = tf.Variable(a * 2, name="b")
    c = tf.Variable(a.initialized_value() + 1, name="c")
    noise = tf.Variable(tf.random_normal([2], seed=1), name="noise")
    shifted = tf.Variable(noise + a, name="shifted")
    with tf.variable_scope("layer"):
        tf.get_variable("sum", initializer=b + c)
    graph = node_defs(tf.get_default_graph())
    values = [a, b, c, shifted]
    with tf.Session() as sess:
        sess.run(tf.variables_initializer([a, b, c, noise, shifted]))
        return graph, sess.run(values)


@case
def placeholders_and_empty_index_lists(tf):
    """A placeholder's shape attr, set even when its shape is unknown; an empty list
    given for an index input typed by an attr (Reshape's shape, Tile's multiples) first
    converts to a float32 constant, which the op refuses and TensorFlow's graph keeps
    beside the int32 one that replaces it; the gradient of a squared difference of
    operands of one known shape reduces nothing."""
    tf.placeholder(tf.float32)
    tf.placeholder(tf.int32, None, name="none")
    tf.placeholder(tf.float32, [None, 3], name="rows")
    scalar = tf.constant(3.0)
    built = [tf.reshape(scalar, []), tf.tile(scalar, []), tf.transpose(scalar, []),
             tf.fill([], 2.0), tf.broadcast_to(scalar, []), tf.reduce_sum(scalar, []),
             tf.pad(tf.constant([1.0]), [[1, 2]])]
    a, b = tf.constant([[1.0, 2.0]]), tf.constant([[4.0, 3.0]])
    grads = tf.gradients(tf.squared_difference(a, b), [a, b])
    return run(tf, built + grads), node_defs(tf.get_default_graph())


@case
def assigning_to_a_slice_of_a_variable(tf):
    """v[...].assign(x) (StridedSliceAssign, the value broadcast into the slice) and
    tf.assign of a slice; its graph, values, and a value that does not fit the slice."""
    v = tf.Variable(np.arange(12, dtype=np.float32).reshape(3, 4), name="v")
    updates = [v[0].assign([10.0, 11, 12, 13]), v[1:, ::2].assign(tf.zeros([2, 2])),
               v[:, 1].assign(tf.ones([3]) * 7, name="column"), v[-1, -1].assign(99.0),
               tf.assign(v[..., 0], [5.0, 6, 7])]
    wrong = v[0].assign([1.0, 2.0])
    with tf.Session() as sess:
        sess.run(v.initializer)
        values = [sess.run(update) for update in updates]
        failure = outcome(sess.run, wrong)
        final = sess.run(v)
    return (values, failure, final, [(u.name, u.dtype.name, u.shape.as_list())
                                     for u in updates], node_defs(tf.get_default_graph()))


@case
def comparison_and_sign_assertions(tf):
    """assert_less, _less_equal, _greater, _greater_equal, _none_equal and the sign tests
    (positive, negative, non-negative, non-positive): their graphs, messages with and
    without `message` and `data`, and their failures at build and at run."""
    x = tf.placeholder(tf.float32, [None], name="x")
    y = tf.placeholder(tf.float32, [None], name="y")
    checks = [tf.assert_less(x, y), tf.assert_less_equal(x, y, message="m"),
              tf.assert_greater(x, y, summarize=2), tf.assert_greater_equal(x, y, name="ge"),
              tf.assert_none_equal(x, y), tf.assert_positive(x), tf.assert_negative(x),
              tf.assert_non_negative(x, message="counts"), tf.assert_non_positive(x),
              tf.assert_positive(x, data=["own data", x], message="dropped")]
    feeds = [([1.0, 2.0], [3.0, 4.0]), ([-1.0, 0.0], [-1.0, 5.0]), ([2.0, 1.0], [1.0, 1.0])]
    with tf.Session() as sess:
        results = [[outcome(sess.run, check, {x: a, y: b}) for check in checks]
                   for a, b in feeds]
    at_build = [outcome(tf.assert_less, [1, 2], tf.constant([1, 3])),
                outcome(tf.assert_positive, tf.constant([1, 0])),
                outcome(tf.assert_non_positive, [-1, 2], message="signs"),
                outcome(tf.assert_none_equal, [1, 2], [2, 1]).type]
    return results, at_build, [c.name for c in checks], node_defs(tf.get_default_graph())


@case
def type_and_shape_assertions(tf):
    """assert_integer, assert_type (tensors and SparseTensors) and assert_scalar: no-ops or
    the tensor when they hold, TypeError or ValueError at once when not."""
    ints, floats = tf.constant([1, 2]), tf.constant([1.0])
    sparse = tf.SparseTensor([[0]], [1.5], [2])
    held = [tf.assert_integer(ints).name, tf.assert_type(floats, tf.float32).name,
            tf.assert_type(sparse, tf.float32, name="sparse_type").name,
            tf.assert_scalar(tf.constant(3)).name]
    failed = [outcome(tf.assert_integer, floats), outcome(tf.assert_integer, floats, "ids"),
              outcome(tf.assert_type, ints, tf.float32),
              outcome(tf.assert_type, sparse, tf.int64, message="values"),
              outcome(tf.assert_scalar, ints), outcome(tf.assert_scalar, [1.0], message="one")]
    return held, failed, node_defs(tf.get_default_graph())
