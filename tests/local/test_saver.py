"""tf.train.Saver and checkpoints: save/restore locally and on a server target; the state
file; atomicity; corruption; max_to_keep; meta graphs."""

import os
import struct
import time
import zlib

import ml_dtypes
import numpy as np
import pytest

import dtfnb as tf
from tests.helpers import checkpoint_index


def model():
    """Variables of several dtypes and shapes; returns them and their values."""
    values = {"w": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.float64(0.5),
              "count": np.int64(7), "label": b"caf\xc3\xa9", "flags": np.array([True, False]),
              "half": np.array([1.5, -2.25], dtype=ml_dtypes.bfloat16)}
    variables = {name: tf.Variable(value, name=name) for name, value in values.items()}
    return variables, values


def assert_values(sess, variables, values):
    for name, var in variables.items():
        got = sess.run(var)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(values[name]), err_msg=name)


# -- saving and restoring --------------------------------------------------------------

def test_save_writes_prefix_files_and_the_state_file_as_tensorflow_does(tmp_path):
    variables, values = model()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        prefix = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=1000)
    assert prefix == str(tmp_path / "model.ckpt-1000")
    assert sorted(os.listdir(tmp_path)) == [
        "checkpoint", "model.ckpt-1000.data-00000-of-00001", "model.ckpt-1000.index",
        "model.ckpt-1000.meta"]
    assert (tmp_path / "checkpoint").read_text() == (
        f'model_checkpoint_path: "{prefix}"\nall_model_checkpoint_paths: "{prefix}"\n')
    index = checkpoint_index(prefix)
    assert sorted(index.entries) == sorted(values)
    assert index.num_shards == 1
    assert [d.size for d in index.entries["w"].shape.dim] == [2, 3]
    assert tf.train.latest_checkpoint(str(tmp_path)) == prefix
    assert tf.train.checkpoint_exists(prefix)
    saver_def = saver.as_saver_def()
    assert (saver_def.filename_tensor_name, saver_def.restore_op_name, saver_def.max_to_keep) \
        == ("save/Const:0", "save/restore_all", 5)


def test_restore_brings_back_every_dtype_in_a_new_session(tmp_path):
    variables, values = model()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "model.ckpt"))
        sess.run(variables["w"].assign(np.zeros((2, 3), np.float32)))
        saver.restore(sess, path)
        assert_values(sess, variables, values)
    with tf.Session() as sess:  # a fresh session: nothing initialized
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess.run(variables["w"])
        saver.restore(sess, tf.train.latest_checkpoint(str(tmp_path)))
        assert_values(sess, variables, values)
        assert sess.run(tf.report_uninitialized_variables()).size == 0


def test_var_list_as_a_dict_names_the_tensors_and_maps_them_to_other_variables(tmp_path):
    old = tf.Variable([1.0, 2.0], name="old_name")
    step = tf.Variable(3, name="step")
    saver = tf.train.Saver({"weights": old, "global": step})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "m"))
    assert sorted(checkpoint_index(path).entries) == ["global", "weights"]
    with tf.Graph().as_default():
        new = tf.Variable([0.0, 0.0], name="new_name")
        with tf.Session() as sess:
            tf.train.Saver({"weights": new}).restore(sess, path)
            np.testing.assert_array_equal(sess.run(new), [1.0, 2.0])


def test_global_step_may_be_a_tensor_and_save_can_skip_state_and_meta(tmp_path):
    tf.Variable(1.0, name="v")
    step = tf.train.get_or_create_global_step()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(step.assign(42))
        path = saver.save(sess, str(tmp_path / "m"), global_step=step, write_meta_graph=False,
                          write_state=False)
    assert path == str(tmp_path / "m-42")
    assert sorted(os.listdir(tmp_path)) == ["m-42.data-00000-of-00001", "m-42.index"]
    assert tf.train.latest_checkpoint(str(tmp_path)) is None


