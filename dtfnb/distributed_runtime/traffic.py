"""A task's traffic: the tensor bytes it sends to and receives from each other task, per
step and in total (see TrafficEvent in monitor.proto for what is counted).

The transport counts as tensors go (two additions under a lock per message); a step's
counts are published once it ends on this task, by what ran it here: its master, or the
RunGraph call of another task's master.
"""

import threading

from dtfnb.protos import monitor_pb2

# Steps whose counts were never published (a push for a step that never ran here) are
# forgotten, the oldest first, beyond this many.
_STEPS_KEPT = 4096


class Traffic:
    """The tensor bytes one task exchanged with each peer task, per step and in total;
    `events`: the task's EventLog, where `publish` puts a step's TrafficEvent.

    ```python
    traffic = Traffic(EventLog("/job:ps/replica:0/task:0"))
    traffic.count(7, "/job:worker/replica:0/task:0", sent=4000)   # a push of step 7
    traffic.publish(7, "9f2c...")        # step 7 ended here: its TrafficEvent, if watched
    traffic.bytes_sent                   # 4000, over all steps (HealthEvent)
    ```
    """

    def __init__(self, events):
        self.events = events
        self.bytes_sent = 0
        self.bytes_received = 0
        self._steps = {}   # step id -> {peer: [sent, received]}, oldest first
        self._lock = threading.Lock()

    def count(self, step_id, peer, sent=0, received=0):
        """Adds what one message of step `step_id` carried to or from task `peer`."""
        with self._lock:
            self.bytes_sent += sent
            self.bytes_received += received
            links = self._steps.get(step_id)
            if links is None:
                links = self._steps[step_id] = {}
                if len(self._steps) > _STEPS_KEPT:
                    del self._steps[next(iter(self._steps))]
            link = links.get(peer)
            if link is None:
                links[peer] = [sent, received]
            else:
                link[0] += sent
                link[1] += received

    def move(self, step_ids, step_id):
        """Counts what was counted under `step_ids` (a collective's executions) as step
        `step_id`'s, which ran them."""
        with self._lock:
            links = self._steps.setdefault(step_id, {})
            for moved in [self._steps.pop(i) for i in step_ids if i in self._steps]:
                for peer, (sent, received) in moved.items():
                    link = links.setdefault(peer, [0, 0])
                    link[0] += sent
                    link[1] += received
            if not links:
                del self._steps[step_id]

    def publish(self, step_id, session_handle):
        """Ends step `step_id` here: publishes what it moved (a TrafficEvent) if it moved
        anything and someone watches, and forgets it."""
        with self._lock:
            links = self._steps.pop(step_id, None)
        if links is None or not self.events.watching:
            return
        event = monitor_pb2.Event()
        traffic = event.traffic
        traffic.session_handle = session_handle
        traffic.step_id = step_id
        for peer, (sent, received) in sorted(links.items()):
            traffic.link.add(peer=peer, sent=sent, received=received)
        self.events.publish(event)
