"""tf.variable_scope, tf.get_variable and the initializers, with TensorFlow 1's rules and errors."""

import os
import subprocess
import sys

import numpy as np
import pytest

import dtfnb as tf


def _init_and_run(*fetches):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(list(fetches))


# -- get_variable and reuse -----------------------------------------------------------------

def test_get_variable_names_shapes_and_collections():
    with tf.variable_scope("foo"):
        v = tf.get_variable("v", [3, 4])
        n = tf.get_variable("n", [2], dtype=tf.int32)
        frozen = tf.get_variable("frozen", [1], trainable=False)
    assert v.name == "foo/v:0" and v.op.name == "foo/v"
    assert v.shape.as_list() == [3, 4] and v.dtype.base_dtype == tf.float32
    assert n.dtype.base_dtype == tf.int32
    assert tf.trainable_variables() == [v, n]
    assert tf.global_variables() == [v, n, frozen]
    assert v.initializer.inputs[1].op.name.startswith("foo/v/Initializer/random_uniform")
    value, ints = _init_and_run(v, n)
    limit = np.sqrt(6 / (3 + 4))  # glorot uniform, the default for floats
    assert np.all(np.abs(value) <= limit) and value.std() > 0
    assert ints.tolist() == [0, 0]  # zeros, the default for integers


def test_creating_twice_is_an_error():
    with tf.variable_scope("foo"):
        tf.get_variable("v", [1])
    with pytest.raises(ValueError) as info:
        with tf.variable_scope("foo"):
            tf.get_variable("v", [1])
    assert str(info.value).startswith(
        "Variable foo/v already exists, disallowed. Did you mean to set reuse=True or "
        "reuse=tf.AUTO_REUSE in VarScope? Originally defined at:")
    assert "test_variable_scope.py" in str(info.value)


def test_reusing_a_missing_variable_is_an_error():
    with pytest.raises(ValueError, match=r"^Variable foo/w does not exist, or was not created "
                                         r"with tf.get_variable\(\). Did you mean to set "
                                         r"reuse=tf.AUTO_REUSE in VarScope\?$"):
        with tf.variable_scope("foo", reuse=True):
            tf.get_variable("w", [1])
    tf.Variable(1.0, name="plain")
    with pytest.raises(ValueError, match="Variable plain does not exist"):
        with tf.variable_scope("", reuse=True):
            tf.get_variable("plain")


def test_reuse_true_auto_reuse_and_reuse_variables():
    with tf.variable_scope("model"):
        v = tf.get_variable("v", [2])
    with tf.variable_scope("model", reuse=True):
        assert tf.get_variable("v", [2]) is v
        assert tf.get_variable("v") is v  # the shape may be left out
    with tf.variable_scope("model") as scope:
        scope.reuse_variables()
        assert scope.reuse is True
        assert tf.get_variable("v") is v
    for _ in range(2):
        with tf.variable_scope("auto", reuse=tf.AUTO_REUSE):
            w = tf.get_variable("w", [1])
    assert tf.get_variable_scope().reuse is False
    assert [x.name for x in tf.global_variables()] == ["model/v:0", "auto/w:0"]
    assert w.name == "auto/w:0"


def test_reuse_is_inherited_and_cannot_be_turned_off():
    with tf.variable_scope("a"):
        with tf.variable_scope("b"):
            v = tf.get_variable("v", [1])
    with tf.variable_scope("a", reuse=True):
        with tf.variable_scope("b", reuse=False) as inner:
            assert inner.reuse is True
            assert tf.get_variable("v") is v


def test_sharing_checks_shape_and_dtype():
    with tf.variable_scope("s"):
        tf.get_variable("v", [2, 3])
    with tf.variable_scope("s", reuse=True):
        with pytest.raises(ValueError, match=r"Trying to share variable s/v, but specified "
                                             r"shape \(3, 2\) and found shape \(2, 3\)."):
            tf.get_variable("v", [3, 2])
        with pytest.raises(ValueError, match="Trying to share variable s/v, but specified "
                                             "dtype int32 and found dtype float32."):
            tf.get_variable("v", [2, 3], dtype=tf.int32)


