"""Session: runs fetches of a Graph through a master, in this process or over the wire."""

import contextlib
import threading

import numpy as np

from dtfnb.base import device_spec, dtypes
from dtfnb.base.errors import InvalidArgumentError, OpError
from dtfnb.client.fetches import (  # noqa: F401 - register_... is TF's name here
    FetchMapper,
    feed_pairs,
    fetched_value,
    flatten_feed_dict,
    partial_run_feeds,
    register_session_run_conversion_functions,
    structure_key,
)
from dtfnb.distributed_runtime.targets import connect
from dtfnb.framework import default_session
from dtfnb.framework.graph import Graph, get_default_graph
from dtfnb.framework.tensor import Tensor
from dtfnb.protos import config_pb2

_CACHE_LIMIT = 256


class _DeviceAttributes:
    """A device of a session: name, type, memory limit and incarnation."""

    def __init__(self, name, device_type, memory_limit_bytes, incarnation, description=""):
        self._name = device_spec.canonical_name(name)
        self._device_type = device_type
        self._memory_limit_bytes = memory_limit_bytes
        self._incarnation = incarnation
        self._description = description

    @property
    def name(self):
        return self._name

    @property
    def device_type(self):
        return self._device_type

    @property
    def memory_limit_bytes(self):
        return self._memory_limit_bytes

    @property
    def incarnation(self):
        return self._incarnation

    @property
    def description(self):
        """dtfnb: what the device is ("emulated GPU" ...), as the notebooks print it."""
        return self._description

    def __repr__(self):
        return (f"_DeviceAttributes({self._name}, {self._device_type}, "
                f"{self._memory_limit_bytes}, {self._incarnation})")


