"""Calls between processes on one host over a Unix socket: a small fraction of gRPC's cost.

A task serves its master and worker here as well as over gRPC, at an abstract
socket name (Linux: no file to clean up, gone with the process) that GetStatus
announces. A client that finds the task on its own host calls here instead. The
server accepts only processes of its own user (SO_PEERCRED) that present the
cluster token, when there is one, within seconds: until then it reads no message
longer than a hello, so a stranger makes it allocate nothing. Each end knows the pid
of the process on the other (`peer_pid`, from the kernel, never from the peer): only
that process's shared-memory blocks are mapped from what it sends (see shm.py). A body's buffer is
never zeroed first: pages are taken as the bytes arrive, so that a length alone
costs no memory. DTFNB_UNIX_SOCKETS=0 turns it off: gRPC only.

A connection carries many calls at once, told apart by id; each message is an
envelope and a body (see CallError in protos/dtfnb/protos/wire.proto). The server
runs the messages of a client stream (tensor pushes) on the connection's reader
thread, in order; a unary or server-streaming call runs on the thread that read it,
while a pool thread takes over the reading. A send never blocks its caller: what the
socket cannot take at once waits, in order, for the connection's writer thread, so
two reader threads sending to each other cannot deadlock. A unary call that can start
without waiting (a RunGraph whose kernels never block: see services.service_methods)
starts on the thread that read it, which reads on, and replies from the thread that
ends it: no thread hands the reading over, none waits for the step.
"""

import collections
import hmac
import itertools
import logging
import os
import queue
import socket
import struct
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from dtfnb.base import errors
from dtfnb.distributed_runtime.transport import wire
from dtfnb.distributed_runtime.transport.channel import Channel, register
from dtfnb.protos import wire_pb2
from dtfnb.runtime.step import TIMEOUT_MESSAGE

log = logging.getLogger("dtfnb.distributed_runtime")

SWITCH_VARIABLE = "DTFNB_UNIX_SOCKETS"
_ENVELOPE = struct.Struct("<IIBBxx")   # body length, call id, kind, method
HELLO, CALL, OPEN, ITEM, REPLY, END, ERROR, CANCEL = range(8)
_LOST, _CANCELLED = -1, -2              # what a pending call hears when no message will come
_CONNECT_SECONDS = 5.0
_HELLO_BYTES = 4096   # the longest hello a task reads from a client it does not know yet
_ZEROED_BYTES = 1 << 20   # a smaller body is allocated zeroed: cheaper to make
_PEER_CREDENTIALS = struct.Struct("3i")  # pid, uid, gid


def enabled():
    """Whether this process serves and calls over Unix sockets (Linux, not switched off)."""
    return sys.platform.startswith("linux") and os.environ.get(SWITCH_VARIABLE, "1") != "0"


def socket_name(address):
    """The abstract socket name of the task serving gRPC at `address` ("host:port")."""
    return f"dtfnb-task-{address}"


