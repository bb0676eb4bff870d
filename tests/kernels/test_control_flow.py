"""The executor's frames and dead tensors (runtime/frames.py), on hand-built partitions,
and tf.cond / tf.while_loop end to end where the differential tier cannot look."""

import numpy as np
import pytest

import dtfnb as tf
from dtfnb.base import dtypes
from dtfnb.base.errors import UnimplementedError
from dtfnb.kernels.control_flow import DEAD
from dtfnb.ops import control_flow_ops
from dtfnb.runtime.devices import Device
from dtfnb.runtime.executor import Executor, SessionState
from dtfnb.runtime.frames import FrameGraph, FrameState
from dtfnb.runtime.nodes import Node
from dtfnb.runtime.partition import partition, prune
from dtfnb.runtime.step import Step

I32, BOOL = dtypes.int32, dtypes.bool_


def const(name, value, dtype=I32, controls=()):
    return Node(name, "Const", [], list(controls), "", {"value": np.asarray(value),
                                                       "dtype": dtype}, [dtype])


def op(name, op_type, inputs, out=(I32,), controls=(), **attrs):
    inputs = [(i, 0) if isinstance(i, str) else i for i in inputs]
    return Node(name, op_type, inputs, list(controls), "", attrs, list(out))


def fetch(name, index, source):
    return Node(f"_retval_{source}_0_{index}", "_Fetch", [(source, 0)], [], "", {"index": index})


@pytest.fixture
def device():
    dev = Device("localhost", 0, "CPU", 0)
    yield dev
    dev.close()


def run(nodes, device, fetches=1):
    step = Step()
    Executor(nodes, device, SessionState("s")).run(step)
    return [step.fetched.get(i, "not fetched") for i in range(fetches)]


def cond_nodes(pred):
    """x = 5; pred ? x * 2 : x - 1, with a constant in each branch."""
    return [
        const("pred", pred, BOOL), const("x", 5),
        op("s", "Switch", ["x", "pred"], out=(I32, I32)),
        op("t", "Identity", [("s", 1)]), op("f", "Identity", [("s", 0)]),
        const("two", 2, controls=["t"]), const("one", 1, controls=["f"]),
        op("mul", "Mul", ["t", "two"]), op("sub", "Sub", ["f", "one"]),
        op("m", "Merge", ["sub", "mul"], out=(I32, I32)),
        fetch("m", 0, "m"), Node("_retval_m_1_1", "_Fetch", [("m", 1)], [], "", {"index": 1}),
    ]


@pytest.mark.parametrize("pred,value,index", [(True, 10, 1), (False, 4, 0)])
def test_only_the_taken_branch_runs_and_merge_forwards_it(device, pred, value, index):
    assert run(cond_nodes(pred), device, 2) == [value, index]


def test_a_dead_input_kills_a_node_and_its_control_outputs(device):
    nodes = cond_nodes(True)
    state = FrameState(FrameGraph(nodes, _out_base(nodes)))
    ready = state.start()
    seen = {}
    while ready:
        node, iteration, dead = ready.pop()
        seen[nodes[node].name] = dead
        count = len(nodes[node].output_types)
        outputs = [DEAD] * count if dead else [DEAD, 5] if nodes[node].name == "s" \
            else [1] * count
        ready.extend(state.finish(node, iteration, outputs, dead))
    assert state.done
    assert seen["f"] and seen["one"] and seen["sub"]          # the untaken branch
    assert not seen["t"] and not seen["mul"] and not seen["m"]


def _out_base(nodes):
    base, slots = [], 0
    for node in nodes:
        base.append(slots)
        slots += max(1, len(node.output_types))
    return base


def loop_nodes(limit=10, parallel=10, side_chain=0):
    """i = 0; while i < limit: i += step (a loop invariant); each iteration also runs a
    chain of `side_chain` Identity ops that the next iteration does not wait for."""
    frame = {"frame_name": "loop", "parallel_iterations": parallel}
    return [
        const("zero", 0), const("limit", limit), const("step", 1),
        op("enter", "Enter", ["zero"], is_constant=False, **frame),
        op("limit_in", "Enter", ["limit"], is_constant=True, **frame),
        op("step_in", "Enter", ["step"], is_constant=True, **frame),
        op("merge", "Merge", ["enter", "next"], out=(I32, I32)),
        op("less", "Less", ["merge", "limit_in"], out=(BOOL,)),
        op("cond", "LoopCond", ["less"], out=(BOOL,)),
        op("switch", "Switch", ["merge", "cond"], out=(I32, I32)),
        op("body", "Identity", [("switch", 1)]),
        op("add", "Add", ["body", "step_in"]),
        op("next", "NextIteration", ["add"]),
        op("exit", "Exit", [("switch", 0)]),
        fetch("exit", 0, "exit"),
    ] + [op(f"side{k}", "Identity", [f"side{k - 1}" if k else "body"])
         for k in range(side_chain)]


@pytest.mark.parametrize("limit", [0, 1, 10, 300])
@pytest.mark.parametrize("parallel", [1, 10])
def test_a_loop_runs_iteration_by_iteration(device, limit, parallel):
    assert run(loop_nodes(limit, parallel), device) == [limit]


