"""tf.data below the GraphDef line: datasets as plain Python iterables, and iterators.

A dataset kernel returns one of these classes (the value of a variant tensor). An
element is a tuple of arrays, one per component; iterating a dataset again starts
an independent pass. Traced functions arrive as callables: list of arrays → list
of outputs. An IteratorResource holds the pass that `IteratorGetNext` advances.
"""

import gzip
import itertools
import logging
import secrets
import threading

import numpy as np

from dtfnb.base import philox, stacking
from dtfnb.base.errors import (
    DataLossError,
    FailedPreconditionError,
    InvalidArgumentError,
    OpError,
    OutOfRangeError,
)
from dtfnb.base.object_arrays import object_scalar
from dtfnb.resources.files import not_found
from dtfnb.resources.tfrecord import RecordReader

log = logging.getLogger("dtfnb.resources")


class TensorSlices:
    """TensorSliceDataset: one element per row of the components (all equally long)."""
    def __init__(self, components):
        sizes = {len(c) if np.ndim(c) else None for c in components}
        if len(sizes) != 1:
            raise InvalidArgumentError(None, None, "All components must have the same size "
                                       "in their first dimension")
        self.components = components

    def __iter__(self):
        for i in range(len(self.components[0])):
            yield tuple(c[i, ...] for c in self.components)


class Tensors:
    """TensorDataset: the components as its single element."""
    def __init__(self, components):
        self.components = tuple(components)

    def __iter__(self):
        yield self.components


class Range:
    """RangeDataset: int64 scalars from `start` to `stop` by `step`."""
    def __init__(self, start, stop, step):
        if step == 0:
            raise InvalidArgumentError(None, None, "step must be a non-zero integer.")
        self.range = range(int(start), int(stop), int(step))

    def __iter__(self):
        return ((np.array(i, dtype=np.int64),) for i in self.range)


class Zip:
    """ZipDataset: elements of all datasets side by side, until the shortest ends."""
    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for parts in zip(*self.datasets):
            yield tuple(itertools.chain.from_iterable(parts))


class Concatenate:
    """ConcatenateDataset: the elements of `first`, then those of `second`."""
    def __init__(self, first, second):
        self.first, self.second = first, second

    def __iter__(self):
        return itertools.chain(self.first, self.second)


class Repeat:
    """RepeatDataset: `count` passes over the dataset (count < 0: forever)."""
    def __init__(self, dataset, count):
        self.dataset, self.count = dataset, int(count)

    def __iter__(self):
        epochs = itertools.count() if self.count < 0 else range(self.count)
        for _ in epochs:
            empty = True
            for element in self.dataset:
                empty = False
                yield element
            if empty:  # repeating nothing forever would never end
                return


class Skip:
    """SkipDataset: all but the first `count` elements (count < 0: none)."""
    def __init__(self, dataset, count):
        self.dataset, self.count = dataset, int(count)

    def __iter__(self):
        if self.count < 0:
            return iter(())
        return itertools.islice(self.dataset, self.count, None)


class Shard:
    """ShardDataset: the elements at positions index, index + num_shards, ..."""
    def __init__(self, dataset, num_shards, index):
        if num_shards <= 0:
            raise InvalidArgumentError(None, None, "Number of shards must be greater than "
                                       f"zero (currently num_shards = {num_shards}).")
        if not 0 <= index < num_shards:
            raise InvalidArgumentError(None, None, "Index must be between 0 and "
                                       f"{num_shards - 1} (currently index = {index}).")
        self.dataset, self.num_shards, self.index = dataset, num_shards, index

    def __iter__(self):
        return itertools.islice(self.dataset, self.index, None, self.num_shards)


