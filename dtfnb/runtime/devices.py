"""Devices of one task: CPUs on numpy, GPUs on CuPy, and emulated GPUs on numpy."""

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from dtfnb.base.cores import usable_cores
from dtfnb.base.device_spec import DeviceSpec
from dtfnb.resources.resource_mgr import ResourceMgr
from dtfnb.runtime import host_memory


class Device:
    """One device: its full name, array module (`xp`), resources and inter-op pool.

    `events` is its task's EventLog (None outside a task): kernels publish queue and
    variable-update events there, after checking `events.watching` if they are frequent.
    A task makes its devices with `create_devices` from the session config; kernels
    see theirs as `ctx.device`, its arrays as `ctx.xp` and resources as
    `ctx.resource_mgr`.

    ```python
    from dtfnb.runtime.devices import Device

    cpu = Device("worker", 0, "CPU", 0)
    print(cpu.name, cpu.description)  # /job:worker/replica:0/task:0/device:CPU:0 numpy
    gpu = Device("worker", 0, "GPU", 0, emulated=True)   # numpy under GPU kernel rules
    print(gpu.description)
    cpu.close()
    ```
    """

    def __init__(self, job, task, device_type, index, xp=np, emulated=False, pool_size=2,
                 cuda_id=None, parallel_ops=True, events=None):
        self.spec = DeviceSpec(job, 0, task, device_type, index)
        self.name = self.spec.to_string()
        self.device_type = device_type
        self.index = index
        self.xp = xp
        self.emulated = emulated
        self.cuda_id = cuda_id
        self.resource_mgr = ResourceMgr()
        self.events = events
        # Whether expensive kernels may run side by side on the inter-op pool (see
        # create_devices); blocking kernels always get their own threads.
        self.parallel_ops = parallel_ops
        # Makes arrays a task's transport lends without a copy (None: plain ones).
        self.shared_arrays = None
        # The task's runtime.collectives.Collectives, which its worker sets.
        self.collectives = None
        self._pool_size = pool_size
        self._pool = None
        self._blocking_pool = None

    @property
    def description(self):
        """What runs the device's kernels, for logs and device lists."""
        if self.emulated:
            return "emulated GPU: numpy kernels under GPU kernel rules"
        if self.device_type == "GPU":
            return f"CUDA device {self.cuda_id} (CuPy)"
        return "numpy"

    def new_array(self, shape, dtype):
        """An uninitialized array for a value kept beyond the step (a variable's): in a
        task of a cluster, one that other tasks on the host read in place."""
        array = self.shared_arrays(shape, dtype) if self.shared_arrays is not None else None
        return array if array is not None else self.xp.empty(shape, dtype)

    @property
    def pool(self):
        """The inter-op thread pool, created on first use."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self._pool_size,
                                            thread_name_prefix=f"dtfnb-{self.name[-5:]}")
        return self._pool

    @property
    def blocking_pool(self):
        """Threads for kernels that wait (queues, receives), kept apart from the inter-op pool."""
        if self._blocking_pool is None:
            self._blocking_pool = ThreadPoolExecutor(
                64, thread_name_prefix=f"dtfnb-{self.name[-5:]}-blocking")
        return self._blocking_pool

    def close(self):
        """Shuts the device's thread pools down, waiting for their work."""
        for pool in (self._pool, self._blocking_pool):
            if pool is not None:
                pool.shutdown(wait=True)
        self._pool = self._blocking_pool = None

    def __repr__(self):
        label = " (emulated)" if self.emulated else ""
        return f"<Device {self.name}{label}>"


def visible_cuda_devices():
    """CUDA device ids CuPy can use, honouring CUDA_VISIBLE_DEVICES ('' means none)."""
    if os.environ.get("CUDA_VISIBLE_DEVICES", None) == "":
        return []
    try:
        import cupy
        return list(range(cupy.cuda.runtime.getDeviceCount()))
    except Exception:  # no CuPy, no driver or no device: a CPU-only task
        return []


def _limit_gpu_memory(cuda_id, gpu_options):
    import cupy
    if gpu_options.per_process_gpu_memory_fraction > 0:
        with cupy.cuda.Device(cuda_id):
            cupy.get_default_memory_pool().set_limit(
                fraction=gpu_options.per_process_gpu_memory_fraction)


def create_devices(config, job="localhost", task=0, blas_threads=1, events=None, cores=None):
    """The devices a task offers for a ConfigProto: CPUs, then CUDA or emulated GPUs.

    Expensive kernels run side by side only when BLAS does not already use every core
    for each of them, or when the session asks for inter-op threads explicitly (in
    inter_op_parallelism_threads or a session_inter_op_thread_pool): otherwise two
    matmuls with all-core BLAS each fight for the same cores (the MLP step ran 2.7x
    slower that way). `cores`, the cores the task may use (default: the
    host's), caps that too: a task whose share is one core gains nothing from side-by-
    side kernels but thread handoffs (its MLP step took 10% more CPU time with them).
    Every device gets the task's EventLog, `events`.
    """
    host_memory.keep_freed_memory()
    cores = cores or usable_cores()
    pool_size = config.inter_op_parallelism_threads or usable_cores()
    asked = [config.inter_op_parallelism_threads] + [
        pool.num_threads for pool in config.session_inter_op_thread_pool]
    parallel = max(asked) > 1 or (blas_threads == 1 and cores > 1)
    counts = dict(config.device_count)
    options = {"pool_size": pool_size, "parallel_ops": parallel, "events": events}
    devices = [Device(job, task, "CPU", i, **options)
               for i in range(max(1, counts.get("CPU", 1)))]
    cuda_ids = visible_cuda_devices()
    if config.gpu_options.visible_device_list:
        wanted = [int(i) for i in config.gpu_options.visible_device_list.split(",")]
        cuda_ids = [i for i in wanted if i in cuda_ids]
    if "GPU" in counts:
        cuda_ids = cuda_ids[:counts["GPU"]]
    if cuda_ids:
        import cupy
        for index, cuda_id in enumerate(cuda_ids):
            _limit_gpu_memory(cuda_id, config.gpu_options)
            devices.append(Device(job, task, "GPU", index, xp=cupy, cuda_id=cuda_id,
                                  **options))
    else:
        devices.extend(Device(job, task, "GPU", i, emulated=True, **options)
                       for i in range(config.emulated_gpus))
    return devices