def test_iterations_under_way_never_exceed_parallel_iterations():
    nodes = loop_nodes(20, parallel=3, side_chain=30)
    state = FrameState(FrameGraph(nodes, _out_base(nodes)))
    names = [n.name for n in nodes]
    values = {"zero": 0, "limit": 20, "step": 1}
    ready, most = state.start(), 0
    held = []  # run breadth-first: every ready item before what it makes ready
    while ready or held:
        if not ready:
            ready, held = held, []
        node, iteration, dead = ready.pop(0)
        frame = iteration.frame
        if frame.parent is not None:
            most = max(most, len(frame.iterations))
        inputs = [iteration.slots[_out_base(nodes)[[n.name for n in nodes].index(s)] + k]
                  for s, k in nodes[node].inputs]
        outputs = [DEAD] * len(nodes[node].output_types) if dead \
            else _evaluate(names[node], inputs, values)[:len(nodes[node].output_types)]
        held.extend(state.finish(node, iteration, outputs, dead))
    assert state.done and most == 3


def _evaluate(name, inputs, values):
    if name in values:
        return [values[name]]
    if name == "merge":
        live = [v for v in inputs if v is not None and v is not DEAD]
        return [live[0], 0]
    if name == "less":
        return [inputs[0] < inputs[1]]
    if name == "switch":
        return [DEAD, inputs[0]] if inputs[1] else [inputs[0], DEAD]
    if name == "add":
        return [inputs[0] + inputs[1]]
    return [inputs[0]] if inputs else [None]


def test_a_loop_entered_dead_ends_with_dead_exits(device):
    # cond(false, lambda: while_loop(...), lambda: -1): the loop in the untaken branch
    dead_enter = op("enter", "Enter", [("s", 1)], is_constant=False, frame_name="loop",
                    parallel_iterations=10)
    loop = [dead_enter if n.name == "enter" else n for n in loop_nodes(3)
            if n.name not in ("zero", "_retval_exit_0_0")]
    nodes = [const("pred", False, BOOL), const("x", 0),
             op("s", "Switch", ["x", "pred"], out=(I32, I32)), *loop,
             op("f", "Identity", [("s", 0)]), const("minus", -1, controls=["f"]),
             op("m", "Merge", ["exit", "minus"], out=(I32, I32)), fetch("m", 0, "m")]
    assert run(nodes, device) == [-1]


def test_prune_orders_a_loop_despite_its_back_edge():
    nodes = {n.name: n for n in loop_nodes()}
    order = prune(nodes, set(), [("exit", 0)], [])
    assert order.index("merge") < order.index("next") and set(order) >= {"exit", "next"}


def test_a_loop_across_devices_is_refused_by_name():
    nodes = {n.name: n for n in loop_nodes()}
    order = prune(nodes, set(), [("exit", 0)], [])
    placement = {name: "/cpu:0" for name in order}
    placement["add"] = "/cpu:1"
    with pytest.raises(UnimplementedError, match="The while loop 'loop' spans devices"):
        partition(order, nodes, placement, {}, [("exit", 0)])


def test_transfers_of_a_graph_with_control_flow_may_carry_dead_values():
    nodes = {n.name: n for n in cond_nodes(True)[:-2]}
    order = prune(nodes, set(), [("m", 0)], [])
    placement = {name: "/cpu:0" for name in order}
    placement["mul"] = "/cpu:1"
    parts = partition(order, nodes, placement, {}, [("m", 0)])
    transfers = [n for part in parts.values() for n in part if n.op in ("_Send", "_Recv")]
    assert transfers and all(n.attrs["dead_ok"] for n in transfers)


# -- end to end, where TensorFlow itself is not the reference -------------------------


def test_cond_untaken_branch_on_another_task_stays_dead():
    config = tf.ConfigProto(device_count={"CPU": 2})
    with tf.Graph().as_default():
        v = tf.Variable(0, name="v")
        pred = tf.placeholder(tf.bool, [])
        with tf.device("/cpu:1"):
            r = tf.cond(pred, lambda: tf.assign_add(v, 1), lambda: tf.identity(v))
        with tf.Session(config=config) as sess:
            sess.run(v.initializer)
            assert [sess.run(r, {pred: p}) for p in (False, True, False)] == [0, 1, 1]


def test_loop_free_graphs_keep_the_plain_executor(device):
    nodes = [const("a", 1), const("b", 2), op("c", "Add", ["a", "b"]), fetch("c", 0, "c")]
    executor = Executor(nodes, device, SessionState("s"))
    assert executor._frames is None
    assert run(nodes, device) == [3]


def test_gradients_through_a_while_loop_say_they_are_not_supported():
    x = tf.constant(2.0)
    out = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * x), [0, 1.0])
    with pytest.raises(LookupError, match="does not differentiate through tf.while_loop"):
        tf.gradients(out[1], x)


def test_inputs_from_two_frames_are_refused_as_tensorflow_does():
    data = tf.placeholder(tf.float32, shape=[])
    enter_1 = control_flow_ops.enter(data, "foo_1", False)
    enter_2 = control_flow_ops.enter(data, "foo_2", False)
    res = tf.add(enter_1, enter_2)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as raised:
            sess.run(res, {data: 1.0})
    assert raised.value.message.startswith(
        "{{node Add}} has inputs from different frames. The input {{node Enter_1}} is in "
        "frame 'foo_2'. The input {{node Enter}} is in frame 'foo_1'.")
