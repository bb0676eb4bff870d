"""The folds behind the panel and the widgets (dtfnb/notebook/state.py), fed hand-built
monitor events as a master, a ps and a Feed publish them; and PlacementView's text and
fallback picture of what they fold."""

import time

import pytest

from dtfnb.notebook import palette
from dtfnb.notebook.state import Cells, Queues, Rate, Runs, Stops, Work, hh_mm
from dtfnb.notebook.widgets.placement import placement_text, summary_svg
from dtfnb.protos import monitor_pb2

PS = "/job:ps/replica:0/task:0"
WORKER = "/job:worker/replica:0/task:0"
PS_CPU, WORKER_CPU, WORKER_GPU = f"{PS}/device:CPU:0", f"{WORKER}/device:CPU:0", \
    f"{WORKER}/device:GPU:0"


def _plan(session, plan_id, at=100.0):
    """The plan of `w * x` with w on the ps, read by a MatMul on the worker's GPU."""
    plan = monitor_pb2.PlanEvent(session_handle=session, plan_id=plan_id,
                                 emulated_device=[WORKER_GPU], fetches=["dnn/MatMul:0"])
    plan.node.add(name="dnn/w", op="VariableV2", requested_device="/job:ps",
                  assigned_device=PS_CPU)
    plan.node.add(name="dnn/w/read", op="Identity", assigned_device=PS_CPU,
                  inputs=["dnn/w:0"])
    plan.node.add(name="x", op="Const", assigned_device=WORKER_CPU)
    plan.node.add(name="dnn/MatMul", op="MatMul", assigned_device=WORKER_GPU,
                  inputs=["x:0", "dnn/w/read:0"])
    plan.transfer.add(tensor="dnn/w/read:0", src_device=PS_CPU, dst_device=WORKER_GPU,
                      consumers=["dnn/MatMul"])
    plan.transfer.add(tensor="x:0", src_device=WORKER_CPU, dst_device=WORKER_GPU,
                      consumers=["dnn/MatMul"])
    return monitor_pb2.Event(time=at, task=WORKER, plan=plan)


def _step(session, step_id, start, plan_id=1, sizes=(12, 8), error=""):
    return monitor_pb2.Event(time=start + 0.01, task=WORKER, step=monitor_pb2.StepEvent(
        session_handle=session, step_id=step_id, start_time=start, duration=0.01,
        plan_id=plan_id, transfer_bytes=sizes, error=error))


def _health(task, state, at=200.0, steps=0, graphs=0, sent=0, received=0):
    return monitor_pb2.Event(time=at, task=task, health=monitor_pb2.HealthEvent(
        task=task, state=state, steps_run=steps, graphs_run=graphs, bytes_sent=sent,
        bytes_received=received))


def test_runs_keep_each_sessions_last_ten_runs_and_the_cell_each_ran_in():
    cells = Cells()
    cells.started(4, time=50.0)
    cells.started(5, time=150.0)
    runs = Runs(cells=cells)
    runs.apply(_plan("s1", 1))
    for step in range(12):
        runs.apply(_step("s1", step, 100.0 + step * 10))
    runs.apply(_plan("s2", 1, at=300.0))
    runs.apply(_step("s2", 7, 300.0, error="InvalidArgumentError: no"))
    runs.targets["s1"] = "grpc://localhost:2222"
    runs.addresses[WORKER] = "grpc://127.0.0.1:3333"
    (s2, s1) = runs.session_dicts()   # newest run first
    assert [run["step"] for run in s1["runs"]] == list(range(11, 1, -1))
    assert (s1["target"], s2["target"]) == ("grpc://localhost:2222", "grpc://127.0.0.1:3333")
    newest = s1["runs"][0]
    assert newest == {"id": "s1/11", "session": "s1", "target": "grpc://localhost:2222",
                      "task": WORKER, "step": 11, "number": 12, "cell": 5, "time": 210.0,
                      "duration": 0.01, "error": "", "plan": "s1/1",
                      "transfer_bytes": [12, 8]}
    assert s1["runs"][-1]["cell"] == 4 and s2["runs"][0]["error"].startswith("Invalid")
    assert (s1["cell"], s2["cell"]) == (4, 5)   # where each session first ran
    assert runs.latest().session == "s2" and runs.latest("s1").step.step_id == 11
    assert set(runs.plan_dicts()) == {"s1/1", "s2/1"}
    assert runs.plan_dicts()["s1/1"]["fetches"] == ["dnn/MatMul:0"]


def test_a_session_whose_steps_nobody_watched_shows_its_newest_plan():
    runs = Runs()
    runs.apply(_plan("s", 1))
    (session,) = runs.session_dicts()
    assert [(r["step"], r["plan"], r["transfer_bytes"]) for r in session["runs"]] == \
        [(0, "s/1", [])]
    assert [t["bytes"] for t in runs.run_placement(runs.latest())["transfers"]] == [None, None]
    runs.apply(_step("s", 3, 120.0))   # a watched step replaces the stand-in
    assert [r["step"] for r in runs.session_dicts()[0]["runs"]] == [3]


