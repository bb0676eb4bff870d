"""The TFRecord file format: framing, masked CRC32C, optional GZIP/ZLIB compression.

Each record is `uint64 length | uint32 masked_crc(length) | data | uint32 masked_crc(data)`,
all little-endian, so files interoperate with TensorFlow's. Offsets in errors count bytes
of the uncompressed stream, as TensorFlow's do.
"""

import re
import struct
import zlib

from dtfnb.base.errors import DataLossError, FailedPreconditionError
from dtfnb.resources.files import not_found

try:  # a C implementation when one is installed; the table below otherwise
    from google_crc32c import value as _fast_crc32c
except ImportError:
    try:
        from crc32c import crc32c as _fast_crc32c
    except ImportError:
        _fast_crc32c = None


def _crc_table():
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)  # Castagnoli, reflected
        table.append(crc)
    return table


_TABLE = _crc_table()


def crc32c(data):
    """The CRC-32C (Castagnoli) checksum of `data`, as TFRecord frames use."""
    if _fast_crc32c is not None:
        return _fast_crc32c(bytes(data))
    crc, table = 0xFFFFFFFF, _TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data):
    """TensorFlow masks stored CRCs so that a CRC of data holding CRCs stays well mixed."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


# Window bits selecting the container zlib reads and writes: a gzip or a zlib header.
_WBITS = {"": None, "ZLIB": zlib.MAX_WBITS, "GZIP": zlib.MAX_WBITS | 16}


def _wbits(compression_type):
    try:
        return _WBITS[compression_type or ""]
    except KeyError:
        raise ValueError(f'Not a valid compression_type: "{compression_type}"') from None


def _open(path, mode):
    try:
        return open(path, mode)  # noqa: SIM115 - closed by the owning reader or writer
    except FileNotFoundError:
        raise not_found(path) from None


class RecordWriter:
    """Appends records to a new file at `path`; a context manager.

    A compressed file is deflated with zlib's settings (`compression_level`, window
    bits, memory level, strategy); `flush_mode` is applied each time `input_buffer_size`
    bytes have gone in, as TensorFlow's ZlibOutputBuffer does.
    """

    def __init__(self, path, compression_type="", compression_level=None, *,
                 window_bits=None, mem_level=None, compression_strategy=None,
                 flush_mode=None, input_buffer_size=None):
        wbits = _wbits(compression_type)
        self._file = _open(path, "wb")
        self._compressor = None
        if wbits is not None:
            if window_bits is not None:
                wbits = window_bits | (wbits & 16)  # keeps the gzip container bit
            self._compressor = zlib.compressobj(
                zlib.Z_DEFAULT_COMPRESSION if compression_level is None else compression_level,
                zlib.DEFLATED, wbits, mem_level or zlib.DEF_MEM_LEVEL,
                zlib.Z_DEFAULT_STRATEGY if compression_strategy is None
                else compression_strategy)
        self._flush_mode = flush_mode or zlib.Z_NO_FLUSH
        self._buffer_size = input_buffer_size or 256 << 10
        self._buffered = 0

    def write(self, record):
        """Appends one record (bytes, or str as UTF-8) with its length and checksums."""
        if self._file is None:
            raise FailedPreconditionError(None, None, "Writer is closed.")
        if isinstance(record, str):
            record = record.encode()
        header = struct.pack("<Q", len(record))
        chunk = b"".join([header, struct.pack("<I", masked_crc32c(header)), record,
                          struct.pack("<I", masked_crc32c(record))])
        if self._compressor is not None:
            compressed = self._compressor.compress(chunk)
            self._buffered += len(chunk)
            if self._flush_mode != zlib.Z_NO_FLUSH and self._buffered >= self._buffer_size:
                compressed += self._compressor.flush(self._flush_mode)
                self._buffered = 0
            chunk = compressed
        self._file.write(chunk)

    def flush(self):
        """Writes what is buffered (and compressed so far) to the file."""
        if self._file is None:
            raise FailedPreconditionError(None, None, "Writer is closed.")
        if self._compressor is not None:
            self._file.write(self._compressor.flush(zlib.Z_SYNC_FLUSH))
        self._file.flush()

    def close(self):
        """Finishes the compressed stream, if any, and closes the file."""
        if self._file is None:
            return
        if self._compressor is not None:
            self._file.write(self._compressor.flush())
        self._file.close()
        self._file = None

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()


class _Inflater:
    """`read(n)` over a compressed file: n bytes, fewer only at the end."""

    eof_reason = "EOF reached"

    def __init__(self, file, wbits):
        self._file = file
        self._inflate = zlib.decompressobj(wbits)
        self._buffer = b""

    def read(self, n):
        while len(self._buffer) < n and not self._inflate.eof:
            compressed = self._inflate.unconsumed_tail or self._file.read(1 << 16)
            if not compressed:
                break
            self._buffer += self._inflate.decompress(compressed, n - len(self._buffer))
        data, self._buffer = self._buffer[:n], self._buffer[n:]
        return data

    def close(self):
        self._file.close()


def _data_loss(message):
    return DataLossError(None, None, message)


class RecordReader:
    """Reads the records of the file at `path` one by one, with the offset of each.

    Errors carry TensorFlow 2.21's messages. As there, a file that ends inside a record's
    12-byte header simply ends; one that ends inside the data is a DataLossError.
    """

    def __init__(self, path, compression_type=""):
        wbits = _wbits(compression_type)
        self.offset = 0
        file = _open(path, "rb")
        self._stream = file if wbits is None else _Inflater(file, wbits)
        self._seekable = wbits is None
        self._reread = False  # the last read stopped inside a record: start it again
        self._eof_reason = getattr(self._stream, "eof_reason", "Read less bytes than requested")

    def _read(self, n):
        try:
            return self._stream.read(n)
        except zlib.error as exc:  # worded as TensorFlow words zlib's C error codes
            raise _data_loss(re.sub(r"Error (-?\d+) while \w+ data",
                                         r"inflate() failed with error \1", str(exc))) from None

    def read(self):
        """`(offset, record)` for the next record; None once the file ends.

        Reading stops without moving on at the end of the file or at a truncated record,
        so that a file still being written can be read on (TensorBoard relies on this).
        """
        offset = self.offset
        if self._reread and self._seekable:
            self._stream.seek(offset)
        self._reread = True
        header = self._read(12)
        if len(header) < 12:
            return None
        length, masked = struct.unpack("<QI", header)
        if masked_crc32c(header[:8]) != masked:
            hint = " (Is this even a TFRecord file?)" if offset == 0 else ""
            raise _data_loss(f"corrupted record at {offset}{hint}")
        chunk = self._read(length + 4)
        if len(chunk) < length + 4:
            raise _data_loss(f"truncated record at {offset}' failed with "
                                  f"{self._eof_reason}")
        data, (masked,) = chunk[:length], struct.unpack("<I", chunk[length:])
        if masked_crc32c(data) != masked:
            raise _data_loss(f"corrupted record at {offset + 12}")
        self.offset = offset + 12 + length + 4
        self._reread = False
        return offset, data

    def read_at(self, offset):
        """The record at byte `offset` of an uncompressed file and the offset after it."""
        self.offset, self._reread = offset, True
        item = self.read()
        if item is None:
            raise IndexError(f"Out of range at reading offset {offset}")
        return item[1], self.offset

    def close(self):
        """Closes the file."""
        self._stream.close()
