"""The launchers the lifecycle suite runs under, each as a recipe: the launcher class's
"module:name" and its keyword arguments, so that a test can build the same launcher in
this process and in a client process it kills. A launcher whose facility cannot start
here (no sshd, not root) skips with the reason (the `sshd` fixture is in ../conftest.py)."""

import sys

import pytest


def _local(request):
    return "dtfnb.launch.local:LocalLauncher", {}


def _ssh(request):
    sshd = request.getfixturevalue("sshd")
    return "dtfnb.launch.ssh:SSHLauncher", dict(python=sys.executable, **sshd.options)


LAUNCHERS = {"local": _local, "ssh": _ssh}


@pytest.fixture(params=sorted(LAUNCHERS))
def recipe(request):
    """(launcher class as "module:name", its keyword arguments) for each launcher."""
    return LAUNCHERS[request.param](request)