def test_variable_scope_opens_name_scopes():
    with tf.variable_scope("foo") as scope:
        assert scope.name == "foo" and scope.original_name_scope == "foo/"
        assert tf.get_variable_scope() is scope
        c = tf.constant(1.0, name="c")
        with tf.variable_scope("bar"):
            d = tf.constant(1.0, name="d")
    assert c.op.name == "foo/c" and d.op.name == "foo/bar/d"
    with tf.variable_scope("foo"):
        again = tf.constant(1.0, name="c")
        v = tf.get_variable("v", [1])
    assert again.op.name == "foo_1/c" and v.op.name == "foo/v"
    with tf.variable_scope(scope):
        assert tf.get_variable_scope().original_name_scope == "foo/"
        via_object = tf.constant(1.0, name="c")
    assert via_object.op.name == "foo_2/c"
    with tf.variable_scope("quiet", auxiliary_name_scope=False):
        plain = tf.constant(1.0, name="p")
    assert plain.op.name == "p"


def test_default_names_are_unique_per_enclosing_scope():
    names = []
    for _ in range(3):
        with tf.variable_scope(None, default_name="layer") as scope:
            names.append(scope.name)
    assert names == ["layer", "layer_1", "layer_2"]
    with tf.variable_scope("net"):
        with tf.variable_scope(None, default_name="layer") as scope:
            assert scope.name == "net/layer"
    with tf.variable_scope("net"):  # closing "net" forgot its sub-scopes, as in TensorFlow
        with tf.variable_scope(None, default_name="layer") as scope:
            assert scope.name == "net/layer"
    with pytest.raises(ValueError, match="reuse=True cannot be used without a name_or_scope"):
        with tf.variable_scope(None, default_name="x", reuse=True):
            pass
    with pytest.raises(TypeError, match="If default_name is None then name_or_scope is "
                                        "required"):
        tf.variable_scope(None)


def test_scope_initializer_dtype_and_values_initializers():
    with tf.variable_scope("init", initializer=tf.constant_initializer(0.5)):
        half = tf.get_variable("half", [2])
        ones = tf.get_variable("ones", [2], initializer=tf.ones_initializer())
        from_list = tf.get_variable("from_list", initializer=[1.0, 2.0])
        from_array = tf.get_variable("from_array", initializer=np.arange(3))
        from_tensor = tf.get_variable("from_tensor", initializer=tf.constant([[7]]))
        from_callable = tf.get_variable("from_callable", initializer=lambda: tf.zeros([2]))
        from_class = tf.get_variable("from_class", [2], initializer=tf.zeros_initializer)
    assert from_array.dtype.base_dtype == tf.int64
    assert from_tensor.shape.as_list() == [1, 1]
    values = _init_and_run(half, ones, from_list, from_array, from_tensor, from_callable,
                           from_class)
    expected = [[0.5, 0.5], [1, 1], [1, 2], [0, 1, 2], [[7]], [0, 0], [0, 0]]
    for value, want in zip(values, expected):
        np.testing.assert_array_equal(value, want)
    with pytest.raises(ValueError, match="If initializer is a constant, do not specify shape."):
        tf.get_variable("bad", [2], initializer=[1.0, 2.0])
    with pytest.raises(ValueError, match="Initializer type '<dtype: 'float64'>' and explicit "
                                         "dtype '<dtype: 'float32'>' don't match."):
        tf.get_variable("bad2", initializer=np.zeros(2), dtype=tf.float32)
    with pytest.raises(ValueError, match="The initializer passed is not valid"):
        tf.get_variable("bad3")
    with tf.variable_scope("typed", dtype=tf.float64):
        assert tf.get_variable("d", [1]).dtype.base_dtype == tf.float64


def test_custom_getter_and_regularizer():
    seen = []

    def getter(getter, name, *args, **kwargs):
        seen.append(name)
        return getter(name, *args, **kwargs)

    with tf.variable_scope("g", custom_getter=getter,
                           regularizer=lambda v: tf.reduce_sum(v) * 0.5):
        v = tf.get_variable("v", [2], initializer=tf.ones_initializer())
    assert seen == ["g/v"]
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert len(losses) == 1 and losses[0].op.name.startswith("g/v/Regularizer/")
    assert _init_and_run(losses[0])[0] == 1.0
    assert v.name == "g/v:0"


def test_scope_collections_and_local_variables():
    with tf.variable_scope("c") as scope:
        a = tf.get_variable("a", [1])
        loc = tf.get_local_variable("loc", [1])
    tf.get_variable("outside", [1])
    assert scope.trainable_variables() == [a]
    assert scope.global_variables() == [a]
    assert scope.local_variables() == [loc]
    assert tf.local_variables() == [loc] and loc not in tf.trainable_variables()


