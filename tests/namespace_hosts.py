"""A cross-host test bed on one machine: each "host" is a network namespace with its own IP
and a UTS namespace with its own hostname, so that tasks in different hosts can reach each
other only over the network, as on separate machines (no Unix sockets, no shared memory).

    with NamespaceHosts(3) as hosts:
        proc = hosts[0].start_task(cluster, "ps", 0)   # python -m dtfnb.server in host 0
        tf.Session(f"grpc://{hosts[1].ip}:2222")        # this process reaches every host

The hosts' veths meet in a bridge in the root namespace, on a /24 of their own that no
route of this machine covers; the bridge holds the subnet's .1, the address of this (the
test's) process on it. No host has a route beyond that /24 (no default route), so
traffic stays between the hosts and this process. Names carry the pid of
the process that made them: whatever a killed earlier run left (namespaces, the processes
in them, bridges, /etc/netns files) is removed when the next bed starts. Needs root and
`ip` (iproute2), `unshare` and `hostname`; `NamespaceHosts` raises `BedUnavailable`
saying why where it cannot make them.
"""

import atexit
import collections
import itertools
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time

from tests.helpers import ROOT, wait_for_port

PREFIX = "dtfnb-bed-"   # namespaces: dtfnb-bed-<pid>-<bed>-<host>
_BRIDGE = "dtb"         # bridges: dtb<pid in hex>x<bed> (an interface name has 15 characters)
_COMMAND_SECONDS = 10
_STOP_SECONDS = 10
_serials = itertools.count()   # make the names of one process's beds and veths unique


class BedUnavailable(Exception):
    """The namespaces cannot be made here (not root, a command missing, not allowed)."""


def ip(*args, namespace=None, timeout=_COMMAND_SECONDS):
    """Runs `ip ARGS` (in `namespace`, if given); returns its stdout."""
    command = ["ip", *(["-n", namespace] if namespace else []), *args]
    return subprocess.run(command, check=True, capture_output=True, text=True,
                          timeout=timeout).stdout


class Host:
    """One host of the bed: `namespace` (its network namespace, as `ip netns` names it),
    `hostname`, `ip` (its address on the bed's subnet)."""

    def __init__(self, namespace, hostname, address):
        self.namespace = namespace
        self.hostname = hostname
        self.ip = address

    def popen(self, argv, env=None, **kwargs):
        """Starts `argv` in this host (its network namespace, a UTS namespace of its own with
        its hostname, and /etc/netns/<namespace>/hosts, if any, as /etc/hosts); the Popen's
        pid is the command's own (each step execs the next)."""
        return subprocess.Popen(
            ["ip", "netns", "exec", self.namespace, "unshare", "--uts", "sh", "-c",
             'hostname "$0" && exec "$@"', self.hostname, *argv],
            env=dict(os.environ, PYTHONPATH=str(ROOT), **(env or {})), **kwargs)

    def start_task(self, cluster, job, task, *args, env=None):
        """Starts `python -m dtfnb.server` for task `task` of `job` of `cluster` (a dict) in
        this host, to exit with this process; stderr is captured."""
        return self.popen([sys.executable, "-m", "dtfnb.server", "--cluster", json.dumps(cluster),
                           "--job", job, "--task", str(task), "--exit-with-parent", *args],
                          env=env, stderr=subprocess.PIPE, text=True)

    def run(self, argv, env=None, timeout=60):
        """Runs `argv` in this host to its end; returns the CompletedProcess (text)."""
        proc = self.popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    def pids(self):
        """The processes in this host's network namespace (the process table is shared:
        this is what runs "on" the host)."""
        return _pids(self.namespace)

    def unix_sockets(self):
        """The paths (abstract ones start with @) of the Unix sockets open in this host's
        network namespace, one per socket: a listener's and each connection's."""
        table = subprocess.run(["ip", "netns", "exec", self.namespace, "cat", "/proc/net/unix"],
                               check=True, capture_output=True, text=True,
                               timeout=_COMMAND_SECONDS).stdout
        return [fields[7] for fields in map(str.split, table.splitlines()[1:])
                if len(fields) > 7]

    def __repr__(self):
        return f"Host({self.hostname}, {self.ip})"


class NamespaceHosts(list):
    """`n` hosts (a list of Host) on a private /24, removed by `close()` (or the `with` block's
    end, or at exit). `hosts_file`: {name: host index} written as each host's /etc/hosts, so
    that tasks resolve those names to the hosts' IPs. `hostnames`: the hosts' hostnames
    (default bedhost0, bedhost1...)."""

    def __init__(self, n, hosts_file=None, hostnames=None):
        super().__init__()
        _check_can_make()
        remove_stale()
        bed = f"{os.getpid()}-{next(_serials)}"
        self.bridge = f"{_BRIDGE}{os.getpid():x}x{bed.rpartition('-')[2]}"
        self._namespaces = []
        atexit.register(self.close)
        try:
            subnet = _free_subnet()
            self.client_ip = f"{subnet}.1"
            ip("link", "add", self.bridge, "type", "bridge")
            ip("addr", "add", f"{self.client_ip}/24", "dev", self.bridge)
            ip("link", "set", self.bridge, "up")
            for index in range(n):
                namespace = f"{PREFIX}{bed}-{index}"
                ip("netns", "add", namespace)
                self._namespaces.append(namespace)
                host = Host(namespace, hostnames[index] if hostnames else f"bedhost{index}",
                            f"{subnet}.{index + 2}")
                veth = f"dtv{os.getpid():x}x{next(_serials)}"
                ip("link", "add", veth, "type", "veth", "peer", "name", "eth0",
                   "netns", namespace)
                ip("link", "set", veth, "master", self.bridge, "up")
                ip("addr", "add", f"{host.ip}/24", "dev", "eth0", namespace=namespace)
                ip("link", "set", "eth0", "up", namespace=namespace)
                ip("link", "set", "lo", "up", namespace=namespace)
                self.append(host)
            if hosts_file:
                self._write_hosts_file(hosts_file)
        except BaseException:
            self.close()
            raise

    def _write_hosts_file(self, names):
        lines = ["127.0.0.1 localhost"] + [f"{self[index].ip} {name}"
                                           for name, index in names.items()]
        for host in self:
            directory = f"/etc/netns/{host.namespace}"
            os.makedirs(directory, exist_ok=True)
            with open(f"{directory}/hosts", "w") as f:
                f.write("\n".join([*lines, f"{host.ip} {host.hostname}"]) + "\n")

    def close(self):
        """Ends every process in the hosts, then removes the namespaces and the bridge."""
        for namespace in self._namespaces:
            _remove_namespace(namespace)
        self._namespaces = []
        _quietly(ip, "link", "del", self.bridge)
        atexit.unregister(self.close)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()


