"""The folds behind StalenessPlot and ClusterView (dtfnb/notebook/state.py), from
hand-built monitor events: staleness, losses and dropped gradients per worker."""

from dtfnb.notebook.state import Staleness
from dtfnb.protos import monitor_pb2

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
