"""A real OpenSSH server for tests: its own host key, client key and config in a
temporary folder, root login by that key only. Tasks it runs import this checkout's
dtfnb (PYTHONPATH set through the config's SetEnv).

`Sshd()` listens on `address` and a free port; `Sshd(hosts=bed)` runs one sshd in each
Host of a namespace bed (tests/namespace_hosts.py) instead, at the host's IP on port 22,
so that each session, and each task started through it, runs in that host: its network,
its hostname. One host key and one client key serve every host."""

import os
import pathlib
import shutil
import socket
import subprocess
import tempfile
import time

SSHD = "/usr/sbin/sshd"
_START_SECONDS = 10.0


def unavailable():
    """Why no sshd can run here, or None."""
    if not os.path.exists(SSHD) or not shutil.which("ssh-keygen"):
        return f"no OpenSSH server ({SSHD}): apt-get install openssh-server"
    if os.geteuid() != 0:
        return "sshd needs root to log a user in"
    return None


class Sshd:
    """`start()` runs `sshd -D -e -f <config>` (one per host); `options` are the ssh options
    that reach it (port, user, identity, known hosts); `addresses` where it listens;
    `stop()` ends it and removes its folder."""

    def __init__(self, address="127.0.0.1", pythonpath=None, hosts=None):
        self.hosts = hosts or []
        self.folder = pathlib.Path(tempfile.mkdtemp(prefix="dtfnb-sshd-"))
        if hosts:   # a namespace of its own: every port is free there
            self.addresses, self.port = [host.ip for host in hosts], 22
        else:
            self.addresses = [address]
            with socket.socket() as probe:
                probe.bind((address, 0))
                self.port = probe.getsockname()[1]
        self.pythonpath = pythonpath or str(pathlib.Path(__file__).resolve().parents[2])
        self.identity = str(self.folder / "client_key")
        self.user = "root"
        self.processes = []

    def start(self):
        """Generates the keys and configs and starts sshd; returns once each accepts."""
        for key in ("host_key", "client_key"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
                            str(self.folder / key)], check=True)
        (self.folder / "authorized_keys").write_text(
            (self.folder / "client_key.pub").read_text())
        kind, key = (self.folder / "host_key.pub").read_text().split()[:2]
        (self.folder / "known_hosts").write_text("".join(
            f"{_known_host(address, self.port)} {kind} {key}\n" for address in self.addresses))
        os.makedirs("/run/sshd", exist_ok=True)   # its privilege separation directory
        for index, address in enumerate(self.addresses):
            config = self.folder / f"sshd_config{index}"
            config.write_text("\n".join([
                f"ListenAddress {address}:{self.port}",
                f"HostKey {self.folder / 'host_key'}",
                f"AuthorizedKeysFile {self.folder / 'authorized_keys'}",
                "PermitRootLogin prohibit-password", "PasswordAuthentication no",
                "KbdInteractiveAuthentication no", "UsePAM no", "StrictModes no",
                "PidFile none", f"SetEnv PYTHONPATH={self.pythonpath}", ""]))
            popen = self.hosts[index].popen if self.hosts else subprocess.Popen
            self.processes.append(popen([SSHD, "-D", "-e", "-f", str(config)],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True))
        deadline = time.monotonic() + _START_SECONDS
        for address, process in zip(self.addresses, self.processes):
            while True:
                try:
                    socket.create_connection((address, self.port), 0.2).close()
                    break
                except OSError:
                    if process.poll() is not None or time.monotonic() > deadline:
                        output = self.stop()
                        raise RuntimeError(f"sshd did not start: {output}") from None
                    time.sleep(0.05)
        return self

    @property
    def options(self):
        """SSHLauncher's arguments that reach this sshd."""
        return dict(user=self.user, port=self.port, identity=self.identity,
                    options=[f"UserKnownHostsFile={self.folder / 'known_hosts'}"])

    def strays(self):
        """{host IP: pids} of the processes in each host other than its sshd: its sessions
        and what they started (none without hosts: this namespace runs everything else)."""
        listeners = {process.pid for process in self.processes}
        found = {host.ip: sorted(set(host.pids()) - listeners) for host in self.hosts}
        return {address: pids for address, pids in found.items() if pids}

    def stop(self):
        """Ends each sshd (its sessions' processes with it) and removes its folder; returns
        their output."""
        for process in self.processes:
            process.terminate()
        outputs = []
        for process in self.processes:
            try:
                outputs.append(process.communicate(timeout=5)[0])
            except subprocess.TimeoutExpired:
                process.kill()
                outputs.append(process.communicate()[0])
        self.processes = []
        shutil.rmtree(self.folder, ignore_errors=True)
        return "".join(outputs)


def _known_host(address, port):
    """The host's name in known_hosts: ssh looks up "[address]:port" unless port is 22."""
    return address if port == 22 else f"[{address}]:{port}"
