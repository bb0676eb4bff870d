"""Clients of other tasks, over gRPC or, on one host, a Unix socket.

RemoteWorker is a master's view of a worker in another task (and the stream that
pushes tensors to it); Peers is a task's table of the other tasks; RemoteMaster is
a session's view of a master in another process.
"""

import functools
import logging
import threading

from dtfnb.base.device_spec import DeviceSpec
from dtfnb.base.errors import CancelledError, DeadlineExceededError, OpError, UnavailableError
from dtfnb.distributed_runtime.interfaces import MasterInterface, WorkerInterface
from dtfnb.distributed_runtime.transport import shm, streams, unix, wire
from dtfnb.distributed_runtime.transport.channel import open_channel
from dtfnb.distributed_runtime.worker import TransferOptions
from dtfnb.protos import graph_pb2, master_pb2, worker_pb2
from dtfnb.runtime.step import GRACE_SECONDS, deadline_seconds

log = logging.getLogger("dtfnb.distributed_runtime")

_WAIT_LOG_EVERY = 10   # seconds between "still waiting" lines while a task is not up


class RemoteDevice:
    """A device of another task, as its DeviceAttributes describe it."""

    __slots__ = ("name", "spec", "device_type", "index", "emulated", "description")

    def __init__(self, attributes):
        self.name = attributes.name
        self.spec = DeviceSpec.from_string(attributes.name)
        self.device_type = self.spec.device_type
        self.index = self.spec.device_index
        self.emulated = attributes.emulated
        self.description = attributes.physical_device_desc


class _Connection:
    """Calls to one task's services: over gRPC until GetStatus shows the task on this
    host with a Unix socket, then over that."""

    def __init__(self, address, security, where):
        self.address = address
        self.where = where
        self._grpc = open_channel(f"grpc://{address}", security, where)
        self._security = security
        self.channel = self._grpc
        self._status = None
        self._status_lock = threading.Lock()

    def fetch_streams(self, incoming, timeout=None):
        """Fills the streamed tensors of a reply (see streams.py)."""
        for ticket, array in incoming.streams:
            request = wire.frame(worker_pb2.FetchTensorRequest(ticket=ticket))
            streams.fill(array, (wire.unframe(data, worker_pb2.TensorChunk)[1] for data in
                                 self.channel.stream_from("FetchTensor", request, timeout)))

    def _call(self, name, request, response_type, payloads=(), timeout=None):
        data = self.channel.call(name, wire.frame(request, payloads), timeout=timeout)
        return wire.unframe(data, response_type)

    def status(self, wait=True):
        """The task's GetStatus, asked once. `wait`: until the task is up, as TensorFlow
        waits for every task of the cluster before a session's first step."""
        if self._status is not None:
            return self._status
        request, waited = wire.frame(worker_pb2.GetStatusRequest()), 0
        while True:
            try:
                data = self._grpc.call("GetStatus", request, timeout=1.0 if wait else 10.0,
                                       wait_for_ready=wait)
                break
            except DeadlineExceededError:
                if not wait:
                    raise
                waited += 1
                if waited % _WAIT_LOG_EVERY == 0:
                    log.warning("CreateSession still waiting for response from %s", self.where)
        status = wire.unframe(data, worker_pb2.GetStatusResponse)[0]
        with self._status_lock:
            if self._status is None:
                self.channel = self._same_host_channel(status) or self._grpc
                self._status = status
        return self._status

    def _same_host_channel(self, status):
        """A channel over the task's Unix socket if it is on this host and serves one,
        else None."""
        host = shm.local_peer().host_id
        if not (unix.enabled() and status.local_socket and host
                and status.peer.host_id == host):
            return None
        try:
            return open_channel(f"unix://{status.local_socket}", self._security, self.where)
        except OpError as err:   # not this user's task, say: gRPC still reaches it
            log.info("Calling %s over gRPC: %s", self.where, err.message)
            return None

    def lend_to(self, options):
        """The task's pid, to lend it blocks, if tensors to and from it may go through shared
        memory, else None: only over its Unix socket, where the kernel names the process at
        the other end."""
        peer = self.status().peer   # first: it picks the channel
        if options.shared_memory and shm.can_map(peer):
            return self.channel.peer_pid
        return None

    def released(self):
        """The leases of this task's blocks that this process has ended."""
        return wire.released.take((self.channel.peer_pid, self.status().peer.instance))

    def close(self):
        if self.channel is not self._grpc:
            self.channel.close()
        self._grpc.close()


