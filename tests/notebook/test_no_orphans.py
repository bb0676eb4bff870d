"""Task processes, and the fork server they come from, die with their kernel: killed
outright or shut down."""

import os
import signal

import pytest

from tests.helpers import poll_for
from tests.notebook.kernel_util import Kernel, running, stdout


def _start_cluster(kernel):
    # importing dtfnb.notebook in a kernel loads the extension: %%cluster is there
    kernel.execute("from dtfnb.notebook import LocalCluster\n"
                   "other = LocalCluster({'worker': 1}, name='other')")
    kernel.execute("%%cluster\nps: 1\nworker: 2\n")
    messages = kernel.execute("from dtfnb.launch.forkserver import fork_server\n"
                              "print(*[p.pid(t.job, t.index) for p in (cluster, other) "
                              "for t in p.tasks], fork_server().process.pid)")
    pids = [int(pid) for pid in stdout(messages).split()]
    assert len(pids) == 5 and all(running(pid) for pid in pids)
    return pids


@pytest.mark.parametrize("end", ["kill", "shutdown"])
def test_no_task_outlives_its_kernel(end):
    kernel = Kernel()
    try:
        pids = _start_cluster(kernel)
        if end == "kill":
            os.kill(kernel.pid, signal.SIGKILL)
        else:
            kernel.client.stop_channels()
            kernel.manager.shutdown_kernel(now=False)
        assert poll_for(lambda: not any(running(pid) for pid in pids), timeout=15), \
            [pid for pid in pids if running(pid)]
    finally:
        kernel.stop()
