"""The folds behind StalenessPlot and ClusterView (dtfnb/notebook/state.py), from
hand-built monitor events: staleness, losses and dropped gradients per worker; the work
and stops of tasks; the bytes per step of each task and each link; one timeline of a
traced step merged across tasks, and its Chrome trace."""

import json

from dtfnb.notebook.state import Staleness, Tasks, Traffic
from dtfnb.notebook.widgets.cluster import links_table
from dtfnb.protos import config_pb2, monitor_pb2

PS = "/job:ps/replica:0/task:0"
W0, W1 = "/job:worker/replica:0/task:0", "/job:worker/replica:0/task:1"


def _update(worker, computed, applied, time=0.0, loss=0.0, dropped=False, variable="w"):
    return monitor_pb2.Event(time=time, task=PS, variable_update=monitor_pb2.VariableUpdateEvent(
        variable=variable, worker=worker, computed_at_step=computed, applied_at_step=applied,
        loss=loss, dropped=dropped))


def _step(task, start_time, scalars=(), error="", step_id=0):
    return monitor_pb2.Event(time=start_time, task=task, step=monitor_pb2.StepEvent(
        step_id=step_id, start_time=start_time, error=error, scalars=dict(scalars)))


def _fold(state, *events):
    for event in events:
        state.apply(event)
    return state


def test_staleness_counts_each_gradient_once_in_a_histogram_per_worker():
    staleness = _fold(Staleness(), *[
        _update(worker, computed, applied, variable=variable)
        for worker, computed, applied in ((W0, 0, 0), (W1, 0, 1), (W0, 1, 2), (W1, 1, 3),
                                          (W0, 2, 4), (W1, 3, 5))
        for variable in ("w", "b")])   # each gradient updates both: counted once
    assert staleness.workers() == [W0, W1]
    assert staleness.points[W0] == [(0, 0), (2, 1), (4, 2)]
    assert staleness.histogram(W0) == [(0, 1), (1, 1), (2, 1)]
    assert staleness.histogram(W1) == [(1, 1), (2, 2)]
    assert not staleness.dropped


def test_dropped_gradients_count_per_worker_and_stay_out_of_the_histogram():
    staleness = _fold(Staleness(), _update(W0, 4, 4), _update(W1, 3, 4, dropped=True),
                      _update(W1, 3, 4, dropped=True, variable="b"),
                      _update(W1, 2, 5, dropped=True))
    assert staleness.dropped == {W1: 2}
    assert staleness.workers() == [W0, W1]
    assert staleness.histogram(W1) == [] and staleness.histogram(W0) == [(0, 1)]


def test_a_fetched_loss_is_drawn_at_the_global_step_its_step_started_at():
    staleness = _fold(
        Staleness(),
        _step(W0, 10.0, {"loss:0": 2.0}),                # before any update: step 0
        _update(W0, 0, 0, time=10.5), _update(W1, 0, 1, time=11.5),
        _step(W1, 12.0, {"train/total_loss:0": 1.5, "global_step:0": 2.0, "accuracy:0": 0.5}),
        _step(W0, 11.0, {"loss:0": 1.8}),                # came late: still at its time
        _step(W0, 13.0, {"loss:0": 9.0}, error="CancelledError: the step was cancelled"),
        _step(W0, 14.0, {"accuracy:0": 0.7}),            # no loss fetched
        _update(W0, 1, 2, time=13.5, loss=7.0))          # the step's loss comes first
    assert staleness.losses(W0) == [(0, 2.0), (0, 1.8)]
    assert staleness.losses(W1) == [(1, 1.5)]


def test_the_loss_tensor_can_be_named():
    events = (_step(W0, 1.0, {"Mean:0": 0.25, "loss:0": 3.0}), _update(W0, 0, 0, time=0.5))
    assert _fold(Staleness(loss="Mean"), *events).losses(W0) == [(0, 0.25)]
    assert _fold(Staleness(loss="Mean:0"), *events).losses(W0) == [(0, 0.25)]
    assert _fold(Staleness(), *events).losses(W0) == [(0, 3.0)]


def test_without_fetched_losses_those_reported_with_the_gradients_are_drawn():
    staleness = _fold(Staleness(), _update(W0, 0, 0, loss=3.0), _update(W0, 1, 2, loss=2.5),
                      _update(W1, 0, 1))   # no loss given to the optimizer: 0, none
    assert staleness.losses(W0) == [(0, 3.0), (1, 2.5)]
    assert staleness.losses(W1) == []


def test_without_a_global_step_losses_are_drawn_by_the_workers_own_count():
    staleness = _fold(Staleness(), _step(W0, 1.0, {"loss:0": 3.0}), _step(W0, 2.0, {"loss:0": 2.0}))
    assert staleness.losses(W0) == [(1, 3.0), (2, 2.0)]
    assert staleness.workers() == [W0] and staleness.histogram(W0) == []


