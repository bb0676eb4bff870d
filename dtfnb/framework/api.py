"""Module-level functions of the facade that act on the default graph."""

import re

from dtfnb.framework.graph import get_default_graph


def device(device_name_or_function):
    """`with tf.device("/gpu:0"):` or `with tf.device(fn):` pins the ops created inside."""
    return get_default_graph().device(device_name_or_function)


def container(container_name):
    """Stateful ops created inside keep their state in the named resource container."""
    return get_default_graph().container(container_name)


def control_dependencies(control_inputs):
    """Wrapper for `Graph.control_dependencies()` using the default graph."""
    return get_default_graph().control_dependencies(control_inputs)


def colocate_with(op, ignore_existing=False):
    """Wrapper for `Graph.colocate_with()`: ops created inside go on the device of `op`."""
    return get_default_graph().colocate_with(op, ignore_existing)


def name_scope(name, default_name=None, values=None):
    """Opens a name scope on the graph of `values` (else the default graph)."""
    graph = get_default_graph()
    for value in values or ():
        if hasattr(value, "graph"):
            graph = value.graph
            break
    return graph.name_scope(name if name is not None else default_name)


def add_to_collection(name, value):
    """Wrapper for `Graph.add_to_collection()` using the default graph."""
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names, value):
    """Wrapper for `Graph.add_to_collections()` using the default graph."""
    get_default_graph().add_to_collections(names, value)


def get_collection(key, scope=None):
    """Wrapper for `Graph.get_collection()` using the default graph."""
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key):
    """Wrapper for `Graph.get_collection_ref()` using the default graph."""
    return get_default_graph().get_collection_ref(key)


def set_random_seed(seed):
    """Sets the graph-level seed; random ops then get reproducible op-level seeds."""
    get_default_graph().seed = seed


def executing_eagerly():
    """Always False: dtfnb is TensorFlow 1's graph mode, ops run only in a session."""
    return False


def strip_name_scope(name, export_scope):
    """`name` without a leading `export_scope/` (also after `^` or `loc:@`)."""
    if not export_scope:
        return name
    return re.sub(r"([\^]|loc:@|^)" + export_scope.rstrip("/") + r"[\/]+(.*)", r"\1\2",
                  name, count=1)


def prepend_name_scope(name, import_scope):
    """`name` under `import_scope/` (after a leading `^` or `loc:@`)."""
    if not import_scope:
        return name
    return re.sub(r"([\^]|loc:@|^)(.*)", r"\1" + import_scope.rstrip("/") + r"/\2", name)
