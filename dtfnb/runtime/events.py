"""A task's event stream, which widgets and remote observers watch (see monitor.proto).

Producers publish Event protos; the log stamps them, keeps the latest for replay
(so that a watcher who comes late still sees the placement) and hands each to
every subscriber. Publishing never blocks the runtime: a subscriber that reads
too slowly loses its oldest events, and counts them.
"""

import collections
import threading
import time

from dtfnb.base.errors import InvalidArgumentError
from dtfnb.protos import monitor_pb2

KINDS = tuple(f.name for f in monitor_pb2.Event.DESCRIPTOR.oneofs_by_name["kind"].fields)


class EventLog:
    """The events of one task (`task`: "/job:ps/replica:0/task:0"); thread-safe.

    The last `keep` events are kept for replay. Producers of frequent events (steps)
    check `watching` first, so that a task nobody watches pays nothing for them.
    Kernels reach the log as `device.events`. A published event is shared by every
    subscriber: nobody may change it afterwards.

    ```python
    server = tf.train.Server.create_local_server()
    watch = server.events.subscribe(["queue"], replay=True)
    q = tf.FIFOQueue(10, tf.float32)
    with tf.Session(server.target) as sess:
        sess.run(q.enqueue(1.0))
    print(watch.get(timeout=1).queue)     # name, size, capacity of the queue
    watch.close()
    ```
    """

    def __init__(self, task, keep=1000):
        self.task = task
        self._kept = collections.deque(maxlen=keep)
        self._subscriptions = set()
        self._closed = False
        self._lock = threading.Lock()

    @property
    def watching(self):
        """Whether anyone subscribes: producers of frequent events skip them otherwise."""
        return bool(self._subscriptions)

    def publish(self, event):
        """Stamps `event` (an Event proto with its kind set) and hands it to every watcher."""
        event.time = time.time()
        event.task = self.task
        kind = event.WhichOneof("kind")
        with self._lock:  # every subscriber sees the events in one order
            self._kept.append((kind, event))
            for subscription in self._subscriptions:
                subscription._put(kind, event)

    def subscribe(self, kinds=(), replay=False, limit=1000):
        """A Subscription to the events of `kinds` (default: all) from now on; `replay`:
        the kept ones first. At most `limit` events wait for the reader."""
        unknown = sorted(set(kinds) - set(KINDS))
        if unknown:
            raise InvalidArgumentError(None, None, f"Unknown event kinds {unknown}: the kinds "
                                       f"are {', '.join(KINDS)}")
        subscription = Subscription(self, kinds, limit)
        with self._lock:
            if replay:
                for kind, event in self._kept:
                    subscription._put(kind, event)
            if self._closed:
                subscription._end()
            else:
                self._subscriptions.add(subscription)
        return subscription

    def _unsubscribe(self, subscription):
        with self._lock:
            self._subscriptions.discard(subscription)

    def close(self):
        """Ends every subscription, once its reader has taken what is queued."""
        with self._lock:
            self._closed = True
            subscriptions, self._subscriptions = self._subscriptions, set()
        for subscription in subscriptions:
            subscription._end()


class Subscription:
    """One watcher's events, oldest first: iterate (or `get`), and `close()` to stop.

    `dropped` counts the events lost because the reader fell `limit` events behind.
    """

    def __init__(self, log, kinds, limit):
        self._log = log
        self._kinds = frozenset(kinds)
        self._queue = collections.deque()
        self._limit = limit
        self._ended = False   # no more events will come
        self._cond = threading.Condition()
        self.dropped = 0

    def _put(self, kind, event):
        if self._kinds and kind not in self._kinds:
            return
        with self._cond:
            if len(self._queue) >= self._limit:
                self._queue.popleft()
                self.dropped += 1
            self._queue.append(event)
            self._cond.notify()

    def _end(self):
        with self._cond:
            self._ended = True
            self._cond.notify_all()

    def get(self, timeout=None):
        """The next event; None when the stream has ended or `timeout` seconds passed."""
        with self._cond:
            self._cond.wait_for(lambda: self._queue or self._ended, timeout)
            return self._queue.popleft() if self._queue else None

    def __iter__(self):
        return self

    def __next__(self):
        event = self.get()
        if event is None:
            raise StopIteration
        return event

    def close(self):
        """Stops watching: the stream ends at once, dropping what is queued."""
        self._log._unsubscribe(self)
        with self._cond:
            self._queue.clear()
            self._ended = True
            self._cond.notify_all()
