"""What both ends of a gRPC connection share: channel options, security, errors as statuses.

Runtime errors cross as gRPC statuses (TensorFlow's codes are gRPC's) marked in the
trailing metadata, with the failing node's name; a status without the mark is the
transport's own (the peer is down, the deadline passed), reported naming the address.
"""

import hmac
import os
import queue
import ssl
import threading

import grpc

from dtfnb.base import errors
from dtfnb.distributed_runtime.transport import wire
from dtfnb.distributed_runtime.transport.channel import Channel, register
from dtfnb.runtime.step import TIMEOUT_MESSAGE

_ERROR_MARK = "dtfnb-error"
_NODE_KEY = "dtfnb-node-bin"  # binary metadata: a node's name may be any Unicode
_TOKEN_KEY = "dtfnb-token"
_STATUS_BY_CODE = {status.value[0]: status for status in grpc.StatusCode}


def options():
    """A channel's options. The message limit is read from the environment at each call."""
    limit = wire.max_message_bytes()
    return [
        ("grpc.max_send_message_length", limit),
        ("grpc.max_receive_message_length", limit),
        # A task killed without closing its sockets is noticed within seconds.
        ("grpc.keepalive_time_ms", 10_000),
        ("grpc.keepalive_timeout_ms", 5_000),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.max_pings_without_data", 0),
        # A status whose metadata exceeds the receiver's limit is lost ("Stream removed");
        # room for the longest error message and node name that abort_with sends.
        ("grpc.max_metadata_size", 64 * 1024),
    ]


def server_options():
    """A server's options: a channel's, and no port sharing with another server."""
    # Without so_reuseport 0, a second server on a taken port would share it silently.
    return options() + [("grpc.so_reuseport", 0),
                        ("grpc.http2.min_ping_interval_without_data_ms", 5_000)]


# The environment variables that carry a cluster's secrets (docs/security.md).
TOKEN_VARIABLE = "DTFNB_CLUSTER_TOKEN"
TLS_VARIABLES = ("DTFNB_TLS_CERT", "DTFNB_TLS_KEY", "DTFNB_TLS_CA")


class Security:
    """A cluster's shared-secret token and TLS files, from the environment.

    DTFNB_CLUSTER_TOKEN: every call carries it and servers refuse calls without it.
    DTFNB_TLS_CERT and DTFNB_TLS_KEY (PEM files): this process's certificate;
    DTFNB_TLS_CA: the authority that signed every task's certificate. With them,
    servers and clients speak TLS, and servers ask clients for their certificate.
    """

    def __init__(self, environ=os.environ):
        self.token = environ.get(TOKEN_VARIABLE) or None
        if self.token is not None and not (self.token.isascii() and self.token.isprintable()):
            raise ValueError("DTFNB_CLUSTER_TOKEN must be printable ASCII (it travels as "
                             "gRPC metadata)")
        self.cert, self.key, self.ca = [_read(environ, name) for name in TLS_VARIABLES]
        if (self.cert is None) != (self.key is None):
            raise ValueError("DTFNB_TLS_CERT and DTFNB_TLS_KEY must be set together")
        if self.ca is not None and self.cert is None:  # else traffic would go in plaintext
            raise ValueError("DTFNB_TLS_CA is set but DTFNB_TLS_CERT and DTFNB_TLS_KEY are "
                             "not: every task and client needs its own certificate")
        if self.tls:
            _check_pem(environ["DTFNB_TLS_CERT"], environ["DTFNB_TLS_KEY"], self.ca)

    @property
    def tls(self):
        """Whether calls use TLS (a certificate was given)."""
        return self.cert is not None

    def metadata(self):
        """The call metadata that carries the token, or None without one."""
        return ((_TOKEN_KEY, self.token),) if self.token else None

    def channel(self, address):
        """A gRPC channel to `address`, secure if TLS is on."""
        if self.tls:
            credentials = grpc.ssl_channel_credentials(self.ca, self.key, self.cert)
            return grpc.secure_channel(address, credentials, options())
        return grpc.insecure_channel(address, options())

    def add_port(self, server, address):
        """Binds `server` to `address`, with TLS if it is on; returns the port."""
        if self.tls:
            credentials = grpc.ssl_server_credentials(
                [(self.key, self.cert)], root_certificates=self.ca,
                require_client_auth=self.ca is not None)
            return server.add_secure_port(address, credentials)
        return server.add_insecure_port(address)

    def interceptors(self):
        """The server interceptors that refuse calls without the token."""
        return [_TokenCheck(self.token)] if self.token else []


