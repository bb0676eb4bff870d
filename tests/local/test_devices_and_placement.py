"""Run-time placement through real sessions: rules, errors, soft placement, logging,
devices, step stats and parallel execution (TF_SEMANTICS §2)."""

import re
import threading

import pytest

import dtfnb as tf
from dtfnb.framework.registry import define_op
from dtfnb.kernels.registry import register_kernel
from dtfnb.ops.building import make_tensor

CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
CPU1 = "/job:localhost/replica:0/task:0/device:CPU:1"
GPU0 = "/job:localhost/replica:0/task:0/device:GPU:0"
GPU1 = "/job:localhost/replica:0/task:0/device:GPU:1"

EMULATED = tf.ConfigProto(emulated_gpus=1)
LINE = re.compile(r"^(\S+): \((\w+)\): (/job:\S+)( \(emulated\))?$")


def placement(sess, fetches, feed_dict=None):
    """{node name: device} of the nodes a run executed, from its FULL_TRACE step stats."""
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    metadata = tf.RunMetadata()
    sess.run(fetches, feed_dict, options=options, run_metadata=metadata)
    return {node.node_name: dev.device
            for dev in metadata.step_stats.dev_stats for node in dev.node_stats}


def logged(text):
    """{node name: (op type, device, emulated)} from log_device_placement lines."""
    result = {}
    for line in text.splitlines():
        match = LINE.match(line)
        if match:
            result[match[1]] = (match[2], match[3], bool(match[4]))
    return result


def emulated(**options):
    config = tf.ConfigProto(emulated_gpus=1, **options)
    return config


# -- default placement ---------------------------------------------------------------------


def test_unpinned_ops_go_to_the_gpu_when_every_op_of_their_group_has_a_gpu_kernel():
    f = tf.Variable(1.0, name="f")
    i = tf.Variable(1, name="i")  # int32 VariableV2 has no GPU kernel
    with tf.Session(config=EMULATED) as sess:
        placed = placement(sess, [f.initializer, i.initializer])
    assert placed["f"] == placed["f/Assign"] == placed["f/initial_value"] == GPU0
    assert placed["i"] == placed["i/Assign"] == CPU0
    # a lone constant goes with its only consumer (TensorFlow's generator heuristic)
    assert placed["i/initial_value"] == CPU0


def test_unpinned_ops_go_to_cpu_without_gpus():
    f = tf.Variable(1.0, name="f")
    with tf.Session() as sess:
        placed = placement(sess, f.initializer)
    assert set(placed.values()) == {CPU0}


def test_pinned_ops_go_where_pinned():
    with tf.device("/cpu:0"):
        a = tf.Variable(3.0, name="a")
        b = tf.constant(4.0, name="b")
    with tf.device("/gpu:0"):
        c = tf.add(a, b, name="c")
    with tf.Session(config=EMULATED) as sess:
        sess.run(a.initializer)
        placed = placement(sess, c)
        assert sess.run(c) == 7.0
    assert placed["a"] == placed["b"] == placed["a/read"] == CPU0
    assert placed["c"] == GPU0


def test_variable_reads_and_assignments_are_colocated_with_the_variable():
    with tf.device("/cpu:0"):
        v = tf.Variable(1.0, name="v")
    with tf.device("/gpu:0"):
        update = tf.assign(v, 5.0, name="update")  # takes a ref input: follows the variable
    with tf.Session(config=EMULATED) as sess:
        placed = placement(sess, v.initializer)
        placed.update(placement(sess, update))
        assert sess.run(v) == 5.0
    assert placed["v/Assign"] == placed["update"] == placed["v"] == CPU0
    assert update.op.device == "/device:CPU:0"


def test_extra_cpu_devices_from_device_count():
    with tf.device("/cpu:1"):
        c = tf.constant(1.0, name="c")
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        names = [d.name for d in sess.list_devices()]
        assert names == [CPU0, CPU1]
        assert placement(sess, c)["c"] == CPU1
        assert sess.run(c) == 1.0


def test_list_devices():
    with tf.Session() as sess:
        devices = sess.list_devices()
    assert [(d.name, d.device_type) for d in devices] == [(CPU0, "CPU")]
    with tf.Session(config=tf.ConfigProto(emulated_gpus=2)) as sess:
        devices = sess.list_devices()
    assert [(d.name, d.device_type) for d in devices] == [
        (CPU0, "CPU"), (GPU0, "GPU"), (GPU1, "GPU")]