class _Link:
    """One connection's socket: envelopes out without blocking, envelopes in on a thread."""

    skip_long = True   # a body over the limit is read past and refused; False: ends the link

    def __init__(self, sock, where, limit):
        self.where = where
        self.closed = False
        self._sock = sock
        self._limit = limit   # the longest body taken; longer ones are refused
        self._lock = threading.Lock()
        self._backlog = collections.deque()   # [memoryview] messages the socket could not take
        self._more = threading.Condition(self._lock)
        self._writer = None

    def start(self, name):
        threading.Thread(target=self._read, daemon=True, name=name).start()

    def send(self, call_id, kind, body=b"", method=0):
        parts = [memoryview(_ENVELOPE.pack(len(body), call_id, kind, method)),
                 memoryview(body).cast("B")]
        with self._lock:
            if self.closed:
                raise errors.UnavailableError(None, None, f"{self.where} is unavailable: "
                                              "the connection is closed")
            if not self._backlog:
                try:
                    parts = _unsent(parts, self._sock.sendmsg(parts, (), socket.MSG_DONTWAIT))
                except BlockingIOError:
                    pass
                except OSError as err:
                    self._shut()
                    raise errors.UnavailableError(None, None, f"{self.where} is unavailable: "
                                                  f"{err.strerror}") from None
                if not parts:
                    return
            self._backlog.append(parts)
            if self._writer is None:
                self._writer = threading.Thread(target=self._write, daemon=True,
                                                name=f"dtfnb-local-writer-{self.where}")
                self._writer.start()
            self._more.notify()

    def _write(self):
        while True:
            with self._lock:
                while not self._backlog and not self.closed:
                    self._more.wait()
                if self.closed:
                    return
                parts = self._backlog[0]
            try:
                while parts:
                    parts = _unsent(parts, self._sock.sendmsg(parts))
            except OSError:
                self.close()
                return
            with self._lock:
                self._backlog.popleft()

    def _read(self):
        """Handles messages as they come until the connection ends, or until one needs
        this thread for a while (a call): then another thread reads on meanwhile, and
        the call runs here at once, with no handoff to wait for."""
        try:
            work = self._read_until_work()
        except BaseException:
            self._finish()
            raise
        if work is None:
            self._finish()
        else:
            self.read_elsewhere()
            work()

    def _read_until_work(self):
        try:
            while (message := read_message(self._sock, self._limit, self.where,
                                           self.skip_long)) is not None:
                work = self.received(*message)
                if work is not None:
                    return work
        except OSError:
            pass
        return None

    def _finish(self):
        self.close()
        with self._lock:
            writer = self._writer
        if writer is not None:
            writer.join()   # the shut socket ends its send at once
        self._sock.close()
        self.lost()

    def received(self, call_id, kind, method, body):
        """Handles one message; returns what must run on a thread of its own, if any."""
        raise NotImplementedError

    def read_elsewhere(self):
        """Starts `_read` on another thread (the server's links; a client's never wait)."""
        raise NotImplementedError

    def lost(self):
        """The connection has ended: nothing more comes in."""

    def close(self):
        with self._lock:
            self._shut()

    def _shut(self):
        if not self.closed:
            self.closed = True
            self._more.notify()
            try:
                self._sock.shutdown(socket.SHUT_RDWR)   # wakes the reader
            except OSError:
                pass


def _unsent(parts, sent):
    """What of `parts` remains after the first `sent` bytes went."""
    for i, part in enumerate(parts):
        if sent < len(part):
            return [part[sent:], *parts[i + 1:]]
        sent -= len(part)
    return []


def read_message(sock, limit, where, skip_long=True):
    """The next (call id, kind, method, body) from `sock`, or None once it has ended. A
    body over `limit` bytes is read past and comes as an ERROR saying so; without
    `skip_long`, it ends the connection (None) unread."""
    head = bytearray(_ENVELOPE.size)
    if not _read_into(sock, head):
        return None
    length, call_id, kind, method = _ENVELOPE.unpack(head)
    if length > limit:
        if not skip_long or not _skip(sock, length):
            return None
        return call_id, ERROR, 0, _error_body(errors.InvalidArgumentError(
            None, None, f"A message to or from {where} was refused: Received message "
            f"larger than max ({length} vs. {limit})"))
    # A large body is not zeroed first (bytearray touches every page at once): memory
    # grows with the bytes that arrive, not with what the header claims. Either is
    # read in full before use.
    body = bytearray(length) if length < _ZEROED_BYTES else np.empty(length, np.uint8)
    if length and not _read_into(sock, body):
        return None
    return call_id, kind, method, memoryview(body).toreadonly()


def _read_into(sock, buffer):
    """Fills `buffer` from `sock`; False if the connection ended first."""
    view, got = memoryview(buffer), 0
    while got < len(view):
        n = sock.recv_into(view[got:])
        if n == 0:
            return False
        got += n
    return True


def _skip(sock, length):
    """Reads and drops `length` bytes; False if the connection ended first."""
    buffer = bytearray(min(length, 1 << 20))
    while length:
        chunk = memoryview(buffer)[:min(length, len(buffer))]
        if not _read_into(sock, chunk):
            return False
        length -= len(chunk)
    return True


def _peer_credentials(sock):
    """(pid, uid) of the process at the other end of `sock`, as the kernel knows them."""
    pid, uid, _ = _PEER_CREDENTIALS.unpack(
        sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEER_CREDENTIALS.size))
    return pid, uid


def _error_body(err):
    return wire_pb2.CallError(code=err.error_code, message=err.message,
                              node=err.node_name or "").SerializeToString()


def _error_from(body):
    error = wire_pb2.CallError.FromString(body)
    return errors.from_code(error.code, error.message, error.node or None)


# The client side.

