"""The gRPC servicers: thin adapters from framed messages to a task's Master and Worker."""

import threading
from concurrent.futures import ThreadPoolExecutor

import grpc

from dtfnb.base.errors import (
    UNAVAILABLE,
    CancelledError,
    InvalidArgumentError,
    OpError,
    from_code,
)
from dtfnb.distributed.transport import rpc, shm, streams, wire
from dtfnb.protos import config_pb2, master_pb2, worker_pb2
from dtfnb.runtime.nodes import check_registered, nodes_from_graph_def
from dtfnb.runtime.stats import StepStatsCollector
from dtfnb.runtime.step import Step


def device_attributes(device, proto):
    proto.name = device.name
    proto.device_type = device.device_type
    proto.physical_device_desc = device.description
    proto.emulated = device.emulated
    return proto


class WorkerServicer:
    def __init__(self, worker, tickets):
        self._worker = worker
        self._tickets = tickets

    def GetStatus(self, request, payload, context):
        response = worker_pb2.GetStatusResponse(peer=shm.local_peer())
        for device in self._worker.list_devices():
            device_attributes(device, response.device_attributes.add())
        return response, ()

    def RegisterGraph(self, request, payload, context):
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
                                             request.graph_def.library)
        return worker_pb2.RegisterGraphResponse(graph_handle=handle), ()

    def DeregisterGraph(self, request, payload, context):
        self._worker.deregister_session(request.session_handle)
        return worker_pb2.DeregisterGraphResponse(), ()

    def RunGraph(self, request, payload, context):
        shm.block_pool().give_back(request.released)
        feeds = wire.Incoming(payload).values(request.send)
        stats = StepStatsCollector() if request.trace else None
        step = Step(request.timeout_in_ms, feeds, stats, step_id=request.step_id)
        step.copy_fetches = False  # encoding them copies anyway
        # A master that goes away (or gives up on the step) cancels the call. The callback
        # also runs when a call ends normally: by then the step is over, not cancelled.
        running = threading.Event()
        running.set()
        context.add_callback(lambda: running.is_set() and step.abort(CancelledError(
            None, None, "The master cancelled the step")))
        try:
            self._worker.run_graph(request.graph_handle, step)
        finally:
            running.clear()
        response = worker_pb2.RunGraphResponse(released=wire.released.take(request.peer.instance))
        out = wire.Outgoing(shared=request.accept_shared, tickets=self._tickets)
        for position, value in step.fetched.items():
            out.add(response.recv.add(), str(position), value)
        if stats is not None:
            stats.to_proto(response.step_stats)
        return response, out.payloads

    def RecvTensor(self, requests, context):
        peer = None
        for data in requests:
            push, payload = wire.unframe(data, worker_pb2.TensorPush)
            if push.HasField("peer"):
                peer = push.peer
                yield wire.frame(worker_pb2.TensorPushAck(accept_shared=shm.can_map(peer)))
            shm.block_pool().give_back(push.released)
            incoming = wire.Incoming(payload)
            for tensor in push.tensor:
                self._worker.deliver(push.step_id, tensor.name, incoming.value(tensor))
            back = wire.released.take(peer.instance) if peer is not None else ()
            if back:
                yield wire.frame(worker_pb2.TensorPushAck(released=back))

    def FetchTensor(self, request, payload, context):
        for chunk in self._tickets.chunks(request.ticket):
            yield wire.frame(worker_pb2.TensorChunk(), [chunk])

    def CleanupGraph(self, request, payload, context):
        error = from_code(request.error_code, request.error_message) if request.error_code \
            else CancelledError(None, None, "Step was cleaned up")
        self._worker.cleanup_step(request.step_id, error)
        return worker_pb2.CleanupGraphResponse(), ()

    def CleanupAll(self, request, payload, context):
        self._worker.reset(list(request.container))
        return worker_pb2.CleanupAllResponse(), ()