class Unbatch:
    """UnbatchDataset: each element's rows, one element each."""
    def __init__(self, dataset):
        self.dataset = dataset

    def __iter__(self):
        for element in self.dataset:
            if any(np.ndim(component) == 0 for component in element):
                raise InvalidArgumentError(None, None, "Input element must have a "
                                           "non-scalar value in each component.")
            rows = len(element[0])
            for i, component in enumerate(element[1:], 1):
                if len(component) != rows:
                    raise InvalidArgumentError(
                        None, None, "Input element must have the same batch size in each "
                        f"component. Component 0 had size {rows} but component {i} had "
                        f"size {len(component)}.")
            for r in range(rows):
                yield tuple(component[r, ...] for component in element)


class Take:
    """TakeDataset: the first `count` elements (count < 0: all)."""
    def __init__(self, dataset, count):
        self.dataset, self.count = dataset, int(count)

    def __iter__(self):
        return iter(self.dataset) if self.count < 0 else itertools.islice(self.dataset,
                                                                           self.count)


class Batch:
    """BatchDataset: elements stacked `batch_size` at a time; a short last batch is kept
    unless `drop_remainder`.
    """
    def __init__(self, dataset, batch_size, drop_remainder):
        if batch_size <= 0:
            raise InvalidArgumentError(None, None, "Batch size must be greater than zero.")
        self.dataset, self.size, self.drop = dataset, int(batch_size), bool(drop_remainder)

    def __iter__(self):
        elements = iter(self.dataset)
        while True:
            batch = list(itertools.islice(elements, self.size))
            if not batch or (self.drop and len(batch) < self.size):
                return
            yield self.stack(batch)

    @staticmethod
    def stack(batch):
        """One batch from a list of elements: each component stacked along a new axis 0."""
        try:
            return tuple(stacking.stack(parts) for parts in zip(*batch))
        except ValueError:
            shapes = [list(np.shape(e)) for e in next(zip(*batch))]
            raise InvalidArgumentError(
                None, None, "Cannot batch tensors with different shapes in component 0. "
                f"First element had shape {shapes[0]} and element "
                f"{next(i for i, s in enumerate(shapes) if s != shapes[0])} had shape "
                f"{next(s for s in shapes if s != shapes[0])}.") from None


class PaddedBatch(Batch):
    """PaddedBatchDataset: batches whose components are padded with `padding_values` to
    `padded_shapes` (-1: the longest in the batch).
    """
    def __init__(self, dataset, batch_size, drop_remainder, padded_shapes, padding_values):
        super().__init__(dataset, batch_size, drop_remainder)
        self.shapes, self.values = padded_shapes, padding_values

    def stack(self, batch):
        """One batch, each component padded to its padded shape with its padding value."""
        out = []
        for k, parts in enumerate(zip(*batch)):
            shape = [max(np.shape(p)[d] for p in parts) if n < 0 else int(n)
                     for d, n in enumerate(self.shapes[k])]
            padded = np.full([len(parts)] + shape, self.values[k], dtype=parts[0].dtype)
            for i, part in enumerate(parts):
                if any(a > b for a, b in zip(np.shape(part), shape)):
                    raise InvalidArgumentError(
                        None, None, "Attempted to pad to a smaller size than the input "
                        "element.")
                padded[(i, *(slice(0, n) for n in np.shape(part)))] = part
            out.append(padded)
        return tuple(out)


class Shuffle:
    """ShuffleDataset as TensorFlow's: a window of the next `buffer_size` elements, from
    which each element out is the one at the next word of TensorFlow's generator modulo
    the window's length, the window's first element taking its place.

    Each pass (an iterator: a repeat's next round) seeds its generator: with `reshuffle`,
    with the next two words of a generator of the dataset's seeds, so that passes differ
    while a dataset made again (an iterator initialized again, a new session) repeats
    them; otherwise with the seeds themselves. Seeds (0, 0) are drawn from OS entropy
    once per dataset.
    """

    def __init__(self, dataset, buffer_size, seed, seed2, reshuffle):
        if buffer_size <= 0:
            raise InvalidArgumentError(None, None, "buffer_size must be greater than zero.")
        self.dataset, self.size = dataset, int(buffer_size)
        if not (seed or seed2):
            seed, seed2 = secrets.randbits(64), secrets.randbits(64)
        self._seeds = (seed, seed2)
        self._pass_seeds = philox.WordStream(seed, seed2) if reshuffle else None
        self._lock = threading.Lock()

    def _next_pass_seeds(self):
        if self._pass_seeds is None:
            return self._seeds
        with self._lock:
            return self._pass_seeds.next(), self._pass_seeds.next()

    def __iter__(self):
        indices = philox.WordStream(*self._next_pass_seeds())
        elements = iter(self.dataset)
        window = [None] * self.size   # a ring: the window is start .. end - 1
        start = end = 0
        for element in itertools.islice(elements, self.size):
            window[end] = element
            end += 1
        while start < end:
            at = (start + indices.below(end - start)) % self.size
            first = start % self.size
            chosen, window[at] = window[at], window[first]
            window[first] = None
            start += 1
            yield chosen
            element = next(elements, None)   # elements are tuples, never None
            if element is not None:
                window[end % self.size] = element
                end += 1