def _read(environ, name):
    path = environ.get(name)
    if not path:
        return None
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as err:
        raise ValueError(f"{name}: cannot read {path}: {err.strerror}") from None


def _check_pem(cert_path, key_path, ca):
    """gRPC would take bad files for a port it cannot bind: say what is wrong instead."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    try:
        context.load_cert_chain(cert_path, key_path, password=lambda: b"")
    except ssl.SSLError as err:
        raise ValueError("DTFNB_TLS_CERT and DTFNB_TLS_KEY must be a PEM certificate and its "
                         f"unencrypted private key: {err}") from None
    if ca is not None:
        try:
            context.load_verify_locations(cadata=ca.decode("ascii", "replace"))
        except ssl.SSLError as err:
            raise ValueError(f"DTFNB_TLS_CA must hold PEM certificates: {err}") from None


class _TokenCheck(grpc.ServerInterceptor):
    def __init__(self, token):
        self._token = token.encode()

    def intercept_service(self, continuation, details):
        given = dict(details.invocation_metadata or ()).get(_TOKEN_KEY, "")
        if hmac.compare_digest(given.encode(), self._token):
            return continuation(details)
        return _refuse


def _deny(requests, context):
    context.abort(grpc.StatusCode.UNAUTHENTICATED, "Missing or wrong cluster token "
                  "(DTFNB_CLUSTER_TOKEN)")


# A streaming handler ends any call, unary or streaming, before reading a message; a
# unary one would first hold a server thread until the request came.
_refuse = grpc.stream_stream_rpc_method_handler(_deny)


def abort_with(context, err):
    """Ends a call with the runtime error `err` as its status."""
    metadata = [(_ERROR_MARK, "1")]
    if getattr(err, "node_name", None):
        metadata.append((_NODE_KEY, _clipped(err.node_name, 1024).encode()))
    context.set_trailing_metadata(metadata)
    context.abort(_STATUS_BY_CODE.get(err.error_code, grpc.StatusCode.UNKNOWN),
                  _clipped(err.message, 4096))


def _clipped(text, limit):
    """`text` within `limit` UTF-8 bytes: a peer's names can make any message long."""
    data = text.encode()
    return text if len(data) <= limit else data[:limit].decode(errors="ignore") + " [...]"


def as_op_error(err, where):
    """The OpError for a failed call to `where` ("/job:ps/replica:0/task:0 at host:port")."""
    status, details = err.code(), err.details() or ""
    trailing = dict(err.trailing_metadata() or ())
    if _ERROR_MARK in trailing:
        node = trailing.get(_NODE_KEY)
        return errors.from_code(status.value[0], details,
                                node.decode(errors="replace") if node else None)
    if status is grpc.StatusCode.DEADLINE_EXCEEDED:
        return errors.DeadlineExceededError(None, None, TIMEOUT_MESSAGE)
    if status is grpc.StatusCode.CANCELLED:
        return errors.CancelledError(None, None, f"The call to {where} was cancelled")
    if status is grpc.StatusCode.RESOURCE_EXHAUSTED:
        # gRPC's message size limit, on either end ("Received message larger than max").
        return errors.InvalidArgumentError(None, None, f"A message to or from {where} was "
                                           f"refused: {details}")
    if status is grpc.StatusCode.UNAUTHENTICATED:
        return errors.from_code(errors.UNAUTHENTICATED, f"{where}: {details}")
    return errors.UnavailableError(None, None, f"{where} is unavailable: {details}")


