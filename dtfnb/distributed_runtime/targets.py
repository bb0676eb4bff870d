"""The master behind a session's target: the one door from client/ into the runtime.

    master, owned = connect("", config)                     # a new task of its own
    master, owned = connect("grpc://127.0.0.1:2222", config)
    handle = master.create_session(graph_def, config)

An empty target is a local session (TensorFlow's DirectSession): a fresh task in this
process, '/job:localhost/replica:0/task:0', with its own devices, resources and event
log, called by plain method calls (arrays pass by reference, nothing is encoded). A
target of a server running in this process reaches that server's master the same
way; any other "grpc://host:port" reaches a master in another process
(transport.remote.RemoteMaster). Every master has the same methods.

`owned`: the session made the master, and closes it when it closes.
"""

from dtfnb.base.cores import usable_cores
from dtfnb.base.errors import NotFoundError
from dtfnb.distributed_runtime.master import Master, local_task_spec
from dtfnb.distributed_runtime.server_lib import running_server
from dtfnb.distributed_runtime.transport.remote import RemoteMaster
from dtfnb.distributed_runtime.transport.rpc import Security
from dtfnb.distributed_runtime.worker import Worker
from dtfnb.runtime.devices import create_devices
from dtfnb.runtime.events import EventLog


def connect(target, config):
    """(master, owned): the master that runs the sessions of `target` under `config`."""
    if not target:
        return _local_master(config), True
    server = running_server(target)
    if server is not None:
        return server.master, False
    if target.startswith("grpc://"):
        return RemoteMaster(target[len("grpc://"):], Security()), True
    raise NotFoundError(None, None, "No session factory registered for the given session "
                        f"options: {{target: \"{target}\"}}")


def _local_master(config):
    """A new local task and its master; a notebook watches it through `master.events`."""
    # A local session has the machine to itself: like TensorFlow, 0 means every core it
    # may run on.
    blas_threads = config.intra_op_parallelism_threads or usable_cores()
    task = local_task_spec()
    events = EventLog(task.to_string())
    devices = create_devices(config, "localhost", 0, blas_threads, events)
    return Master(task, [Worker(devices, blas_threads)], events)
