"""The files of a task: kernels read the filesystem of the task they run on."""

from dtfnb.base.errors import NotFoundError


def not_found(path):
    """TensorFlow's error for a missing file."""
    return NotFoundError(None, None, f"{path}; No such file or directory")
