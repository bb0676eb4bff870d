"""The launchers the lifecycle suite runs under, each as a Recipe: the launcher class's
"module:name" and its keyword arguments, so that a test can build the same launcher in
this process and in a client process it kills, and where the tasks go. A launcher whose
facility cannot start here (no sshd, no Slurm, no namespaces, not root) skips with the
reason (the `sshd`, `ssh_hosts` and `slurm` fixtures are in ../conftest.py)."""

import sys
from collections.abc import Callable
from typing import NamedTuple

import pytest


class Recipe(NamedTuple):
    """A launcher as `launcher` ("module:name") and `options` (its keyword arguments);
    `hosts`, the IPs its tasks go to, one task per host in turn (none: free ports on
    127.0.0.1); `strays()`, {host IP: pids} of what runs on those hosts beyond the
    facility itself (sshd)."""

    launcher: str
    options: dict
    hosts: tuple = ()
    strays: Callable[[], dict] = dict


def _local(request):
    return Recipe("dtfnb.launch.local:LocalLauncher", {})


def _ssh(request):
    sshd = request.getfixturevalue("sshd")
    return Recipe("dtfnb.launch.ssh:SSHLauncher", dict(python=sys.executable, **sshd.options))


def _ssh_namespaces(request):
    """ssh to an sshd in each host of the namespace bed: the tasks run there, each with its
    own network and hostname, and reach each other over gRPC alone."""
    sshd = request.getfixturevalue("ssh_hosts")
    return Recipe("dtfnb.launch.ssh:SSHLauncher", dict(python=sys.executable, **sshd.options),
                  tuple(sshd.addresses), sshd.strays)


def _srun(request):
    request.getfixturevalue("slurm")
    return Recipe("dtfnb.launch.slurm:SrunLauncher", {})


def _sbatch(request):
    request.getfixturevalue("slurm")
    return Recipe("dtfnb.launch.slurm:SbatchLauncher",
                  dict(directory=str(request.getfixturevalue("tmp_path"))))


LAUNCHERS = {"local": _local, "ssh": _ssh, "ssh-namespaces": _ssh_namespaces, "srun": _srun,
             "sbatch": _sbatch}


_MARKS = {"ssh-namespaces": pytest.mark.namespaces}   # `pytest -m namespaces` selects it


@pytest.fixture(params=[pytest.param(name, marks=_MARKS.get(name, ()))
                        for name in sorted(LAUNCHERS)])
def recipe(request):
    """The Recipe of each launcher."""
    return LAUNCHERS[request.param](request)
