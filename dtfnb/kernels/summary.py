"""Summary kernels: each serializes a `Summary` protobuf, on CPU as in TensorFlow. Images
are encoded as PNG and audio as WAV here, with zlib and struct only."""

import struct
import sys
import zlib

import numpy as np
from google.protobuf.message import DecodeError

from dtfnb.base import codec
from dtfnb.base.errors import InvalidArgumentError
from dtfnb.base.shapes import dims_string
from dtfnb.kernels.registry import register_kernel
from dtfnb.protos.summary_pb2 import HistogramProto, Summary


def _serialized(values):
    return np.array(Summary(value=values).SerializeToString(), dtype=object)


def _invalid(message):
    return InvalidArgumentError(None, None, message)


def _numbered_tags(tag, kind, count, max_outputs):
    """`tag/kind/<i>` for each of `count` outputs, or `tag/kind` when at most one was asked
    for: the form follows `max_outputs`, not how many there are."""
    return [f"{tag}/{kind}/{i}" if max_outputs > 1 else f"{tag}/{kind}" for i in range(count)]


@register_kernel("ScalarSummary", device="CPU")
def _scalar_summary(ctx, step, tags, values):
    tags, values = np.asarray(tags, dtype=object), np.asarray(values)
    if tags.shape != values.shape:
        single = f" (tag '{tags.reshape(-1)[0].decode()}')" if tags.size == 1 else ""
        raise _invalid(f"tags and values are not the same shape: {dims_string(tags.shape)} != "
                       f"{dims_string(values.shape)}{single}")
    return _serialized([Summary.Value(tag=tag.decode(), simple_value=float(value))
                        for tag, value in zip(tags.reshape(-1), values.reshape(-1))])


# -- histograms ---------------------------------------------------------------------------


def _default_bucket_limits():
    """TensorFlow's bucket edges: from 1e-12 growing by 10% up to 1e20, then DBL_MAX, both
    signs, and 0. A value falls in the first bucket whose edge is above it."""
    edges, edge = [], 1.0e-12
    while edge < 1.0e20:
        edges.append(edge)
        edge *= 1.1
    edges.append(sys.float_info.max)
    return np.array([-e for e in reversed(edges)] + [0.0] + edges)


_BUCKET_LIMITS = _default_bucket_limits()


def _histogram(values):
    """The HistogramProto of TensorFlow's default histogram of `values` (finite): each run
    of empty buckets is one bucket with the run's last edge. Sums add the values in order,
    as TensorFlow does, so that they are equal to its to the bit."""
    values = np.asarray(values, np.float64).reshape(-1)
    if not values.size:
        return HistogramProto(min=sys.float_info.max, max=-sys.float_info.max,
                              bucket_limit=[sys.float_info.max], bucket=[0.0])
    counts = np.bincount(np.searchsorted(_BUCKET_LIMITS, values, side="right"),
                         minlength=len(_BUCKET_LIMITS)).astype(np.float64)
    empty = counts == 0
    kept = ~empty | np.append(~empty[1:], True)  # a non-empty bucket, or a run's end
    return HistogramProto(  # the first of equal extremes, as TensorFlow's (0.0 or -0.0)
        min=values[np.argmin(values)], max=values[np.argmax(values)], num=values.size,
        sum=np.cumsum(values)[-1], sum_squares=np.cumsum(values * values)[-1],
        bucket_limit=_BUCKET_LIMITS[kept], bucket=counts[kept])


@register_kernel("HistogramSummary", device="CPU")
def _histogram_summary(ctx, step, tag, values):
    values = np.asarray(values, np.float64).reshape(-1)
    nonfinite = values[~np.isfinite(values)]
    if nonfinite.size:
        raise _invalid(f"Nan in summary histogram for: {ctx.name}" if np.isnan(nonfinite[0])
                       else f"Infinity in Histogram for: {ctx.name}")
    return _serialized([Summary.Value(tag=tag.item().decode(), histo=_histogram(values))])


# -- images -------------------------------------------------------------------------------

_PNG_COLOR_TYPES = {1: 0, 2: 4, 3: 2, 4: 6}  # channels: grey, grey+alpha, RGB, RGBA
_ZERO = np.float32(1e-6)  # a range below this scales to one colour


def _png(pixels):
    """A PNG of 8-bit `pixels` [height, width, channels]: rows unfiltered, deflated by
    zlib at its default level, as TensorFlow asks of libpng."""
    height, width, channels = pixels.shape
    rows = np.concatenate([np.zeros([height, 1], np.uint8),  # each row's filter: none
                           pixels.reshape(height, width * channels)], axis=1)

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data)))

    header = struct.pack(">IIBBBBB", width, height, 8, _PNG_COLOR_TYPES[channels], 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(rows.tobytes())) + chunk(b"IEND", b""))