class MasterServicer:
    def __init__(self, master, tickets):
        self._master = master
        self._tickets = tickets

    def CreateSession(self, request, payload, context):
        handle = self._master.create_session(request.graph_def, request.config)
        return master_pb2.CreateSessionResponse(session_handle=handle,
                                                graph_version=request.graph_def.version), ()

    def ExtendSession(self, request, payload, context):
        self._master.extend_session(request.session_handle, request.graph_def)
        return master_pb2.ExtendSessionResponse(new_graph_version=request.graph_def.version), ()

    def RunStep(self, request, payload, context):
        shm.block_pool().give_back(request.released)
        feeds = wire.Incoming(payload).values(request.feed)
        options = request.options if request.HasField("options") else None
        metadata = config_pb2.RunMetadata() if request.want_metadata else None
        values = self._master.run_step(request.session_handle, feeds, list(request.fetch),
                                       list(request.target), options, metadata)
        response = master_pb2.RunStepResponse(released=wire.released.take(request.peer.instance))
        out = wire.Outgoing(shared=request.accept_shared, tickets=self._tickets)
        for position, value in enumerate(values):
            out.add(response.tensor.add(), str(position), value)
        if metadata is not None:
            response.metadata.CopyFrom(metadata)
        return response, out.payloads

    def CloseSession(self, request, payload, context):
        self._master.close_session(request.session_handle)
        return master_pb2.CloseSessionResponse(), ()

    def ListDevices(self, request, payload, context):
        response = master_pb2.ListDevicesResponse()
        local = self._master.local_device_names()
        for device in self._master.list_devices(request.session_handle):
            field = response.local_device if device.name in local else response.remote_device
            device_attributes(device, field.add())
        return response, ()

    def Reset(self, request, payload, context):
        self._master.reset(list(request.container))
        return master_pb2.ResetResponse(), ()


def _unary(method, request_type):
    def handle(data, context):
        try:
            request, payload = wire.unframe(data, request_type)
            response, payloads = method(request, payload, context)
            return wire.frame(response, payloads)
        except OpError as err:
            rpc.abort_with(context, err)
        except (ValueError, TypeError, KeyError, IndexError) as err:
            rpc.abort_with(context, InvalidArgumentError(None, None, f"Malformed request: "
                                                         f"{type(err).__name__}: {err}"))
    return grpc.unary_unary_rpc_method_handler(handle)


def _stream(method):
    def handle(requests, context):
        try:
            yield from method(requests, context)
        except OpError as err:
            rpc.abort_with(context, err)
    return grpc.stream_stream_rpc_method_handler(handle)


def _server_stream(method, request_type):
    def handle(data, context):
        try:
            request, payload = wire.unframe(data, request_type)
            yield from method(request, payload, context)
        except OpError as err:
            rpc.abort_with(context, err)
    return grpc.unary_stream_rpc_method_handler(handle)


def _handlers(service, servicer, module):
    """A generic handler for every method the proto declares, served by `servicer`."""
    methods = {}
    for method in module.DESCRIPTOR.services_by_name[service].methods:
        fn = getattr(servicer, method.name)
        request_type = getattr(module, method.input_type.name)
        if method.client_streaming:
            methods[method.name] = _stream(fn)
        elif method.server_streaming:
            methods[method.name] = _server_stream(fn, request_type)
        else:
            methods[method.name] = _unary(fn, request_type)
    return grpc.method_handlers_generic_handler(f"dtfnb.{service}", methods)


class RunningServer:
    """A started gRPC server and its threads; `stop()` frees the port and the threads."""

    def __init__(self, server, pool, port):
        self._server = server
        self._pool = pool
        self.port = port

    def stop(self, grace):
        self._server.stop(grace).wait()
        self._pool.shutdown(wait=True)


def start_server(address, master, worker, security, extra_handlers=()):
    """Serves the task's master and worker on `address`; returns a RunningServer."""
    pool = ThreadPoolExecutor(max_workers=64, thread_name_prefix="dtfnb-rpc")
    tickets = streams.Tickets()
    server = grpc.server(pool,
                         handlers=[_handlers("WorkerService", WorkerServicer(worker, tickets),
                                             worker_pb2),
                                   _handlers("MasterService", MasterServicer(master, tickets),
                                             master_pb2),
                                   *extra_handlers],
                         interceptors=security.interceptors(), options=rpc.server_options())
    try:
        port = security.add_port(server, address)
    except RuntimeError:
        port = 0
    if not port:
        server.stop(None)
        pool.shutdown()
        raise from_code(UNAVAILABLE, f"Could not start gRPC server: cannot bind {address} "
                        "(is the port in use?)")
    server.start()
    return RunningServer(server, pool, port)
