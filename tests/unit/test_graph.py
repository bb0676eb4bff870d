"""Graph building: names, scopes, device blocks and functions, colocation, containers,
control dependencies, collections, default graphs, tensors, GraphDef export and import."""

import threading

import numpy as np
import pytest

import dtfnb as tf

# -- unique names and name scopes ----------------------------------------------------


def test_unique_names_get_numbered_suffixes():
    assert tf.constant(1, name="x").op.name == "x"
    assert tf.constant(1, name="x").op.name == "x_1"
    assert tf.constant(1, name="x").op.name == "x_2"
    assert tf.constant(1, name="x_1").op.name == "x_1_1"  # x_1 is taken already
    assert tf.constant(1).op.name == "Const"
    assert tf.constant(1).op.name == "Const_1"


def test_unique_names_ignore_case_as_tensorflow_does():
    tf.constant(1, name="x")
    assert tf.constant(1, name="X").op.name == "X_1"


def test_name_scopes_nest_and_reopening_a_scope_name_makes_a_new_one():
    with tf.name_scope("a") as scope:
        assert scope == "a/"
        assert tf.constant(1).op.name == "a/Const"
        with tf.name_scope("b"):
            assert tf.constant(1).op.name == "a/b/Const"
    with tf.name_scope("a") as second:
        assert second == "a_1/"
        assert tf.constant(1).op.name == "a_1/Const"
    # a scope's full name (ending in "/") re-enters it
    with tf.name_scope(scope):
        assert tf.constant(1).op.name == "a/Const_1"
    # an op may not take a scope's name
    assert tf.constant(1, name="a").op.name == "a_2"
    with tf.name_scope("a"):
        with tf.name_scope(None):
            assert tf.constant(1, name="top").op.name == "top"
    assert tf.get_default_graph().get_name_scope() == ""


def test_name_scope_default_name_and_values():
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(1.0)
    with tf.name_scope(None, "default", [x]) as scope:
        assert scope == "default/"
        assert tf.get_default_graph() is not g
        assert g.get_name_scope() == "default"


def test_variable_names_follow_scopes():
    with tf.name_scope("layer"):
        v = tf.Variable(1.0, name="w")
    assert v.op.name == "layer/w"
    assert v.name == "layer/w:0"
    names = [op.name for op in tf.get_default_graph().get_operations()]
    assert names == ["layer/w/initial_value", "layer/w", "layer/w/Assign", "layer/w/read"]


# -- device strings --------------------------------------------------------------------


@pytest.mark.parametrize("block, stored", [
    ("/cpu:0", "/device:CPU:0"),
    ("/gpu:1", "/device:GPU:1"),
    ("/GPU:0", "/device:GPU:0"),
    ("/device:CPU:0", "/device:CPU:0"),
    ("/job:ps/task:1/cpu:0", "/job:ps/task:1/device:CPU:0"),
    ("/job:ps", "/job:ps"),
    ("/job:worker/task:1", "/job:worker/task:1"),
    ("/job:worker/replica:0/task:2/device:GPU:3", "/job:worker/replica:0/task:2/device:GPU:3"),
    ("", ""),
])
def test_device_strings_are_canonicalized(block, stored):
    with tf.device(block):
        c = tf.constant(1.0)
    assert c.op.device == stored
    assert c.device == stored


def test_unpinned_ops_have_an_empty_device():
    assert tf.constant(1.0).device == ""


def test_nested_device_blocks_merge_field_by_field_inner_winning():
    with tf.device("/job:worker"):
        a = tf.constant(1.0)
        with tf.device("/task:1"):
            b = tf.constant(1.0)
            with tf.device("/cpu:0"):
                c = tf.constant(1.0)
                with tf.device("/job:ps/gpu:1"):
                    d = tf.constant(1.0)
    assert a.device == "/job:worker"
    assert b.device == "/job:worker/task:1"
    assert c.device == "/job:worker/task:1/device:CPU:0"
    assert d.device == "/job:ps/task:1/device:GPU:1"