class Processes(dict):
    """Processes started in the bed's hosts, by key ((job, index) for tasks); `logs` maps each
    key to the process's stderr once `stop()` has ended it."""

    def __init__(self):
        super().__init__()
        self.logs = {}

    def wait_until_serving(self, addresses):
        """Waits until something listens at each of {key: "ip:port"} (the process of the key
        must not exit meanwhile)."""
        for key, address in addresses.items():
            wait_for_port(address, proc=self[key])

    def stop(self):
        """Ends every process by SIGTERM (SIGKILL after 15 s) and keeps its stderr in `logs`."""
        for proc in self.values():
            if proc.poll() is None:
                proc.terminate()
        for key, proc in self.items():
            if key in self.logs:
                continue
            try:
                self.logs[key] = proc.communicate(timeout=15)[1]
            except subprocess.TimeoutExpired:
                proc.kill()
                self.logs[key] = proc.communicate()[1]

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.stop()


class Tasks(Processes):
    """The tasks of one cluster started in the bed: `placement` is {job: [host index]}, one
    task per entry, each at its host's IP, on port 2222 (2223... for a host's next tasks).
    Maps (job, index) to each task's Popen; `spec` is the ClusterSpec dict."""

    def __init__(self, hosts, placement, *args, env=None):
        super().__init__()
        taken = collections.Counter()
        self.spec = {}
        for job, indices in placement.items():
            for index in indices:
                self.spec.setdefault(job, []).append(f"{hosts[index].ip}:{2222 + taken[index]}")
                taken[index] += 1
        try:
            for job, indices in placement.items():
                for task, index in enumerate(indices):
                    self[job, task] = hosts[index].start_task(self.spec, job, task, *args,
                                                              env=env)
            self.wait_until_serving({(job, task): self.spec[job][task] for job, task in self})
        except BaseException:
            self.stop()
            raise

    def target(self, job, task=0):
        """The session target of a task."""
        return "grpc://" + self.spec[job][task]


def _check_can_make():
    if os.geteuid() != 0:
        raise BedUnavailable("needs root (network and UTS namespaces)")
    missing = [command for command in ("ip", "unshare", "hostname")
               if shutil.which(command) is None]
    if missing:
        raise BedUnavailable(f"needs the commands {missing} (iproute2, util-linux, hostname)")
    probe = f"{PREFIX}{os.getpid()}-probe"
    try:
        ip("netns", "add", probe)
        subprocess.run(["ip", "netns", "exec", probe, "unshare", "--uts", "true"],
                       check=True, capture_output=True, text=True, timeout=_COMMAND_SECONDS)
    except subprocess.CalledProcessError as err:
        raise BedUnavailable(f"cannot make namespaces: {err.stderr.strip()}") from None
    finally:
        _quietly(ip, "netns", "del", probe)


def _free_subnet():
    """A 10.x.y prefix whose /24 no route of this machine covers but the default one."""
    for _ in range(100):
        subnet = f"10.{random.randrange(100, 250)}.{random.randrange(1, 255)}"
        routes = ip("route", "show", "match", f"{subnet}.0/24")
        if all(line.startswith("default") for line in routes.splitlines()):
            return subnet
    raise BedUnavailable("no free 10.x.y.0/24 for the bed")


def remove_stale():
    """Removes what beds of processes that no longer run left behind."""
    for namespace in ip("netns", "list").split():
        owner = re.match(rf"{PREFIX}(\d+)-", namespace)
        if owner and not _alive(int(owner.group(1))):
            _remove_namespace(namespace)
    for line in ip("-o", "link", "show", "type", "bridge").splitlines():
        owner = re.match(rf"\d+: ({_BRIDGE}([0-9a-f]+)x\d+)[:@]", line)
        if owner and not _alive(int(owner.group(2), 16)):
            _quietly(ip, "link", "del", owner.group(1))


def _alive(pid):
    return os.path.exists(f"/proc/{pid}")


def _remove_namespace(namespace):
    """Ends the processes in `namespace` (SIGTERM, then SIGKILL), then removes it and its
    /etc/netns files."""
    pids = _pids(namespace)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + _STOP_SECONDS
        while pids and time.monotonic() < deadline:
            time.sleep(0.05)
            pids = _pids(namespace)
    _quietly(ip, "netns", "del", namespace)
    shutil.rmtree(f"/etc/netns/{namespace}", ignore_errors=True)


def _pids(namespace):
    try:
        return [int(pid) for pid in ip("netns", "pids", namespace).split()]
    except subprocess.CalledProcessError:   # gone already
        return []


def _quietly(fn, *args):
    try:
        fn(*args)
    except subprocess.CalledProcessError:
        pass