class BaseSession:
    """What Session and InteractiveSession share: a graph, a master, and `run`.

    A session connects a client graph to a master: the in-process one for
    `target=""`, a server of this process, or a task at `grpc://host:port`. The
    graph crosses to the master as a GraphDef, only the part added since the last
    `run`, and the master places, partitions and runs it. Variables, queues and
    readers live in the tasks, not in the session, so they outlive it there.

    Use `tf.Session` (a context manager) or `tf.InteractiveSession`; this base
    class is what they have in common:

    ```python
    a = tf.constant(3.0)
    b = tf.placeholder(tf.float32)
    sess = tf.Session()              # or tf.Session("grpc://localhost:2222")
    print(sess.run(a * b, feed_dict={b: 2.0}))   # 6.0
    print(sess.run({"a": a, "pair": (a, a)}))    # fetches keep their structure
    sess.close()
    ```

    Args:
      target: "" for an in-process master, or "grpc://host:port" of a task.
      graph: the graph to run (default: the default graph).
      config: a ConfigProto (device counts, placement logging, timeouts...).
    """
    def __init__(self, target="", graph=None, config=None):
        if graph is None:
            graph = get_default_graph()
        elif not isinstance(graph, Graph):
            raise TypeError("Argument `graph` must be a tf.Graph, but got "
                            f'"{type(graph).__name__}"')
        if target is None:
            target = ""
        elif not isinstance(target, (str, bytes)):
            message = f'Argument `target` must be a string, but got "{type(target).__name__}"'
            if isinstance(target, config_pb2.ConfigProto):
                message += '. Did you do "Session(config)" instead of "Session(config=config)"?'
            raise TypeError(message)
        target = target.decode() if isinstance(target, bytes) else target
        if config is None:
            config = config_pb2.ConfigProto()
        if not isinstance(config, config_pb2.ConfigProto):
            raise TypeError('Argument `config` must be a tf.ConfigProto, but got '
                            f'"{type(config).__name__}"')
        self._graph = graph
        self._target = target
        self._config = config
        self._closed = False
        self._master, self._owns_master = connect(target, config)
        self._sent_version = graph.version
        self._extend_lock = threading.Lock()
        self._handle = self._master.create_session(graph.as_graph_def(), config)
        self._mappers = {}
        self._placed = set()  # the (fetch mapper, feeds) whose placement the graph knows
        self._partial_runs = {}
        if config.log_device_placement:
            _print_device_mapping(self._master.list_devices(self._handle))

    @property
    def graph(self):
        """The graph that was launched in this session."""
        return self._graph

    @property
    def graph_def(self):
        """A serializable version of the underlying TensorFlow graph (a GraphDef)."""
        return self._graph.as_graph_def(add_shapes=self._config.graph_options.infer_shapes)

    @property
    def sess_str(self):
        """The target this session connects to ("" for in-process)."""
        return self._target

    @property
    def events(self):
        """dtfnb: the EventLog of this session's master where it runs in this process (a
        local session, or one on a server of this process); None for a remote master,
        whose task's events are watched over gRPC instead."""
        return getattr(self._master, "events", None)

    def list_devices(self):
        """Lists the devices available in this session: name, type, memory limit, incarnation."""
        return [_DeviceAttributes(d.name, d.device_type, 0, 0, d.description)
                for d in self._master.list_devices(self._handle)]

    def as_default(self):
        """Returns a context manager that makes this object the default session, so that
        `Tensor.eval()` and `Operation.run()` use it. It does not close the session.
        """
        return _as_default(self)

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs the ops and evaluates the tensors in `fetches`; returns them in shape."""
        self._check_runnable()
        feeds = self._feeds(feed_dict) if feed_dict else {}
        return self._run(self._mapper(fetches), feeds, options, run_metadata)

    def _mapper(self, fetches):
        key = structure_key(fetches)
        entry = self._mappers.get(key)
        if entry is None:
            if len(self._mappers) >= _CACHE_LIMIT:
                self._mappers.clear()
            # the entry keeps `fetches` alive, so the ids in its key cannot be reused
            entry = self._mappers[key] = (FetchMapper(self._graph, fetches), fetches)
        return entry[0]

    def make_callable(self, fetches, feed_list=None, accept_options=False):
        """A function running `fetches` with positional values for `feed_list`. As in
        TensorFlow, the fetches are checked once, here, and not at every call (a queue
        runner's loop calls it for every element). With `accept_options` it also takes
        `options=` and `run_metadata=` keywords."""
        if feed_list is not None and not isinstance(feed_list, (list, tuple)):
            raise TypeError("Argument `feed_list` must be a list or tuple. Received: "
                            f"feed_list={feed_list}")
        mapper = FetchMapper(self._graph, fetches)
        feed_list = None if feed_list is None else list(feed_list)

        def call(*args, options=None, run_metadata=None):
            self._check_runnable()
            feeds = self._feeds(dict(zip(feed_list, args))) if feed_list else {}
            return self._run(mapper, feeds, options, run_metadata)

        if accept_options or feed_list is not None:  # TensorFlow then calls `run`
            return call
        return lambda: call()  # any argument is a TypeError, as in TensorFlow

    def _make_callable_from_options(self, callable_options):
        """A function running a CallableOptions: it takes a value for each feed, in order,
        and an optional `run_metadata=`, and returns the fetched values as a list. As in
        TensorFlow, the values are fed as they are: one of another dtype is an error."""
        feeds = [self._callable_tensor(name) for name in callable_options.feed]
        fetches = [self._callable_tensor(name) for name in callable_options.fetch]
        mapper = FetchMapper(self._graph, fetches + list(callable_options.target))
        options = (callable_options.run_options
                   if callable_options.HasField("run_options") else None)

        def call(*args, run_metadata=None):
            self._check_runnable()
            if len(args) != len(feeds):
                raise InvalidArgumentError(None, None, f"Expected {len(feeds)} feed tensors, "
                                           f"but got {len(args)}")
            values = {}
            for tensor, value in zip(feeds, args):
                value = np.asarray(value)
                if dtypes.as_dtype(value.dtype) != tensor.dtype.base_dtype:
                    raise InvalidArgumentError(None, None, "Type mismatch: actual "
                                               f"{dtypes.c_type_name(value.dtype)} vs. expect "
                                               f"{dtypes.c_type_name(tensor.dtype)}")
                values[tensor.name] = value
            return self._run(mapper, values, options, run_metadata)[:len(fetches)]

        return call

    def _callable_tensor(self, name):
        try:
            return self._graph.as_graph_element(name, allow_tensor=True, allow_operation=False)
        except (KeyError, ValueError, TypeError):
            raise InvalidArgumentError(None, None, f"Tensor {name}, specified in either "
                                       "feed_devices or fetch_devices was not found in the "
                                       "Graph") from None

    def partial_run_setup(self, fetches, feeds=None):
        """Declares the fetches and the feeds of a run made in parts by `partial_run`;
        returns its handle."""
        self._check_runnable()
        feeds = [] if feeds is None else feeds
        feeds = feeds if isinstance(feeds, (list, tuple)) else [feeds]
        names = []
        for key in feeds:
            for part in partial_run_feeds(key):
                try:
                    names.append(self._graph.as_graph_element(
                        part, allow_tensor=True, allow_operation=False).name)
                except (TypeError, ValueError, KeyError) as err:
                    raise type(err)("Cannot interpret argument `feed` key as Tensor: "
                                    f"{err.args[0]}") from None
        mapper = FetchMapper(self._graph, fetches)
        handle = (f"{','.join(names)}->{','.join(mapper.tensors)}/{','.join(mapper.targets)}"
                  f"/{len(self._partial_runs)}/;0")
        self._partial_runs[handle] = _PartialRun(names, mapper.tensors + mapper.targets)
        return handle

    def partial_run(self, handle, fetches, feed_dict=None):
        """Runs one part of the partial run `handle`: feeds some of its declared feeds and
        fetches some of its declared fetches. Each node runs once over all the parts: a
        tensor fetched by an earlier part is fed, as its value, to the later ones."""
        self._check_runnable()
        feeds = self._feeds(feed_dict) if feed_dict else {}
        mapper = self._mapper(fetches)
        if mapper.targets:
            ops = [mapper.elements[name] for name in mapper.targets]
            raise RuntimeError("partial_run() requires empty `target_list`. Received: "
                               f"target_list={ops} (non-empty)")
        partial = self._partial_runs.get(handle)
        if partial is None:
            raise InvalidArgumentError(None, None,
                                       "Must run 'setup' before performing partial runs!")
        partial.check(feeds, mapper.tensors, self._graph)
        values = self._run_flat(mapper, {**partial.values, **feeds}, None, None)
        partial.record(feeds, dict(zip(mapper.tensors, values)))
        if partial.done:
            del self._partial_runs[handle]
        return mapper.build(values)

    def _check_runnable(self):
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        if self._graph.version == 0:
            raise RuntimeError("The Session graph is empty. Add operations to the graph "
                               "before calling run().")

    def _run(self, mapper, feeds, options, run_metadata):
        return mapper.build(self._run_flat(mapper, feeds, options, run_metadata))

    def _run_flat(self, mapper, feeds, options, run_metadata):
        """The values of `mapper`'s tensors, in order. A fed tensor's value is the array fed,
        as in TensorFlow, and nothing runs when that leaves nothing to fetch or run."""
        fetched = [name for name in mapper.tensors if name not in feeds]
        if not (fetched or mapper.targets):
            return [feeds[name] for name in mapper.tensors]
        if self._graph.version != self._sent_version:
            self._extend()
        signature = (mapper, tuple(feeds))
        placing = signature not in self._placed
        if placing:
            asked = options is not None and options.output_partition_graphs
            options, run_metadata = _asking_for_placement(options, run_metadata)
        try:
            values = self._master.run_step(self._handle, feeds, fetched, mapper.targets,
                                           options, run_metadata)
        except OpError as err:
            raise self._with_op(err) from None
        if placing:
            self._graph._record_placement({node.name: node.device
                                           for graph in run_metadata.partition_graphs
                                           for node in graph.node})
            if not asked:
                del run_metadata.partition_graphs[:]
            if len(self._placed) >= _CACHE_LIMIT:
                self._placed.clear()
            self._placed.add(signature)
        values = [fetched_value(value) for value in values]
        if len(fetched) == len(mapper.tensors):
            return values
        values = iter(values)
        return [feeds[name] if name in feeds else next(values) for name in mapper.tensors]

    def _extend(self):
        # Threads making their first run of new ops at once would each send the same
        # nodes; the master refuses a node twice, and that thread's run would be lost.
        with self._extend_lock:
            if self._graph.version == self._sent_version:
                return  # another thread sent them meanwhile
            delta = self._graph.as_graph_def(from_version=self._sent_version)
            self._master.extend_session(self._handle, delta)
            self._sent_version += len(delta.node)

    def _feeds(self, feed_dict):
        """{tensor name: array} for a feed_dict, checked as TensorFlow checks it."""
        feeds = {}
        for key, value in flatten_feed_dict(feed_dict).items():
            for part, part_value in feed_pairs(key, value):
                try:
                    tensor = self._graph.as_graph_element(part, allow_tensor=True,
                                                          allow_operation=False)
                except (TypeError, ValueError, KeyError) as err:
                    raise TypeError(f"Cannot interpret feed_dict key as Tensor: {err.args[0]}") \
                        from None
                if isinstance(part_value, Tensor):
                    raise TypeError(
                        "The value of a feed cannot be a tf.Tensor object. Acceptable feed "
                        "values include Python scalars, strings, lists, numpy ndarrays, or "
                        f"TensorHandles. For reference, the tensor object was {value} which "
                        f"was passed to the argument `feed_dict` with key {key}.")
                if not self._graph.is_feedable(tensor):  # (TensorFlow checks the value first)
                    raise ValueError(f"Tensor {tensor.name} may not be fed.")
                feeds[tensor.name] = _feed_value(tensor, part_value)
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
        """Closes this session, freeing the graphs it registered. Variables and queues on a
        server's tasks stay (until their container is reset); those of an in-process
        session go with it. Calling it again does nothing.
        """
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
        master, owned = connect(target, config or config_pb2.ConfigProto())
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



def _asking_for_placement(options, run_metadata):
    """The options and RunMetadata of a signature's first run: they ask for its partition
    graphs, so that the graph learns where its nodes were placed (FileWriter shows it)."""
    asking = config_pb2.RunOptions(output_partition_graphs=True)
    if options is not None:
        asking.MergeFrom(options)
    return asking, run_metadata if run_metadata is not None else config_pb2.RunMetadata()


@contextlib.contextmanager
def _as_default(session):
    default_session.push(session)
    try:
        yield session
    finally:
        default_session.pop(session)


def _feed_value(tensor, value):
    """`value` as an array of the tensor's dtype, checked as TensorFlow checks a feed."""
    dtype = tensor.dtype.base_dtype
    if dtype is dtypes.resource:
        raise TypeError(f"Tensor {tensor.name} of type resource may not be fed.")
    if hasattr(value, "__cuda_array_interface__"):
        array = value
    else:
        np_dtype = object if dtype is dtypes.string else dtype.as_numpy_dtype
        if isinstance(value, int) and not _int_survives(value, np_dtype):
            raise TypeError(f"Type of feed value {value} with type {type(value)} is not "
                            f"compatible with Tensor type {np_dtype}. Try explicitly setting "
                            "the type of the feed tensor to a larger type (e.g. int64).")
        if dtype is dtypes.string:
            array = np.asarray(value, dtype=object)
            # TensorFlow's strings are bytes: a fed str is encoded (UTF-8), as TF does
            flat = [v.encode() if isinstance(v, str) else v for v in array.reshape(-1)]
            array = np.array(flat, dtype=object).reshape(array.shape)
        elif np.issubdtype(np_dtype, np.number):
            # cast, wrapping around, as TensorFlow does under numpy 2
            array = np.asarray(value).astype(np_dtype, copy=False)
        else:
            array = np.asarray(value, dtype=np_dtype)
    if not tensor.shape.admits(array.shape):
        raise ValueError(f"Cannot feed value of shape {array.shape} for Tensor {tensor.name}, "
                         f"which has shape {tensor.shape}")
    return array


def _int_survives(value, np_dtype):
    """Whether a Python int fed as `np_dtype` keeps its value (a string never does)."""
    if np_dtype is object:
        return False
    return np_dtype(np.array(value).astype(np_dtype)) == value


class _PartialRun:
    """What a partial run declared and what its parts have fed and fetched so far."""

    def __init__(self, feeds, fetches):
        self.feeds = feeds
        self.fetches = fetches
        self.values = {}    # fed or fetched so far: {tensor name: array}
        self.fetched = set()

    def check(self, feeds, fetches, graph):
        for name in feeds:
            if name not in self.feeds:
                raise InvalidArgumentError(None, None, f"The feed {name} was not specified in "
                                           "partial_run_setup.")
            if name in self.values:
                raise InvalidArgumentError(None, None, f"The feed {name} has already been fed.")
        for name in fetches:
            if name not in self.fetches:
                raise InvalidArgumentError(None, None, f"The fetch {name} was not specified "
                                           "in partial_run_setup.")
            if name in self.fetched:
                raise InvalidArgumentError(None, None, f"The fetch {name} has already been "
                                           "fetched.")
        available = set(self.values) | set(feeds)
        for name in fetches:
            missing = self._missing_feed(graph.get_tensor_by_name(name), available)
            if missing:
                raise InvalidArgumentError(None, None, f"Fetch {missing} can't be computed "
                                           "from the feeds that have been fed so far.")

    def _missing_feed(self, tensor, available):
        """A declared feed upstream of `tensor` that has no value yet, if any."""
        if tensor.name in available:
            return None
        if tensor.name in self.feeds:
            return tensor.name
        seen, stack = set(), [tensor.op]
        while stack:
            op = stack.pop()
            if op in seen:
                continue
            seen.add(op)
            for source in op.inputs:
                if source.name in self.feeds and source.name not in available:
                    return source.name
                if source.name not in available:
                    stack.append(source.op)
            stack.extend(op.control_inputs)
        return None

    def record(self, feeds, fetched):
        self.values.update(feeds)
        self.values.update(fetched)
        self.fetched.update(fetched)

    @property
    def done(self):
        return self.fetched.issuperset(self.fetches)


def _print_device_mapping(devices):
    import sys
    lines = ["Device mapping:\n"] + [f"{d.name} -> {d.description}\n" for d in devices]
    sys.stdout.write("".join(lines))
    sys.stdout.flush()


class Session(BaseSession):
    """A TensorFlow 1 session: `tf.Session(target="", graph=None, config=None)`.

    `with Session() as sess:` makes it the default session and its graph the default
    graph, and closes it at the end; it cannot be entered again inside (use
    `sess.as_default()` for that).

    ```python
    x = tf.Variable(1.0)
    step = x.assign_add(1.0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(step)
        print(x.eval())              # 2.0: the session is the default one here
    ```
    """

    def __init__(self, target="", graph=None, config=None):
        super().__init__(target, graph, config)
        self._contexts = None

    def __enter__(self):
        if self._contexts is not None:
            raise RuntimeError("Session context managers are not re-entrant. Use "
                               "`Session.as_default()` if you want to enter a session "
                               "multiple times.")
        self._contexts = (self._graph.as_default(), self.as_default())
        for context in self._contexts:
            context.__enter__()
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        graph_context, session_context = self._contexts
        self._contexts = None
        session_context.__exit__(exc_type, exc_value, traceback)
        graph_context.__exit__(exc_type, exc_value, traceback)
        self.close()


class InteractiveSession(BaseSession):
    """A session that makes itself the default session on creation (for shells, notebooks).

    ```python
    sess = tf.InteractiveSession()
    c = tf.constant([1.0, 2.0])
    print((c * 2).eval())            # no `with` block needed
    sess.close()
    ```
    """

    def __init__(self, target="", graph=None, config=None):
        if config is None:
            config = config_pb2.ConfigProto(gpu_options=config_pb2.GPUOptions(allow_growth=True))
        # As TensorFlow's: each run places only what it needs, so one op pinned to a
        # device that is not there fails only the runs that need it.
        config.graph_options.place_pruned_graph = True
        super().__init__(target, graph, config)
        self._context = self.as_default()
        self._context.__enter__()
        self._graph_context = self._graph.as_default()
        self._graph_context.__enter__()

    def close(self):
        """Closes the session and stops it being the default session and graph."""
        if not self._closed and hasattr(self, "_context"):
            self._graph_context.__exit__(None, None, None)
            self._context.__exit__(None, None, None)
        super().close()