class RemoteWorker(_Connection, WorkerInterface):
    """A worker in another task, with the methods of the in-process Worker. `link`: the
    calling task's emulated link (emulation.Link), which the tensors of RunGraph calls
    go through; None: none. `traffic`: the calling task's traffic.Traffic, which counts
    the tensors of RunGraph calls; None: not counted."""

    def __init__(self, task, address, security, link=None, traffic=None):
        super().__init__(address, security, f"{task} at {address}")
        self.task = task
        self.link = link
        self.traffic = traffic
        self._devices = None
        self._graphs = {}   # graph handle -> (session handle, fed tensor names, TransferOptions)
        self._stream = None
        self._lock = threading.Lock()

    @property
    def devices(self):
        """The task's devices by name, asked of it once (GetStatus)."""
        if self._devices is None:
            self._devices = {a.name: RemoteDevice(a) for a in self.status().device_attributes}
        return self._devices

    def list_devices(self):
        """The task's devices."""
        return list(self.devices.values())

    def register_graph(self, session_handle, partitions, config=None, library=()):
        """Registers the partitions of one step signature on the task (RegisterGraph); returns the
        graph's handle."""
        graph_def, feeds = graph_pb2.GraphDef(library=library), []
        for device, nodes in partitions.items():
            for node in nodes:
                graph_def.node.append(node.to_node_def(device))
                if node.op == "_Feed":
                    feeds.append(node.attrs["tensor_name"])
        request = worker_pb2.RegisterGraphRequest(session_handle=session_handle,
                                                  graph_def=graph_def, config=config)
        response, _ = self._call("RegisterGraph", request, worker_pb2.RegisterGraphResponse)
        self._graphs[response.graph_handle] = (session_handle, feeds, TransferOptions(config))
        return response.graph_handle

    def runs_unattended(self, graph_handle, timeout_ms):
        """Whether a call of the graph, started at once, can end without a thread that
        waits for it (see Worker.runs_unattended): no emulated link to sleep through."""
        return self.link is None and not timeout_ms

    def start_graph(self, graph_handle, step, alone=True):
        """Starts the graph's RunGraph for `step`; returns the call, to `wait()` on.
        `alone`: nothing else of the step runs meanwhile (see _GraphCall)."""
        return _GraphCall(self, graph_handle, step, alone)

    def cleanup(self, step_id, graph_handle, error):
        """Tells the task that a step of the graph failed elsewhere (no reply awaited)."""
        request = worker_pb2.CleanupGraphRequest(step_id=step_id, graph_handle=graph_handle,
                                                 error_code=error.error_code,
                                                 error_message=error.message)
        try:
            self.channel.start("CleanupGraph", wire.frame(request))
        except UnavailableError:  # a task that is gone runs nothing of the step
            pass

    def deregister_session(self, session_handle):
        """Forgets every graph of a session, here and on the task."""
        for handle, (session, _, _) in list(self._graphs.items()):
            if session == session_handle:
                self._graphs.pop(handle, None)
        request = worker_pb2.DeregisterGraphRequest(session_handle=session_handle)
        try:
            self._call("DeregisterGraph", request, worker_pb2.DeregisterGraphResponse,
                       timeout=GRACE_SECONDS)
        except UnavailableError:  # a task that is gone holds nothing of the session
            pass

    def reset(self, containers):
        """Frees the resources of `containers` on the task's devices (CleanupAll)."""
        request = worker_pb2.CleanupAllRequest(container=containers)
        self._call("CleanupAll", request, worker_pb2.CleanupAllResponse)

    def push(self, step_id, tensors, options, link_seconds=0.0):
        """Sends [(key, value)] to this task's rendezvous; never waits for them to arrive.
        `link_seconds`: the time they took to leave an emulated link."""
        with self._lock:
            if self._stream is None or self._stream.error is not None:
                self._stream = _PushStream(self)
            stream = self._stream
        stream.send(step_id, tensors, options, link_seconds)

    def close(self):
        """Closes the push stream and the connection to the task."""
        with self._lock:
            stream, self._stream = self._stream, None
        if stream is not None:
            stream.close()
        super().close()