def _health(task, state="serving", time=0.0, **work):
    return monitor_pb2.Event(time=time, task=task,
                             health=monitor_pb2.HealthEvent(task=task, state=state, **work))


def test_a_task_is_stopped_from_its_last_word_until_it_serves_again():
    tasks = _fold(Tasks(), _health(PS, graphs_run=40, bytes_sent=4800, time=5.0),
                  _health(W0, steps_run=20, graphs_run=20, time=5.0),
                  _health(PS, "stopping", graphs_run=41, time=7.0))
    assert tasks.stopped_at == {PS: 7.0}
    assert (tasks.health[PS].graphs_run, tasks.health[W0].steps_run) == (41, 20)
    tasks.stopped(PS, 9.0)          # its process seen gone later: it said so first
    tasks.stopped(W0, 9.0)          # killed: no last word
    assert tasks.stopped_at == {PS: 7.0, W0: 9.0}
    tasks.apply(_health(W0, time=12.0))   # restarted
    assert tasks.stopped_at == {PS: 7.0}
    tasks.apply(_health(PS, "stopped", time=13.0))   # its stream ended: the Feed says so
    assert tasks.health[PS].graphs_run == 41        # and what it did stays


def _traffic(task, step_id, **links):
    """A TrafficEvent of `task`: links={peer: (sent, received)}."""
    return monitor_pb2.Event(task=task, traffic=monitor_pb2.TrafficEvent(
        step_id=step_id, link=[monitor_pb2.TrafficEvent.Link(peer=peer, sent=s, received=r)
                               for peer, (s, r) in links.items()]))


def _ps_step(step_id, worker, pulled=4000, pushed=4000):
    """One step of `worker` against the ps: it pulls the variables and pushes gradients,
    as both count it."""
    return [_traffic(PS, step_id, **{worker: (pulled, pushed)}),
            _traffic(worker, step_id, **{PS: (pushed, pulled)})]


def test_bytes_per_step_are_medians_per_task_and_per_link_in_each_direction():
    traffic = _fold(Traffic(), *_ps_step(1, W0), *_ps_step(2, W1), *_ps_step(3, W0),
                    *_ps_step(4, W0, pulled=40, pushed=0))   # an odd step: not the median
    assert traffic.per_step(PS) == (4000, 4000)          # it took part in all four
    assert traffic.per_step(W0) == (4000, 4000) and traffic.per_step("nobody") is None
    assert traffic.link(PS, W0) == 4000 and traffic.link(W0, PS) == 4000
    assert traffic.link(W0, W1) is None                 # the workers never exchanged any
    assert traffic.tasks() == [PS, W0, W1]


def test_a_link_seen_only_by_its_receiver_is_its_receivers_count():
    traffic = _fold(Traffic(), _traffic(W0, 1, **{PS: (12, 4000)}))   # the ps is not watched
    assert (traffic.link(PS, W0), traffic.link(W0, PS)) == (4000, 12)


def test_only_the_last_steps_count():
    traffic = _fold(Traffic(steps=2), *_ps_step(1, W0, pulled=10), *_ps_step(2, W0),
                    *_ps_step(3, W0))
    assert traffic.link(PS, W0) == 4000 and traffic.per_step(W0) == (4000, 4000)


def test_the_link_table_has_a_row_and_a_column_per_task_and_greys_a_stopped_one():
    traffic = _fold(Traffic(), *_ps_step(1, W0, pulled=1500, pushed=12))
    html = links_table(traffic, [PS, W0, W1], stopped={PS})
    rows = html.split("<tr>")[2:]   # after the header
    assert [row.count("<td") for row in rows] == [2, 2]   # W1 moved nothing: left out
    assert "ps:0 (stopped)" in rows[0] and "(stopped)" not in rows[1]
    assert rows[0].endswith('<td style="color:#888">&#8212;</td>'
                            '<td style="color:#888">1.5 KB</td></tr>')
    assert '<td style="color:#888">12 B</td>' in rows[1]
    assert links_table(Traffic(), [PS, W0], stopped=set()) == ""


def _traced(task, step_id, devices):
    """A StepEvent whose stats hold `devices`: {device: [(node, start_us, end_us, label)]}."""
    stats = config_pb2.StepStats()
    for device, nodes in devices.items():
        dev = stats.dev_stats.add(device=device)
        for name, start, end, label in nodes:
            dev.node_stats.add(node_name=name, all_start_micros=start,
                               all_end_rel_micros=end - start, timeline_label=label or name)
    return monitor_pb2.Event(task=task, step=monitor_pb2.StepEvent(step_id=step_id,
                                                                   step_stats=stats))


PS_CPU, W0_CPU, W0_GPU = PS + "/device:CPU:0", W0 + "/device:CPU:0", W0 + "/device:GPU:0"
W_READ = f"w/read:0 {PS_CPU} -> {W0_CPU}"
Y_TO_GPU = f"y:0 {W0_CPU} -> {W0_GPU}"


