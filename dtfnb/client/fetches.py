"""Fetch and feed structures of Session.run: nests of graph elements, and the composite
tensors (SparseTensor, IndexedSlices) that a session fetches and feeds as their parts."""

import collections
import functools
from collections.abc import Mapping

from dtfnb.base.errors import InaccessibleTensorError
from dtfnb.framework.indexed_slices import IndexedSlices, IndexedSlicesValue
from dtfnb.framework.operation import Operation
from dtfnb.framework.sparse_tensor import SparseTensor, SparseTensorValue
from dtfnb.framework.tensor import Tensor


def _indexed_slices_parts(slices):
    parts = [slices.values, slices.indices]
    return parts if slices.dense_shape is None else parts + [slices.dense_shape]


# (type, fetch_fn, feed_fn, feed_fn_for_partial_run), the first matching type wins:
#   fetch_fn(fetch) -> (graph elements to fetch, fn(their values) -> the fetched value)
#   feed_fn(key, value) -> [(graph element, value)]
#   feed_fn_for_partial_run(key) -> [graph element]
_EXPANSIONS = [
    (SparseTensor,
     lambda sparse: ([sparse.indices, sparse.values, sparse.dense_shape],
                     lambda values: SparseTensorValue(*values)),
     lambda sparse, value: list(zip([sparse.indices, sparse.values, sparse.dense_shape],
                                    value)),
     lambda sparse: [sparse.indices, sparse.values, sparse.dense_shape]),
    (IndexedSlices,
     lambda slices: (_indexed_slices_parts(slices),
                     lambda values: IndexedSlicesValue(
                         values[0], values[1], values[2] if len(values) == 3 else None)),
     lambda slices, value: list(zip(_indexed_slices_parts(slices), value)),
     _indexed_slices_parts),
    (object, lambda fetch: ([fetch], lambda values: values[0]),
     lambda key, value: [(key, value)], lambda key: [key]),
]


def register_session_run_conversion_functions(tensor_type, fetch_function, feed_function=None,
                                              feed_function_for_partial_run=None):
    """Lets Session.run fetch and feed objects of `tensor_type` as the tensors they hold:
    `fetch_function(obj)` returns (tensors, fn(their values) -> fetched value),
    `feed_function(obj, value)` returns [(tensor, value)] and
    `feed_function_for_partial_run(obj)` returns [tensor]."""
    for registered, *_ in _EXPANSIONS:
        if issubclass(registered, tensor_type):
            raise ValueError(f"{tensor_type} has already been registered so ignore it.")
    _EXPANSIONS.insert(0, (tensor_type, fetch_function, feed_function,
                           feed_function_for_partial_run))


def feed_pairs(key, value):
    """The (graph element, value) pairs that feeding `value` for `key` stands for."""
    for tensor_type, _, feed_fn, _ in _EXPANSIONS:
        if isinstance(key, tensor_type):
            return feed_fn(key, value)
    raise TypeError(f'{key} in argument `feed_dict` has invalid type "{type(key).__name__}"')


def partial_run_feeds(key):
    """The graph elements that declaring `key` as a partial run's feed stands for."""
    for tensor_type, _, _, feed_fn in _EXPANSIONS:
        if isinstance(key, tensor_type):
            return feed_fn(key)
    raise TypeError(f'Feed argument {key} has invalid type "{type(key).__name__}"')


def flatten_feed_dict(feed_dict):
    """feed_dict's items with tuple keys (and nests of them) paired with their values'
    items, as TensorFlow's nest.flatten_dict_items does."""
    flat = {}
    for key, value in feed_dict.items():
        if not isinstance(key, tuple):
            flat[key] = value
            continue
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"Could not flatten dictionary: key {key} is a sequence, "
                            f"but value {value} is not")
        if len(key) != len(value):
            raise ValueError(f"Could not flatten dictionary. Key had {len(key)} elements, but "
                             f"value had {len(value)} elements. Key: {list(key)}, value: "
                             f"{list(value)}.")
        flat.update(flatten_feed_dict(dict(zip(key, value))))
    return flat


