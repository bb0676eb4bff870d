"""The allocator policy for kernels' large temporaries: freed memory is kept for reuse."""

import subprocess
import sys

import pytest

_PROBE = """
import resource
import numpy as np
import dtfnb as tf
from dtfnb.runtime import host_memory
tf.Session().close()   # creating devices applies the policy
def step():   # a step's temporaries: several 8 MiB arrays at once, then none
    arrays = [np.ones(1 << 20) for _ in range(4)]
    del arrays
for _ in range(3):
    step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    step()
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
print(host_memory.keep_freed_memory(), faults)
"""


def probe(**env):
    import os
    result = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                            env=dict(os.environ, **env), timeout=120, check=True)
    kept, faults = result.stdout.split()
    return kept == "True", int(faults)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_large_temporaries_reuse_memory_instead_of_faulting_it_in_again():
    kept, faults = probe()
    assert kept
    assert faults < 1000   # 20 x 32 MiB faulted in again would be 160,000 pages
    kept, faults = probe(DTFNB_KEEP_FREED_MEMORY="0")
    assert not kept
    assert faults > 10_000   # it faults most of them in again
