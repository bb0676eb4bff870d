"""Session: runs fetches of a Graph through a master, in this process or over the wire."""

import contextlib
import threading

import numpy as np

from dtfnb.base import dtypes
from dtfnb.base.errors import NotFoundError, OpError
from dtfnb.client.fetches import FetchMapper, structure_key
from dtfnb.distributed.server import running_server
from dtfnb.distributed.transport import inproc
from dtfnb.distributed.transport.remote import RemoteMaster
from dtfnb.distributed.transport.rpc import Security
from dtfnb.framework import default_session
from dtfnb.framework.graph import get_default_graph
from dtfnb.framework.tensor import Tensor
from dtfnb.protos import config_pb2

_CACHE_LIMIT = 256


class _DeviceAttributes:
    __slots__ = ("name", "device_type", "memory_limit_bytes", "description")

    def __init__(self, device):
        self.name = device.name
        self.device_type = device.device_type
        self.memory_limit_bytes = 0
        self.description = device.description

    def __repr__(self):
        return f"_DeviceAttributes({self.name}, {self.device_type}, {self.memory_limit_bytes})"


def _connect(target, config):
    """(master, owned): the master that runs a session of `target`, and whether the
    session owns it. A server of this process is called directly, without gRPC."""
    if not target:
        return inproc.connect_local(config), True
    server = running_server(target)
    if server is not None:
        return server.master, False
    if target.startswith("grpc://"):
        return RemoteMaster(target[len("grpc://"):], Security()), True
    raise NotFoundError(None, None, "No session factory registered for the given session "
                        f"options: {{target: \"{target}\"}}")


