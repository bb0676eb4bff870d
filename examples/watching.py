"""Reading a task's event stream while training runs: staleness and throughput."""

import statistics
import threading
import time

from dtfnb.distributed_runtime.transport.monitor import watch


class EventCollector:
    """Collects the events of `kinds` a task publishes from now on, on its own thread.

        with EventCollector(cluster.target("ps", 0), ["variable_update"]) as ps_events:
            ... train ...
        print(mean_staleness(ps_events.of("variable_update")))
    """

    def __init__(self, target, kinds=()):
        self.events = []
        self._watch = watch(target, kinds=kinds, replay=False)  # subscribed once it returns
        self._thread = threading.Thread(target=self._read, daemon=True,
                                        name=f"dtfnb-example-watch-{target}")
        self._thread.start()

    def _read(self):
        try:
            for event in self._watch:
                self.events.append(event)
        except Exception:  # noqa: BLE001 - the task went away: keep what came
            pass

    def of(self, kind):
        return [getattr(e, kind) for e in list(self.events) if e.WhichOneof("kind") == kind]

    def settle(self, quiet=0.3, timeout=5.0):
        """Waits until no event came for `quiet` seconds (those in flight have arrived)."""
        deadline = time.monotonic() + timeout
        seen = -1
        while seen != len(self.events) and time.monotonic() < deadline:
            seen = len(self.events)
            time.sleep(quiet)

    def close(self):
        self.settle()
        self._watch.close()
        self._thread.join(timeout=5)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def staleness(updates, include_dropped=False):
    """applied_at_step - computed_at_step of each VariableUpdateEvent."""
    return [u.applied_at_step - u.computed_at_step for u in updates
            if include_dropped or not u.dropped]


def mean_staleness(updates):
    values = staleness(updates)
    return statistics.fmean(values) if values else float("nan")


def staleness_limits(updates):
    """(staleness, limit) of each applied update of one variable after its worker's first.

    A worker reads the parameters for its next gradient only after its previous one was
    applied, so that gradient can be no staler than the number of updates by other
    workers in between: the limit, which is what it would be if the read came at once.
    """
    variable = updates[0].variable if updates else None
    previous, pairs = {}, []
    for u in sorted((u for u in updates if u.variable == variable and not u.dropped),
                    key=lambda u: u.applied_at_step):
        if u.worker in previous:
            pairs.append((u.applied_at_step - u.computed_at_step,
                          u.applied_at_step - previous[u.worker] - 1))
        previous[u.worker] = u.applied_at_step
    return pairs
