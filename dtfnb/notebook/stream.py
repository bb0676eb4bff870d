"""Where widgets and the panel read events from, and the thread that feeds them.

Everything is read from the monitor stream, as a remote observer would: a task of
this process through its EventLog, any other task through `monitor.watch()`.
"""

import threading
import time

from dtfnb.client.session import BaseSession
from dtfnb.distributed_runtime.server_lib import Server, running_server
from dtfnb.distributed_runtime.transport.monitor import watch
from dtfnb.launch import Cluster
from dtfnb.protos import monitor_pb2
from dtfnb.runtime.events import EventLog

_THROTTLE_SECONDS = 0.2   # at most 5 updates a second


def event_streams(source, kinds=()):
    """Subscriptions (iterables of Event protos with `close()`) to `source`'s events,
    replaying what its tasks kept.

    `source`: a LocalCluster (every task), a tf.train.Server or EventLog of this process,
    a tf.Session (its master's task), a target "grpc://host:port", or a list of those.
    """
    if isinstance(source, (list, tuple)):
        return [stream for one in source for stream in event_streams(one, kinds)]
    if isinstance(source, Cluster):
        return event_streams([source.target(t.job, t.index) for t in source.tasks
                              if t.state == "serving"], kinds)
    if isinstance(source, Server):
        source = source.events
    elif isinstance(source, BaseSession):
        source = source.events if source.events is not None else source.sess_str
    elif isinstance(source, str):
        server = running_server(source)
        if server is not None:
            source = server.events
        elif not source.startswith("grpc://"):
            raise ValueError(f"Cannot watch {source!r}: give a target 'grpc://host:port'")
    if isinstance(source, EventLog):
        return [source.subscribe(kinds, replay=True)]
    if isinstance(source, str):
        return [watch(source, kinds, replay=True)]
    raise TypeError(f"Cannot watch the events of {type(source).__name__}: give a "
                    "LocalCluster, a tf.train.Server, a tf.Session or a 'grpc://' target")


def _health(task, state):
    """A HealthEvent saying that `task` is in `state` now."""
    return monitor_pb2.Event(time=time.time(), task=task,
                             health=monitor_pb2.HealthEvent(task=task, state=state))


class Feed:
    """Reads event streams on background threads and hands what arrived to `on_events`
    (a list of Event protos) from one thread, at most 5 times a second, and only when
    something arrived: an idle stream costs nothing. It ends when every stream has ended
    (its tasks stopped) or on `close()`. A stream that ends by itself ends with a
    HealthEvent of its own making for each task it carried, state "stopped" ("dead" when
    it broke), so that views see the stop as any other event. Exceptions in `on_events`
    end the feed too (they are kept in `error`): nothing is printed."""

    def __init__(self, streams, on_events):
        self._streams = streams
        self._on_events = on_events
        self._pending = []
        self._arrived = threading.Condition()
        self._closed = False
        self._open = len(streams)   # streams that have not ended
        self._received = self._handed = 0   # events read, and handed to on_events
        self._readers = [threading.Thread(target=self._read, args=(s,), daemon=True,
                                          name="dtfnb-feed-reader") for s in streams]
        self._updater = threading.Thread(target=self._update, daemon=True,
                                         name="dtfnb-feed-updater")
        self.error = None

    def drain(self, quiet=0.15, timeout=3.0):
        """Hands over, in the caller's thread, what the streams replay: events until none
        has come for `quiet` seconds (at most `timeout`). Called before `start()`, so that
        what a widget first shows does not depend on thread timing."""
        for reader in self._readers:
            reader.start()
        deadline = time.monotonic() + timeout
        with self._arrived:
            while time.monotonic() < deadline:
                count = len(self._pending)
                self._arrived.wait(quiet)
                if len(self._pending) == count:
                    break
            events, self._pending = self._pending, []
        if events:
            self._on_events(events)
        self._handed += len(events)

    def start(self):
        """Starts the stream readers (those `drain()` did not) and the thread that hands events on.
        """
        for reader in self._readers:
            if reader.ident is None:   # not started by drain()
                reader.start()
        self._updater.start()

    def _read(self, stream):
        tasks, state = set(), "stopped"
        try:
            for event in stream:
                tasks.add(event.task)
                with self._arrived:
                    self._pending.append(event)
                    self._received += 1
                    self._arrived.notify_all()
        except Exception as err:  # the task went away: its stream ends here
            self.error = self.error or err
            state = "dead"
        finally:
            with self._arrived:
                if not self._closed:   # the stream ended by itself: its tasks stopped
                    self._pending += [_health(task, state) for task in sorted(tasks)]
                    self._received += len(tasks)
                self._open -= 1
                self._arrived.notify_all()

    def _update(self):
        while True:
            with self._arrived:
                self._arrived.wait_for(lambda: self._pending or self._closed or not self._open)
                if self._closed or not self._pending:   # closed, or every stream ended
                    return
                events, self._pending = self._pending, []
            try:
                self._on_events(events)
            except Exception as err:
                self.error = err
                return
            with self._arrived:
                self._handed += len(events)
                self._arrived.notify_all()
            time.sleep(_THROTTLE_SECONDS)

    def settle(self, quiet=0.1, timeout=1.0):
        """Waits until every event read so far was handed on and none came for `quiet`
        seconds (at most `timeout`), so that what is drawn next includes the events of
        steps that just ended."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while time.monotonic() < deadline and self._updater.is_alive():
                counts = (self._received, self._handed)
                self._arrived.wait(quiet)
                if (self._received, self._handed) == counts and counts[0] == counts[1]:
                    return

    def close(self):
        """Stops reading and waits for the threads."""
        with self._arrived:
            self._closed = True
            self._arrived.notify_all()
        for stream in self._streams:
            stream.close()
        for thread in (*self._readers, self._updater):
            if thread.ident is not None:
                thread.join(5.0)