class FetchMapper:
    """Maps a fetch structure (nests of lists, tuples, namedtuples, mappings and attrs
    classes over graph elements and composite tensors) to unique graph elements.

    `tensors` are the tensor names to fetch and `targets` the op names to run;
    `build(values)` puts the fetched values (in `tensors` order) back in shape,
    with None for operations.
    """

    def __init__(self, graph, fetches):
        self.graph = graph
        self.tensors, self.targets = [], []
        self.elements = {}
        self._index = {}
        self._build = self._compile(fetches)

    def _compile(self, fetch):
        if fetch is None:
            raise TypeError('Argument `fetch` = None has invalid type "NoneType". Cannot be '
                            "None")
        if isinstance(fetch, (list, tuple)):
            return self._sequence(fetch)
        if isinstance(fetch, Mapping):
            return self._mapping(fetch)
        attributes = getattr(type(fetch), "__attrs_attrs__", None)
        if attributes is not None:  # a class of the attrs package
            builders = [self._compile(getattr(fetch, a.name)) for a in attributes]
            kind = type(fetch)
            return lambda values: kind(*[b(values) for b in builders])
        for tensor_type, fetch_fn, _, _ in _EXPANSIONS:
            if isinstance(fetch, tensor_type):
                parts, contract = fetch_fn(fetch)
                getters = [self._element(part) for part in parts]
                return lambda values: contract([get(values) for get in getters])
        raise TypeError(f'Argument `fetch` = {fetch} has invalid type "{type(fetch).__name__}"')

    def _sequence(self, fetch):
        builders = [self._compile(item) for item in fetch]
        kind = type(fetch)
        if issubclass(kind, list):
            return lambda values: [b(values) for b in builders]
        if kind is tuple:
            return lambda values: tuple(b(values) for b in builders)
        return lambda values: kind(*[b(values) for b in builders])  # a namedtuple

    def _mapping(self, fetch):
        keys = list(fetch.keys())
        builders = [self._compile(value) for value in fetch.values()]
        kind = type(fetch)
        if isinstance(fetch, collections.defaultdict):
            kind = functools.partial(collections.defaultdict, fetch.default_factory)
        return lambda values: kind(zip(keys, [b(values) for b in builders]))

    def _element(self, fetch):
        """A function from the fetched values to the value of one graph element."""
        try:
            element = self.graph.as_graph_element(fetch, allow_tensor=True,
                                                  allow_operation=True)
        except TypeError as err:
            raise TypeError(f'Argument `fetch` = {fetch} has invalid type '
                            f'"{type(fetch).__name__}" must be a string or Tensor. '
                            f"({err})") from None
        except (ValueError, KeyError) as err:
            raise ValueError(f"Argument `fetch` = {fetch} cannot be interpreted as a Tensor. "
                             f"({err})") from None
        op = getattr(element, "op", element)
        if not self.graph.is_fetchable(op):
            raise InaccessibleTensorError(
                f"Operation {op.name} has been marked as not fetchable. Typically this "
                "happens when it is defined in another function or code block. Use return "
                "values, explicit Python locals or TensorFlow collections to access it.")
        if isinstance(element, Operation):
            if element.name not in self.elements:
                self.targets.append(element.name)
                self.elements[element.name] = element
            return lambda values: None
        assert isinstance(element, Tensor)
        index = self._index.get(element.name)
        if index is None:
            index = self._index[element.name] = len(self.tensors)
            self.tensors.append(element.name)
            self.elements[element.name] = element
        return lambda values: values[index]

    def build(self, values):
        """The caller's fetch structure again, with `values` (one per flat fetch) in it."""
        return self._build(values)


def fetched_value(value):
    """A fetched tensor as TensorFlow hands it to the user: a numpy array in host
    memory, a 0-d one as a numpy scalar (np.float32(4.0))."""
    if hasattr(value, "__cuda_array_interface__"):
        value = value.get()
    return value[()] if getattr(value, "ndim", None) == 0 else value


def structure_key(fetch):
    """A hashable key for a fetch structure, to cache its FetchMapper."""
    if isinstance(fetch, (Tensor, Operation)):
        return id(fetch)
    if isinstance(fetch, (list, tuple)):
        return (type(fetch),) + tuple(structure_key(f) for f in fetch)
    if isinstance(fetch, Mapping):
        return (type(fetch), getattr(fetch, "default_factory", None)) + tuple(
            (k, structure_key(v)) for k, v in fetch.items())
    if isinstance(fetch, (str, bytes)):
        return fetch
    return ("obj", id(fetch))