def test_worker_device_merges_under_inner_blocks_as_in_the_semantics_table():
    with tf.device("/job:worker"):
        add = tf.constant(1.0, name="add")
        with tf.device("/gpu:1"):
            on_gpu = tf.constant(1.0)
            with tf.device("/task:1"):
                on_task = tf.constant(1.0)
        with tf.device("/task:1"):
            mul = tf.constant(1.0, name="mul")
            with tf.device("/cpu:0"):
                mul_1 = tf.constant(1.0, name="mul_1")
    with tf.device("/job:ps/cpu:0"):
        with tf.device("/task:1"):
            ps = tf.constant(1.0)
    assert add.device == "/job:worker"
    assert on_gpu.device == "/job:worker/device:GPU:1"
    assert on_task.device == "/job:worker/task:1/device:GPU:1"
    assert mul.device == "/job:worker/task:1"
    assert mul_1.device == "/job:worker/task:1/device:CPU:0"
    assert ps.device == "/job:ps/task:1/device:CPU:0"


def test_device_spec_objects_are_accepted():
    with tf.device(tf.DeviceSpec(job="ps", task=0, device_type="CPU", device_index=0)):
        c = tf.constant(1.0)
    assert c.device == "/job:ps/task:0/device:CPU:0"


def test_malformed_device_string_fails_at_build_time():
    with pytest.raises(ValueError, match="foo"):
        with tf.device("/foo:bar"):
            tf.constant(1.0)
    with pytest.raises(TypeError):
        with tf.device(42):
            pass


def test_variable_ops_share_its_device_and_initial_value_takes_the_stack():
    with tf.device("/job:ps/task:0"):
        with tf.device("/cpu:0"):
            x = tf.Variable(1.0, name="x")
    g = tf.get_default_graph()
    for name in ("x", "x/Assign", "x/read", "x/initial_value"):
        assert g.get_operation_by_name(name).device == "/job:ps/task:0/device:CPU:0"
    assert x.device == "/job:ps/task:0/device:CPU:0"
    assert g.get_operation_by_name("x/read").colocation_groups() == ["loc:@x"]
    assert g.get_operation_by_name("x/Assign").colocation_groups() == ["loc:@x"]


# -- device functions --------------------------------------------------------------------


def test_device_function_is_called_once_per_op_and_its_value_is_stored_verbatim():
    calls = []

    def chooser(op):
        calls.append(op.name)
        return "/cpu:0" if op.type == "VariableV2" else "/gpu:0"

    with tf.device(chooser):
        x = tf.Variable(3.0, name="x")
        c = tf.constant(1.0, name="c")
    # not called for x/Assign and x/read: they are colocated with x
    assert calls == ["x/initial_value", "x", "c"]
    g = tf.get_default_graph()
    assert g.get_operation_by_name("x/initial_value").device == "/gpu:0"
    assert x.op.device == "/cpu:0"          # verbatim, not canonicalized
    assert g.get_operation_by_name("x/Assign").device == "/cpu:0"
    assert g.get_operation_by_name("x/read").device == "/cpu:0"
    assert c.op.device == "/gpu:0"


def test_chapter_variables_on_cpu_function_never_matches_variable_v2():
    def variables_on_cpu(op):
        if op.type == "Variable":
            return "/cpu:0"
        else:
            return "/gpu:0"

    with tf.device(variables_on_cpu):
        a = tf.Variable(3.0)
        b = tf.constant(4.0)
    assert a.op.type == "VariableV2"
    assert a.op.device == "/gpu:0"
    assert b.op.device == "/gpu:0"


def test_string_block_inside_function_block_is_overridden_by_the_function():
    seen = []

    def chooser(op):
        seen.append(op.device)  # the inner string block was applied first
        return "/gpu:0"

    with tf.device(chooser):
        with tf.device("/cpu:0"):
            c = tf.constant(1.0)
    assert seen == ["/device:CPU:0"]
    assert c.op.device == "/gpu:0"


def test_string_block_outside_function_block_merges_under_it():
    with tf.device("/job:worker"):
        with tf.device(lambda op: "/gpu:1"):
            c = tf.constant(1.0)
    assert c.op.device == "/job:worker/device:GPU:1"


def test_device_none_clears_the_device_and_stops_functions():
    calls = []

    def chooser(op):
        calls.append(op.name)
        return "/gpu:0"

    with tf.device(chooser):
        with tf.device(None):
            c = tf.constant(1.0, name="c")
        with tf.device("/job:ps"):
            with tf.device(None):
                d = tf.constant(1.0, name="d")
    assert calls == []
    assert c.op.device == d.op.device == ""