class _GraphCall:
    """One RunGraph: fills the step's fetches, or aborts the step with its error.

    Unless `alone`, the call starts at once and its reply is handled as soon as it
    comes, so that a failure aborts the rest of the step at once (needed when other
    partitions run beside it). A lone call is made in `wait()` as a blocking call
    instead: gRPC delivers large replies to a blocked caller twice as fast as to a
    future.
    """

    def __init__(self, worker, graph_handle, step, alone):
        self._worker = worker
        self._graph_handle = graph_handle
        self._step = step
        _, feeds, options = worker._graphs[graph_handle]
        lend_to = worker.lend_to(options)
        request = worker_pb2.RunGraphRequest(
            graph_handle=graph_handle, step_id=step.id, trace=step.stats is not None,
            peer=shm.local_peer(), accept_shared=lend_to is not None,
            released=worker.released(), measure_transfers=step.sent is not None)
        remaining = step.remaining()
        if remaining is not None:
            request.timeout_in_ms = max(1, int(remaining * 1000))
        out = wire.Outgoing(lend_to)
        for name in feeds:
            out.add(request.send.add(), name, step.feeds[name])
        if worker.link is not None and feeds:
            request.link_seconds = worker.link.sent(out.nbytes)
        if worker.traffic is not None:
            request.master_task = worker.traffic.events.task
            if feeds:
                worker.traffic.count(step.id, worker.task, sent=out.nbytes)
        self._request = out.frame(request)
        # The task decides the deadline (see GRACE_SECONDS): its answer, a result or its
        # DeadlineExceededError, comes before the transport gives up.
        self._timeout = None if remaining is None else remaining + GRACE_SECONDS
        self._handled = threading.Event()
        self._callbacks = []   # (see add_done_callback), under _lock
        self._lock = threading.Lock()
        self._incoming = None
        self._link_seconds = 0.0
        self._call = None
        self._patience = None
        if not alone:
            try:
                self._call = worker.channel.start("RunGraph", self._request, self._reply)
            except OpError as err:
                step.abort(err)
                self._set_handled()
        # After the start: a step that failed already cancels the call it just made.
        self._token = step.on_abort(self._stop, on_cancel=True)

    def _reply(self, result):
        try:
            self._handle(result)
        finally:
            self._set_handled()

    def _set_handled(self):
        with self._lock:
            self._handled.set()
            callbacks, self._callbacks = self._callbacks, []
        for fn in callbacks:
            fn()

    def add_done_callback(self, fn):
        """Calls `fn()` once the reply is handled (at once if it is), on the thread that
        handled it; for a call started at once (not `alone`). `wait()` then only finishes
        up, without waiting, unless `needs_thread`."""
        with self._lock:
            if not self._handled.is_set():
                self._callbacks.append(fn)
                return
        fn()

    @property
    def needs_thread(self):
        """Whether `wait()` still calls the task: a reply that left large tensors behind
        tickets, fetched by streams (never on a thread that reads a connection)."""
        return bool(self._incoming is not None and self._incoming.streams
                    and self._step.error is None)

    def _handle(self, reply):
        step = self._step
        try:
            try:
                data = reply()
            except OpError as err:
                step.abort(err)
                return
            response, payload = wire.unframe(data, worker_pb2.RunGraphResponse)
            self._link_seconds = response.link_seconds
            shm.block_pool().give_back(self._worker.channel.peer_pid, response.released)
            self._incoming = wire.Incoming(payload, self._worker.channel.peer_pid,
                                           writable=True, reply=True)
            for tensor in response.recv:
                step.fetched[int(tensor.name)] = self._incoming.value(tensor)
            if self._worker.traffic is not None and response.recv:
                self._worker.traffic.count(step.id, self._worker.task,
                                           received=self._incoming.nbytes)
            if step.stats is not None:
                step.stats.add_proto(response.step_stats)
            if step.sent is not None:
                for key, nbytes in response.sent_bytes.items():
                    step.count_sent(key, nbytes)
        except Exception as err:  # a malformed reply fails the step, never the caller
            step.abort(err)

    def _stop(self):
        """The step failed elsewhere: stop this task's part of it, and stop waiting. Or it
        is asked to stop (see Step.cancel): the task is told, and its answer, which may
        carry what it dequeued, is awaited for GRACE_SECONDS more."""
        if self._handled.is_set():
            return
        step = self._step
        self._worker.cleanup(step.id, self._graph_handle, step.error or step.cancelling)
        if step.error is None:
            self._patience = threading.Timer(GRACE_SECONDS, step.abort, [step.cancelling])
            self._patience.daemon = True
            self._patience.start()
        elif self._call is not None:
            self._call.cancel()

    def wait(self):
        """Waits for the reply; a task that has not answered GRACE_SECONDS after the
        step's deadline is given up (which aborts the step)."""
        if not self._handled.is_set() and self._call is None:
            self._handle(lambda: self._worker.channel.call("RunGraph", self._request,
                                                           timeout=self._timeout))
            self._handled.set()
        else:
            if not self._handled.wait(self._step.remaining(GRACE_SECONDS)):
                self._step.expire()  # abandoning cancels the call: it ends at once
                self._handled.wait()
        self._step.remove_on_abort(self._token)
        if self._patience is not None:
            self._patience.cancel()
        if self._incoming is not None and self._incoming.nbytes and self._worker.link:
            # here, not in the reply's callback, which must not wait: the fetched tensors
            # come in through this task's emulated link before the master sees them
            self._worker.link.received(self._incoming.nbytes, self._link_seconds)
        if self._incoming is not None and self._incoming.streams and self._step.error is None:
            # here, not in the reply's callback: that thread must not wait on gRPC
            try:
                self._worker.fetch_streams(self._incoming, self._timeout)
            except Exception as err:
                self._step.abort(err)