class BaseSession:
    def __init__(self, target="", graph=None, config=None):
        if graph is None:
            graph = get_default_graph()
        if config is None:
            config = config_pb2.ConfigProto()
        if not isinstance(config, config_pb2.ConfigProto):
            raise TypeError(f"config must be a tf.ConfigProto, but got {type(config)}")
        self._graph = graph
        self._target = target
        self._config = config
        self._closed = False
        self._master, self._owns_master = _connect(target, config)
        self._sent_version = graph.version
        self._extend_lock = threading.Lock()
        self._handle = self._master.create_session(graph.as_graph_def(), config)
        self._mappers = {}
        self._default_contexts = []
        if config.log_device_placement:
            _print_device_mapping(self._master.list_devices(self._handle))

    @property
    def graph(self):
        return self._graph

    @property
    def graph_def(self):
        return self._graph.as_graph_def()

    @property
    def sess_str(self):
        return self._target

    @property
    def events(self):
        """dtfnb: the EventLog of this session's master where it runs in this process (a
        local session, or one on a server of this process); None for a remote master,
        whose task's events are watched over gRPC instead."""
        return getattr(self._master, "events", None)

    def list_devices(self):
        return [_DeviceAttributes(d) for d in self._master.list_devices(self._handle)]

    def as_default(self):
        return _as_default(self)

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs the ops and evaluates the tensors in `fetches`; returns them in shape."""
        self._check_open()
        key = structure_key(fetches)
        entry = self._mappers.get(key)
        if entry is None:
            if len(self._mappers) >= _CACHE_LIMIT:
                self._mappers.clear()
            # the entry keeps `fetches` alive, so the ids in its key cannot be reused
            entry = self._mappers[key] = (FetchMapper(self._graph, fetches), fetches)
        return self._run(entry[0], feed_dict, options, run_metadata)

    def make_callable(self, fetches, feed_list=None, accept_options=False):
        """A function running `fetches` with positional values for `feed_list`. As in
        TensorFlow, the fetches are checked once, here, and not at every call (a queue
        runner's loop calls it for every element). With `accept_options` it also takes
        `options=` and `run_metadata=` keywords."""
        mapper = FetchMapper(self._graph, fetches)
        feed_list = list(feed_list or [])

        def call(*args, options=None, run_metadata=None):
            self._check_open()
            return self._run(mapper, dict(zip(feed_list, args)), options, run_metadata)

        if accept_options:
            return call
        return lambda *args: call(*args)  # any keyword is a TypeError, as in TensorFlow

    def _check_open(self):
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")

    def _run(self, mapper, feed_dict, options, run_metadata):
        feeds = self._feeds(feed_dict) if feed_dict else {}
        if self._graph.version != self._sent_version:
            self._extend()
        try:
            values = self._master.run_step(self._handle, feeds, mapper.tensors, mapper.targets,
                                           options, run_metadata)
        except OpError as err:
            raise self._with_op(err) from None
        return mapper.build(values)

    def _extend(self):
        # Threads making their first run of new ops at once would each send the same
        # nodes; the master refuses a node twice, and that thread's run would be lost.
        with self._extend_lock:
            if self._graph.version == self._sent_version:
                return  # another thread sent them meanwhile
            delta = self._graph.as_graph_def(from_version=self._sent_version)
            self._master.extend_session(self._handle, delta)
            self._sent_version = delta.version

    def _feeds(self, feed_dict):
        feeds = {}
        graph = self._graph
        for key, value in feed_dict.items():
            tensor = key
            if not isinstance(tensor, Tensor):
                if hasattr(tensor, "_as_graph_element"):
                    tensor = tensor._as_graph_element()
                else:
                    try:
                        tensor = graph.as_graph_element(key, allow_tensor=True,
                                                        allow_operation=False)
                    except (KeyError, ValueError, TypeError) as err:
                        raise TypeError(f"Cannot interpret feed_dict key as Tensor: {err}") \
                            from None
            if tensor.graph is not graph:
                raise ValueError(f"Tensor {tensor!r} is not an element of this graph.")
            if not graph.is_feedable(tensor):
                raise ValueError(f"Tensor {tensor!r} may not be fed.")
            feeds[tensor.name] = _feed_value(tensor, value)
        return feeds

    def _with_op(self, err):
        name = err.node_name
        if name and err.op is None:
            try:
                op = self._graph.get_operation_by_name(name)
            except (KeyError, ValueError):
                op = None
            if op is not None:
                err._op = op
                err._node_def = op.node_def
        return err

    def close(self):
        if self._closed:
            return
        self._closed = True
        try:
            self._master.close_session(self._handle)
        finally:
            if self._owns_master:
                self._master.close()

    @staticmethod
    def reset(target, containers=None, config=None):
        """Frees `containers` (default: the default container "") on every task of the
        cluster of `target`, and closes the sessions of that master."""
        master, owned = _connect(target, config or config_pb2.ConfigProto())
        try:
            master.reset(list(containers) if containers else [""])
        finally:
            if owned:
                master.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: nothing left to release
            pass

    def __enter__(self):
        context = self.as_default()
        graph_context = self._graph.as_default()
        context.__enter__()
        graph_context.__enter__()
        self._default_contexts.append((context, graph_context))
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        context, graph_context = self._default_contexts.pop()
        graph_context.__exit__(exc_type, exc_value, traceback)
        context.__exit__(exc_type, exc_value, traceback)
        self.close()


@contextlib.contextmanager
def _as_default(session):
    default_session.push(session)
    try:
        yield session
    finally:
        default_session.pop(session)


def _feed_value(tensor, value):
    dtype = tensor.dtype.base_dtype
    if dtype is dtypes.resource:
        raise TypeError(f"Tensor {tensor.name} of type resource may not be fed.")
    np_dtype = dtype.as_numpy_dtype
    if hasattr(value, "__cuda_array_interface__"):
        array = value
    else:
        if isinstance(value, Tensor):
            raise TypeError("The value of a feed cannot be a tf.Tensor object. Acceptable "
                            "feed values include Python scalars, strings, lists, numpy "
                            "ndarrays, or TensorHandles. For reference, the tensor object was "
                            f"{value!r} which was passed to the feed with key {tensor!r}.")
        if dtype is dtypes.string:
            array = np.asarray(value, dtype=object)
            # TensorFlow's strings are bytes: a fed str is encoded (UTF-8), as TF does
            flat = [v.encode() if isinstance(v, str) else v for v in array.reshape(-1)]
            array = np.array(flat, dtype=object).reshape(array.shape)
        else:
            try:
                array = np.asarray(value, dtype=np_dtype)
            except (TypeError, ValueError) as err:
                raise ValueError(f"Cannot feed value {value!r} for Tensor {tensor.name!r} of "
                                 f"dtype {dtype.name}: {err}") from None
            if isinstance(value, int) and not isinstance(value, bool) and array != value:
                raise TypeError(f"Type of feed value {value} with type {type(value)} is not "
                                f"compatible with Tensor type {dtype!r}. Try explicitly "
                                "setting the type of the feed tensor to a larger type "
                                "(e.g. int64).")
    if not tensor.shape.is_compatible_with(array.shape):
        raise ValueError(f"Cannot feed value of shape {array.shape} for Tensor "
                         f"{tensor.name!r}, which has shape {str(tensor.shape)!r}")
    return array


def _print_device_mapping(devices):
    import sys
    lines = ["Device mapping:\n"] + [f"{d.name} -> {d.description}\n" for d in devices]
    sys.stdout.write("".join(lines))
    sys.stdout.flush()


class Session(BaseSession):
    """A TensorFlow 1 session: `tf.Session(target="", graph=None, config=None)`."""


class InteractiveSession(BaseSession):
    """A session that makes itself the default session on creation (for shells, notebooks)."""

    def __init__(self, target="", graph=None, config=None):
        super().__init__(target, graph, config)
        self._context = self.as_default()
        self._context.__enter__()
        self._graph_context = self._graph.as_default()
        self._graph_context.__enter__()

    def close(self):
        if not self._closed and hasattr(self, "_context"):
            self._graph_context.__exit__(None, None, None)
            self._context.__exit__(None, None, None)
        super().close()