def test_device_function_returning_a_device_spec_or_none():
    with tf.device(lambda op: tf.DeviceSpec(device_type="GPU", device_index=0)):
        b = tf.constant(1.0)
    assert b.op.device == "/device:GPU:0"
    with tf.device(lambda op: None), pytest.raises(TypeError, match="got None"):
        tf.constant(1.0)  # as in TensorFlow: "" is how a function asks for no device


# -- colocation, containers ---------------------------------------------------------------


def test_variable_initializers_and_their_group_are_where_the_variable_is():
    with tf.device("/job:ps/task:1"):
        w = tf.get_variable("w", [2], initializer=tf.zeros_initializer())
        read = w.read_value()
    with tf.device("/job:worker"):
        reread = w.read_value()  # only reads: not colocated, as in TensorFlow
        init = tf.global_variables_initializer()
    zeros = tf.get_default_graph().get_operation_by_name("w/Initializer/zeros")
    assert (zeros.device, zeros.get_attr("_class")) == ("", [b"loc:@w"])
    assert w.op.get_attr("_class") == [b"loc:@w"]
    assert (read.device, reread.device, init.device) == ("/job:ps/task:1", "/job:worker",
                                                         "/job:ps/task:1")


def test_colocate_with_takes_the_device_and_group_of_the_op():
    with tf.device("/job:ps/task:1"):
        a = tf.constant(1.0, name="a")
    with tf.device("/gpu:0"):
        with tf.colocate_with(a):
            b = tf.identity(a, name="b")
            with tf.colocate_with(None, ignore_existing=True):
                c = tf.constant(1.0, name="c")
        d = tf.constant(1.0, name="d")
    assert b.op.device == "/job:ps/task:1"
    assert b.op.colocation_groups() == ["loc:@a"]
    assert b.op.get_attr("_class") == [b"loc:@a"]
    assert a.op.colocation_groups() == ["loc:@a"]
    assert d.op.device == "/device:GPU:0"  # the device stack is back after the block
    assert c.op.colocation_groups() == ["loc:@c"]


def test_container_sets_the_container_attr_of_stateful_ops():
    with tf.container("experiment_1"):
        v = tf.Variable(1.0, name="v")
        c = tf.constant(1.0)
    w = tf.Variable(1.0, name="w")
    assert v.op.get_attr("container") == b"experiment_1"
    assert w.op.get_attr("container") == b""
    with pytest.raises(ValueError):
        c.op.get_attr("container")


# -- control dependencies ---------------------------------------------------------------


def test_control_dependencies_add_control_inputs():
    a = tf.constant(1.0, name="a")
    b = tf.constant(2.0, name="b")
    x = tf.constant(3.0, name="x")
    with tf.control_dependencies([a, b.op]):
        z = tf.identity(x, name="z")
        with tf.control_dependencies([x]):
            w = tf.constant(0.0, name="w")
            with tf.control_dependencies(None):
                free = tf.constant(0.0, name="free")
    assert z.op.control_inputs == [a.op, b.op]
    assert set(w.op.control_inputs) == {a.op, b.op, x.op}
    assert free.op.control_inputs == []
    assert [op.name for op in a.op._control_outputs] == ["z", "w"]


def test_control_dependencies_skip_data_inputs_and_ops_built_in_the_block():
    a = tf.constant(1.0, name="a")
    with tf.control_dependencies([a]):
        same = tf.identity(a, name="same")   # a is already a data input
        inner = tf.constant(2.0, name="inner")
        after = tf.identity(inner, name="after")  # inner already depends on a
    assert same.op.control_inputs == []
    assert inner.op.control_inputs == [a.op]
    assert after.op.control_inputs == []


def test_control_dependencies_order_execution():
    x = tf.Variable(0.0, name="x")
    inc = tf.assign_add(x, 1.0)
    with tf.control_dependencies([inc]):
        read = tf.identity(x.value())
    with tf.Session() as sess:
        sess.run(x.initializer)
        assert sess.run(read) == 1.0
        assert sess.run(read) == 2.0


