"""Task processes forked from one process that has imported dtfnb already.

Importing dtfnb costs about half a second of CPU; five tasks started as fresh
interpreters on a two-core machine pay it five times over. A fork server pays it once:
it imports `dtfnb.server`, then forks one child per request and runs
`dtfnb.server.main(argv)` in it, with the environment and working directory the
parent has at that moment. It starts no thread and no gRPC object before forking, so
each child starts clean.

The fork server talks to its parent over a Unix socket: a request is JSON
`{"argv": [...], "env": {...}, "cwd": "..."}` with the file descriptor for the child's
output; the reply is `{"pid": N}`, and `{"exited": N, "code": C}` follows when the
child ends. When the parent goes away (its end of the socket closes, even if it was
killed), the fork server stops every child (SIGTERM, then SIGKILL after 2 s) and exits.
"""

import atexit
import ctypes
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time

from dtfnb.base.errors import UnavailableError
from dtfnb.launch.launcher import TaskProcess

_MESSAGE_BYTES = 1 << 20   # a request carries the environment
_REAP_SECONDS = 0.02
_REPLY_SECONDS = 30.0
_PR_SET_PDEATHSIG = 1


class ForkedProcess(TaskProcess):
    """A child of the fork server."""

    def __init__(self, server, pid, stdout):
        self._server = server
        self.pid = pid
        self.stdout = stdout
        self.returncode = None

    def poll(self):
        """The exit status if the process has ended, else None (as Popen.poll)."""
        self._server.receive(0)
        return self.returncode

    def wait(self, timeout=None):
        """Waits until the process ends and returns its exit status; TimeoutExpired after `timeout`
        seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired(f"task {self.pid}", timeout)
            self._server.receive(_REAP_SECONDS if left is None else min(left, _REAP_SECONDS))
        return self.returncode

    def send_signal(self, signum):
        """Sends `signum` to the process, if it is still running."""
        if self.poll() is None:
            os.kill(self.pid, signum)


class ForkServer:
    """The parent's side: `spawn(argv)` -> ForkedProcess. Thread-safe; starts no thread."""

    def __init__(self):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._socket = ours
        # Its own session, as every task's: interrupting the kernel (SIGINT to its
        # process group) must not stop the cluster.
        self.process = subprocess.Popen(
            [sys.executable, "-c", "import sys; from dtfnb.launch.forkserver import serve; "
             "serve(int(sys.argv[1]))", str(theirs.fileno())],
            pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            start_new_session=True)
        theirs.close()
        self._children = {}
        self._lock = threading.Lock()

    def alive(self):
        """Whether the fork server process is still running."""
        return self.process.poll() is None

    def close(self, timeout=3.0):
        """Closes our end of the socket, which ends the fork server and its children."""
        self._socket.close()
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def spawn(self, argv):
        """Forks a task running `python -m dtfnb.server *argv`; its output is readable
        from the returned process's `stdout`."""
        read_end, write_end = os.pipe()
        try:
            with self._lock:
                pid = self._request({"argv": argv, "env": dict(os.environ),
                                     "cwd": os.getcwd()}, write_end)
                process = ForkedProcess(self, pid, os.fdopen(read_end, errors="replace"))
                self._children[pid] = process
        except BaseException:
            os.close(read_end)
            raise
        finally:
            os.close(write_end)
        return process

    def _request(self, request, output):
        """Sends one request; returns the pid of the child forked for it."""
        try:
            socket.send_fds(self._socket, [json.dumps(request).encode()], [output])
        except OSError as err:
            raise UnavailableError(None, None, f"The dtfnb fork server has exited: {err}"
                                   ) from None
        deadline = time.monotonic() + _REPLY_SECONDS
        while True:   # exits of other tasks may come first
            left = deadline - time.monotonic()
            if left <= 0:
                raise UnavailableError(None, None, "The dtfnb fork server did not answer "
                                       f"within {_REPLY_SECONDS} s")
            message = self._receive_one(left)
            if message is None:
                raise UnavailableError(None, None, "The dtfnb fork server has exited")
            if "pid" in message:
                return message["pid"]

    def receive(self, timeout):
        """Takes the exit notices that arrive within `timeout` seconds."""
        if self._lock.acquire(timeout=timeout):
            try:
                while self._receive_one(timeout):
                    timeout = 0
            finally:
                self._lock.release()

    def _receive_one(self, timeout):
        """The next message ({} on time-out); None once the fork server has exited."""
        ready, _, _ = select.select([self._socket], [], [], timeout)
        if not ready:
            return {}
        data = self._socket.recv(_MESSAGE_BYTES)
        if not data:   # the fork server died, and its children with it
            for child in self._children.values():
                child.returncode = -signal.SIGKILL
            self._children.clear()
            return None
        message = json.loads(data)
        if "exited" in message:
            child = self._children.pop(message["exited"], None)
            if child is not None:
                child.returncode = message["code"]
        return message


_server = None
_server_lock = threading.Lock()


def fork_server():
    """This process's fork server, started on first use (again if it died)."""
    global _server
    with _server_lock:
        if _server is None or not _server.alive():
            _server = ForkServer()
            atexit.register(_server.close)
        return _server


def serve(fd):
    """The fork server's loop on the socket `fd`: fork on request, report exits, end
    with the parent."""
    import dtfnb.server

    channel = socket.socket(fileno=fd)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    children = set()
    try:
        while True:
            # Exits are polled for, and only while there are children to wait for.
            ready, _, _ = select.select([channel], [], [], _REAP_SECONDS if children else None)
            if ready:
                data, fds, _, _ = socket.recv_fds(channel, _MESSAGE_BYTES, 1)
                if not data:   # the parent has gone
                    return
                me = os.getpid()
                pid = os.fork()
                if pid == 0:
                    _die_with(me)
                    _run_child(channel, fds[0], json.loads(data), dtfnb.server.main)
                os.close(fds[0])
                children.add(pid)
                channel.send(json.dumps({"pid": pid}).encode())
            for pid in list(children):
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    children.discard(pid)
                    channel.send(json.dumps({"exited": pid, "code":
                                             os.waitstatus_to_exitcode(status)}).encode())
    except OSError:   # the parent has gone while we wrote to it
        return
    finally:
        _stop(children)


def _die_with(parent):
    """Asks Linux to send this child SIGTERM when the fork server dies, however it dies
    (elsewhere --exit-with-parent polls). Set before anything else runs, it leaves no
    window in which the fork server could die unnoticed."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):   # not Linux
        return
    if os.getppid() != parent:   # it died before the line above
        os._exit(0)


def _run_child(channel, output, request, main):
    code = 1
    try:
        channel.close()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.dup2(output, 1)
        os.dup2(output, 2)
        os.close(output)
        # The parent's environment and directory now, as a fresh process would have them
        # (a cluster token set in the notebook, files named relative to it).
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        main(request["argv"])
        code = 0
    except SystemExit as err:
        code = err.code if isinstance(err.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _stop(children):
    for pid in children:
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 2.0
    while children and time.monotonic() < deadline:
        children = {pid for pid in children if not os.waitpid(pid, os.WNOHANG)[0]}
        time.sleep(_REAP_SECONDS)
    for pid in children:
        os.kill(pid, signal.SIGKILL)

