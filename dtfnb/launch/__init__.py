"""Starting a cluster's tasks: `Cluster` over a `Launcher`, and the launchers.

The layer sits between the runtime (a task is `python -m dtfnb.server`, whose cluster
comes from `--cluster`, TF_CONFIG or Slurm's environment through
dtfnb/distributed_runtime/resolvers.py) and the notebook (`%%cluster --launcher`). It
knows nothing of Jupyter.

The interface (launcher.py): `Launcher.start(spec, tasks)` starts TaskStarts (job, index,
server flags) of the cluster `spec` and returns one `TaskProcess` per task: `pid`,
`poll()`, `send_signal()`, `kill()`, `wait(timeout)`, the task's output as lines
(`stdout`), and `address` where the launcher picks it. `Cluster` waits until every task
accepts connections and gives `state`, `logs`, `kill`, `restart` and `stop` the same
meaning under every launcher; it never asks which launcher it has. Each launcher ties
its tasks' lives to the client: when the client dies, however it dies, its tasks stop.

- `LocalLauncher` (local.py): forked from a fork server on this machine
  (forkserver.py); tasks inherit the client's environment and stop with it
  (`--exit-with-parent`, and the fork server stops them when the client goes).
- `SSHLauncher` (ssh.py): one `ssh` channel per task to the host its address names;
  the cluster token and TLS material go over the channel's stdin first
  (`--secrets-from-stdin`), and the task stops when the channel closes
  (`--exit-on-eof`). Signals go to the remote process by its pid.
- `SrunLauncher` and `SbatchLauncher` (slurm.py): every task of the cluster as one
  Slurm job step (`srun --multi-prog`), each task's role from SLURM_PROCID through the
  resolvers, one handle per Slurm task over the step's labelled output; they pick the
  addresses (`picks_addresses`), which the tasks report once they serve. srun runs the
  step from the client inside its allocation, the secrets on srun's stdin and the
  tasks ending with it (`--exit-on-eof`); sbatch submits a batch script
  (`job_script()` previews it) and follows its output file, and `close()` or a
  watchdog, when the client dies, cancels the job. A signal to one task is a one-task
  step that runs `kill` on its node.
"""

from dtfnb.launch.cluster import Cluster, LocalCluster, live_clusters
from dtfnb.launch.launcher import Launcher, TaskProcess, TaskStart
from dtfnb.launch.local import LocalLauncher
from dtfnb.launch.slurm import SbatchLauncher, SrunLauncher
from dtfnb.launch.ssh import SSHLauncher

__all__ = ["Cluster", "Launcher", "LocalCluster", "LocalLauncher", "SSHLauncher",
           "SbatchLauncher", "SrunLauncher", "TaskProcess", "TaskStart", "live_clusters"]
