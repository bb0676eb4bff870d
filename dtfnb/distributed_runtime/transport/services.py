"""The servicers: thin adapters from framed messages to a task's Master and Worker,
served over gRPC and, for processes on the same host, over a Unix socket (unix.py)."""

import logging
import threading
from concurrent.futures import ThreadPoolExecutor

import grpc

from dtfnb.base.errors import (
    UNAVAILABLE,
    CancelledError,
    InternalError,
    InvalidArgumentError,
    OpError,
    from_code,
)
from dtfnb.distributed_runtime.cluster import CANNOT_BIND
from dtfnb.distributed_runtime.transport import rpc, shm, streams, unix, wire
from dtfnb.protos import config_pb2, master_pb2, worker_pb2
from dtfnb.runtime.nodes import check_registered, nodes_from_graph_def
from dtfnb.runtime.stats import StepStatsCollector
from dtfnb.runtime.step import Step

log = logging.getLogger("dtfnb.distributed_runtime")


def device_attributes(device, proto):
    """Fills `proto`, a DeviceAttributes, with `device`'s name, type, description and emulation;
    returns it."""
    proto.name = device.name
    proto.device_type = device.device_type
    proto.physical_device_desc = device.description
    proto.emulated = device.emulated
    return proto


class WorkerServicer:
    """A task's worker service on the wire: each method parses a request, calls the
    task's Worker and frames the reply (or streams it, for FetchTensor and RecvTensor).
    `tickets` holds the large tensors of replies until the caller fetches them."""

    def __init__(self, worker, tickets):
        self._worker = worker
        self._tickets = tickets
        self.local_socket = ""   # the UnixServer's name, once it serves

    def GetStatus(self, request, payload, context):
        """The GetStatus RPC: the task's devices, its process's identity and its Unix socket."""
        response = worker_pb2.GetStatusResponse(peer=shm.local_peer(),
                                                local_socket=self.local_socket)
        for device in self._worker.list_devices():
            device_attributes(device, response.device_attributes.add())
        return response, ()

    def RegisterGraph(self, request, payload, context):
        """The RegisterGraph RPC: checks that each node is on a device of this task and registers
        the partitions."""
        nodes = nodes_from_graph_def(request.graph_def)
        check_registered(nodes)
        partitions = {}
        for node in nodes:
            if node.requested_device not in self._worker.devices:
                raise InvalidArgumentError(None, None, f"Node {node.name} is assigned to "
                                           f"'{node.requested_device}', not a device of this "
                                           "task")
            partitions.setdefault(node.requested_device, []).append(node)
        handle = self._worker.register_graph(request.session_handle, partitions, request.config,
                                             request.graph_def.library, remote=True)
        return worker_pb2.RegisterGraphResponse(graph_handle=handle), ()

    def DeregisterGraph(self, request, payload, context):
        """The DeregisterGraph RPC: forgets every graph of a session."""
        self._worker.deregister_session(request.session_handle)
        return worker_pb2.DeregisterGraphResponse(), ()

    def RunGraph(self, request, payload, context):
        """The RunGraph RPC: runs one step of a registered graph on the fed tensors and replies with
        the fetched ones."""
        run, finish = self._start_graph(request, payload, context)
        run.wait()
        return finish()

    def start_RunGraph(self, request, payload, context, respond):
        """RunGraph on a thread that must not wait (see service_methods): False, having
        done nothing, if the step may need one that waits; else True, and `respond(finish)`
        follows once the step has ended, on the thread that ended it."""
        if not self._worker.runs_unattended(request.graph_handle, request.timeout_in_ms):
            return False
        run, finish = self._start_graph(request, payload, context)
        run.add_done_callback(lambda: respond(finish))
        return True

    def _start_graph(self, request, payload, context):
        """Starts a RunGraph's step; returns (the run, `finish()`: once it has ended, the
        reply, as (RunGraphResponse, payloads), or its error, raised)."""
        shm.block_pool().give_back(context.peer_pid, request.released)
        incoming = wire.Incoming(payload, context.peer_pid)
        feeds = incoming.values(request.send)
        link = self._worker.conditions.link
        if link is not None and feeds:
            link.received(incoming.nbytes, request.link_seconds)
        # the peer of feeds and fetches ("": a master that counts none, and none here)
        traffic, master = self._worker.traffic, request.master_task
        if feeds and master:
            traffic.count(request.step_id, master, received=incoming.nbytes)
        stats = StepStatsCollector() if request.trace else None
        step = Step(request.timeout_in_ms, feeds, stats, step_id=request.step_id)
        step.copy_fetches = False  # encoding them copies anyway
        if request.measure_transfers:
            step.sent = {}
        cancellation = _Cancellation(context, "The master cancelled the step")
        cancellation.started(step)
        run = self._worker.start_graph(request.graph_handle, step)

        def finish():
            cancellation.finished()
            if step.error is not None:
                traffic.publish(step.id, request.session_handle)
                raise step.error
            response = worker_pb2.RunGraphResponse(
                released=wire.released.take((context.peer_pid, request.peer.instance)))
            out = wire.Outgoing(context.peer_pid if request.accept_shared else None,
                                tickets=self._tickets)
            for position, value in step.fetched.items():
                out.add(response.recv.add(), str(position), value)
            if link is not None and response.recv:
                response.link_seconds = link.sent(out.nbytes)
            if response.recv and master:
                traffic.count(step.id, master, sent=out.nbytes)
            traffic.publish(step.id, request.session_handle)
            if stats is not None:
                stats.to_proto(response.step_stats)
            if step.sent is not None:
                response.sent_bytes.update(step.sent)
            return response, out.payloads

        return run, finish

    def RecvTensor(self, context):
        """A client stream of pushes: returns what takes each message, in order, and
        returns the acks to send back."""
        return _PushReceiver(self._worker, context.peer_pid).receive

    def FetchTensor(self, request, payload, context):
        """The FetchTensor RPC: streams, in chunks, a large tensor a reply left behind its ticket.
        """
        for chunk in self._tickets.chunks(request.ticket):
            yield wire.frame(worker_pb2.TensorChunk(), [chunk])

    def CleanupGraph(self, request, payload, context):
        """The CleanupGraph RPC: ends a step of a graph that failed elsewhere, with that error."""
        error = from_code(request.error_code, request.error_message) if request.error_code \
            else CancelledError(None, None, "Step was cleaned up")
        self._worker.cleanup_step(request.step_id, request.graph_handle, error)
        return worker_pb2.CleanupGraphResponse(), ()

    def CleanupAll(self, request, payload, context):
        """The CleanupAll RPC: frees the resources of the given containers."""
        self._worker.reset(list(request.container))
        return worker_pb2.CleanupAllResponse(), ()


