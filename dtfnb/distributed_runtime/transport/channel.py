"""Channel: how calls reach one task's services, whatever carries them.

A Channel carries framed messages (wire.frame) to the master and worker services of
one task and brings back their replies. Each backend implements it for one scheme and
registers itself here; `open_channel("grpc://host:port", ...)` or
`open_channel("unix://name", ...)` then gives a channel without its caller naming a
backend:

    channel = open_channel("grpc://127.0.0.1:2222", rpc.Security(), "the ps task")
    reply = channel.call("GetStatus", wire.frame(worker_pb2.GetStatusRequest()))
    channel.close()

Backends: rpc.GrpcChannel ("grpc", any host) and unix.UnixChannel ("unix", processes
of one host and user, a small fraction of gRPC's cost). Every failure is an OpError
that names the task (`where`).
"""

import abc

from dtfnb.base.errors import InvalidArgumentError


class Channel(abc.ABC):
    """Calls to one task's services. `where` names the task in errors; `peer_pid` is the
    pid of the process at the other end where the kernel tells it (None otherwise): only
    that process's shared-memory blocks may be mapped from what it sends (shm.py).

    ```python
    channel = open_channel("grpc://127.0.0.1:2222", rpc.Security(), "the ps task")
    reply = channel.call("GetStatus", wire.frame(worker_pb2.GetStatusRequest()))
    channel.close()
    ```
    """

    where = ""
    peer_pid = None

    @abc.abstractmethod
    def call(self, method, data, timeout=None):
        """One unary call; returns the reply's bytes."""

    @abc.abstractmethod
    def start(self, method, data, done=None):
        """Starts a unary call; `done(result)` runs once, on the channel's thread, with a
        callable that returns the reply or raises its error. Returns the call, to
        `cancel()`."""

    @abc.abstractmethod
    def stream_from(self, method, data, timeout=None):
        """A server-streaming call: yields each message's bytes."""

    @abc.abstractmethod
    def open_stream(self, method, first, on_message, on_end):
        """A client stream that starts with `first`; `on_message(bytes)` runs for each
        reply and `on_end(error or None)` once it ends. Returns it, to `send(bytes)` and
        `close()`."""

    @abc.abstractmethod
    def close(self):
        """Ends the channel's connection; calls under way fail."""


_BACKENDS = {}   # scheme -> opener(address, security, where)


def register(scheme, opener):
    """Makes `open_channel` open "<scheme>://address" with `opener(address, security,
    where)`, which returns a Channel."""
    _BACKENDS[scheme] = opener


def open_channel(url, security, where):
    """A Channel to the task at `url` ("grpc://host:port", "unix://name")."""
    scheme, separator, address = url.partition("://")
    opener = _BACKENDS.get(scheme) if separator else None
    if opener is None:
        raise InvalidArgumentError(None, None, f"No channel for {url!r}: the schemes are "
                                   f"{', '.join(sorted(_BACKENDS))}")
    return opener(address, security, where)
