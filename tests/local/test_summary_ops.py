"""tf.summary's ops as TensorBoard reads them: what a session serializes is parsed with
TensorBoard's own protos and migrated by its data_compat, as its event loader does, and
the images and audio are decoded by Pillow and the standard library's wave, not by
dtfnb. (The differential tier compares every op's output with TensorFlow's.)"""

import io
import wave

import numpy as np
import pytest

import dtfnb as tf

tensorboard_summary = pytest.importorskip("tensorboard.compat.proto.summary_pb2")
from PIL import Image  # noqa: E402 - after the skip
from tensorboard import data_compat  # noqa: E402
from tensorboard.plugins.text import text_plugin  # noqa: E402
from tensorboard.util import tensor_util  # noqa: E402


def test_tensorboard_reads_every_kind_of_summary():
    pixels = np.arange(2 * 3 * 4 * 3).reshape(2, 3, 4, 3).astype(np.uint8)
    sound = np.arange(-64, 64).reshape(1, 64, 2) / 64  # x 2^15: whole numbers
    tf.summary.scalar("loss", tf.constant(0.25))
    tf.summary.histogram("weights", tf.constant([1.0, 2.0, 2.0, -3.0]))
    tf.summary.image("input", tf.constant(pixels), max_outputs=2)
    tf.summary.audio("voice", tf.constant(sound, tf.float32), 8000, max_outputs=1)
    tf.summary.text("note", tf.constant([["a", "**b**"]]))
    with tf.Session() as sess:
        serialized = sess.run(tf.summary.merge_all())

    summary = tensorboard_summary.Summary.FromString(serialized)
    assert summary.SerializeToString() == serialized  # no field TensorBoard does not know
    values = {value.tag: data_compat.migrate_value(value) for value in summary.value}
    assert {tag: value.metadata.plugin_data.plugin_name for tag, value in values.items()} == {
        "loss": "scalars", "weights": "histograms", "input/image/0": "images",
        "input/image/1": "images", "voice/audio": "audio", "note": "text"}
    data = {tag: tensor_util.make_ndarray(value.tensor) for tag, value in values.items()}

    assert data["loss"] == 0.25
    left, right, count = data["weights"].T  # buckets from min to max, empty ones dropped
    assert (left[0], right[-1], count.tolist()) == (-3.0, 2.0, [1.0, 0.0, 1.0, 0.0, 2.0])
    for i in range(2):
        width, height, png = data[f"input/image/{i}"]
        assert (width, height) == (b"4", b"3")
        np.testing.assert_array_equal(np.asarray(Image.open(io.BytesIO(png))), pixels[i])
    with wave.open(io.BytesIO(data["voice/audio"][0, 0])) as clip:
        assert (clip.getframerate(), clip.getnchannels(), clip.getsampwidth(),
                clip.getnframes()) == (8000, 2, 2, 64)
        samples = np.frombuffer(clip.readframes(64), "<i2").reshape(64, 2)
    np.testing.assert_array_equal(samples, np.minimum(sound[0] * 32768, 32767))
    assert "<strong>b</strong>" in text_plugin.text_array_to_html(data["note"], True)
