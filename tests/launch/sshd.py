"""A real OpenSSH server for tests: its own host key, client key and config in a
temporary folder, on `address` and a free port, root login by that key only. Tasks it
runs import this checkout's dtfnb (PYTHONPATH set through the config's SetEnv)."""

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
    """`Sshd().start()` runs `sshd -D -e -f <config>`; `options` are the ssh options that
    reach it (port, user, identity, known hosts); `stop()` ends it and removes its folder."""

    def __init__(self, address="127.0.0.1", pythonpath=None):
        self.address = address
        self.folder = pathlib.Path(tempfile.mkdtemp(prefix="dtfnb-sshd-"))
        with socket.socket() as probe:
            probe.bind((address, 0))
            self.port = probe.getsockname()[1]
        self.pythonpath = pythonpath or str(pathlib.Path(__file__).resolve().parents[2])
        self.identity = str(self.folder / "client_key")
        self.user = "root"
        self.process = None

    def start(self):
        """Generates the keys and config and starts sshd; returns once it accepts."""
        for key in ("host_key", "client_key"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
                            str(self.folder / key)], check=True)
        (self.folder / "authorized_keys").write_text(
            (self.folder / "client_key.pub").read_text())
        host_key = (self.folder / "host_key.pub").read_text().split()
        (self.folder / "known_hosts").write_text(
            f"[{self.address}]:{self.port} {host_key[0]} {host_key[1]}\n")
        config = self.folder / "sshd_config"
        config.write_text("\n".join([
            f"ListenAddress {self.address}:{self.port}",
            f"HostKey {self.folder / 'host_key'}",
            f"AuthorizedKeysFile {self.folder / 'authorized_keys'}",
            "PermitRootLogin prohibit-password", "PasswordAuthentication no",
            "KbdInteractiveAuthentication no", "UsePAM no", "StrictModes no",
            "PidFile none", f"SetEnv PYTHONPATH={self.pythonpath}", ""]))
        os.makedirs("/run/sshd", exist_ok=True)   # its privilege separation directory
        self.process = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + _START_SECONDS
        while True:
            try:
                socket.create_connection((self.address, self.port), 0.2).close()
                return self
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    output = self.stop()
                    raise RuntimeError(f"sshd did not start: {output}") from None
                time.sleep(0.05)

    @property
    def options(self):
        """SSHLauncher's arguments that reach this sshd."""
        return dict(user=self.user, port=self.port, identity=self.identity,
                    options=[f"UserKnownHostsFile={self.folder / 'known_hosts'}"])

    def stop(self):
        """Ends sshd (its sessions' processes with it) and removes its folder; returns its
        output."""
        output = ""
        if self.process is not None:
            self.process.terminate()
            try:
                output = self.process.communicate(timeout=5)[0]
            except subprocess.TimeoutExpired:
                self.process.kill()
                output = self.process.communicate()[0]
        shutil.rmtree(self.folder, ignore_errors=True)
        return output