def _worker_part(step_id=7):
    return _traced(W0, step_id, {
        W0_GPU: [("_SOURCE", 1000, 1000, ""), ("y/_1", 1010, 1030, Y_TO_GPU),
                 ("y/_3", 1040, 1050, Y_TO_GPU), ("z", 1050, 1060, "")],
        W0_CPU: [("_SOURCE", 1000, 1000, ""), ("w/read/_1", 1002, 1020, W_READ),
                 ("y", 1015, 1025, ""), ("y/_0", 1025, 1027, Y_TO_GPU),
                 ("y/_2", 1035, 1036, Y_TO_GPU)]})


def _ps_part(step_id=7):
    return _traced(PS, step_id, {PS_CPU: [("_SOURCE", 1001, 1001, ""),
                                          ("w/read", 1003, 1008, ""),
                                          ("w/read/_0", 1008, 1012, W_READ)]})


def test_a_step_traced_in_parts_by_several_tasks_is_one_timeline():
    older = _traced(W0, 6, {W0_CPU: [("older", 0, 5, "")]})
    tasks = _fold(Tasks(), _worker_part(), older, _ps_part())   # parts come in any order
    timeline = tasks.timeline()
    assert list(timeline.lanes) == [PS_CPU, W0_CPU, W0_GPU]   # palette order
    ps = timeline.lanes[PS_CPU]
    assert [(b.name, b.start, b.end) for b in ps] == [
        ("_SOURCE", 1, 1), ("w/read", 3, 8), ("w/read/_0", 8, 12)]
    # the recv waits for its tensor while the ops after it run: a row of its own
    assert [(b.name, b.row) for b in timeline.lanes[W0_CPU]] == [
        ("_SOURCE", 0), ("w/read/_1", 0), ("y", 1), ("y/_0", 0), ("y/_2", 0)]
    flows = [(f.tensor, f.source, f.send.name, f.destination, f.recv.name)
             for f in timeline.flows]
    assert sorted(flows) == [("w/read:0", PS_CPU, "w/read/_0", W0_CPU, "w/read/_1"),
                             ("y:0", W0_CPU, "y/_0", W0_GPU, "y/_1"),   # a loop's iterations
                             ("y:0", W0_CPU, "y/_2", W0_GPU, "y/_3")]   # pair in turn


def test_a_step_traced_whole_by_its_master_is_drawn_whole_and_once():
    whole = _worker_part()
    whole.step.step_stats.MergeFrom(_ps_part().step.step_stats)
    once = _fold(Tasks(), whole).timeline()
    twice = _fold(Tasks(), whole, _ps_part()).timeline()   # the ps's own part too
    assert once == twice and len(once.lanes[PS_CPU]) == 3 and len(once.flows) == 3


def test_the_last_traced_step_is_the_one_drawn_and_steps_without_stats_are_not_traces():
    tasks = _fold(Tasks(), _worker_part(7), _traced(W0, 8, {W0_CPU: [("x", 5000, 5010, "")]}),
                  _step(W0, 1.0, {"loss:0": 1.0}, step_id=9))
    assert {d: [b.name for b in bars] for d, bars in tasks.timeline().lanes.items()} == {
        W0_CPU: ["x"]}
    assert Tasks().timeline() == ({}, [])


def test_the_chrome_trace_has_a_process_per_task_a_thread_per_device_and_flows():
    trace = json.loads(_fold(Tasks(), _worker_part(), _ps_part()).to_chrome_trace())
    events = trace["traceEvents"]
    processes = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert processes == {0: PS, 1: W0}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
               if e["name"] == "thread_name"}
    assert threads == {(0, 0): "device:CPU:0", (1, 0): "device:CPU:0",
                       (1, 1): "device:CPU:0 (2)", (1, 2): "device:GPU:0"}
    ops = [e for e in events if e["ph"] == "X"]
    (y,) = [e for e in ops if e["name"] == "y"]
    assert (y["pid"], y["tid"], y["ts"], y["dur"]) == (1, 1, 15, 10)
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    ends = {e["id"]: e for e in events if e["ph"] == "f"}
    assert len(starts) == 3 and set(starts) == set(ends)
    for flow_id, start in starts.items():
        end = ends[flow_id]
        assert start["name"] == end["name"] and end["bp"] == "e"
        for event in (start, end):   # inside the slice it binds to: its send, its recv
            bound = [e["name"] for e in ops
                     if (e["pid"], e["tid"]) == (event["pid"], event["tid"])
                     and e["ts"] <= event["ts"] <= e["ts"] + e["dur"]]
            assert len(bound) == 1 and "/_" in bound[0]
    w_read = [e for e in starts.values() if e["name"] == "w/read:0"][0]
    assert (w_read["pid"], ends[w_read["id"]]["pid"]) == (0, 1)


def test_no_traced_step_is_an_empty_chrome_trace():
    assert json.loads(Tasks().to_chrome_trace()) == {"traceEvents": [], "displayTimeUnit": "ms"}