def test_a_constant_under_control_dependencies_still_orders_what_follows_it():
    # Constants are filled in before a run starts, except one that must wait.
    x = tf.Variable(0.0, name="x")
    inc = tf.assign_add(x, 1.0)
    with tf.control_dependencies([inc]):
        ten = tf.constant(10.0)
    with tf.control_dependencies([ten]):
        read = tf.identity(x.value())
    with tf.Session() as sess:
        sess.run(x.initializer)
        assert [sess.run(read) for _ in range(3)] == [1.0, 2.0, 3.0]


def test_constants_show_in_traced_step_stats():
    total = tf.add(tf.constant(1.0, name="one"), tf.constant(2.0, name="two"), name="total")
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    with tf.Session() as sess:
        assert sess.run(total) == 3.0
        metadata = tf.RunMetadata()
        assert sess.run(total, options=options, run_metadata=metadata) == 3.0
    traced = {node.node_name for device in metadata.step_stats.dev_stats
              for node in device.node_stats}
    assert {"one", "two", "total"} <= traced


def test_control_dependencies_rejects_non_graph_elements():
    with pytest.raises(TypeError):
        with tf.control_dependencies([42]):
            pass


# -- collections ---------------------------------------------------------------------


def test_standard_collection_keys():
    assert tf.GraphKeys.GLOBAL_VARIABLES == "variables"
    assert tf.GraphKeys.TRAINABLE_VARIABLES == "trainable_variables"
    assert tf.GraphKeys.LOCAL_VARIABLES == "local_variables"
    assert tf.GraphKeys.QUEUE_RUNNERS == "queue_runners"
    assert tf.GraphKeys.VARIABLES == tf.GraphKeys.GLOBAL_VARIABLES


def test_variables_join_collections_and_scopes_filter_them():
    with tf.name_scope("net"):
        w = tf.Variable(1.0, name="w")
        s = tf.Variable(0, trainable=False, name="step")
    loc = tf.Variable(0.0, collections=[tf.GraphKeys.LOCAL_VARIABLES], name="loc")
    hidden = tf.Variable(0.0, collections=[], trainable=False, name="hidden")
    assert tf.global_variables() == [w, s]
    assert tf.trainable_variables() == [w, loc]  # trainable unless told otherwise
    assert tf.local_variables() == [loc]
    assert tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="net") == [w, s]
    assert tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="nothing") == []
    assert tf.global_variables("net/w") == [w]
    assert hidden not in tf.global_variables()


def test_collections_by_name_and_reference():
    c = tf.constant(1.0)
    tf.add_to_collection("mine", c)
    tf.add_to_collections(["a", "b"], 1)
    assert tf.get_collection("mine") == [c]
    copy = tf.get_collection("mine")
    copy.append(2)
    assert tf.get_collection("mine") == [c]
    ref = tf.get_collection_ref("mine")
    ref.append(3)
    assert tf.get_collection("mine") == [c, 3]
    assert tf.get_collection("a") == tf.get_collection("b") == [1]
    assert tf.get_collection("missing") == []
    assert {"mine", "a", "b"} <= set(tf.get_default_graph().get_all_collection_keys())


# -- default graphs ----------------------------------------------------------------------


def test_default_graph_is_per_thread():
    main = tf.get_default_graph()
    tf.constant(1.0, name="main_const")
    seen = {}

    def worker():
        graph = tf.get_default_graph()
        seen["graph"] = graph
        seen["ops"] = graph.get_operations()
        with main.as_default():
            seen["inside"] = tf.get_default_graph()

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen["graph"] is not main
    assert seen["ops"] == []
    assert seen["inside"] is main


def test_as_default_and_reset_default_graph():
    first = tf.get_default_graph()
    g = tf.Graph()
    with g.as_default() as entered:
        assert entered is g
        assert tf.get_default_graph() is g
        c = tf.constant(1.0)
        with pytest.raises(AssertionError):
            tf.reset_default_graph()
    assert c.graph is g
    assert tf.get_default_graph() is first
    tf.reset_default_graph()
    assert tf.get_default_graph() is not first
    assert tf.get_default_graph().get_operations() == []


def test_ops_from_different_graphs_do_not_mix():
    g = tf.Graph()
    with g.as_default():
        a = tf.constant(1.0)
    b = tf.constant(2.0)
    with pytest.raises(ValueError):
        tf.add(a, b)


