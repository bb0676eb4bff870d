"""The monitor service: a task's event stream over gRPC, for remote observers.

In the task's own process, read `server.events` (or a local session's
`master.events`) instead: the same events, with no gRPC in between.
"""

import threading

import grpc

from dtfnb.distributed_runtime.transport import rpc, wire
from dtfnb.distributed_runtime.transport.services import grpc_handler, service_methods
from dtfnb.protos import monitor_pb2


class MonitorServicer:
    """Streams a task's EventLog to each watcher until it cancels or the log closes."""

    def __init__(self, events):
        self._events = events
        self._calls = 0
        self._idle = threading.Condition()

    def Watch(self, request, payload, context):
        """The Watch RPC: streams the task's events of `request.kinds` (all if empty) until the
        watcher cancels."""
        subscription = self._events.subscribe(request.kinds, request.replay)
        with self._idle:
            self._calls += 1
        if not context.add_callback(lambda: self._ended(subscription)):  # already gone
            self._ended(subscription)
        context.send_initial_metadata(())  # tells the watcher it is subscribed
        for event in subscription:
            yield wire.frame(event)

    def _ended(self, subscription):
        subscription.close()
        with self._idle:
            self._calls -= 1
            self._idle.notify_all()

    def wait(self, timeout):
        """Waits until every watch has ended (the log closed): a stopping task calls it
        before closing its port, which would cut off the last events and the end."""
        with self._idle:
            self._idle.wait_for(lambda: not self._calls, timeout)

    def handler(self):
        """The generic gRPC handler, for `start_server(extra_handlers=...)`."""
        return grpc_handler("MonitorService",
                            service_methods("MonitorService", self, monitor_pb2))


class Watch:
    """The events of a remote task as it publishes them: iterate; `close()` to stop.

    Iteration ends when the task stops; an unreachable task raises UnavailableError.
    """

    def __init__(self, target_or_address, kinds=(), replay=True, security=None):
        address = target_or_address.removeprefix("grpc://")
        security = security or rpc.Security()
        self._where = f"the monitor of {address}"
        self._channel = security.channel(address)
        request = monitor_pb2.WatchRequest(kinds=kinds, replay=replay)
        self._call = self._channel.unary_stream("/dtfnb.MonitorService/Watch")(
            wire.frame(request), metadata=security.metadata())
        # Once the task has answered, it is subscribed: no later event can be missed.
        self._call.initial_metadata()
        if self._call.done() and self._call.code() is not grpc.StatusCode.OK:
            err = rpc.as_op_error(self._call, self._where)
            self.close()
            raise err

    def __iter__(self):
        return self

    def __next__(self):
        try:
            data = next(self._call)
        except grpc.RpcError as err:
            if err.code() is grpc.StatusCode.CANCELLED:  # closed here, or the task stopped
                raise StopIteration from None
            raise rpc.as_op_error(err, self._where) from None
        return wire.unframe(data, monitor_pb2.Event)[0]

    def close(self):
        """Stops watching: cancels the call and closes the channel."""
        self._call.cancel()
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def watch(target_or_address, kinds=(), replay=True, security=None):
    """Watches a task of a cluster from anywhere: `target_or_address` is its
    "grpc://host:port" or "host:port"; `kinds` (default: all) are names of Event's
    kinds ("placement", "plan", "step", "queue", "variable_update", "health", "traffic");
    `replay` sends
    the events the task kept first. Returns a Watch: an iterator of Event protos."""
    return Watch(target_or_address, kinds, replay, security)