def test_run_placement_is_what_the_step_ran_with_its_bytes_and_palette():
    runs = Runs()
    runs.apply(_plan("s", 1))
    runs.apply(_step("s", 9, 110.0, sizes=(12, 8)))
    placement = runs.run_placement(runs.latest())
    assert placement["version"] == 1 and placement["run"]["step"] == 9
    assert [d["name"] for d in placement["devices"]] == [PS_CPU, WORKER_CPU, WORKER_GPU]
    assert placement["devices"][2] == {"name": WORKER_GPU, "short": "worker:0 GPU:0",
                                       "colour": palette.colour(WORKER_GPU),
                                       "emulated": True, "stopped_at": None}
    assert placement["transfers"][0] == {"tensor": "dnn/w/read:0", "src": PS_CPU,
                                         "dst": WORKER_GPU, "consumers": ["dnn/MatMul"],
                                         "bytes": 12}
    assert {n["name"]: n["requested"] for n in placement["nodes"]}["dnn/w"] == "/job:ps"
    text = placement_text(placement, "the last step of its session")
    assert text == (
        "PlacementView: the last step of its session ran 4 ops on 3 devices; 2 tensors "
        "crossed devices\n"
        "  ps:0 CPU:0: 2 ops\n  worker:0 CPU:0: 1 op\n  worker:0 GPU:0 (emulated): 1 op\n"
        "  dnn/w/read:0 (ps:0 CPU:0) -> dnn/MatMul (worker:0 GPU:0)\n"
        "  x:0 (worker:0 CPU:0) -> dnn/MatMul (worker:0 GPU:0)")
    svg = summary_svg(placement)
    assert svg.count("<rect") == 4   # three devices, the GPU's hatching
    assert palette.colour(PS_CPU) in svg and "url(#dtfnb-hatch)" in svg
    assert "1 tensor, 12 B" in svg and "dnn" in svg and "run 1" in svg


def test_a_stopped_task_greys_what_came_from_it_until_it_serves_again():
    stops = Stops()
    runs, queues = Runs(stops), Queues(stops)
    runs.apply(_plan("s", 1))
    runs.apply(_step("s", 1, 110.0))
    now = time.time()
    queues.apply(monitor_pb2.Event(time=now - 1, task=PS, queue=monitor_pb2.QueueEvent(
        name="q", device=PS_CPU, size=3, capacity=-1, enqueued=3)))
    queues.apply(monitor_pb2.Event(time=now, task=PS, queue=monitor_pb2.QueueEvent(
        name="q", device=PS_CPU, size=10, capacity=-1, enqueued=10)))
    (queue,) = queues.as_list()
    assert (queue["capacity"], queue["stopped_at"]) == (None, None)
    assert queue["enqueued_per_second"] > 0
    for state in ("stopping", "dead"):
        stops.apply(_health(PS, state, at=now))   # the first stop counts
    (queue,) = queues.as_list()
    assert queue["stopped_at"] == hh_mm(now) and queue["enqueued_per_second"] == 0
    assert runs.session_dicts()[0]["stopped_at"] is None   # its master is the worker
    stops.apply(_health(WORKER, "stopped", at=now))
    assert runs.session_dicts()[0]["stopped_at"] == hh_mm(now)
    devices = runs.run_placement(runs.latest())["devices"]
    assert [d["stopped_at"] for d in devices] == [hh_mm(now)] * 3
    stops.apply(_health(PS, "serving"))
    assert queues.as_list()[0]["stopped_at"] is None


def test_a_rate_is_not_shown_once_its_counts_are_old():
    queues = Queues()
    for at, total in ((1.0, 0), (2.0, 10)):
        queues.apply(monitor_pb2.Event(time=at, queue=monitor_pb2.QueueEvent(
            name="q", device=PS_CPU, capacity=10, enqueued=total)))
    assert queues.as_list()[0]["enqueued_per_second"] == 0.0   # long ago


def test_work_counts_what_a_task_did_and_a_feeds_stop_keeps_it():
    work = Work()
    work.apply(_health(PS, "serving", steps=0, graphs=40, sent=4800, received=1200))
    work.apply(_health(PS, "stopped"))
    assert work.work(PS) == {"steps_run": 0, "graphs_run": 40, "bytes_sent": 4800,
                             "bytes_received": 1200}
    assert work.work(WORKER) == {"steps_run": 0, "graphs_run": 0, "bytes_sent": 0,
                                 "bytes_received": 0}


def test_placement_text_before_a_run_and_of_a_failed_one():
    runs = Runs()
    assert placement_text(None, "the latest step") == "PlacementView: no step has run yet"
    runs.apply(_plan("s", 1))
    runs.apply(_step("s", 2, 110.0, error="InvalidArgumentError: x must be fed"))
    text = placement_text(runs.run_placement(runs.latest()), "the latest step")
    assert text.startswith("PlacementView: the latest step failed (InvalidArgumentError); "
                           "it ran 4 ops on 3 devices")


def test_a_burst_of_enqueues_reads_as_its_count_per_second_not_per_millisecond():
    rate = Rate()
    for i in range(3):   # three enqueues 5 ms apart
        rate.add(100.0 + i * 0.005, i + 1)
    assert rate.per_second(now=100.01) == 2.0     # over at least a second
    assert rate.per_second(now=104.0) == 0.5      # fading as it ages
    assert rate.per_second(now=106.0) == 0.0      # gone once out of the window
    steady = Rate()
    for i in range(50):   # 10 a second for 5 seconds
        steady.add(200.0 + i * 0.1, i)
    assert steady.per_second(now=204.9) == pytest.approx(10.0, rel=0.05)