class _Cancellation:
    """Aborts the step of a call whose caller cancels it or goes away, even before the
    step starts. (A context's callbacks also run when a call ends normally.)"""

    def __init__(self, context, message):
        self._message = message
        self._step = None
        self._state = "running"   # then "done" or "cancelled"
        self._lock = threading.Lock()
        context.add_callback(self._ended)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.finished()

    def finished(self):
        """The call has ended: its caller going away now changes nothing."""
        with self._lock:
            if self._state == "running":
                self._state = "done"

    def started(self, step):
        with self._lock:
            self._step = step
            cancelled = self._state == "cancelled"
        if cancelled:
            self._abort()

    def _ended(self):
        with self._lock:
            if self._state != "running":
                return
            self._state = "cancelled"
        self._abort()

    def _abort(self):
        if self._step is not None:
            self._step.abort(CancelledError(None, None, self._message))


class _PushReceiver:
    """Takes one peer's stream of pushes; through an emulated link, a push's tensors are
    delivered once they have come in through it."""

    def __init__(self, worker, peer_pid):
        self._worker = worker
        self._peer_pid = peer_pid
        self._peer = None

    def receive(self, data):
        acks = []
        push, payload = wire.unframe(data, worker_pb2.TensorPush)
        if push.HasField("peer"):
            self._peer = push.peer
            acks.append(wire.frame(worker_pb2.TensorPushAck(
                accept_shared=self._peer_pid is not None and shm.can_map(self._peer))))
        shm.block_pool().give_back(self._peer_pid, push.released)
        incoming = wire.Incoming(payload, self._peer_pid)
        tensors = [(tensor.name, incoming.value(tensor)) for tensor in push.tensor]
        if tensors:   # keys are "src device;dst device;tensor": the sender is the first's
            sender = tensors[0][0].split(";", 1)[0].rpartition("/device:")[0]
            self._worker.traffic.count(push.step_id, sender, received=incoming.nbytes)
        link = self._worker.conditions.link
        if link is None or not tensors:
            self._deliver(push.step_id, tensors)
        else:
            link.receive(incoming.nbytes, push.link_seconds,
                         lambda: self._deliver(push.step_id, tensors))
        back = (wire.released.take((self._peer_pid, self._peer.instance))
                if self._peer is not None else ())
        if back:
            acks.append(wire.frame(worker_pb2.TensorPushAck(released=back)))
        return acks

    def _deliver(self, step_id, tensors):
        for key, value in tensors:
            self._worker.deliver(step_id, key, value)