def test_finalized_graph_cannot_be_modified():
    g = tf.get_default_graph()
    tf.constant(1.0)
    g.finalize()
    assert g.finalized
    with pytest.raises(RuntimeError, match="finalized"):
        tf.constant(2.0)
    with pytest.raises(RuntimeError, match="finalized"):
        tf.add_to_collection("x", 1)


# -- tensors, operations and lookup ---------------------------------------------------------


def test_tensor_attributes():
    with tf.device("/cpu:0"):
        c = tf.constant([[1.0, 2.0, 3.0]], name="c")
    assert c.name == "c:0"
    assert c.dtype == tf.float32
    assert c.shape == tf.TensorShape([1, 3])
    assert c.get_shape().as_list() == [1, 3]
    assert c.op.name == "c"
    assert c.op.type == "Const"
    assert c.op.outputs == [c]
    assert c.value_index == 0
    assert c.graph is tf.get_default_graph()
    assert c.device == "/device:CPU:0"
    assert "c:0" in repr(c)
    p = tf.placeholder(tf.float32, shape=(None, 3), name="p")
    assert str(p.shape) == "(?, 3)"
    assert p.shape.as_list() == [None, 3]
    v = tf.Variable(1.0, name="v")
    assert v.op.outputs[0].dtype == tf.float32._as_ref
    assert v.dtype.base_dtype == tf.float32
    assert v.value().name == "v/read:0"


def test_tensor_cannot_be_a_bool():
    with pytest.raises(TypeError):
        bool(tf.constant(True))


def test_graph_lookup_by_name():
    g = tf.get_default_graph()
    c = tf.constant(1.0, name="c")
    assert g.get_operation_by_name("c") is c.op
    assert g.get_tensor_by_name("c:0") is c
    assert g.as_graph_element("c:0") is c
    assert g.as_graph_element("c") is c.op
    with pytest.raises(KeyError):
        g.get_tensor_by_name("c:1")
    with pytest.raises(KeyError):
        g.get_operation_by_name("nothing")
    with pytest.raises(ValueError):
        g.get_tensor_by_name("c")


# -- GraphDef export and import --------------------------------------------------------------


def _build_sample():
    with tf.device("/cpu:0"):
        x = tf.Variable(3.0, name="x")
    p = tf.placeholder(tf.float32, shape=(None, 3), name="p")
    s = tf.constant(["a", "b"], name="s")
    with tf.control_dependencies([x.initializer]):
        done = tf.no_op(name="done")
    y = tf.identity(p, name="y")
    return x, p, s, done, y


def _summary(graph):
    return [(op.name, op.type, op.device, [t.dtype for t in op.outputs],
             [str(t.shape) for t in op.outputs], [t.name for t in op.inputs],
             [c.name for c in op.control_inputs]) for op in graph.get_operations()]


def test_as_graph_def_lists_every_node_with_output_types():
    _build_sample()
    graph_def = tf.get_default_graph().as_graph_def()
    assert isinstance(graph_def, tf.GraphDef)
    names = [n.name for n in graph_def.node]
    assert names == [op.name for op in tf.get_default_graph().get_operations()]
    node = {n.name: n for n in graph_def.node}
    assert node["x"].op == "VariableV2"
    assert node["x"].device == "/device:CPU:0"
    assert list(node["x/Assign"].input) == ["x", "x/initial_value"]
    assert list(node["done"].input) == ["^x/Assign"]
    assert "_output_types" in node["x"].attr


def test_import_round_trips_with_name_empty():
    _build_sample()
    original = tf.get_default_graph()
    graph_def = original.as_graph_def()
    g = tf.Graph()
    with g.as_default():
        assert tf.import_graph_def(graph_def, name="") is None
    assert _summary(g) == _summary(original)
    assert g.as_graph_def() == graph_def
    assert g.get_operation_by_name("x/read").colocation_groups() == ["loc:@x"]


