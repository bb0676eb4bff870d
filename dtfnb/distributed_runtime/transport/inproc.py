"""The in-process transport: a local session talks to its own master by plain calls.

Arrays pass by reference; nothing is encoded. `tf.Session()` gets a fresh task
of its own (own devices, resources and event log), as TensorFlow's local sessions do.
"""

import os

from dtfnb.distributed_runtime.master import Master, local_task_spec
from dtfnb.distributed_runtime.worker import Worker
from dtfnb.runtime.devices import create_devices
from dtfnb.runtime.events import EventLog


def connect_local(config):
    """A new local task ('/job:localhost/replica:0/task:0') and its master.

    A notebook watches the task in-process through `master.events`."""
    # A local session has the machine to itself: like TensorFlow, 0 means every core.
    blas_threads = config.intra_op_parallelism_threads or os.cpu_count() or 1
    task = local_task_spec()
    events = EventLog(task.to_string())
    devices = create_devices(config, "localhost", 0, blas_threads, events)
    worker = Worker(devices, blas_threads)
    return Master(task, [worker], events)