class Map:
    """MapDataset: `fn` (a traced function) of each element and the captured values."""
    def __init__(self, dataset, fn, captured):
        self.dataset, self.fn, self.captured = dataset, fn, list(captured)

    def __iter__(self):
        for element in self.dataset:
            yield tuple(self.fn([*element, *self.captured]))


class Filter(Map):
    """FilterDataset: the elements for which the traced predicate is true."""
    def __iter__(self):
        for element in self.dataset:
            (keep,) = self.fn([*element, *self.captured])
            if keep:
                yield element


class FlatMap(Map):
    """FlatMapDataset: the elements of the dataset `fn` returns for each element."""
    def __iter__(self):
        for element in self.dataset:
            (inner,) = self.fn([*element, *self.captured])
            yield from inner


class Generator:
    """GeneratorDataset: each pass gets a state from `init` (from_generator: a pass id),
    then elements from `next` of it until `next` fails with OutOfRangeError, and ends
    with `finalize` of it. A pass left unfinished is finalized when it is dropped, and
    only warns if that fails (its functions may be gone with their graph), as
    TensorFlow's iterator does when it is destroyed."""

    def __init__(self, init, init_args, next_fn, next_args, finalize, finalize_args):
        self.init, self.init_args = init, list(init_args)
        self.next, self.next_args = next_fn, list(next_args)
        self.finalize, self.finalize_args = finalize, list(finalize_args)

    def __iter__(self):
        state = self.init(self.init_args)
        ended = False
        try:
            while True:
                try:
                    element = self.next([*state, *self.next_args])
                except OutOfRangeError:
                    ended = True
                    self.finalize([*state, *self.finalize_args])
                    return
                yield tuple(element)
        finally:
            if not ended:
                try:
                    self.finalize([*state, *self.finalize_args])
                except OpError as err:
                    log.warning("Error occurred when finalizing GeneratorDataset iterator: "
                                "%s", err)


class Interleave(Map):
    """TensorFlow's InterleaveDataset: `block_length` elements from each of `cycle_length`
    open inner datasets in turn; an exhausted one is replaced by the next input's."""

    def __init__(self, dataset, fn, captured, cycle_length, block_length):
        super().__init__(dataset, fn, captured)
        if cycle_length <= 0 or block_length <= 0:
            raise InvalidArgumentError(None, None, "cycle_length and block_length must be "
                                       "greater than zero.")
        self.cycle, self.block = int(cycle_length), int(block_length)

    def __iter__(self):
        inputs = iter(self.dataset)
        current = [None] * self.cycle
        index = block = num_open = 0
        end_of_input = False
        while not end_of_input or num_open:
            if current[index] is not None:
                element = next(current[index], None)
                if element is not None:
                    block += 1
                    if block == self.block:
                        index, block = (index + 1) % self.cycle, 0
                    yield element
                    continue
                current[index] = None
                num_open -= 1
                index, block = (index + 1) % self.cycle, 0
            elif not end_of_input:
                args = next(inputs, None)
                if args is None:
                    end_of_input = True
                else:
                    (inner,) = self.fn([*args, *self.captured])
                    current[index] = iter(inner)
                    num_open += 1
            else:
                index, block = (index + 1) % self.cycle, 0


