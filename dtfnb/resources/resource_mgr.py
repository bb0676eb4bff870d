"""ResourceMgr: a device's resources, keyed by (container, name)."""

import re
import threading

from dtfnb.base.errors import InvalidArgumentError, NotFoundError

DEFAULT_CONTAINER = ""
# TensorFlow's rule, except that '_' is allowed after the first character so that the
# chapter's tf.container("my_problem_1") works.
_CONTAINER_RE = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\-/]*$")


def check_container(container):
    """Raises InvalidArgumentError for a container name TensorFlow would refuse."""
    if container and not _CONTAINER_RE.match(container):
        raise InvalidArgumentError(None, None,
                                   f"container contains invalid characters: {container}")


def check_shared_name(name):
    """Raises InvalidArgumentError for a shared_name starting with '_' (reserved)."""
    if name.startswith("_"):
        raise InvalidArgumentError(None, None, f"shared_name cannot start with '_':{name}")


class ResourceMgr:
    """Holds resources by container; `cleanup(container)` drops a whole container.

    Each device has one. Stateful kernels (variables, queues, readers,
    accumulators) find their resource by (container, shared_name), creating it on
    first use, so every session and every task that names it shares it, and it
    lives until its container is reset (`tf.Session.reset(target, [container])`).

    ```python
    import numpy as np
    from dtfnb.base import dtypes
    from dtfnb.resources.resource_mgr import ResourceMgr
    from dtfnb.resources.variable import VariableResource

    mgr = ResourceMgr()
    w = mgr.lookup_or_create("", "w", lambda: VariableResource("w", dtypes.float32, (2,)))
    assert mgr.lookup("", "w") is w      # what a second session's kernel finds
    w.assign(np.zeros(2, np.float32))
    mgr.cleanup("")                      # now lookup raises NotFoundError
    ```
    """

    def __init__(self):
        self._containers = {}
        self._lock = threading.Lock()

    def lookup_or_create(self, container, name, create):
        """Returns the resource, calling `create()` under the lock if it does not exist yet."""
        # Found without the lock (a dict read is atomic): a variable is looked up at every
        # step, created once.
        resource = self._containers.get(container, {}).get(name)
        if resource is not None:
            return resource
        check_container(container)
        with self._lock:
            resources = self._containers.setdefault(container, {})
            resource = resources.get(name)
            if resource is None:
                resource = resources[name] = create()
            return resource

    def lookup(self, container, name):
        """The resource named `name` in `container`; NotFoundError if there is none."""
        with self._lock:
            resource = self._containers.get(container, {}).get(name)
        if resource is None:
            raise NotFoundError(None, None, f"Resource {container}/{name} does not exist.")
        return resource

    def cleanup(self, container):
        """Drops every resource of `container`, closing those that ask to be (queues)."""
        with self._lock:
            dropped = self._containers.pop(container, {})
        for resource in dropped.values():
            close = getattr(resource, "close_on_cleanup", None)
            if close is not None:
                close()

    def containers(self):
        """Container name -> the names of its resources (for monitoring and tests)."""
        with self._lock:
            return {c: list(r) for c, r in self._containers.items()}
