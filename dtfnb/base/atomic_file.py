"""Writing a file all at once or not at all, so that a crash never leaves it torn."""

import contextlib
import os
import uuid


def write_atomically(path, chunks):
    """Writes `chunks` (bytes objects) to `path`: a temporary file in the same directory,
    fsynced, renamed over `path`, then the directory fsynced so the rename survives."""
    temp = f"{path}.tmp-{uuid.uuid4().hex}"
    try:
        with open(temp, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(temp)
        raise
    fd = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