def test_second_emulated_gpu():
    with tf.device("/gpu:1"):
        c = tf.constant(2.0, name="c")
        d = tf.identity(c, name="d")
    with tf.Session(config=tf.ConfigProto(emulated_gpus=2)) as sess:
        assert placement(sess, d)["d"] == GPU1
        assert sess.run(d) == 2.0


# -- errors and soft placement -------------------------------------------------------------


def test_gpu_pin_without_a_gpu_fails_with_tensorflows_message():
    with tf.device("/gpu:0"):
        i = tf.Variable(3, name="i")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(i.initializer)
    assert info.value.message.startswith(
        "Cannot assign a device for operation i: {{node i}} was explicitly assigned to "
        "/device:GPU:0 but available devices are [ "
        "/job:localhost/replica:0/task:0/device:CPU:0 ]. Make sure the device specification "
        "refers to a valid device. The requested device appears to be a GPU, but CUDA is "
        "not enabled.")
    assert info.value.error_code == 3


def test_float_variable_on_a_missing_gpu_fails_alike():
    with tf.device("/gpu:0"):
        f = tf.Variable(3.0, name="f")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="operation f: .*CUDA is not"):
            sess.run(f.initializer)


def test_int_variable_on_an_emulated_gpu_has_no_kernel():
    with tf.device("/gpu:0"):
        i = tf.Variable(3, name="i")
    with tf.Session(config=EMULATED) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(i.initializer)
    assert info.value.message.startswith(
        "Cannot assign a device for operation i: Could not satisfy explicit device "
        "specification '/device:GPU:0' because no supported kernel for GPU devices is "
        "available.")


def test_missing_gpu_index_fails_too():
    with tf.device("/gpu:3"):
        c = tf.constant(1.0, name="c")
    with tf.Session(config=EMULATED) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="explicitly assigned to "
                           "/device:GPU:3 but available devices are"):
            sess.run(c)


def test_soft_placement_falls_back_to_a_supported_device():
    with tf.device("/gpu:0"):
        i = tf.Variable(3, name="i")
        f = tf.Variable(1.5, name="f")
    with tf.device("/gpu:7"):
        far = tf.constant(2.0, name="far")
    with tf.Session(config=emulated(allow_soft_placement=True)) as sess:
        placed = placement(sess, [i.initializer, f.initializer, far])
        assert sess.run([i, f, far]) == [3, 1.5, 2.0]
    assert placed["i"] == placed["i/Assign"] == CPU0
    assert placed["f"] == GPU0
    assert placed["far"] in (CPU0, GPU0)
    with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
        sess.run(i.initializer)
        assert sess.run(i) == 3


def test_whole_graph_is_placed_at_the_first_run():
    ok = tf.constant(1.0, name="ok")
    with tf.device("/gpu:0"):
        tf.Variable(3, name="i")
    with tf.Session() as sess:
        for _ in range(2):  # every run of the session fails, even an unrelated fetch
            with pytest.raises(tf.errors.InvalidArgumentError, match="operation i"):
                sess.run(ok)


def test_ops_added_after_the_first_run_are_placed_at_the_next_run():
    a = tf.constant(1.0, name="a")
    with tf.Session() as sess:
        assert sess.run(a) == 1.0
        with tf.device("/gpu:0"):
            bad = tf.constant(2.0, name="bad")
        with pytest.raises(tf.errors.InvalidArgumentError, match="operation bad"):
            sess.run(a)
        del bad


def test_colocated_group_with_conflicting_pins_fails():
    with tf.device("/cpu:0"):
        a = tf.constant(1.0, name="a")
    with tf.colocate_with(a):
        with tf.device("/gpu:0"):
            pass
    g = tf.get_default_graph()
    b = g.create_op("Identity", [a], [tf.float32], name="b",
                    attrs={"T": tf.float32, "_class": ["loc:@a"]})
    b._set_device("/device:GPU:0")
    with tf.Session(config=EMULATED) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot colocate nodes"):
            sess.run(b.outputs[0])


# -- log_device_placement ------------------------------------------------------------------


