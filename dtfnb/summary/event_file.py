"""Event files as TensorFlow writes them and TensorBoard reads them: TFRecords of `Event`
protos in `<logdir>/events.out.tfevents.<seconds>.<host><suffix>`, the first one saying
the format's version, written in order by one thread per file."""

import atexit
import os
import queue
import socket
import threading
import time
import weakref

from dtfnb.protos import event_pb2
from dtfnb.resources.tfrecord import RecordReader, RecordWriter

FILE_VERSION = "brain.Event:2"
_FLUSH, _CLOSE = "flush", "close"


def summary_iterator(path):
    """The `Event` protos of the event file at `path`, in order (TensorFlow 1's
    `tf.train.summary_iterator`); a torn or corrupted record raises DataLossError."""
    records = RecordReader(path)
    try:
        while (item := records.read()) is not None:
            yield event_pb2.Event.FromString(item[1])
    finally:
        records.close()


class EventFileWriter:
    """One event file of `logdir` and the thread that writes it.

    `add_event` queues an event (waiting while `max_queue` are pending, as TensorFlow's),
    or a function that returns the events to write when the thread comes to it; the thread
    writes them in order and makes them visible to readers (flushes the file) after the
    first and then at most every `flush_secs`, and whenever `flush()` or `close()` asks.
    `before_flush()`, if given, returns events to write before each flush. `reopen()`
    after `close()` starts a new file in the same directory. Files still open when the
    interpreter exits are closed first, so that nothing added is lost.
    """

    def __init__(self, logdir, max_queue=10, flush_secs=120, filename_suffix=None,
                 before_flush=None):
        self._logdir = str(logdir)
        os.makedirs(self._logdir, exist_ok=True)
        self._max_queue = max_queue
        self._flush_secs = flush_secs
        self._suffix = filename_suffix or ""
        self._before_flush = before_flush
        self._closed = True
        self.reopen()

    def get_logdir(self):
        """The directory this writer writes its event files in."""
        return self._logdir

    @property
    def path(self):
        """The event file being written now."""
        return self._path

    def reopen(self):
        """Starts a new event file after `close()`; does nothing while open."""
        if not self._closed:
            return
        self._path = _new_file(self._logdir, self._suffix)
        self._file = RecordWriter(self._path)
        self._events = queue.Queue(self._max_queue if self._max_queue > 0 else 0)
        self._failure = None
        self._closed = False
        self._thread = threading.Thread(target=self._write, name="EventFileWriter",
                                        daemon=True)
        self._thread.start()
        _open_writers.add(self)
        self.add_event(event_pb2.Event(wall_time=time.time(), file_version=FILE_VERSION))

    def add_event(self, event):
        """Queues `event` (an Event proto, or a function returning a list of them) to be
        written; nothing once closed."""
        if not self._closed:
            self._put(event)

    def flush(self):
        """Returns once every event added so far is in the file, visible to readers."""
        if not self._closed:
            done = threading.Event()
            self._put((_FLUSH, done))
            while not done.wait(0.1) and self._thread.is_alive():
                pass
            self._raise_failure()

    def close(self):
        """Writes what is pending, then closes the file (`reopen` starts a new one)."""
        if not self._closed:
            self._put((_CLOSE, None))
            self._thread.join()
            self._closed = True
            _open_writers.discard(self)
            self._raise_failure()

    def _put(self, item):
        self._raise_failure()
        while self._thread.is_alive():
            try:
                return self._events.put(item, timeout=0.1)
            except queue.Full:
                continue
        self._raise_failure()

    def _raise_failure(self):
        if self._failure is not None:
            raise self._failure

    def _write(self):
        next_flush = 0.0
        try:
            while True:
                item = self._events.get()
                if isinstance(item, tuple):
                    self._flush_file()
                    kind, done = item
                    if kind == _CLOSE:
                        return
                    done.set()
                    continue
                for event in item() if callable(item) else (item,):
                    self._file.write(event.SerializeToString())
                if time.monotonic() >= next_flush:
                    self._flush_file()
                    next_flush = time.monotonic() + self._flush_secs
        except Exception as err:  # noqa: BLE001 - handed to the caller of add/flush/close
            self._failure = err
        finally:
            self._file.close()

    def _flush_file(self):
        for event in self._before_flush() if self._before_flush is not None else ():
            self._file.write(event.SerializeToString())
        self._file.flush()


_open_writers = weakref.WeakSet()


@atexit.register
def _close_open_writers():
    for writer in list(_open_writers):
        writer.close()


_naming = threading.Lock()


def _new_file(logdir, suffix):
    """A new file's path, named as TensorFlow names event files. A name already taken
    (two writers, or a reopen, in one second) gets a counter: TensorFlow would truncate
    the first file."""
    base = os.path.join(logdir, f"events.out.tfevents.{int(time.time()):010d}."
                                f"{socket.gethostname()}{suffix}")
    with _naming:
        for count in range(1000):
            path = base if count == 0 else f"{base}.{count}"
            try:
                os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
                return path
            except FileExistsError:
                continue
    raise FileExistsError(f"Every event file name like {base} is taken")