def test_imported_graph_runs():
    _build_sample()
    graph_def = tf.get_default_graph().as_graph_def()
    g = tf.Graph()
    with g.as_default():
        x, y, s, done = tf.import_graph_def(
            graph_def, return_elements=["x:0", "y:0", "s:0", "done"])
    assert x.name == "import/x:0"
    assert isinstance(done, tf.Operation)
    assert y.shape.as_list() == [None, 3]
    assert s.dtype == tf.string
    with tf.Session(graph=g) as sess:
        assert sess.run(done) is None
        assert sess.run(x) == 3.0
        assert sess.run(s).tolist() == [b"a", b"b"]
        np.testing.assert_array_equal(sess.run(y, {"import/p:0": [[1, 2, 3]]}), [[1, 2, 3]])


def test_import_uses_fresh_prefixes_and_name_scopes():
    tf.constant(1.0, name="c")
    graph_def = tf.get_default_graph().as_graph_def()
    g = tf.Graph()
    with g.as_default():
        tf.import_graph_def(graph_def)
        tf.import_graph_def(graph_def)
        tf.import_graph_def(graph_def, name="mine")
        with tf.name_scope("outer"):
            tf.import_graph_def(graph_def, name="inner")
        tf.import_graph_def(graph_def, name="")
        tf.import_graph_def(graph_def, name="")
    assert [op.name for op in g.get_operations()] == [
        "import/c", "import_1/c", "mine/c", "outer/inner/c", "c", "c_1"]


def test_import_input_map_replaces_tensors_and_control_inputs():
    a = tf.placeholder(tf.float32, name="a")
    tf.identity(a, name="b")
    first = tf.no_op(name="first")
    with tf.control_dependencies([first]):
        tf.no_op(name="second")
    graph_def = tf.get_default_graph().as_graph_def()
    g = tf.Graph()
    with g.as_default():
        seven = tf.constant(7.0, name="seven")
        gate = tf.no_op(name="gate")
        b, second = tf.import_graph_def(graph_def, input_map={"a:0": seven, "^first": gate},
                                        return_elements=["b:0", "second"])
        assert b.op.inputs[0] is seven
        assert second.control_inputs == [gate]
        with tf.Session() as sess:
            assert sess.run(b) == 7.0
        with pytest.raises(ValueError, match="not found in graph_def"):
            tf.import_graph_def(graph_def, input_map={"zzz:0": seven})
        with pytest.raises(TypeError):
            tf.import_graph_def(graph_def, input_map=[seven])


def test_import_return_element_errors():
    tf.constant(1.0, name="c")
    graph_def = tf.get_default_graph().as_graph_def()
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="not found"):
            tf.import_graph_def(graph_def, return_elements=["missing"])
        with pytest.raises(ValueError, match="not found"):
            tf.import_graph_def(graph_def, return_elements=["c:3"])


def test_import_applies_the_device_stack_under_each_node_device():
    with tf.device("/gpu:0"):
        tf.constant(1.0, name="pinned")
    x = tf.Variable(1.0, name="x")
    tf.constant(1.0, name="free")
    graph_def = tf.get_default_graph().as_graph_def()
    calls = []
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:worker/task:1"):
            tf.import_graph_def(graph_def, name="a")

        def chooser(op):
            calls.append(op.name)
            return "/cpu:0"

        with tf.device(chooser):
            tf.import_graph_def(graph_def, name="b")
    device = {op.name: op.device for op in g.get_operations()}
    assert device["a/pinned"] == "/job:worker/task:1/device:GPU:0"
    assert device["a/free"] == "/job:worker/task:1"
    assert device["a/x"] == device["a/x/read"] == device["a/x/Assign"] == "/job:worker/task:1"
    assert device["b/free"] == "/cpu:0"
    assert "b/x/read" not in calls and "b/x/Assign" not in calls
    assert device["b/x/read"] == "/cpu:0"
    assert x.op.device == ""


def test_import_ignores_the_current_control_dependencies():
    tf.constant(1.0, name="c")
    graph_def = tf.get_default_graph().as_graph_def()
    with tf.Graph().as_default():
        gate = tf.no_op()
        with tf.control_dependencies([gate]):
            (c,) = tf.import_graph_def(graph_def, return_elements=["c"])
        assert c.control_inputs == []


def test_import_rejects_bad_graph_defs():
    with tf.Graph().as_default():
        unknown = tf.GraphDef()
        unknown.node.add(name="n", op="NoSuchOp").attr["_output_types"].list.SetInParent()
        with pytest.raises(ValueError, match="NoSuchOp"):
            tf.import_graph_def(unknown)
        dangling = tf.GraphDef()
        node = dangling.node.add(name="n", op="NoOp", input=["^ghost"])
        node.attr["_output_types"].list.SetInParent()
        with pytest.raises(ValueError, match="ghost"):
            tf.import_graph_def(dangling)