def test_saving_twice_to_one_prefix_replaces_it(tmp_path):
    v = tf.Variable(1.0, name="v")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(v.initializer)
        path = saver.save(sess, str(tmp_path / "m"))
        sess.run(v.assign(2.0))
        assert saver.save(sess, str(tmp_path / "m")) == path
        sess.run(v.assign(0.0))
        saver.restore(sess, path)
        assert sess.run(v) == 2.0
    assert saver.last_checkpoints == [path]


def test_sharded_saver_writes_one_data_file_per_device(tmp_path):
    with tf.device("/cpu:0"):
        a = tf.Variable(1.0, name="a")
    with tf.device("/cpu:1"):
        b = tf.Variable([2.0, 3.0], name="b")
        c = tf.Variable(4, name="c")
    saver = tf.train.Saver(sharded=True)
    config = tf.ConfigProto(device_count={"CPU": 2})
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "m"), global_step=5)
        sess.run([a.assign(0.0), c.assign(0)])
        saver.restore(sess, path)
        assert sess.run([a, c]) == [1.0, 4]
    assert {n: e.shard for n, e in checkpoint_index(path).entries.items()} == \
        {"a": 0, "b": 1, "c": 1}
    assert os.path.exists(path + ".data-00000-of-00002")
    assert os.path.exists(path + ".data-00001-of-00002")
    with tf.Session(config=config) as sess:  # an unsharded saver reads every shard
        tf.train.Saver().restore(sess, path)
        np.testing.assert_array_equal(sess.run(b), [2.0, 3.0])


def test_variables_on_gpus_are_saved_by_cpu_kernels(tmp_path):
    with tf.device("/gpu:0"):
        a = tf.Variable([1.0, 2.0], name="a")
    with tf.device("/gpu:1"):
        b = tf.Variable(3.0, name="b")
    saver = tf.train.Saver(sharded=True)
    with tf.Session(config=tf.ConfigProto(emulated_gpus=2)) as sess:
        sess.run(tf.global_variables_initializer())
        metadata = tf.RunMetadata()
        sess.run(saver.saver_def.save_tensor_name,
                 {saver.saver_def.filename_tensor_name: str(tmp_path / "m")},
                 options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                 run_metadata=metadata)
        sess.run([a.assign([0.0, 0.0]), b.assign(0.0)])
        saver.restore(sess, str(tmp_path / "m"))
        np.testing.assert_array_equal(sess.run(a), [1.0, 2.0])
        assert sess.run(b) == 3.0
    ran = {n.node_name: dev.device for dev in metadata.step_stats.dev_stats
           for n in dev.node_stats}
    assert ran["save/SaveShard"].endswith("/device:CPU:0")
    assert ran["save/SaveShard_1"].endswith("/device:CPU:0")


def test_a_partitioned_variable_is_one_entry_of_slices_written_by_its_parts_devices(tmp_path):
    value = np.arange(40, dtype=np.float32).reshape(10, 4)
    with tf.device("/cpu:0"):
        tf.Variable([1, 2], name="plain")
    devices = iter(["/cpu:1", "/cpu:0", "/cpu:1"])
    with tf.device(lambda op: next(devices) if op.type == "VariableV2" else op.device):
        w = tf.get_variable("w", initializer=tf.constant(value),
                            partitioner=tf.fixed_size_partitioner(3))
    saver = tf.train.Saver(sharded=True)
    config = tf.ConfigProto(device_count={"CPU": 2})
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "m"))
    index = checkpoint_index(path)
    assert sorted(index.entries) == ["plain", "w"]
    entry = index.entries["w"]
    assert [d.size for d in entry.shape.dim] == [10, 4]
    # parts 0 and 2 lie on cpu:1, so in the shard after plain's; each slice where it is
    assert sorted((list(s.start), list(s.size), s.shard) for s in entry.slices) == [
        ([0, 0], [4, 4], 1), ([4, 0], [3, 4], 0), ([7, 0], [3, 4], 1)]
    assert not index.entries["plain"].slices

    tf.reset_default_graph()  # three parts become two along the other axis, and one
    w = tf.get_variable("w", [10, 4], partitioner=tf.fixed_size_partitioner(2, axis=1))
    whole = tf.get_variable("whole", [10, 4])
    saver = tf.train.Saver({"w": w, "plain": tf.Variable([0, 0], name="plain")})
    restore_whole = tf.train.Saver({"w": whole})
    with tf.Session() as sess:
        saver.restore(sess, path)
        restore_whole.restore(sess, path)
        np.testing.assert_array_equal(sess.run(w.as_tensor()), value)
        np.testing.assert_array_equal(sess.run(whole), value)