class UnixChannel(Channel):
    """Calls to one task over its Unix socket, the "unix" backend of channel.Channel.

    Raises UnavailableError when the task cannot be reached; after a task restarts
    at the same address, the next call connects again."""

    def __init__(self, name, token, where):
        self.where = where
        self._name = name
        self._token = (token or "").encode()
        self._lock = threading.Lock()
        self._link = self._connect()

    def _connected(self):
        with self._lock:
            if self._link.closed:
                self._link = self._connect()
            return self._link

    def _connect(self):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(_CONNECT_SECONDS)
            sock.connect("\0" + self._name)
            sock.sendall(_ENVELOPE.pack(len(self._token), 0, HELLO, 0) + self._token)
            answer = read_message(sock, wire.max_message_bytes(), self.where)
            if answer is None:
                raise ConnectionResetError(0, "the task closed the connection")
            _, kind, _, body = answer
            sock.settimeout(None)
        except OSError as err:
            sock.close()
            raise errors.UnavailableError(None, None, f"{self.where} is unavailable: "
                                          f"{err.strerror or err}") from None
        if kind != HELLO:
            sock.close()
            raise _error_from(body)
        link = _ClientLink(sock, self.where, wire.max_message_bytes(),
                           _peer_credentials(sock)[0])
        link.start(f"dtfnb-local-reader-{self.where}")
        return link

    @property
    def peer_pid(self):
        """The pid of the task's process, from the kernel: the only process whose shared
        blocks its replies may name."""
        return self._link.peer_pid

    def call(self, method, data, timeout=None):
        """One unary call; returns the reply's bytes."""
        answered = threading.Event()
        answer = []

        def deliver(kind, body):
            answer.append((kind, body))
            answered.set()

        link, call_id = self._begin(method, CALL, data, deliver)
        if not answered.wait(timeout) and link.cancel(call_id, notify=False):
            raise errors.DeadlineExceededError(None, None, TIMEOUT_MESSAGE)
        return self._result(*answer[0])

    def start(self, method, data, done=None):
        """Starts a unary call; `done(result)` runs once with a callable that returns the
        reply or raises its error. Returns the call, to `cancel()`."""
        def deliver(kind, body):
            if done is not None:
                done(lambda: self._result(kind, body))

        return _Started(*self._begin(method, CALL, data, deliver))

    def stream_from(self, method, data, timeout=None):
        """A server-streaming call: yields each message's bytes."""
        messages = queue.SimpleQueue()
        link, call_id = self._begin(method, CALL, data,
                                    lambda kind, body: messages.put((kind, body)))
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while True:
                try:
                    kind, body = messages.get(
                        timeout=None if deadline is None else max(0, deadline - time.monotonic()))
                except queue.Empty:
                    raise errors.DeadlineExceededError(None, None, TIMEOUT_MESSAGE) from None
                if kind == END:
                    return
                yield self._result(kind, body)
        finally:
            link.cancel(call_id)   # a no-op once the stream has ended

    def open_stream(self, method, first, on_message, on_end):
        """A client stream that starts with `first`; `on_message(bytes)` runs for each reply
        and `on_end(error or None)` once it ends. Returns it, to `send(bytes)` and `close()`."""
        def deliver(kind, body):
            if kind == ITEM:
                on_message(body)
            elif kind == END:
                on_end(None)
            else:
                try:
                    self._result(kind, body)
                except errors.OpError as err:
                    on_end(err)

        link, call_id = self._begin(method, OPEN, first, deliver)
        return _Stream(link, call_id)

    def _begin(self, method, kind, data, deliver):
        link = self._connected()
        return link, link.begin(wire.METHOD_INDEX[method], kind, data, deliver)

    def _result(self, kind, body):
        if kind in (REPLY, ITEM):
            return body
        if kind == ERROR:
            raise _error_from(body)
        if kind == _CANCELLED:
            raise errors.CancelledError(None, None, f"The call to {self.where} was cancelled")
        raise errors.UnavailableError(None, None, f"{self.where} is unavailable: the "
                                      "connection closed")

    def close(self):
        """Closes the connection to the server."""
        self._link.close()


register("unix", lambda name, security, where: UnixChannel(name, security.token, where))