def test_log_device_placement_prints_one_line_per_node_once(capfd):
    with tf.device("/cpu:0"):
        a = tf.Variable(3.0, name="a")
        b = tf.constant(4.0, name="b")
        c = tf.add(a, b, name="c")
    config = tf.ConfigProto()
    config.log_device_placement = True
    with tf.Session(config=config) as sess:
        sess.run(a.initializer)
        first = capfd.readouterr().out
        assert sess.run(c) == 7.0
        second = capfd.readouterr().out
    lines = logged(first)
    assert lines == {
        "a": ("VariableV2", CPU0, False), "a/initial_value": ("Const", CPU0, False),
        "a/Assign": ("Assign", CPU0, False), "a/read": ("Identity", CPU0, False),
        "b": ("Const", CPU0, False), "c": ("AddV2", CPU0, False)}
    assert "a/Assign: (Assign): /job:localhost/replica:0/task:0/device:CPU:0\n" in first
    assert logged(second) == {}


def test_log_device_placement_labels_emulated_gpus_and_logs_new_nodes(capfd):
    a = tf.constant(1.0, name="a")
    with tf.Session(config=emulated(log_device_placement=True)) as sess:
        sess.run(a)
        assert logged(capfd.readouterr().out) == {"a": ("Const", GPU0, True)}
        b = tf.identity(a, name="b")
        sess.run(b)
        assert logged(capfd.readouterr().out) == {"b": ("Identity", GPU0, True)}
        sess.run(b)
        assert logged(capfd.readouterr().out) == {}


def test_no_placement_log_by_default(capfd):
    a = tf.constant(1.0, name="a")
    with tf.Session() as sess:
        sess.run(a)
    assert logged(capfd.readouterr().out) == {}


# -- step stats -------------------------------------------------------------------------------


def test_full_trace_fills_step_stats_with_devices_and_nodes():
    with tf.device("/cpu:0"):
        a = tf.constant(1.0, name="a")
    with tf.device("/gpu:0"):
        b = tf.identity(a, name="b")
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    metadata = tf.RunMetadata()
    with tf.Session(config=EMULATED) as sess:
        assert sess.run(b, options=options, run_metadata=metadata) == 1.0
        untraced = tf.RunMetadata()
        sess.run(b, run_metadata=untraced)
    devices = {dev.device: [n.node_name for n in dev.node_stats]
               for dev in metadata.step_stats.dev_stats}
    assert set(devices) == {CPU0, GPU0}
    assert "a" in devices[CPU0]
    assert "b" in devices[GPU0]
    for dev in metadata.step_stats.dev_stats:
        for stats in dev.node_stats:
            assert stats.all_start_micros > 0
            assert stats.all_end_rel_micros >= 0
    assert len(untraced.step_stats.dev_stats) == 0


# -- parallel execution -----------------------------------------------------------------------

define_op("DtfnbTestRendezvous", lambda op: [tf.TensorShape([])])
_meeting = {}


@register_kernel("DtfnbTestRendezvous", expensive=True)
def _rendezvous_kernel(ctx, step):
    """Waits until its partner runs too: only possible if both run at the same time."""
    _meeting["threads"].add(threading.get_ident())
    _meeting["barrier"].wait()
    return ctx.xp.asarray(1.0, dtype="float32")


def test_independent_expensive_ops_run_concurrently_on_two_threads():
    _meeting["barrier"] = threading.Barrier(2, timeout=10)
    _meeting["threads"] = set()
    a = make_tensor("DtfnbTestRendezvous", [], tf.float32, name="a")
    b = make_tensor("DtfnbTestRendezvous", [], tf.float32, name="b")
    config = tf.ConfigProto(inter_op_parallelism_threads=2)
    with tf.Session(config=config) as sess:
        assert sess.run([a, b]) == [1.0, 1.0]
    assert len(_meeting["threads"]) == 2
    assert not _meeting["barrier"].broken


def test_an_interactive_session_places_only_what_a_run_needs():
    """A node pinned to an absent GPU fails the runs that need it, not the others, as
    TensorFlow's InteractiveSession (place_pruned_graph); a plain Session places all."""
    with tf.device("/device:GPU:0"):
        absent = tf.constant(1.0, name="absent")
    here = tf.constant(2.0, name="here")
    sess = tf.InteractiveSession()
    try:
        assert here.eval() == 2.0
        with pytest.raises(tf.errors.InvalidArgumentError, match="absent"):
            absent.eval()
        assert here.eval() == 2.0
    finally:
        sess.close()
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="absent"):
        sess.run(here)