class MasterServicer:
    """A task's master service on the wire: each method parses a request, calls the
    task's Master (or one of its MasterSessions) and frames the reply."""

    def __init__(self, master, tickets):
        self._master = master
        self._tickets = tickets

    def CreateSession(self, request, payload, context):
        """The CreateSession RPC: starts a session for a client in another process."""
        handle = self._master.create_session(request.graph_def, request.config, remote=True)
        return master_pb2.CreateSessionResponse(session_handle=handle), ()

    def ExtendSession(self, request, payload, context):
        """The ExtendSession RPC: adds the client's new nodes to a session."""
        self._master.extend_session(request.session_handle, request.graph_def)
        return master_pb2.ExtendSessionResponse(), ()

    def RunStep(self, request, payload, context):
        """The RunStep RPC: runs one step of a session and replies with the fetched tensors."""
        options = request.options if request.HasField("options") else None
        metadata = config_pb2.RunMetadata() if request.want_metadata else None
        session, prepared, cancellation = self._start_step(request, payload, context,
                                                           options, metadata)
        with cancellation:
            values = session.run_prepared(prepared)
        return self._step_response(request, context, values, metadata)

    def start_RunStep(self, request, payload, context, respond):
        """RunStep on a thread that must not wait (see service_methods): False, having
        done nothing, unless the step has no options, no metadata and a signature whose
        steps run unattended (MasterSession.runs_unattended); then True, and
        `respond(finish)` follows on the thread that ends the step's last part."""
        try:
            session = self._master.session(request.session_handle)
        except OpError:
            return False   # RunStep, on a thread, says so
        if (request.HasField("options") or request.want_metadata or not session.runs_unattended(
                [t.name for t in request.feed], list(request.fetch), list(request.target))):
            return False
        session, prepared, cancellation = self._start_step(request, payload, context)

        def done(result):
            def finish():
                cancellation.finished()
                return self._step_response(request, context, result(), None)
            respond(finish)

        session.run_unattended(prepared, done)
        return True

    def _start_step(self, request, payload, context, options=None, metadata=None):
        """(the session, its step prepared, the step's _Cancellation) for a RunStep."""
        shm.block_pool().give_back(context.peer_pid, request.released)
        feeds = wire.Incoming(payload, context.peer_pid).values(request.feed)
        cancellation = _Cancellation(context, "The client cancelled the step")
        session = self._master.session(request.session_handle)
        prepared = session.prepare(feeds, list(request.fetch), list(request.target),
                                   options, metadata)
        cancellation.started(prepared.step)
        return session, prepared, cancellation

    def _step_response(self, request, context, values, metadata):
        response = master_pb2.RunStepResponse(
            released=wire.released.take((context.peer_pid, request.peer.instance)))
        out = wire.Outgoing(context.peer_pid if request.accept_shared else None,
                            tickets=self._tickets)
        for position, value in enumerate(values):
            out.add(response.tensor.add(), str(position), value)
        if metadata is not None:
            response.metadata.CopyFrom(metadata)
        return response, out.payloads

    def CloseSession(self, request, payload, context):
        """The CloseSession RPC: cancels a session's steps and frees its graphs."""
        self._master.close_session(request.session_handle)
        return master_pb2.CloseSessionResponse(), ()

    def ListDevices(self, request, payload, context):
        """The ListDevices RPC: the session's devices, this task's own as local ones."""
        response = master_pb2.ListDevicesResponse()
        local = self._master.local_device_names()
        for device in self._master.list_devices(request.session_handle):
            field = response.local_device if device.name in local else response.remote_device
            device_attributes(device, field.add())
        return response, ()

    def Reset(self, request, payload, context):
        """The Reset RPC: frees the given containers on every task and closes the sessions."""
        self._master.reset(list(request.container))
        return master_pb2.ResetResponse(), ()


