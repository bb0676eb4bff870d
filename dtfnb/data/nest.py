"""Element structures of tf.data: tf.nest's (ops/nest.py), except that only tuples and dicts
are structures and a list is one component, as in TensorFlow's data/util/nest.py."""

from dtfnb.framework.sparse_tensor import SparseTensorValue
from dtfnb.ops import nest


def is_sequence(value):
    """Whether `value` is a structure of tf.data (tuple or dict); a list is a single
    component, and so is a SparseTensorValue (a namedtuple)."""
    return isinstance(value, (tuple, dict)) and not isinstance(value, SparseTensorValue)


def flatten(structure):
    """The leaves of `structure` in order (dict values by sorted key), as a list."""
    return nest.flatten(structure, is_sequence)


def pack_sequence_as(structure, flat):
    """The structure of `structure` with the leaves of `flat`, in order."""
    return nest.pack_sequence_as(structure, flat, is_sequence)


def map_structure(fn, structure):
    """Applies `fn` to each leaf of `structure`, and returns the results in its shape."""
    return nest.map_structure(fn, structure, is_sequence)


def lists_to_tuples(structure):
    """A function may return lists; tf.data treats them as tuples."""
    if isinstance(structure, list):
        return tuple(lists_to_tuples(item) for item in structure)
    if isinstance(structure, tuple) and not hasattr(structure, "_fields"):
        return tuple(lists_to_tuples(item) for item in structure)
    if isinstance(structure, dict):
        return type(structure)((k, lists_to_tuples(v)) for k, v in structure.items())
    return structure
