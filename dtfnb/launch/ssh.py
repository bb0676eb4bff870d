"""SSHLauncher: each task over its own channel of the system's `ssh` client, on the host
its address names (`worker: hostB:2222` runs on hostB).

The remote command prints its process id, then becomes `PYTHON -m dtfnb.server ...
--exit-on-eof --secrets-from-stdin`. The first line written to the channel's stdin
carries the cluster token and the TLS PEMs of this process (DTFNB_CLUSTER_TOKEN,
DTFNB_TLS_*), so they are in no argv and no environment on either side; the channel
stays open while the task runs, and its end (the client stopped, killed or gone) stops
the task. The task's output comes back over the channel. A signal goes to the remote
process by its pid, over a second, short connection: `kill` is a real SIGKILL there.

ssh runs with BatchMode (no password prompt can hang a start), the identity file, port,
user and `-o` options given, and the host keys the user's known_hosts (or an
`UserKnownHostsFile=` option) accepts.
"""

import json
import re
import shlex
import signal
import subprocess
import threading

from dtfnb.launch.launcher import Launcher, TaskProcess, client_secrets, server_argv

_PID_LINE = re.compile(r"dtfnb-task-pid (\d+)$")
_SIGNAL_SECONDS = 10.0   # a kill over ssh that takes longer is given up
_CONNECT_SECONDS = 10


class SSHLauncher(Launcher):
    """Starts each task with `ssh HOST PYTHON -m dtfnb.server ...`.

    Args:
      python: the interpreter on the hosts, with dtfnb importable (default python3).
      user: the login name on the hosts (default: ssh's).
      port: sshd's port on the hosts (default: ssh's, 22).
      identity: the private key file (`ssh -i`), used alone.
      options: more `ssh -o` options, such as ["UserKnownHostsFile=/path"].
      ssh: the client (default /usr/bin/ssh).
    """

    name = "ssh"

    def __init__(self, python="python3", user=None, port=None, identity=None, options=(),
                 ssh="/usr/bin/ssh"):
        self.python = python
        self._base = [ssh, "-T", "-o", "BatchMode=yes",
                      "-o", f"ConnectTimeout={_CONNECT_SECONDS}",
                      *(["-p", str(port)] if port else []),
                      *(["-l", user] if user else []),
                      *(["-i", identity, "-o", "IdentitiesOnly=yes"] if identity else []),
                      *[arg for option in options for arg in ("-o", option)]]

    def command(self, host, remote):
        """The ssh command line that runs the shell command `remote` on `host`."""
        return [*self._base, host, "--", remote]

    def start(self, spec, tasks):
        """Opens one channel per task, each to the host of the task's address."""
        secrets = json.dumps(client_secrets()) + "\n"
        processes = []
        for task in tasks:
            host = _host(spec[task.job][task.index])
            argv = server_argv(spec, task, ["--exit-on-eof", "--secrets-from-stdin"])
            remote = (f"echo dtfnb-task-pid $$ && exec {shlex.quote(self.python)} -m "
                      f"dtfnb.server {shlex.join(argv)} 2>&1")
            processes.append(SSHProcess(self, host, self.command(host, remote), secrets))
        return processes

    def __repr__(self):
        return f"SSHLauncher(python={self.python!r})"


def _host(address):
    """The host of "host:port" (an IPv6 address in brackets without them)."""
    return address.rpartition(":")[0].strip("[]")


class SSHProcess(TaskProcess):
    """A task on a remote host: the local ssh client holds its channel."""

    def __init__(self, launcher, host, command, secrets):
        self._launcher, self.host = launcher, host
        self._pid_known = threading.Event()
        # Its own session: interrupting the kernel must not close the channel.
        self._client = subprocess.Popen(command, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        text=True, errors="replace", start_new_session=True)
        try:
            self._client.stdin.write(secrets)
            self._client.stdin.flush()
        except BrokenPipeError:   # ssh failed at once: its output says why
            pass
        self.stdout = self._lines()

    def _lines(self):
        """The channel's output, less the line that gives the remote pid."""
        with self._client.stdout as output:
            for line in output:
                found = None if self._pid_known.is_set() else _PID_LINE.match(line.strip())
                if found:
                    self.pid = int(found.group(1))
                    self._pid_known.set()
                else:
                    yield line
        self._pid_known.set()   # none will come

    @property
    def returncode(self):
        """The exit status of the channel: the task's, or 255 if ssh failed."""
        return self._client.returncode

    def poll(self):
        """The exit status once the channel has closed, else None."""
        code = self._client.poll()
        if code is not None:
            self._close_stdin()
        return code

    def wait(self, timeout=None):
        """Waits until the channel has closed; subprocess.TimeoutExpired after `timeout`."""
        code = self._client.wait(timeout)
        self._close_stdin()
        return code

    def send_signal(self, signum):
        """Signals the remote process over a second connection (`kill -s NAME PID`)."""
        if self.poll() is not None or not self._pid_known.wait(_SIGNAL_SECONDS) \
                or self.pid is None:
            return
        name = signal.Signals(signum).name.removeprefix("SIG")
        try:
            subprocess.run(self._launcher.command(self.host, f"kill -s {name} {self.pid}"),
                           stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=_SIGNAL_SECONDS)
        except subprocess.TimeoutExpired:
            pass
        if signum == signal.SIGKILL:   # nothing remote holds the channel open any more
            self._close_stdin()

    def kill(self):
        """SIGKILL to the remote process, then the channel closed from this side too."""
        self.send_signal(signal.SIGKILL)
        try:
            self._client.wait(_SIGNAL_SECONDS)
        except subprocess.TimeoutExpired:   # the host is unreachable: end our side
            self._client.kill()

    def _close_stdin(self):
        try:
            self._client.stdin.close()
        except OSError:
            pass
