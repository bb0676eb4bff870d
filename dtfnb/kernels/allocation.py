"""The check a kernel makes before it allocates an output whose size its inputs decide.

numpy asks the OS for an array's memory and Linux grants more than it has: a tile,
fill or broadcast far larger than memory then grows until the kernel dies, and its
task with it. Kernels whose output can be much larger than their inputs (sizes
read from a shape, a count, repeated or broadcast inputs) call `check_output`
first; it refuses what the device cannot hold, with TensorFlow's error and words.
"""

import math
import os

import numpy as np

from dtfnb.base.dtypes import as_dtype, c_type_name
from dtfnb.base.errors import ResourceExhaustedError

# Outputs up to this size are never refused: they need no look at the memory left.
ALWAYS_FITS = 64 << 20
_LARGEST_ITEM = 16   # bytes: complex128's


def _read_int(path, field=None):
    """The integer in a /proc or /sys file (in `field`'s line, in kB), None if absent."""
    try:
        with open(path, "rb") as f:
            if field is None:
                return int(f.read())
            for line in f:
                if line.startswith(field):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return None
    return None


def _host_bytes_free():
    """Memory a new array can have: what Linux reports available, within this process's
    cgroup limit (a container's); the machine's memory where neither can be read."""
    free = _read_int("/proc/meminfo", b"MemAvailable:")
    if free is None:
        free = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    limit = _read_int("/sys/fs/cgroup/memory.max")
    if limit is not None:
        free = min(free, limit - (_read_int("/sys/fs/cgroup/memory.current") or 0))
    return free


def _bytes_free(xp):
    if xp.__name__ == "numpy":
        return _host_bytes_free()
    # CUDA refuses what it lacks at once; this catches what no free block could hold.
    return xp.cuda.Device().mem_info[1]


def check_output(ctx, shape, dtype):
    """Raises ResourceExhaustedError, before any allocation, if an output of `shape` and
    `dtype` cannot fit in the memory of the kernel's device."""
    count = math.prod(shape)
    if count <= ALWAYS_FITS // _LARGEST_ITEM:
        return
    dtype = np.dtype(dtype)
    size = count * dtype.itemsize
    if size > ALWAYS_FITS and size > _bytes_free(ctx.xp):
        allocator = "cpu" if ctx.xp.__name__ == "numpy" else f"GPU_{ctx.device.index}_bfc"
        raise ResourceExhaustedError(
            None, None, f"OOM when allocating tensor with shape[{','.join(map(str, shape))}] "
            f"and type {c_type_name(as_dtype(dtype))} on {ctx.device.name} by allocator "
            f"{allocator}")