def test_a_slice_not_saved_cannot_be_restored(tmp_path):
    w = tf.get_variable("w", [4, 3], partitioner=tf.fixed_size_partitioner(2))
    saver = tf.train.Saver(list(w)[:1])  # only rows 0..1
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "m"))
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Does not have sufficient slices for partitioned tensor w "
                                 "to restore in slice_spec: 2,2:0,3"):
            tf.train.Saver([w]).restore(sess, path)


def test_a_flipped_byte_in_a_slice_raises_data_loss(tmp_path):
    tf.get_variable("w", [4, 3], partitioner=tf.fixed_size_partitioner(2))
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "m"))
        with open(path + ".data-00000-of-00001", "r+b") as f:
            f.seek(30)  # in the second slice
            byte = f.read(1)
            f.seek(30)
            f.write(bytes([byte[0] ^ 0xFF]))
        with pytest.raises(tf.errors.DataLossError, match="Checksum mismatch for tensor w"):
            saver.restore(sess, path)


def test_save_and_restore_on_an_in_process_server_target(cluster, tmp_path):
    server = cluster({"local": 1})["local", 0]
    v = tf.Variable([[1, 2], [3, 4]], name="v")
    saver = tf.train.Saver()
    with tf.Session(server.target) as sess:
        sess.run(v.initializer)
        path = saver.save(sess, str(tmp_path / "m"), global_step=0)
        sess.run(v.assign([[0, 0], [0, 0]]))
        saver.restore(sess, path)
        np.testing.assert_array_equal(sess.run(v), [[1, 2], [3, 4]])


# -- errors ----------------------------------------------------------------------------

def test_restoring_a_path_that_is_no_checkpoint_raises_value_error(tmp_path):
    tf.Variable(1.0, name="v")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        with pytest.raises(ValueError, match="The passed save_path is not a valid checkpoint: "
                           + str(tmp_path / "nothing")):
            saver.restore(sess, str(tmp_path / "nothing"))
        with pytest.raises(ValueError, match="Can't load save_path when it is None."):
            saver.restore(sess, None)


def test_restoring_a_variable_missing_from_the_checkpoint_raises_not_found(tmp_path):
    v = tf.Variable(1.0, name="v")
    with tf.Session() as sess:
        sess.run(v.initializer)
        path = tf.train.Saver([v]).save(sess, str(tmp_path / "m"))
    tf.Variable(2.0, name="other")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.NotFoundError) as raised:
            tf.train.Saver().restore(sess, path)
    assert raised.value.message.startswith(
        "Restoring from checkpoint failed. This is most likely due to a Variable name or other "
        "graph key that is missing from the checkpoint.")
    assert "Key other not found in checkpoint" in raised.value.message


def test_restoring_into_another_dtype_or_shape_raises_invalid_argument(tmp_path):
    v = tf.Variable([1.0, 2.0], name="v")
    with tf.Session() as sess:
        sess.run(v.initializer)
        path = tf.train.Saver().save(sess, str(tmp_path / "m"))
    with tf.Graph().as_default():
        w = tf.Variable([1, 2], name="v")
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                                 match="expected dtype int32 does not equal "
                                                       "original dtype float"):
            tf.train.Saver([w]).restore(sess, path)
    with tf.Graph().as_default():
        w = tf.Variable([1.0, 2.0, 3.0], name="v")
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                                 match="shapes of both tensors to match"):
            tf.train.Saver([w]).restore(sess, path)


