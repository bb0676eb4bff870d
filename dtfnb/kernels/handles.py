"""The resource a handle op (a queue, a reader) names, as TensorFlow finds it."""

import itertools
import threading

from dtfnb.base.errors import InvalidArgumentError
from dtfnb.resources.resource_mgr import check_container, check_shared_name

_private_ids = itertools.count(1)
_CREATE_LOCK = threading.Lock()


def resource_of(ctx, create, kind, what):
    """Without a shared_name, the session's own resource for this node (named
    `_<n>_<op name>`, as TensorFlow's); with one, the resource of the device's ResourceMgr
    in the op's container, shared by every session. `create(ctx, name)` makes one; a shared one
    that is not an instance of `kind` is refused, naming `what` was wanted."""
    resource = ctx.state.get("resource")  # the node's own, made by its first run
    if resource is not None:
        return resource
    container = ctx.attrs.get("container", "")
    check_container(container)
    shared_name = ctx.attrs.get("shared_name", "")
    if not shared_name:
        with _CREATE_LOCK:
            resource = ctx.state.get("resource")
            if resource is None:
                resource = ctx.state["resource"] = create(ctx, f"_{next(_private_ids)}_{ctx.name}")
        return resource
    check_shared_name(shared_name)
    resource = ctx.resource_mgr.lookup_or_create(container, shared_name,
                                                 lambda: create(ctx, shared_name))
    if not isinstance(resource, kind):
        raise InvalidArgumentError(None, None, f"Resource {container}/{shared_name} exists "
                                   f"and is not a {what}")
    return resource
