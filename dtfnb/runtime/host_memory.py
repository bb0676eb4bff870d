"""How the C allocator treats the large temporaries of CPU kernels (glibc only).

numpy takes each array's memory from malloc. By default glibc serves a block of
128 KiB or more (a threshold it raises as it goes, up to 32 MiB) with a fresh
mmap, and gives freed memory back to the OS, so a step's large temporaries pay
their page faults again at every step: on the machines here that made the
chapter's MLP step twice as slow as its arithmetic. TensorFlow keeps freed memory
in its own allocator; dtfnb asks glibc to do the same once a process creates
devices: blocks up to 32 MiB from the heap, the heap grown 64 MiB at a time and
never trimmed. The price is that a process's resident memory stays at its peak.
DTFNB_KEEP_FREED_MEMORY=0 leaves malloc as it is.
"""

import ctypes
import os
import threading

SWITCH_VARIABLE = "DTFNB_KEEP_FREED_MEMORY"
# mallopt's parameters (malloc.h) and the values set.
_SETTINGS = ((-3, 32 << 20),      # M_MMAP_THRESHOLD: glibc's largest on 64-bit hosts
             (-1, 2**31 - 1),     # M_TRIM_THRESHOLD: never give the heap's top back
             (-2, 64 << 20))      # M_TOP_PAD: grow the heap in large steps

_lock = threading.Lock()
_kept = None


def keep_freed_memory():
    """Applies the policy once per process; whether it is in force."""
    global _kept
    with _lock:
        if _kept is None:
            _kept = os.environ.get(SWITCH_VARIABLE, "1") != "0" and _apply()
        return _kept


def _apply():
    try:
        mallopt = ctypes.CDLL(None).mallopt   # glibc's; absent on macOS and Windows
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return all(mallopt(parameter, value) == 1 for parameter, value in _SETTINGS)
