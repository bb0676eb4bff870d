"""The launchers the lifecycle suite runs under, each as a recipe: the launcher class's
"module:name" and its keyword arguments, so that a test can build the same launcher in
this process and in a client process it kills. A launcher whose facility cannot start
here (no sshd, no Slurm, not root) skips with the reason (the `sshd` and `slurm` fixtures
are in ../conftest.py)."""

import sys

import pytest


def _local(request):
    return "dtfnb.launch.local:LocalLauncher", {}


def _ssh(request):
    sshd = request.getfixturevalue("sshd")
    return "dtfnb.launch.ssh:SSHLauncher", dict(python=sys.executable, **sshd.options)


def _srun(request):
    request.getfixturevalue("slurm")
    return "dtfnb.launch.slurm:SrunLauncher", {}


def _sbatch(request):
    request.getfixturevalue("slurm")
    return "dtfnb.launch.slurm:SbatchLauncher", dict(
        directory=str(request.getfixturevalue("tmp_path")))


LAUNCHERS = {"local": _local, "ssh": _ssh, "srun": _srun, "sbatch": _sbatch}


@pytest.fixture(params=sorted(LAUNCHERS))
def recipe(request):
    """(launcher class as "module:name", its keyword arguments) for each launcher."""
    return LAUNCHERS[request.param](request)