class _ClientLink(_Link):
    def __init__(self, sock, where, limit, peer_pid):
        super().__init__(sock, where, limit)
        self.peer_pid = peer_pid
        self._ids = itertools.count(1)
        self._pending = {}   # call id -> deliver(kind, body)

    def begin(self, method, kind, data, deliver):
        call_id = next(self._ids)
        self._pending[call_id] = deliver
        try:
            self.send(call_id, kind, data, method)
        except errors.OpError:
            if self._pending.pop(call_id, None) is not None:
                raise
            # else lost() has told `deliver` already
        return call_id

    def received(self, call_id, kind, method, body):
        deliver = (self._pending.get(call_id) if kind == ITEM
                   else self._pending.pop(call_id, None))
        if deliver is not None:   # else the caller has cancelled it
            deliver(kind, body)

    def cancel(self, call_id, notify=True):
        """Ends a call here and tells the task; True if it had not ended already.
        `notify`: the caller hears of it as of any end (CancelledError)."""
        deliver = self._pending.pop(call_id, None)
        if deliver is None:
            return False
        try:
            self.send(call_id, CANCEL)
        except errors.OpError:
            pass   # the task is gone, and with it the call
        if notify:
            deliver(_CANCELLED, None)
        return True

    def lost(self):
        pending, self._pending = self._pending, {}
        for deliver in pending.values():
            deliver(_LOST, None)


class _Started:
    """A call in flight, to cancel."""

    __slots__ = ("_link", "_id")

    def __init__(self, link, call_id):
        self._link = link
        self._id = call_id

    def cancel(self):
        self._link.cancel(self._id)


class _Stream(_Started):
    """A client stream, to send on."""

    __slots__ = ()

    def send(self, data):
        self._link.send(self._id, ITEM, data)

    def close(self):
        self.cancel()


# The server side.

class UnixServer:
    """Serves `methods` ({name: (descriptor, handler)}, as services.service_methods makes
    them) at the abstract socket `name`."""

    def __init__(self, name, methods, token):
        self.name = name
        self._methods = [methods.get(method) for method in wire.METHOD_NAMES]
        self.token = (token or "").encode()
        self.limit = wire.max_message_bytes()
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._listener.bind("\0" + name)
            self._listener.listen(64)
        except OSError:
            self._listener.close()
            raise
        # Every call in progress holds a thread, and so does each connection's reader:
        # enough for blocked calls never to leave a connection without one.
        self._pool = ThreadPoolExecutor(max_workers=1024, thread_name_prefix="dtfnb-local")
        self._links = set()
        self._lock = threading.Lock()
        self._accepting = threading.Thread(target=self._accept, daemon=True,
                                           name=f"dtfnb-local-accept-{name}")
        self._accepting.start()
        # Each connection's reader holds a pool thread, and at exit Python joins the pool's
        # threads before any atexit hook runs: close the connections first, so that a
        # process that serves in-process exits when its main thread ends, as TensorFlow's.
        threading._register_atexit(self.stop)

    def _accept(self):
        while True:
            try:
                sock, _ = self._listener.accept()
            except OSError:   # stop() shut the listener
                return
            pid, uid = _peer_credentials(sock)
            if uid != os.getuid():   # another user's process: not even a thread for it
                sock.close()
                continue
            sock.settimeout(_CONNECT_SECONDS)   # to say hello; no longer
            link = _ServerLink(sock, self, pid)
            with self._lock:
                self._links.add(link)
            self.submit(link._read)

    def admits(self, token):
        """Whether a client (of this user: see _accept) may call with `token`."""
        return not self.token or hmac.compare_digest(bytes(token), self.token)

    def method(self, index):
        """The (descriptor, handler) of the method numbered `index` in wire.METHOD_NAMES, or None if
        not served."""
        return self._methods[index] if index < len(self._methods) else None

    def submit(self, fn, *args):
        """Runs `fn(*args)` on the server's thread pool."""
        self._pool.submit(fn, *args)

    def forget(self, link):
        """Drops a closed connection from those `stop` closes."""
        with self._lock:
            self._links.discard(link)

    def stop(self):
        """Closes the socket and every connection (their calls are cancelled)."""
        try:
            self._listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._accepting.join()
        self._listener.close()
        with self._lock:
            links = list(self._links)
        for link in links:
            link.close()
        self._pool.shutdown(wait=True)


class _Context:
    """What a handler knows of its call: the pid of the calling process (from the kernel),
    and callbacks run once, when it ends or is cancelled (as gRPC's context.add_callback)."""

    __slots__ = ("peer_pid", "_callbacks", "ended")

    def __init__(self, peer_pid):
        self.peer_pid = peer_pid
        self._callbacks = []
        self.ended = False

    def add_callback(self, callback):
        self._callbacks.append(callback)
        return True

    def end(self):
        if not self.ended:
            self.ended = True
            for callback in self._callbacks:
                callback()


