"""Nested structures of values (lists, tuples, namedtuples, dicts), as tf.nest sees them.

cond and while_loop take and return such structures; flatten and pack them, and say
where two differ in TensorFlow's words.
"""


def is_nested(value):
    """Whether `value` is a structure (list, tuple or dict) rather than a leaf."""
    return isinstance(value, (list, tuple, dict))


def _children(value):
    """The items of a structure, dicts in sorted key order."""
    if isinstance(value, dict):
        return [value[k] for k in sorted(value)]
    return list(value)


def flatten(structure, nested=is_nested):
    """The leaves of `structure` in order (dict values by sorted key), as a list.
    `nested` tells a structure from a leaf (tf.data's takes a list as a leaf)."""
    if not nested(structure):
        return [structure]
    return [leaf for child in _children(structure) for leaf in flatten(child, nested)]


def map_structure(fn, structure, nested=is_nested):
    """Applies `fn` to each leaf of `structure`, and returns the results in its shape."""
    return pack_sequence_as(structure, [fn(x) for x in flatten(structure, nested)], nested)


def pack_sequence_as(structure, flat, nested=is_nested):
    """Puts the leaves of `flat` back into the shape of `structure`."""
    flat = list(flat)
    packed, used = _pack(structure, flat, 0, nested)
    if used != len(flat):
        raise ValueError(f"Structure had {used} elements, but flat_sequence had "
                         f"{len(flat)} elements.")
    return packed


def _pack(structure, flat, start, nested):
    if not nested(structure):
        return flat[start], start + 1
    items = []
    for child in _children(structure):
        item, start = _pack(child, flat, start, nested)
        items.append(item)
    if isinstance(structure, dict):  # filled by sorted key, given back in its own order
        by_key = dict(zip(sorted(structure), items))
        return type(structure)((key, by_key[key]) for key in structure), start
    if hasattr(structure, "_fields"):  # a namedtuple
        return type(structure)(*items), start
    return type(structure)(items), start


def assert_same_structure(first, second):
    """Raises ValueError (TypeError for different sequence types) where they differ."""
    problem = _difference(first, second)
    if problem is None:
        return
    cls, detail = problem
    raise cls(f"The two structures don't have the same nested structure.\n\n"
              f"First structure: {_describe(first)}\n\nSecond structure: "
              f"{_describe(second)}\n\nMore specifically: {detail}\n"
              f"Entire first structure:\n{_outline(first)}\n"
              f"Entire second structure:\n{_outline(second)}")


def _difference(a, b):
    if is_nested(a) != is_nested(b):
        seq, other = (a, b) if is_nested(a) else (b, a)
        return ValueError, (f'Substructure "{_describe(seq)}" is a sequence, while '
                            f'substructure "{_describe(other)}" is not')
    if not is_nested(a):
        return None
    if type(a) is not type(b):
        return TypeError, (f"The two namedtuples don't have the same sequence type. First "
                           f"structure {_describe(a)} has type {type(a).__name__}, while "
                           f"second structure {_describe(b)} has type {type(b).__name__}")
    if isinstance(a, dict) and set(a) != set(b):
        return ValueError, (f"The two dictionaries don't have the same set of keys. First "
                            f"structure has keys {_describe(sorted(a))}, while second "
                            f"structure has keys {_describe(sorted(b))}")
    # As TensorFlow's: the items are compared pairwise, and a difference in number shows
    # only where one structure runs out.
    for x, y in zip(_children(a), _children(b)):
        found = _difference(x, y)
        if found is not None:
            return found
    if len(a) != len(b):
        return ValueError, (f"The two structures don't have the same number of elements. "
                            f"First structure: {_describe(a)}. Second structure: "
                            f"{_describe(b)}")
    return None


def _describe(value):
    text = repr(value) if is_nested(value) else str(value)
    return f"type={type(value).__name__} str={text}"


def _outline(value):
    """The structure with each leaf as '.', as TensorFlow prints it."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_outline(value[k])}" for k in value) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_outline(v) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(_outline(v) for v in value)
        if hasattr(value, "_fields"):
            return f"{type(value).__name__}({inner})"
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    return "."