def _uint8_image(image, bad_color):
    """A float image [height, width, channels] scaled into uint8 as TensorFlow scales it:
    the range of its finite pixels (min and max in float32) picks scale and offset, the
    arithmetic is in the image's own type and truncates, and pixels with a non-finite
    channel take `bad_color`."""
    finite = np.isfinite(image).all(axis=-1)
    with np.errstate(over="ignore"):
        seen = image[finite].astype(np.float32)
    low = seen.min() if seen.size else np.float32(np.inf)
    high = seen.max() if seen.size else np.float32(-np.inf)
    if low < 0:
        largest = max(abs(low), abs(high))
        scale = np.float32(0.0) if largest < _ZERO else np.float32(127.0) / largest
        offset = 128.0
    else:
        scale = np.float32(0.0) if high < _ZERO else np.float32(255.0) / high
        offset = 0.0
    kind = image.dtype.type
    with np.errstate(invalid="ignore"):
        pixels = (image * kind(scale) + kind(offset)).astype(np.uint8)
    pixels[~finite] = bad_color[:image.shape[-1]]
    return pixels


@register_kernel("ImageSummary", device="CPU")
def _image_summary(ctx, step, tag, tensor):
    if tensor.ndim != 4 or tensor.shape[3] not in (1, 3, 4):
        raise _invalid("Tensor must be 4-D with last dim 1, 3, or 4, not "
                       f"{dims_string(tensor.shape)}")
    batch, height, width, depth = tensor.shape
    if height * width == 0:
        raise _invalid(f"input tensor must have non-zero dims. Found: [{batch}, {height}, "
                       f"{width}, {depth}].")
    bad_color = ctx.attrs["bad_color"]
    if tensor.dtype != np.uint8 and bad_color.size < depth:
        raise _invalid(f"expected depth <= bad_color.size, got depth = {depth}, "
                       f"bad_color.size = {bad_color.size}")
    max_images = ctx.attrs["max_images"]
    values = []
    for i, image_tag in enumerate(_numbered_tags(tag.item().decode(), "image",
                                                 min(max_images, batch), max_images)):
        pixels = tensor[i] if tensor.dtype == np.uint8 else _uint8_image(tensor[i], bad_color)
        values.append(Summary.Value(tag=image_tag, image=Summary.Image(
            height=height, width=width, colorspace=depth, encoded_image_string=_png(pixels))))
    return _serialized(values)


# -- audio --------------------------------------------------------------------------------


def _wav(samples, sample_rate):
    """A 16-bit PCM WAV of float `samples` [frames, channels] in [-1, 1]: each one times
    2^15, rounded half away from zero and clipped to int16 (NaN: 0), as TensorFlow
    encodes it."""
    frames, channels = samples.shape
    scaled = samples.astype(np.float64) * 32768.0
    with np.errstate(invalid="ignore"):
        rounded = np.clip(np.sign(scaled) * np.floor(np.abs(scaled) + 0.5), -32768, 32767)
    data = np.nan_to_num(rounded).astype("<i2").tobytes()
    return (b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVEfmt "
            + struct.pack("<IHHIIHH", 16, 1, channels, sample_rate, sample_rate * 2 * channels,
                          2 * channels, 16)
            + b"data" + struct.pack("<I", len(data)) + data)


@register_kernel("AudioSummaryV2", device="CPU")
def _audio_summary(ctx, step, tag, tensor, sample_rate):
    if tensor.ndim not in (2, 3):
        raise _invalid(f"Tensor must be 3-D or 2-D, got: {dims_string(tensor.shape)}")
    sample_rate = np.float32(sample_rate)
    if not sample_rate > 0:
        raise _invalid("sample_rate must be > 0")
    batch, frames = tensor.shape[:2]
    clips = tensor if tensor.ndim == 3 else tensor[..., np.newaxis]
    rate = max(int(np.rint(sample_rate)), 1)  # the header's whole hertz, rounded to even
    max_outputs = ctx.attrs["max_outputs"]
    return _serialized([
        Summary.Value(tag=clip_tag, audio=Summary.Audio(
            sample_rate=sample_rate, num_channels=clips.shape[2], length_frames=frames,
            content_type="audio/wav", encoded_audio_string=_wav(clips[i], rate)))
        for i, clip_tag in enumerate(_numbered_tags(tag.item().decode(), "audio",
                                                    min(max_outputs, batch), max_outputs))])


# -- tensors and merging ------------------------------------------------------------------


@register_kernel("TensorSummaryV2", device="CPU")
def _tensor_summary(ctx, step, tag, tensor, serialized_summary_metadata):
    value = Summary.Value(tag=tag.item().decode(),
                          tensor=codec.tensor_to_proto(tensor, ctx.attrs["T"]))
    value.metadata.ParseFromString(serialized_summary_metadata.item())
    return _serialized([value])


@register_kernel("MergeSummary", device="CPU")
def _merge_summary(ctx, step, *inputs):
    values, tags = [], set()
    for serialized in (s for summaries in inputs for s in np.asarray(summaries).reshape(-1)):
        try:
            summary = Summary.FromString(serialized)
        except DecodeError:
            raise _invalid("Could not parse one of the summary inputs") from None
        for value in summary.value:
            if value.tag and value.tag in tags:
                raise _invalid(f"Duplicate tag {value.tag} found in summary inputs ")
            tags.add(value.tag)
            values.append(value)
    return _serialized(values)