class _ServerLink(_Link):
    skip_long = False   # until admitted: a stranger's long message ends the connection

    def __init__(self, sock, server, peer_pid):
        super().__init__(sock, f"a local client of {server.name}",
                         max(_HELLO_BYTES, len(server.token)))
        self._server = server
        self._peer_pid = peer_pid
        self._admitted = False
        self._calls = {}     # call id -> _Context
        self._streams = {}   # call id -> (MethodDescriptor, receive(bytes) -> replies)

    def received(self, call_id, kind, method, body):
        if not self._admitted:
            self._admit(kind, body)
        elif kind == ITEM:
            stream = self._streams.get(call_id)
            if stream is not None:
                self._receive(call_id, *stream, body)
        elif kind == CANCEL:
            self._streams.pop(call_id, None)
            context = self._calls.pop(call_id, None)
            if context is not None:
                context.end()
        elif kind == ERROR:   # a message this end refused: its call ends with the error
            self._streams.pop(call_id, None)
            self._calls.setdefault(call_id, _Context(self._peer_pid))
            self._end(call_id, ERROR, body)
        else:
            return self._start(call_id, kind, method, body)
        return None

    def read_elsewhere(self):
        self._server.submit(self._read)

    def _admit(self, kind, body):
        if kind == HELLO and self._server.admits(body):
            self._admitted = True
            self._limit, self.skip_long = self._server.limit, True
            self._sock.settimeout(None)
            self.send(0, HELLO)
            return
        self.send(0, ERROR, _error_body(errors.from_code(
            errors.UNAUTHENTICATED, "Missing or wrong cluster token (DTFNB_CLUSTER_TOKEN)")))
        self.close()

    def _start(self, call_id, kind, index, body):
        """Starts a call: a client stream's first message is handled here; a unary or
        server-streaming call is returned, to run on this thread (see _read)."""
        entry = self._server.method(index)
        descriptor = entry[0] if entry else None
        if descriptor is None or kind != (OPEN if descriptor.client_streaming else CALL):
            self.send(call_id, ERROR, _error_body(errors.from_code(
                errors.UNIMPLEMENTED, f"No method {index} for a message of kind {kind}")))
            return None
        context = self._calls[call_id] = _Context(self._peer_pid)
        if descriptor.client_streaming:
            self._streams[call_id] = descriptor, entry[1](context)
            self._receive(call_id, *self._streams[call_id], body)
            return None
        start = getattr(entry[1], "start", None)   # see services.service_methods
        if start is not None and start(body, context,
                                       lambda data, err: self._answer(call_id, descriptor,
                                                                      data, err)):
            return None   # it replies when it ends, and this thread reads on
        return lambda: self._serve(call_id, descriptor, entry[1], body, context)

    def _receive(self, call_id, descriptor, receive, body):
        try:
            for reply in receive(body):
                self.send(call_id, ITEM, reply)
        except Exception as err:
            self._streams.pop(call_id, None)
            self._fail(call_id, descriptor, err)

    def _serve(self, call_id, descriptor, handler, body, context):
        try:
            if descriptor.server_streaming:
                for message in handler(body, context):
                    if context.ended:
                        return
                    self.send(call_id, ITEM, message)
                self._end(call_id, END)
            else:
                self._end(call_id, REPLY, handler(body, context))
        except Exception as err:
            self._fail(call_id, descriptor, err)

    def _answer(self, call_id, descriptor, data, err):
        if err is None:
            self._end(call_id, REPLY, data)
        else:
            self._fail(call_id, descriptor, err)

    def _fail(self, call_id, descriptor, err):
        if not isinstance(err, errors.OpError):   # a bug in a handler: the caller hears of it
            log.error("%s failed", descriptor.full_name, exc_info=err)
            err = errors.InternalError(None, None, f"{type(err).__name__}: {err}")
        self._end(call_id, ERROR, _error_body(err))

    def _end(self, call_id, kind, body=b""):
        context = self._calls.pop(call_id, None)
        if context is None or context.ended:   # cancelled: the caller has stopped listening
            return
        try:
            self.send(call_id, kind, body)
        except errors.OpError:
            pass
        context.end()

    def lost(self):
        self._server.forget(self)
        calls, self._calls = self._calls, {}
        self._streams.clear()
        for context in calls.values():
            context.end()
