"""LocalLauncher: tasks as processes on this machine, forked from the fork server
(forkserver.py). They inherit this process's environment and directory as they are at the
start (the cluster token and TLS files included), and die with this process."""

from dtfnb.launch.forkserver import fork_server
from dtfnb.launch.launcher import Launcher, server_argv


class LocalLauncher(Launcher):
    """Forks each task from this process's fork server."""

    name = "local"

    def start(self, spec, tasks):
        """Forks `tasks`; each stops when the fork server, and so this process, goes."""
        server = fork_server()
        return [server.spawn(server_argv(spec, task, ["--exit-with-parent"])) for task in tasks]

    def __repr__(self):
        return "LocalLauncher()"
