"""Fetch structures: flatten nested fetches to unique graph elements, rebuild the results."""

from dtfnb.base.errors import InaccessibleTensorError
from dtfnb.framework.operation import Operation
from dtfnb.framework.tensor import Tensor


class FetchMapper:
    """Maps a nested fetch structure (list, tuple, namedtuple, dict) to unique elements.

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
            raise TypeError(f"Fetch argument {fetch!r} has invalid type {type(fetch)}, must "
                            "be a string or Tensor. (Can not convert a NoneType into a Tensor "
                            "or Operation.)")
        if isinstance(fetch, dict):
            builders = [(key, self._compile(value)) for key, value in fetch.items()]
            kind = type(fetch)
            return lambda values: kind((key, b(values)) for key, b in builders)
        if isinstance(fetch, (list, tuple)):
            builders = [self._compile(item) for item in fetch]
            if hasattr(fetch, "_fields"):  # a namedtuple
                kind = type(fetch)
                return lambda values: kind(*[b(values) for b in builders])
            kind = type(fetch) if type(fetch) in (list, tuple) else list
            return lambda values: kind(b(values) for b in builders)
        try:
            element = self.graph.as_graph_element(fetch, allow_tensor=True,
                                                  allow_operation=True)
        except TypeError as err:
            raise TypeError(f"Fetch argument {fetch!r} has invalid type {type(fetch)}, must "
                            f"be a string or Tensor. ({err})") from None
        except ValueError as err:
            raise ValueError(f"Fetch argument {fetch!r} cannot be interpreted as a Tensor. "
                             f"({err})") from None
        except KeyError as err:
            raise ValueError(f"Fetch argument {fetch!r} cannot be interpreted as a Tensor. "
                             f"({err.args[0]})") from None
        if not self.graph.is_fetchable(element):
            op = getattr(element, "op", element)
            raise InaccessibleTensorError(
                f"Operation {op.name} has been marked as not fetchable. Typically this "
                "happens when it is defined in another function or code block. Use return "
                "values, explicit Python locals or TensorFlow collections to access it.")
        if isinstance(element, Operation):
            if element.name not in self.targets:
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
        return self._build(values)


def structure_key(fetch):
    """A hashable key for a fetch structure, to cache its FetchMapper."""
    if isinstance(fetch, (Tensor, Operation)):
        return id(fetch)
    if isinstance(fetch, (list, tuple)):
        return (type(fetch),) + tuple(structure_key(f) for f in fetch)
    if isinstance(fetch, dict):
        return (type(fetch),) + tuple((k, structure_key(v)) for k, v in fetch.items())
    if isinstance(fetch, str):
        return fetch
    return ("obj", id(fetch))