class GrpcChannel(Channel):
    """Calls to one task's services over gRPC, the "grpc" backend of channel.Channel."""

    # No process is known at the other end (it may be on any host), so nothing it sends
    # may name shared memory.
    peer_pid = None

    def __init__(self, address, security, where):
        self.where = where
        self._channel = security.channel(address)
        self._metadata = security.metadata()
        self._methods = {}
        self._started = set()   # calls under way (see start)
        self._lock = threading.Lock()

    def _method(self, name):
        method = self._methods.get(name)
        if method is None:
            service, descriptor = wire.METHODS[name]
            kind = ("stream_" if descriptor.client_streaming else "unary_") + \
                ("stream" if descriptor.server_streaming else "unary")
            method = getattr(self._channel, kind)(f"/dtfnb.{service}/{name}")
            self._methods[name] = method
        return method

    def call(self, method, data, timeout=None, wait_for_ready=None):
        """One unary call; returns the reply's bytes. `wait_for_ready`: wait for the task
        to come up rather than fail at once (gRPC's own option)."""
        try:
            return self._method(method)(data, timeout=timeout, metadata=self._metadata,
                                        wait_for_ready=wait_for_ready)
        except grpc.RpcError as err:
            raise as_op_error(err, self.where) from None

    def start(self, method, data, done=None):
        """Starts a unary call; `done(result)` runs once with a callable that returns the
        reply or raises its error. Returns the call, to `cancel()`; dropping it does not
        cancel it (gRPC cancels a call whose future is garbage-collected: kept here)."""
        future = self._method(method).future(data, metadata=self._metadata)
        with self._lock:
            self._started.add(future)

        def finished(f):
            with self._lock:
                self._started.discard(f)
            if done is not None:
                done(lambda: self._result(f))

        future.add_done_callback(finished)
        return future

    def _result(self, future):
        if future.cancelled():
            raise errors.CancelledError(None, None, f"The call to {self.where} was cancelled")
        try:
            return future.result()
        except grpc.RpcError as err:
            raise as_op_error(err, self.where) from None

    def stream_from(self, method, data, timeout=None):
        """A server-streaming call: yields each message's bytes."""
        try:
            yield from self._method(method)(data, timeout=timeout, metadata=self._metadata)
        except grpc.RpcError as err:
            raise as_op_error(err, self.where) from None

    def open_stream(self, method, first, on_message, on_end):
        """A client stream that starts with `first`; `on_message(bytes)` runs for each reply
        and `on_end(error or None)` once it ends. Returns it, to `send(bytes)` and `close()`."""
        return _ClientStream(self, method, first, on_message, on_end)

    def close(self):
        """Closes the gRPC channel."""
        self._channel.close()


register("grpc", GrpcChannel)


class _ClientStream:
    """gRPC pulls the messages from a queue, on its own thread."""

    def __init__(self, channel, method, first, on_message, on_end):
        self._queue = queue.SimpleQueue()
        self._closing = False
        self._call = channel._method(method)(self._messages(first),
                                             metadata=channel._metadata)
        self._reader = threading.Thread(target=self._read, daemon=True,
                                        args=(channel.where, on_message, on_end),
                                        name=f"dtfnb-stream-{channel.where}")
        self._reader.start()

    def send(self, data):
        self._queue.put(data)

    def _messages(self, first):
        yield first
        while True:
            data = self._queue.get()
            if data is None:
                return
            yield data

    def _read(self, where, on_message, on_end):
        try:
            for data in self._call:
                on_message(data)
            on_end(None)
        except grpc.RpcError as err:
            if not self._closing:
                on_end(as_op_error(err, where))

    def close(self):
        self._closing = True
        self._queue.put(None)
        self._call.cancel()
        self._reader.join()