class Cache:
    """Replays the elements of the first complete pass (an in-memory cache)."""

    def __init__(self, dataset):
        self.dataset, self.elements = dataset, None

    def __iter__(self):
        if self.elements is not None:
            yield from self.elements
            return
        seen = []
        for element in self.dataset:
            seen.append(element)
            yield element
        self.elements = seen


class _Files:
    """Files on the task that runs the dataset."""

    def __init__(self, filenames):
        self.filenames = [f.decode() if isinstance(f, bytes) else str(f)
                          for f in np.reshape(filenames, -1)]

    def open(self, path, compression_type=""):
        try:
            if compression_type == "GZIP":
                return gzip.open(path, "rb")
            if compression_type:
                raise InvalidArgumentError(None, None, f"Unsupported compression_type: "
                                           f"{compression_type}")
            return open(path, "rb")
        except FileNotFoundError:
            raise not_found(path) from None


class TextLines(_Files):
    """TextLineDataset: the lines of the files, without their line endings."""
    def __init__(self, filenames, compression_type):
        super().__init__(filenames)
        self.compression = compression_type

    def __iter__(self):
        for path in self.filenames:
            with self.open(path, self.compression) as file:
                for line in file:
                    yield (object_scalar(line.rstrip(b"\n").rstrip(b"\r")),)


class TFRecords(TextLines):
    """TFRecordDataset: the records of the TFRecord files."""
    def __iter__(self):
        for path in self.filenames:
            reader = RecordReader(path, self.compression)
            try:
                for _, record in iter(reader.read, None):
                    yield (object_scalar(record),)
            finally:
                reader.close()


class FixedLengthRecords(_Files):
    """FixedLengthRecordDataset: records of `record_bytes` between a header and a footer
    of each file.
    """
    def __init__(self, filenames, header_bytes, record_bytes, footer_bytes):
        super().__init__(filenames)
        if record_bytes <= 0:
            raise InvalidArgumentError(None, None, "record_bytes must be greater than zero.")
        self.header, self.record, self.footer = int(header_bytes), int(record_bytes), \
            int(footer_bytes)

    def __iter__(self):
        for path in self.filenames:
            with self.open(path) as file:
                data = file.read()
            body = data[self.header:len(data) - self.footer]
            if len(body) % self.record:
                raise DataLossError(
                    None, None, f"Excluding the header ({self.header} bytes) and footer "
                    f"({self.footer} bytes), input file \"{path}\" has body length "
                    f"{len(body)} bytes, which is not an exact multiple of the record length "
                    f"({self.record} bytes).")
            for start in range(0, len(body), self.record):
                yield (object_scalar(body[start:start + self.record]),)


_NOT_INITIALIZED = (
    "GetNext() failed because the iterator has not been initialized. Ensure that you have run "
    "the initializer operation for this iterator before getting the next element.")


class IteratorResource:
    """An iterator over a dataset, advanced by IteratorGetNext; (re)set by MakeIterator.

    ```python
    from dtfnb.resources.datasets import IteratorResource, Range

    iterator = IteratorResource()
    iterator.initialize(Range(0, 3, 1))  # what MakeIterator does
    print(iterator.get_next())           # (array(0),); OutOfRangeError after the last
    ```
    """

    def __init__(self):
        self._elements = None
        self._lock = threading.Lock()

    def initialize(self, dataset):
        """Starts a new pass over `dataset` (what MakeIterator does)."""
        with self._lock:
            self._elements = iter(dataset)

    @property
    def initialized(self):
        """Whether MakeIterator has run."""
        return self._elements is not None

    def get_next(self):
        """The next element; OutOfRangeError at the end, FailedPreconditionError before init."""
        with self._lock:
            if self._elements is None:
                raise FailedPreconditionError(None, None, _NOT_INITIALIZED)
            element = next(self._elements, None)
        if element is None:
            raise OutOfRangeError(None, None, "End of sequence")
        return element
