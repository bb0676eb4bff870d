"""TensorShape and Dimension: static shapes that may have unknown rank or dimensions."""

from dtfnb.protos import tensor_pb2


class Dimension:
    """One dimension of a static shape; `value` is an int or None when unknown."""

    __slots__ = ("_value",)

    def __init__(self, value):
        if isinstance(value, Dimension):
            value = value._value
        if value is not None:
            value = int(value)
            if value < 0:
                raise ValueError(f"Dimension {value} must be >= 0")
        self._value = value

    @property
    def value(self):
        """The size of this dimension as an int, or None if it is unknown."""
        return self._value

    def is_compatible_with(self, other):
        """Whether this dimension and `other` could be the same size (an unknown one is compatible
        with any)."""
        other = Dimension(other)
        return self._value is None or other._value is None or self._value == other._value

    def assert_is_compatible_with(self, other):
        """Raises ValueError if this dimension and `other` are not compatible."""
        if not self.is_compatible_with(other):
            raise ValueError(f"Dimensions {self} and {Dimension(other)} are not compatible")

    def merge_with(self, other):
        """The dimension as known from both this one and `other`; ValueError if they differ."""
        other = Dimension(other)
        if not self.is_compatible_with(other):
            raise ValueError(f"Dimensions {self} and {other} are not compatible")
        return self if self._value is not None else other

    def __int__(self):
        return self._value

    __index__ = __int__

    def __eq__(self, other):
        try:
            other = Dimension(other)
        except (TypeError, ValueError):
            return NotImplemented
        if self._value is None or other._value is None:
            return None
        return self._value == other._value

    def __hash__(self):
        return hash(self._value)

    def __repr__(self):
        return f"Dimension({self._value})"

    def __str__(self):
        return "?" if self._value is None else str(self._value)

    def _combine(self, other, fn):
        other = Dimension(other)
        if self._value is None or other._value is None:
            return Dimension(None)
        return Dimension(fn(self._value, other._value))

    def __add__(self, other):
        return self._combine(other, int.__add__)

    def __mul__(self, other):
        return self._combine(other, int.__mul__)

    def __floordiv__(self, other):
        return self._combine(other, int.__floordiv__)

    def __sub__(self, other):
        return self._combine(other, int.__sub__)

    __radd__ = __add__
    __rmul__ = __mul__


class TensorShape:
    """A static shape: unknown rank (`dims is None`) or a list of Dimensions."""

    __slots__ = ("_dims",)

    def __init__(self, dims):
        if isinstance(dims, TensorShape):
            dims = dims._dims
        elif isinstance(dims, tensor_pb2.TensorShapeProto):
            dims = None if dims.unknown_rank else [d.size if d.size >= 0 else None
                                                   for d in dims.dim]
        elif dims is not None and not isinstance(dims, (list, tuple)):
            try:
                dims = list(dims)
            except TypeError:
                dims = [dims]
        self._dims = None if dims is None else tuple(Dimension(d) for d in dims)

    @property
    def dims(self):
        """The list of `Dimension`s of this shape, or None if its rank is unknown."""
        return None if self._dims is None else list(self._dims)

    @property
    def ndims(self):
        """The rank of this shape, or None if it is unknown."""
        return None if self._dims is None else len(self._dims)

    rank = ndims

    def as_list(self):
        """The sizes of the dimensions as a list of ints (None for unknown ones); ValueError if the
        rank is unknown."""
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return [d.value for d in self._dims]

    def as_tuple_or_none(self):
        """The dims as a tuple of ints/None, or None for an unknown rank."""
        return None if self._dims is None else tuple(d.value for d in self._dims)

    def is_fully_defined(self):
        """Whether the rank and every dimension are known."""
        return self._dims is not None and all(d.value is not None for d in self._dims)

    def num_elements(self):
        """The number of elements a tensor of this shape has, or None if not fully defined."""
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self._dims:
            n *= d.value
        return n

    def is_compatible_with(self, other):
        """Whether this shape and `other` could describe the same tensor."""
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        return len(self._dims) == len(other._dims) and all(
            a.is_compatible_with(b) for a, b in zip(self._dims, other._dims))

    def admits(self, array_shape):
        """Whether an array of `array_shape` (a tuple of ints) may have this shape: what
        `is_compatible_with` says, without making a TensorShape of it (a feed's check)."""
        return self._dims is None or len(self._dims) == len(array_shape) and all(
            d._value is None or d._value == n for d, n in zip(self._dims, array_shape))

    def assert_is_compatible_with(self, other):
        """Raises ValueError if this shape and `other` are not compatible."""
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {as_shape(other)} are incompatible")

    def merge_with(self, other):
        """The shape as known from both this one and `other`; ValueError if they are not compatible.
        """
        other = as_shape(other)
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        return TensorShape([a.merge_with(b) for a, b in zip(self._dims, other._dims)])

    def with_rank(self, rank):
        """This shape, known to be of rank `rank`; ValueError if it has another rank."""
        if self._dims is None:
            return unknown_shape(rank)
        if len(self._dims) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")
        return self

    def assert_has_rank(self, rank):
        """Raises ValueError if this shape's rank is known and not `rank`."""
        self.with_rank(rank)

    def with_rank_at_least(self, rank):
        """This shape; ValueError if its rank is known and less than `rank`."""
        if self._dims is not None and len(self._dims) < rank:
            raise ValueError(f"Shape {self} must have rank at least {rank}")
        return self

    def concatenate(self, other):
        """The shape with the dimensions of this one followed by those of `other`."""
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return TensorShape(None)
        return TensorShape(self._dims + other._dims)

    def as_proto(self):
        """This shape as a TensorShapeProto (-1 for an unknown dimension)."""
        if self._dims is None:
            return tensor_pb2.TensorShapeProto(unknown_rank=True)
        return tensor_pb2.TensorShapeProto(dim=[
            tensor_pb2.TensorShapeProto.Dim(size=-1 if d.value is None else d.value)
            for d in self._dims])

    def __len__(self):
        if self._dims is None:
            raise ValueError("Cannot take the length of a Shape with unknown rank.")
        return len(self._dims)

    def __iter__(self):
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(self._dims)

    def __getitem__(self, key):
        if isinstance(key, slice):
            return TensorShape(None if self._dims is None else self._dims[key])
        if self._dims is None:
            return Dimension(None)
        return self._dims[key]

    def __bool__(self):
        return self._dims is not None

    def __eq__(self, other):
        try:
            other = as_shape(other)
        except (TypeError, ValueError):
            return NotImplemented
        return self.as_tuple_or_none() == other.as_tuple_or_none()

    def __hash__(self):
        return hash(self.as_tuple_or_none())

    def __repr__(self):
        if self._dims is None:
            return "TensorShape(None)"
        return f"TensorShape([{', '.join(repr(d) for d in self._dims)}])"

    def __str__(self):
        if self._dims is None:
            return "<unknown>"
        if len(self._dims) == 1:
            return f"({self._dims[0]},)"
        return "(" + ", ".join(str(d) for d in self._dims) + ")"


def as_shape(shape):
    """Converts a list of sizes, a TensorShape or None (unknown) to a TensorShape."""
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def unknown_shape(rank=None):
    """A shape of unknown dimensions: of rank `rank`, or of unknown rank if None."""
    return TensorShape(None if rank is None else [None] * rank)


def scalar():
    """The shape of a scalar: rank 0."""
    return TensorShape([])


def dims_string(shape):
    """A concrete shape (a tuple of ints) as TensorFlow's kernels write it in messages:
    [6,3]."""
    return "[" + ",".join(str(d) for d in shape) + "]"
