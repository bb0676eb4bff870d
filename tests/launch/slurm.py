"""A real single-node Slurm for tests: munged, slurmctld and slurmd started by
`.ci/slurm.sh` with every file in a temporary folder, on free ports; clients reach it
through SLURM_CONF, which `start()` sets in this process's environment (and so in its
children's) and `stop()` takes back."""

import os
import pathlib
import shutil
import socket
import subprocess
import tempfile

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / ".ci" / "slurm.sh"
_DAEMONS = ("munged", "slurmctld", "slurmd", "srun", "sbatch")


def unavailable():
    """Why no Slurm can run here, or None."""
    missing = [name for name in _DAEMONS if not shutil.which(name, path="/usr/sbin:/usr/bin")]
    if missing:
        return f"no {', '.join(missing)}: apt-get install slurm-wlm munge"
    if os.geteuid() != 0:
        return "slurmd needs root to run jobs as their users"
    return None


def _free_ports(n):
    """`n` distinct ports free on this machine now (held open together while chosen)."""
    probes = [socket.socket() for _ in range(n)]
    for probe in probes:
        probe.bind(("127.0.0.1", 0))
    ports = [probe.getsockname()[1] for probe in probes]
    for probe in probes:
        probe.close()
    return ports


class Slurm:
    """`Slurm().start()` brings the node up (idle in `sinfo`); `stop()` cancels every job,
    stops the daemons and removes their folder."""

    def __init__(self):
        self.folder = pathlib.Path(tempfile.mkdtemp(prefix="dtfnb-slurm-")) / "slurm"
        self.conf = str(self.folder / "slurm.conf")
        self._former_conf = None

    def start(self):
        """Runs `slurm.sh up`; RuntimeError with its output if the node does not come up."""
        ctld_port, slurmd_port = _free_ports(2)
        env = dict(os.environ, SLURMCTLD_PORT=str(ctld_port), SLURMD_PORT=str(slurmd_port))
        result = subprocess.run([str(SCRIPT), "up", str(self.folder)], env=env,
                                capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            shutil.rmtree(self.folder.parent, ignore_errors=True)
            raise RuntimeError(f"Slurm did not start: {result.stderr.strip()}")
        self._former_conf = os.environ.get("SLURM_CONF")
        os.environ["SLURM_CONF"] = self.conf
        return self

    def stop(self):
        """Runs `slurm.sh down` and restores SLURM_CONF."""
        subprocess.run([str(SCRIPT), "down", str(self.folder)], timeout=60, check=True)
        shutil.rmtree(self.folder.parent, ignore_errors=True)
        if self._former_conf is None:
            os.environ.pop("SLURM_CONF", None)
        else:
            os.environ["SLURM_CONF"] = self._former_conf

    def jobs(self):
        """The ids of the jobs Slurm still knows as pending, running or completing."""
        out = subprocess.run(["squeue", "--noheader", "--format=%i"], capture_output=True,
                             text=True, timeout=30, check=True).stdout
        return out.split()
