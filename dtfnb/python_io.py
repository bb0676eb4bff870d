"""`tf.python_io`: TFRecord files from Python; the format lives in dtfnb/resources/tfrecord.py."""

from dtfnb.base.errors import FailedPreconditionError
from dtfnb.resources.tfrecord import RecordReader, RecordWriter


class TFRecordCompressionType:
    """The compression of a TFRecord file: NONE, ZLIB or GZIP."""
    NONE = 0
    ZLIB = 1
    GZIP = 2


class TFRecordOptions:
    """A TFRecord file's compression: None or "", "ZLIB", "GZIP", or a TFRecordCompressionType."""

    compression_type_map = {TFRecordCompressionType.ZLIB: "ZLIB",
                            TFRecordCompressionType.GZIP: "GZIP",
                            TFRecordCompressionType.NONE: ""}

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None,
                 output_buffer_size=None, window_bits=None, compression_level=None,
                 compression_method=None, mem_level=None, compression_strategy=None):
        self.get_compression_type_string(compression_type)  # validates early, as TensorFlow
        self.compression_type = compression_type
        self.flush_mode = flush_mode
        self.input_buffer_size = input_buffer_size
        self.output_buffer_size = output_buffer_size  # how zlib's output is staged: no effect
        self.window_bits = window_bits
        self.compression_level = compression_level
        self.compression_method = compression_method  # zlib has one: deflate
        self.mem_level = mem_level
        self.compression_strategy = compression_strategy

    @classmethod
    def get_compression_type_string(cls, options):
        """The compression name ("", "ZLIB" or "GZIP") of `options`, a TFRecordOptions or a
        compression type."""
        if not options:
            return ""
        if isinstance(options, TFRecordOptions):
            return cls.get_compression_type_string(options.compression_type)
        if options in cls.compression_type_map:
            return cls.compression_type_map[options]
        if options in cls.compression_type_map.values():
            return options
        raise ValueError(f'Not a valid compression_type: "{options}"')


class TFRecordWriter(RecordWriter):
    """Writes records to a TFRecord file: `with TFRecordWriter(path) as w: w.write(b"...")`."""

    def __init__(self, path, options=None):
        settings = {}
        if isinstance(options, TFRecordOptions):
            settings = {name: getattr(options, name) for name in (
                "compression_level", "window_bits", "mem_level", "compression_strategy",
                "flush_mode", "input_buffer_size")}
        super().__init__(path, TFRecordOptions.get_compression_type_string(options),
                         **settings)


class tf_record_iterator:  # noqa: N801 - TensorFlow's name for what it returns
    """Iterates over the records of a TFRecord file as bytes; opens the file at once.

    At the end it raises StopIteration but stays open: records appended later come
    next, and a truncated record fails with DataLossError until it is complete.
    """

    def __init__(self, path, options=None):
        self._reader = RecordReader(path, TFRecordOptions.get_compression_type_string(options))

    def __iter__(self):
        return self

    def __next__(self):
        item = self._reader.read()
        if item is None:
            raise StopIteration
        return item[1]

    def close(self):
        """Closes the file; the iterator yields no more records."""
        self._reader.close()


class tf_record_random_reader:  # noqa: N801 - TensorFlow's name
    """Reads the record at any byte offset of an uncompressed TFRecord file:
    `record, next_offset = reader.read(offset)`."""

    def __init__(self, path):
        self._reader = RecordReader(path)

    def read(self, offset):
        """The record at byte `offset` and the offset of the next one."""
        if self._reader is None:
            raise FailedPreconditionError(None, None, "Random TFRecord Reader is closed.")
        return self._reader.read_at(offset)

    def close(self):
        """Closes the file; a later `read` raises FailedPreconditionError."""
        if self._reader is not None:
            self._reader.close()
            self._reader = None
