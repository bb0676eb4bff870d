"""tf.summary's ops as TensorBoard reads them: what a session serializes is parsed with
TensorBoard's own protos and migrated by its data_compat, and loaded from the event files
a FileWriter writes by its EventAccumulator; images and audio are decoded by Pillow and
the standard library's wave, not by dtfnb. (The differential tier compares every op's
output with TensorFlow's.)"""

import io
import wave

import numpy as np
import pytest

import dtfnb as tf

tensorboard_summary = pytest.importorskip("tensorboard.compat.proto.summary_pb2")
from PIL import Image  # noqa: E402 - after the skip
from tensorboard import data_compat  # noqa: E402
from tensorboard.backend.event_processing import event_accumulator  # noqa: E402
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


def test_summaries_a_file_writer_wrote_load_in_tensorboard_at_their_steps(tmp_path):
    x = tf.placeholder(tf.float32, [4], name="x")
    tf.summary.histogram("weights", x)
    tf.summary.image("digits", tf.reshape(x, [1, 2, 2, 1]), max_outputs=1)
    tf.summary.audio("tone", tf.reshape(x, [1, 4]) / 4, 8000, max_outputs=1)
    tf.summary.text("note", tf.constant("a *note*"))
    merged = tf.summary.merge_all()
    with tf.Session() as sess, tf.summary.FileWriter(tmp_path) as writer:
        for step in range(3):
            writer.add_summary(sess.run(merged, {x: [step, 1, 2, 3]}), global_step=step * 10)

    everything = {kind: 0 for kind in (event_accumulator.HISTOGRAMS, event_accumulator.IMAGES,
                                       event_accumulator.AUDIO, event_accumulator.TENSORS)}
    loaded = event_accumulator.EventAccumulator(str(tmp_path), size_guidance=everything)
    loaded.Reload()
    tags = loaded.Tags()
    assert (tags["histograms"], tags["images"], tags["audio"], tags["tensors"]) == (
        ["weights"], ["digits/image"], ["tone/audio"], ["note"])
    steps = [0, 10, 20]
    assert [(h.step, h.histogram_value.num, h.histogram_value.min, h.histogram_value.max)
            for h in loaded.Histograms("weights")] == [(0, 4, 0, 3), (10, 4, 1, 3), (20, 4, 1, 3)]
    images = loaded.Images("digits/image")
    assert [(i.step, i.width, i.height) for i in images] == [(s, 2, 2) for s in steps]
    last = np.asarray(Image.open(io.BytesIO(images[-1].encoded_image_string)))
    np.testing.assert_array_equal(last, [[170, 85], [170, 255]])  # 255 / 3 per unit
    assert [(a.step, a.sample_rate, a.length_frames, a.content_type)
            for a in loaded.Audio("tone/audio")] == [(s, 8000.0, 4, "audio/wav") for s in steps]
    notes = loaded.Tensors("note")
    assert [(t.step, tensor_util.make_ndarray(t.tensor_proto).item()) for t in notes] == [
        (s, b"a *note*") for s in steps]
