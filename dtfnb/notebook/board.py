"""TensorBoard on a log directory, started from a notebook (`%board LOGDIR`).

```python
board = TensorBoard("logs")        # or tensorboard("logs"): reuses a running one
board.url                          # http://127.0.0.1:PORT/
```

Each TensorBoard is its own process, run by this interpreter (so a kernel whose
environment is not on PATH finds it), bound to 127.0.0.1 on a port the system picks. It
tells its port the way it tells `%tensorboard`: in its info file (tensorboard.manager).
Its output goes to a file, never to this process's. It stops with this process, as a
LocalCluster's tasks do: an atexit hook stops it, and should this process die first, the
TensorBoard process sees it within half a second and stops itself. It polls rather than
ask Linux for a parent-death signal, which comes again for each of a dying kernel's
threads in turn, and TensorBoard takes a second SIGTERM as an order to die at once,
leaving its info file behind.
"""

import atexit
import importlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

INSTALL = "pip install dtfnb[tensorboard]"
_START_SECONDS = 60.0   # as long as TensorBoard's own notebook support waits
_POLL_SECONDS = 0.1
_PARENT_POLL_SECONDS = 0.5
_OUTPUT_SHOWN = 2000    # characters of TensorBoard's output a failure quotes
_live = []   # TensorBoards started and not stopped, oldest first
_live_lock = threading.Lock()


def tensorboard_module(name):
    """TensorBoard's module `name` (such as "manager"); ImportError naming the extra to
    install when TensorBoard is not installed."""
    try:
        return importlib.import_module(f"tensorboard.{name}")
    except ModuleNotFoundError as err:
        if err.name != "tensorboard":
            raise
        raise ModuleNotFoundError(f"TensorBoard is not installed: {INSTALL}",
                                  name="tensorboard") from None


def live_boards():
    """The TensorBoards this process started that still run, oldest first."""
    with _live_lock:
        _live[:] = [board for board in _live if board.running()]
        return list(_live)


def tensorboard(logdir, port=0):
    """This process's TensorBoard on `logdir` (on `port`, unless 0): a running one, else
    a new one."""
    logdir = os.path.abspath(logdir)
    for board in live_boards():
        if board.logdir == logdir and port in (0, board.port):
            return board
    return TensorBoard(logdir, port)


class TensorBoard:
    """A TensorBoard process serving `logdir` on 127.0.0.1, on `port` (0: one the system
    picks). Starting it waits until it serves; RuntimeError with its output if it exits
    first (a port in use), TimeoutError after `timeout` seconds."""

    def __init__(self, logdir, port=0, timeout=_START_SECONDS):
        manager = tensorboard_module("manager")
        self.logdir = os.path.abspath(logdir)
        self._output = tempfile.TemporaryFile()
        # Its own session, as a cluster's tasks: interrupting the kernel must not stop it.
        self.process = subprocess.Popen(
            [sys.executable, "-c", "import sys; from dtfnb.notebook.board import serve; "
             "serve(int(sys.argv[1]), sys.argv[2:])", str(os.getpid()),
             "--logdir", self.logdir, "--host", "127.0.0.1", "--port", str(port)],
            stdin=subprocess.DEVNULL, stdout=self._output, stderr=subprocess.STDOUT,
            start_new_session=True)
        self.port = self._wait_for_port(manager, timeout)
        with _live_lock:
            _live.append(self)

    @property
    def pid(self):
        """The TensorBoard process's id."""
        return self.process.pid

    @property
    def url(self):
        """Where TensorBoard serves, for a browser on this machine."""
        return f"http://127.0.0.1:{self.port}/"

    def running(self):
        """Whether the process still runs."""
        return self.process.poll() is None

    def output(self):
        """What TensorBoard has printed so far."""
        self._output.seek(0)
        return self._output.read().decode(errors="replace")

    def stop(self, timeout=5.0):
        """Stops TensorBoard (SIGTERM, so that it removes its info file; SIGKILL after
        `timeout` seconds)."""
        with _live_lock:
            if self in _live:
                _live.remove(self)
        if self.running():
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._output.close()

    def _wait_for_port(self, manager, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.running():
                output = self.output()[-_OUTPUT_SHOWN:]
                self._output.close()
                raise RuntimeError(f"TensorBoard exited with {self.process.returncode}:\n"
                                   f"{output}")
            for info in manager.get_all():
                if info.pid == self.pid:
                    return info.port
            time.sleep(_POLL_SECONDS)
        output = self.output()[-_OUTPUT_SHOWN:]
        self.stop()
        raise TimeoutError(f"TensorBoard did not serve within {timeout} s:\n{output}")

    def __repr__(self):
        return f"<TensorBoard on {self.logdir}: {'running' if self.running() else 'stopped'}>"


def serve(parent, argv):
    """The TensorBoard process: TensorBoard's own main with the command-line arguments
    `argv`, stopped by SIGTERM (cleanly, as TensorBoard handles it) once the process
    `parent` is gone."""
    def stop_when_orphaned():
        while os.getppid() == parent:
            time.sleep(_PARENT_POLL_SECONDS)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=stop_when_orphaned, daemon=True).start()
    from tensorboard.main import run_main

    sys.argv = ["tensorboard", *argv]
    run_main()


@atexit.register
def _stop_live_boards():
    for board in live_boards():
        board.stop(timeout=2.0)