def service_methods(service, servicer, module):
    """{method name: (MethodDescriptor, handler)} for every method of `service` (declared
    in the generated `module`), served by `servicer`, for any transport. Handlers raise
    OpErrors. A unary one is handler(bytes, context) -> bytes; a server-streaming one
    yields bytes; a client-streaming one is handler(context) -> receive(bytes) ->
    replies (bytes).

    A unary handler whose servicer also has `start_<method>` gets `handler.start(bytes,
    context, reply) -> bool`, for a transport that would rather not hold a thread while
    the call waits: False, having done nothing, when the call needs one (then the
    transport calls the handler on a thread); else True, and `reply(bytes, None)` or
    `reply(None, OpError)` follows once, on whichever thread ends the call."""
    methods = {}
    for descriptor in module.DESCRIPTOR.services_by_name[service].methods:
        handler = getattr(servicer, descriptor.name)
        if not descriptor.client_streaming:
            request_type = getattr(module, descriptor.input_type.name)
            start = getattr(servicer, f"start_{descriptor.name}", None)
            handler = _parsed(handler, request_type, descriptor.server_streaming)
            if start is not None:
                handler.start = _parsed_start(start, request_type)
        methods[descriptor.name] = (descriptor, handler)
    return methods


def _parsed(method, request_type, streaming):
    """`method(request, payload, context)` as a handler of framed bytes."""
    def handle(data, context):
        try:
            request, payload = wire.unframe(data, request_type)
            if streaming:
                return method(request, payload, context)
            response, payloads = method(request, payload, context)
            return wire.frame(response, payloads)
        except (ValueError, TypeError, KeyError, IndexError) as err:
            raise InvalidArgumentError(None, None, f"Malformed request: "
                                       f"{type(err).__name__}: {err}") from None
    return handle


def _parsed_start(start, request_type):
    """`start(request, payload, context, respond)` (see service_methods) on framed bytes."""
    def begin(data, context, reply):
        def respond(finish):
            try:
                response, payloads = finish()
                reply(wire.frame(response, payloads), None)
            except OpError as err:
                reply(None, err)
            except Exception as err:   # a bug: the caller hears of it, the thread goes on
                log.error("%s failed", request_type.__name__, exc_info=err)
                reply(None, InternalError(None, None, f"{type(err).__name__}: {err}"))
        try:
            request, payload = wire.unframe(data, request_type)
        except Exception:   # the handler, on a thread, says what is wrong with it
            return False
        try:
            return start(request, payload, context, respond)
        except OpError as err:
            reply(None, err)
        except (ValueError, TypeError, KeyError, IndexError) as err:
            reply(None, InvalidArgumentError(None, None, f"Malformed request: "
                                             f"{type(err).__name__}: {err}"))
        except Exception as err:
            log.error("%s failed", request_type.__name__, exc_info=err)
            reply(None, InternalError(None, None, f"{type(err).__name__}: {err}"))
        return True
    return begin