def test_import_of_a_cycle_is_a_value_error_naming_a_node():
    tf.no_op(name="a")
    graph_def = tf.get_default_graph().as_graph_def()
    node = graph_def.node.add()
    node.CopyFrom(graph_def.node[0])
    node.name = "b"
    node.input.append("^a")
    graph_def.node[0].input.append("^b")
    with tf.Graph().as_default() as g:
        with pytest.raises(ValueError, match="cycle.*'(a|b)'"):
            tf.import_graph_def(graph_def)
        assert g.get_operations() == []


def test_a_failed_import_leaves_the_graph_unchanged():
    tf.constant(1.0, name="c")
    graph_def = tf.get_default_graph().as_graph_def()
    bad = graph_def.node.add(name="bad", op="NoSuchOp")
    bad.attr["_output_types"].list.SetInParent()
    missing = tf.GraphDef()
    missing.node.add(name="n", op="NoOp")
    with tf.Graph().as_default() as g:
        with pytest.raises(ValueError, match="NoSuchOp"):
            tf.import_graph_def(graph_def)
        with pytest.raises(ValueError, match="_output_types"):
            tf.import_graph_def(missing)
        assert g.get_operations() == []


def test_switch_to_thread_local_gives_each_thread_its_own_device_and_control_stacks():
    graph = tf.Graph()
    with graph.as_default():
        first = tf.no_op(name="first")
        with tf.device("/cpu:1"), tf.control_dependencies([first]):
            made = []

            def build(name):
                with graph.as_default():
                    made.append(tf.no_op(name=name))

            for name in ("shared", "own"):
                thread = threading.Thread(target=build, args=(name,))
                thread.start()
                thread.join()
                graph.switch_to_thread_local()
            mine = tf.no_op(name="mine")
    # before the switch a thread sees the blocks another opened; after it, none
    shared, own = made
    assert (shared.device, shared.control_inputs) == ("/device:CPU:1", [first])
    assert (own.device, own.control_inputs) == ("", [])
    assert (mine.device, mine.control_inputs) == ("/device:CPU:1", [first])



def test_ops_made_under_original_op_record_it_and_errors_reach_it():
    g = tf.Graph()
    with g.as_default():
        a = tf.constant(1.0)
        with g._original_op(a.op):
            p = tf.placeholder(tf.float32)
        assert p.op._original_op is a.op and a.op._original_op is None
        assert tf.identity(p).op._original_op is None
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(p)
        assert info.value.op._original_op is a.op


def test_builders_convert_python_values_in_the_graph_of_their_tensors():
    """As TensorFlow's op wrappers: a builder given a tensor of another graph than the
    default builds there, its converted Python values too."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [2, 3])
        v = tf.Variable([1.0, 2.0])
    built = [tf.reduce_sum(x, 1), tf.tile(x, [1, 2]), tf.transpose(x, [1, 0]),
             tf.assign_add(v, [1.0, 1.0]), tf.scatter_update(v, [0], [5.0])]
    assert all(t.graph is graph for t in built)
    assert tf.get_default_graph().get_operations() == []


def test_a_variable_made_from_another_initializes_with_all_the_others():
    """`tf.Variable(a * 2)` reads a's initialized value, so that one
    global_variables_initializer run gives both, whatever order it runs them in. (Not
    through a chain: `tf.Variable(b + a)` fails on TensorFlow too, as b's
    initialized_value() falls back to b's own initial value, which reads a.)"""
    for _ in range(10):
        with tf.Graph().as_default():
            a = tf.Variable(tf.random_normal([3], seed=4), name="a")
            b = tf.Variable(a * 2, name="b")
            c = tf.Variable(a.initialized_value() + a, name="c")
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                va, vb, vc = sess.run([a, b, c])
        np.testing.assert_allclose(vb, 2 * va)
        np.testing.assert_allclose(vc, 2 * va)
    assert b.initializer.inputs[1].op.name == "mul_b"   # the copy that reads a's cond