@pytest.fixture
def saved(tmp_path):
    """A session, its saver and variable, and one checkpoint of v = [1 .. 100]."""
    v = tf.Variable(np.arange(1.0, 101.0), name="v")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(v.initializer)
        yield sess, saver, v, saver.save(sess, str(tmp_path / "m"), global_step=1)


def test_a_flipped_byte_in_the_data_raises_data_loss_naming_the_file(saved):
    sess, saver, _, path = saved
    data = path + ".data-00000-of-00001"
    with open(data, "r+b") as f:
        f.seek(100)
        byte = f.read(1)
        f.seek(100)
        f.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(tf.errors.DataLossError, match=f"Checksum mismatch.*{data}"):
        saver.restore(sess, path)


def test_a_truncated_data_file_raises_data_loss(saved):
    sess, saver, _, path = saved
    data = path + ".data-00000-of-00001"
    os.truncate(data, os.path.getsize(data) // 2)
    with pytest.raises(tf.errors.DataLossError, match=f"{data} is truncated"):
        saver.restore(sess, path)


def test_a_truncated_or_corrupt_index_raises_data_loss(saved):
    sess, saver, _, path = saved
    index = path + ".index"
    raw = open(index, "rb").read()
    open(index, "wb").write(raw[:-3])
    with pytest.raises(tf.errors.DataLossError, match=f"{index} is truncated"):
        saver.restore(sess, path)
    open(index, "wb").write(bytes([raw[0] ^ 1]) + raw[1:])
    with pytest.raises(tf.errors.DataLossError, match=f"Checksum mismatch.*{index}"):
        saver.restore(sess, path)


def test_an_index_of_format_version_1_still_restores_and_a_newer_one_is_refused(saved):
    sess, saver, v, path = saved

    def rewrite_index(version):
        index = checkpoint_index(path)
        index.version = version
        body = index.SerializeToString(deterministic=True)
        with open(path + ".index", "wb") as f:
            f.write(body + struct.pack("<QI8s", len(body), zlib.crc32(body), b"dtfnbck1"))

    rewrite_index(1)  # written before slices existed
    sess.run(v.assign(np.zeros(100)))
    saver.restore(sess, path)
    np.testing.assert_array_equal(sess.run(v), np.arange(1.0, 101.0))
    rewrite_index(3)
    with pytest.raises(tf.errors.DataLossError, match="format version 3; this dtfnb reads "
                                                      "versions 1 and 2"):
        saver.restore(sess, path)


def test_saving_into_a_missing_directory_raises_value_error(tmp_path):
    v = tf.Variable(1.0, name="v")
    with tf.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(ValueError, match="Parent directory of .* doesn't exist, can't save"):
            tf.train.Saver().save(sess, str(tmp_path / "missing" / "m"))


def test_no_variables_raises_unless_allow_empty(tmp_path):
    with pytest.raises(ValueError, match="No variables to save"):
        tf.train.Saver()
    saver = tf.train.Saver(allow_empty=True)
    with tf.Session() as sess:
        assert saver.save(sess, str(tmp_path / "m")) is None
    assert os.listdir(tmp_path) == []


def test_bad_var_lists_are_refused():
    v = tf.Variable(1.0, name="v")
    with pytest.raises(TypeError, match="Variable to save is not a Variable"):
        tf.train.Saver([v, tf.constant(1.0)])
    with pytest.raises(ValueError, match="At least two variables have the same name: v"):
        tf.train.Saver([v, v])


def test_defer_build(tmp_path):
    v = tf.Variable(1.0, name="v")
    saver = tf.train.Saver(defer_build=True)
    with tf.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(RuntimeError, match="build"):
            saver.save(sess, str(tmp_path / "m"))
        saver.build()
        assert saver.save(sess, str(tmp_path / "m")) == str(tmp_path / "m")


# -- atomicity -------------------------------------------------------------------------

def test_a_save_cut_short_leaves_the_state_on_the_last_whole_checkpoint(tmp_path):
    """Shard 1 fails (an uninitialized variable), whatever shard 0 wrote: no index, so no
    checkpoint, and the state file still names the previous one."""
    with tf.device("/cpu:0"):
        a = tf.Variable(1.0, name="a")
    with tf.device("/cpu:1"):
        b = tf.Variable(2.0, name="b")
    saver = tf.train.Saver(sharded=True)
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        sess.run([a.initializer, b.initializer])
        first = saver.save(sess, str(tmp_path / "m"), global_step=1)
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        sess.run(a.initializer)
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value b"):
            saver.save(sess, str(tmp_path / "m"), global_step=2)
    assert not tf.train.checkpoint_exists(str(tmp_path / "m-2"))
    assert tf.train.latest_checkpoint(str(tmp_path)) == first
    assert tf.train.get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths == [first]


def test_latest_checkpoint_never_picks_a_torn_checkpoint(tmp_path):
    v = tf.Variable(1.0, name="v")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(v.initializer)
        paths = [saver.save(sess, str(tmp_path / "m"), global_step=i) for i in range(3)]
    os.remove(paths[2] + ".data-00000-of-00001")  # data gone
    assert tf.train.latest_checkpoint(str(tmp_path)) == paths[1]
    os.remove(paths[1] + ".index")  # index gone
    assert tf.train.latest_checkpoint(str(tmp_path)) == paths[0]
    assert not tf.train.checkpoint_exists(paths[1])
    os.remove(paths[0] + ".index")
    assert tf.train.latest_checkpoint(str(tmp_path)) is None


def test_no_temporary_files_are_left_behind(saved, tmp_path):
    assert not [name for name in os.listdir(tmp_path) if ".tmp" in name]


# -- keeping checkpoints ---------------------------------------------------------------

def test_max_to_keep_deletes_the_oldest_checkpoints(tmp_path):
    v = tf.Variable(1.0, name="v")
    saver = tf.train.Saver(max_to_keep=2)
    with tf.Session() as sess:
        sess.run(v.initializer)
        paths = [saver.save(sess, str(tmp_path / "m"), global_step=i) for i in range(4)]
    assert saver.last_checkpoints == paths[2:]
    assert [tf.train.checkpoint_exists(p) for p in paths] == [False, False, True, True]
    assert not os.path.exists(paths[0] + ".meta")
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == paths[3]
    assert list(state.all_model_checkpoint_paths) == paths[2:]


def test_max_to_keep_none_keeps_every_checkpoint(tmp_path):
    v = tf.Variable(1.0, name="v")
    saver = tf.train.Saver(max_to_keep=None)
    with tf.Session() as sess:
        sess.run(v.initializer)
        paths = [saver.save(sess, str(tmp_path / "m"), global_step=i) for i in range(3)]
    assert all(tf.train.checkpoint_exists(p) for p in paths)
    assert saver.last_checkpoints == []


def test_keep_checkpoint_every_n_hours_keeps_one_per_period(tmp_path):
    v = tf.Variable(1.0, name="v")
    saver = tf.train.Saver(max_to_keep=1, keep_checkpoint_every_n_hours=1.0)
    hour = 3600.0
    with tf.Session() as sess:
        sess.run(v.initializer)
        first = saver.save(sess, str(tmp_path / "m"), global_step=0)
        # As if it was saved 1.5 hours after the saver was built: the first of a new period.
        saver.set_last_checkpoints_with_time([(first, time.time() + 1.5 * hour)])
        paths = [first] + [saver.save(sess, str(tmp_path / "m"), global_step=i)
                           for i in (1, 2)]
    assert [tf.train.checkpoint_exists(p) for p in paths] == [True, False, True]
    assert saver.last_checkpoints == paths[2:]


def test_recover_last_checkpoints_lets_a_new_saver_delete_old_ones(tmp_path):
    v = tf.Variable(1.0, name="v")
    with tf.Session() as sess:
        sess.run(v.initializer)
        first = tf.train.Saver(max_to_keep=2)
        paths = [first.save(sess, str(tmp_path / "m"), global_step=i) for i in range(2)]
        again = tf.train.Saver(max_to_keep=2)
        again.recover_last_checkpoints(
            tf.train.get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths)
        assert again.last_checkpoints == paths
        again.save(sess, str(tmp_path / "m"), global_step=2)
    assert not tf.train.checkpoint_exists(paths[0])
    assert tf.train.checkpoint_exists(paths[1])


def test_update_and_get_checkpoint_state_with_relative_paths(tmp_path):
    tf.train.update_checkpoint_state(str(tmp_path), "m-2", ["m-1"], latest_filename="latest")
    assert (tmp_path / "latest").read_text() == (
        'model_checkpoint_path: "m-2"\n'
        'all_model_checkpoint_paths: "m-1"\nall_model_checkpoint_paths: "m-2"\n')
    state = tf.train.get_checkpoint_state(str(tmp_path), "latest")
    assert state.model_checkpoint_path == str(tmp_path / "m-2")
    assert list(state.all_model_checkpoint_paths) == [str(tmp_path / "m-1"),
                                                      str(tmp_path / "m-2")]
    assert tf.train.get_checkpoint_state(str(tmp_path)) is None
    assert tf.train.latest_checkpoint(str(tmp_path), "latest") is None  # no files


def test_save_relative_paths(tmp_path):
    v = tf.Variable(1.0, name="v")
    saver = tf.train.Saver(save_relative_paths=True)
    with tf.Session() as sess:
        sess.run(v.initializer)
        path = saver.save(sess, str(tmp_path / "m"), global_step=3)
    assert (tmp_path / "checkpoint").read_text().startswith('model_checkpoint_path: "m-3"\n')
    assert tf.train.latest_checkpoint(str(tmp_path)) == path


# -- meta graphs -----------------------------------------------------------------------

def test_import_meta_graph_returns_a_saver_that_restores_the_graph(tmp_path):
    with tf.device("/cpu:0"):
        x = tf.Variable([1.0, 2.0], name="x")
    tf.identity(x * 3.0, name="y")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(x.initializer)
        path = saver.save(sess, str(tmp_path / "m"), global_step=9)
    saver.export_meta_graph(str(tmp_path / "text.meta"), as_text=True)
    text = str(tmp_path / "text.meta")
    for meta, clear_devices, scope in ((path + ".meta", False, ""), (text, True, "copy/")):
        with tf.Graph().as_default() as graph:
            imported = tf.train.import_meta_graph(meta, clear_devices=clear_devices,
                                                  import_scope=scope[:-1] or None)
            assert graph.get_operation_by_name(scope + "x").device == \
                ("" if clear_devices else "/device:CPU:0")
            with tf.Session() as sess:
                imported.restore(sess, path)
                np.testing.assert_array_equal(sess.run(graph.get_tensor_by_name(scope + "y:0")),
                                              [3.0, 6.0])


def test_a_model_restores_its_moving_averages_in_place_of_its_weights(tmp_path):
    """The usual evaluation with tf.train.ExponentialMovingAverage: train and average,
    save, then restore the shadows' values into the weights of a fresh graph."""
    prefix = str(tmp_path / "model")
    with tf.Graph().as_default():
        w = tf.Variable([0.0, 0.0], name="w")
        ema = tf.train.ExponentialMovingAverage(0.5)
        with tf.control_dependencies([tf.assign_add(w, [1.0, 2.0])]):
            train = ema.apply([w])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(train)
            averaged = sess.run(ema.average(w))
            tf.train.Saver().save(sess, prefix)
    with tf.Graph().as_default():
        w = tf.Variable([9.0, 9.0], name="w")
        saver = tf.train.Saver(tf.train.ExponentialMovingAverage(0.5).variables_to_restore())
        with tf.Session() as sess:
            saver.restore(sess, prefix)
            restored = sess.run(w)
    # from [0, 0], halfway toward [1, 2], then [2, 4], then [3, 6]
    assert averaged.tolist() == [2.125, 4.25] == restored.tolist()