class _GrpcCall:
    """A gRPC call's context as handlers see it: gRPC's, with no process known to have
    sent the call (peer_pid): it may come from any host, so it may name no shared memory."""

    __slots__ = ("_context",)
    peer_pid = None

    def __init__(self, context):
        self._context = context

    def __getattr__(self, name):
        return getattr(self._context, name)


def _grpc_handler(descriptor, handler):
    if descriptor.client_streaming:
        def serve_stream(requests, context):
            try:
                receive = handler(_GrpcCall(context))
                for data in requests:
                    yield from receive(data)
            except OpError as err:
                rpc.abort_with(context, err)
        return grpc.stream_stream_rpc_method_handler(serve_stream)
    if descriptor.server_streaming:
        def serve_chunks(data, context):
            try:
                yield from handler(data, _GrpcCall(context))
            except OpError as err:
                rpc.abort_with(context, err)
        return grpc.unary_stream_rpc_method_handler(serve_chunks)

    def serve(data, context):
        try:
            return handler(data, _GrpcCall(context))
        except OpError as err:
            rpc.abort_with(context, err)
    return grpc.unary_unary_rpc_method_handler(serve)


def grpc_handler(service, methods):
    """The generic gRPC handler that serves `methods` (from service_methods)."""
    return grpc.method_handlers_generic_handler(
        f"dtfnb.{service}", {name: _grpc_handler(descriptor, handler)
                             for name, (descriptor, handler) in methods.items()})


class RunningServer:
    """A started gRPC server (and Unix socket server) and their threads; `stop()` frees
    the port, the socket and the threads."""

    def __init__(self, server, pool, port, local_server):
        self._server = server
        self._pool = pool
        self.port = port
        self._local = local_server

    def stop(self, grace):
        """Stops the servers, waiting up to `grace` seconds for calls in progress, and joins their
        threads."""
        if self._local is not None:
            self._local.stop()
        self._server.stop(grace).wait()
        self._pool.shutdown(wait=True)


def start_server(address, master, worker, security, extra_handlers=()):
    """Serves the task's master and worker on `address`, and on a Unix socket for
    processes on this host; returns a RunningServer."""
    pool = ThreadPoolExecutor(max_workers=64, thread_name_prefix="dtfnb-rpc")
    tickets = streams.Tickets()
    worker_servicer = WorkerServicer(worker, tickets)
    master_methods = service_methods("MasterService", MasterServicer(master, tickets),
                                     master_pb2)
    worker_methods = service_methods("WorkerService", worker_servicer, worker_pb2)
    server = grpc.server(pool, handlers=[grpc_handler("MasterService", master_methods),
                                         grpc_handler("WorkerService", worker_methods),
                                         *extra_handlers],
                         interceptors=security.interceptors(), options=rpc.server_options())
    try:
        port = security.add_port(server, address)
    except RuntimeError:
        port = 0
    if not port:
        server.stop(None)
        pool.shutdown()
        raise from_code(UNAVAILABLE, f"Could not start gRPC server: {CANNOT_BIND} {address} "
                        "(is the port in use?)")
    local_server = _start_local(f"{address.rpartition(':')[0]}:{port}",
                                {**master_methods, **worker_methods}, security)
    if local_server is not None:
        worker_servicer.local_socket = local_server.name
    server.start()
    return RunningServer(server, pool, port, local_server)


def _start_local(address, methods, security):
    """The Unix socket server beside gRPC's, if this host has them; else None."""
    if not unix.enabled():
        return None
    try:
        return unix.UnixServer(unix.socket_name(address), methods, security.token)
    except OSError as err:  # the name is taken (another user's task?): gRPC serves alone
        log.warning("Not serving %s on a Unix socket: %s", address, err)
        return None