def test_values_pick_the_graph():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.constant(1.0)
    with tf.variable_scope("other", values=[x]):
        v = tf.get_variable("v", [1])
    assert v.graph is graph
    assert tf.get_default_graph() is not graph
    assert tf.global_variables() == []


# -- initializers -----------------------------------------------------------------------------

def _sample(init, shape, dtype=tf.float32):
    with tf.Session() as sess:
        return sess.run(init(shape, dtype=dtype))


def test_constant_zeros_ones_initializers():
    assert _sample(tf.zeros_initializer(), [2, 2]).tolist() == [[0, 0], [0, 0]]
    assert _sample(tf.ones_initializer(), [3], tf.int32).tolist() == [1, 1, 1]
    assert _sample(tf.constant_initializer([1, 2, 3, 4]), [2, 2]).tolist() == [[1, 2], [3, 4]]
    assert _sample(tf.constant_initializer(7), [2]).tolist() == [7, 7]
    assert _sample(tf.zeros_initializer(), [2], tf.bool).tolist() == [False, False]


def test_random_initializers_statistics():
    tf.set_random_seed(0)
    normal = _sample(tf.random_normal_initializer(1.0, 2.0), [100, 100])
    assert abs(normal.mean() - 1.0) < 0.1 and abs(normal.std() - 2.0) < 0.1
    trunc = _sample(tf.truncated_normal_initializer(0.0, 1.0), [100, 100])
    assert np.abs(trunc).max() <= 2.0
    uniform = _sample(tf.random_uniform_initializer(-1.0, 3.0), [100, 100])
    assert uniform.min() >= -1.0 and uniform.max() < 3.0
    ints = _sample(tf.random_uniform_initializer(0, 5), [1000], tf.int32)
    assert set(ints.tolist()) == {0, 1, 2, 3, 4}


@pytest.mark.parametrize("init, std", [
    (tf.glorot_uniform_initializer(), np.sqrt(2 / (200 + 300))),
    (tf.glorot_normal_initializer(), np.sqrt(2 / (200 + 300))),
    (tf.variance_scaling_initializer(), np.sqrt(1 / 200)),
    (tf.variance_scaling_initializer(2.0, "fan_out", "uniform"), np.sqrt(2 / 300)),
    (tf.variance_scaling_initializer(1.0, "fan_avg", "untruncated_normal"),
     np.sqrt(2 / 500)),
    (tf.initializers.he_normal(), np.sqrt(2 / 200)),
    (tf.initializers.he_uniform(), np.sqrt(2 / 200)),
    (tf.initializers.lecun_normal(), np.sqrt(1 / 200)),
])
def test_variance_scaling_family_has_the_right_variance(init, std):
    value = _sample(init, [200, 300])
    assert abs(value.std() / std - 1) < 0.03
    assert abs(value.mean()) < 0.01


def test_variance_scaling_errors_and_conv_fans():
    with pytest.raises(ValueError, match="`scale` must be positive float."):
        tf.variance_scaling_initializer(scale=0.0)
    with pytest.raises(ValueError, match="Invalid `mode` argument"):
        tf.variance_scaling_initializer(mode="fan")
    with pytest.raises(ValueError, match="Expected floating point type"):
        tf.random_normal_initializer(dtype=tf.int32)
    conv = _sample(tf.variance_scaling_initializer(1.0, "fan_in", "uniform"), [3, 3, 16, 32])
    limit = np.sqrt(3.0 / (3 * 3 * 16))
    assert np.abs(conv).max() <= limit and np.abs(conv).max() > 0.9 * limit


def test_seeded_initializers_are_reproducible():
    init = tf.glorot_uniform_initializer(seed=11)
    a = _sample(init, [4, 4])
    b = _sample(init, [4, 4])
    np.testing.assert_array_equal(a, b)


def test_creating_twice_names_user_code_in_a_folder_named_dtfnb(tmp_path):
    # A clone of the repository is a folder named dtfnb: its scripts are still the user's.
    script = tmp_path / "dtfnb" / "model.py"
    script.parent.mkdir()
    script.write_text(
        "import dtfnb as tf\n"
        "tf.get_variable('v', [1])\n"
        "try:\n"
        "    tf.get_variable('v', [1])\n"
        "except ValueError as err:\n"
        "    print(err)\n")
    repo = os.path.dirname(os.path.dirname(os.path.abspath(tf.__file__)))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=repo), timeout=60, check=True).stdout
    assert "Originally defined at:" in out
    assert f'File "{script}", line 2' in out
