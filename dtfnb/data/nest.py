"""Element structures of tf.data: a leaf, or tuples and dicts of structures.

Flattening walks tuples in order and dicts by sorted key, as TensorFlow's nest does.
"""


def is_sequence(value):
    """Whether `value` is a structure of tf.data (tuple or dict); a list is a single component."""
    return isinstance(value, (tuple, dict))


def flatten(structure):
    """The leaves of `structure` in order (dict values by sorted key), as a list."""
    if isinstance(structure, dict):
        return [leaf for key in sorted(structure) for leaf in flatten(structure[key])]
    if isinstance(structure, tuple):
        return [leaf for item in structure for leaf in flatten(item)]
    return [structure]


def pack_sequence_as(structure, flat):
    """The structure of `structure` with the leaves of `flat`, in order."""
    leaves = iter(flat)

    def pack(node):
        if isinstance(node, dict):
            packed = {key: pack(node[key]) for key in sorted(node)}
            return type(node)((key, packed[key]) for key in node)
        if isinstance(node, tuple):
            items = [pack(item) for item in node]
            return type(node)(*items) if hasattr(node, "_fields") else tuple(items)
        return next(leaves)

    return pack(structure)


def map_structure(fn, structure):
    """Applies `fn` to each leaf of `structure`, and returns the results in its shape."""
    return pack_sequence_as(structure, [fn(leaf) for leaf in flatten(structure)])


def lists_to_tuples(structure):
    """A function may return lists; tf.data treats them as tuples."""
    if isinstance(structure, list):
        return tuple(lists_to_tuples(item) for item in structure)
    if isinstance(structure, tuple) and not hasattr(structure, "_fields"):
        return tuple(lists_to_tuples(item) for item in structure)
    if isinstance(structure, dict):
        return type(structure)((k, lists_to_tuples(v)) for k, v in structure.items())
    return structure