class _PushStream:
    """The stream of tensors to one peer: one message per step and flush."""

    def __init__(self, worker):
        worker.status(wait=False)   # picks the channel; a task that is not up fails at once
        self._worker = worker
        self._where = worker.where
        self._accept_shared = False
        self.error = None
        self._stream = worker.channel.open_stream(
            "RecvTensor", wire.frame(worker_pb2.TensorPush(peer=shm.local_peer())),
            self._acked, self._ended)

    def send(self, step_id, tensors, options, link_seconds):
        if self.error is not None:
            raise self.error
        push = worker_pb2.TensorPush(step_id=step_id, released=self._worker.released(),
                                     link_seconds=link_seconds)
        out = wire.Outgoing(self._worker.lend_to(options) if self._accept_shared else None,
                            float_type=options.float_type)
        for key, value in tensors:
            out.add(push.tensor.add(), key, value)
        self._stream.send(out.frame(push))

    def _acked(self, data):
        ack, _ = wire.unframe(data, worker_pb2.TensorPushAck)
        self._accept_shared = self._accept_shared or ack.accept_shared
        shm.block_pool().give_back(self._worker.channel.peer_pid, ack.released)

    def _ended(self, error):
        self.error = error or UnavailableError(None, None, f"{self._where} closed the "
                                               "stream of tensors")

    def close(self):
        self._stream.close()


class Peers:
    """A task's connections to the other tasks of its cluster, made on first use;
    `traffic`: the task's traffic.Traffic, which counts every tensor it sends them;
    `link`: the task's emulated link (emulation.Link), which every tensor goes through;
    None: none."""

    def __init__(self, addresses, security, traffic, link=None):
        self._addresses = addresses   # task name -> "host:port"
        self._security = security
        self._link = link
        self._traffic = traffic
        self._workers = {}
        self._lock = threading.Lock()

    @property
    def tasks(self):
        """The names of the other tasks."""
        return list(self._addresses)

    def worker(self, task):
        """The RemoteWorker of `task` (a task name), connected on first use."""
        with self._lock:
            worker = self._workers.get(task)
            if worker is None:
                worker = self._workers[task] = RemoteWorker(task, self._addresses[task],
                                                            self._security, self._link,
                                                            self._traffic)
            return worker

    def push(self, step_id, tensors, options, on_error):
        """Sends [(device, key, value)] of a step, one batch per task; never raises: a
        failure goes to `on_error(error)`. Through an emulated link, a batch goes once its
        bytes have left."""
        by_task = {}
        for device, key, value in tensors:
            by_task.setdefault(device.rpartition("/device:")[0], []).append((key, value))
        for task, batch in by_task.items():
            push = functools.partial(self._push, task, step_id, batch, options, on_error)
            # counted here, as the step sends, though the batch may leave later
            nbytes = sum(wire.tensor_nbytes(value, options.float_type) for _, value in batch)
            self._traffic.count(step_id, task, sent=nbytes)
            if self._link is None:
                push(0.0)
            else:
                self._link.send(nbytes, push)

    def _push(self, task, step_id, batch, options, on_error, link_seconds):
        try:
            self.worker(task).push(step_id, batch, options, link_seconds)
        except Exception as err:  # a peer that is gone fails the step, never the sender
            on_error(err)

    def close(self):
        """Closes the connection to every task."""
        with self._lock:
            workers, self._workers = list(self._workers.values()), {}
        for worker in workers:
            worker.close()


class RemoteMaster(_Connection, MasterInterface):
    """A master in another process, for `tf.Session("grpc://host:port")`."""

    def __init__(self, address, security):
        super().__init__(address, security, f"the master at {address}")
        self._options = {}   # session handle -> (ConfigProto, TransferOptions)
        self._running = 0    # RunStep calls under way
        self._idle = threading.Condition()

    def create_session(self, graph_def, config):
        """Starts a session on `graph_def` under `config`, once the task is up; returns its handle.
        """
        self.status()  # waits until the task is up, as TensorFlow's first use does
        request = master_pb2.CreateSessionRequest(graph_def=graph_def, config=config)
        response, _ = self._call("CreateSession", request, master_pb2.CreateSessionResponse)
        self._options[response.session_handle] = (config, TransferOptions(config))
        return response.session_handle

    def extend_session(self, handle, graph_def):
        """Adds the nodes of `graph_def` (those the client made since) to a session."""
        request = master_pb2.ExtendSessionRequest(session_handle=handle, graph_def=graph_def)
        self._call("ExtendSession", request, master_pb2.ExtendSessionResponse)

    def run_step(self, handle, feeds, fetches, targets, options=None, run_metadata=None):
        """Runs one step of session `handle` (RunStep); returns the fetched arrays."""
        with self._idle:
            self._running += 1
        try:
            return self._run_step(handle, feeds, fetches, targets, options, run_metadata)
        finally:
            with self._idle:
                self._running -= 1
                self._idle.notify_all()

    def _run_step(self, handle, feeds, fetches, targets, options, run_metadata):
        try:
            config, transfer = self._options[handle]
        except KeyError:  # closed by another thread meanwhile
            raise CancelledError(None, None, "Session has been closed.") from None
        lend_to = self.lend_to(transfer)
        request = master_pb2.RunStepRequest(
            session_handle=handle, fetch=fetches, target=targets,
            want_metadata=run_metadata is not None, peer=shm.local_peer(),
            accept_shared=lend_to is not None, released=self.released())
        if options is not None:
            request.options.CopyFrom(options)
        out = wire.Outgoing(lend_to)
        for name, value in feeds.items():
            out.add(request.feed.add(), name, value)
        limit = deadline_seconds(options.timeout_in_ms if options is not None
                                 and options.timeout_in_ms else config.operation_timeout_in_ms)
        response, payload = self._call(
            "RunStep", request, master_pb2.RunStepResponse, out.payloads,
            # the master's own backstop for its tasks comes first
            timeout=None if limit is None else limit + 2 * GRACE_SECONDS)
        shm.block_pool().give_back(self.channel.peer_pid, response.released)
        incoming = wire.Incoming(payload, self.channel.peer_pid, writable=True, reply=True)
        values = [incoming.value(tensor) for tensor in response.tensor]
        self.fetch_streams(incoming)
        if run_metadata is not None:
            run_metadata.CopyFrom(response.metadata)  # each run replaces it, as in TF
        return values

    def close_session(self, handle):
        """Closes a session: cancels its steps and frees its graphs on every task."""
        self._options.pop(handle, None)
        request = master_pb2.CloseSessionRequest(session_handle=handle)
        self._call("CloseSession", request, master_pb2.CloseSessionResponse)

    def close(self):
        """Closes the connection, once the steps in progress have answered (at most 2 *
        GRACE_SECONDS)."""
        # Closing the session cancelled its steps: their answers come at once, and one
        # may carry what a dequeue took, so they are awaited before the connection goes.
        with self._idle:
            self._idle.wait_for(lambda: self._running == 0, timeout=2 * GRACE_SECONDS)
        super().close()

    def list_devices(self, session_handle=""):
        """The devices a session may use (every device of the cluster, without one)."""
        response, _ = self._call("ListDevices",
                                 master_pb2.ListDevicesRequest(session_handle=session_handle),
                                 master_pb2.ListDevicesResponse)
        return [RemoteDevice(a) for a in (*response.local_device, *response.remote_device)]

    def reset(self, containers):
        """Frees `containers` on every task and closes the master's sessions, once the task is up.
        """
        self.status()
        self._call("Reset", master_pb2.ResetRequest(container=containers),
                   master_pb2.ResetResponse)
