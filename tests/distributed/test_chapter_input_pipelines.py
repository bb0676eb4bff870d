"""The chapter's queue, reader, timeout and Data API cells, run verbatim after `import dtfnb as
tf`, printing what the chapter (and TensorFlow) print; and a queue on a ps task shared by a
producer process and a consumer process."""

import contextlib
import io
import os
import subprocess
import sys
import textwrap

import numpy as np

import dtfnb as tf
from tests.helpers import ROOT, Cluster, cluster_dict


def run_cell(code, **names):
    """Runs a notebook cell in a fresh default graph; returns what it printed."""
    tf.reset_default_graph()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(textwrap.dedent(code), {"tf": tf, "np": np, **names})
    return out.getvalue()


def test_timeout_cell():
    out = run_cell("""
        q = tf.FIFOQueue(capacity=10, dtypes=[tf.float32], shapes=[()])
        v = tf.placeholder(tf.float32)
        enqueue = q.enqueue([v])
        dequeue = q.dequeue()
        output = dequeue + 1

        config = tf.ConfigProto()
        config.operation_timeout_in_ms = 1000

        with tf.Session(config=config) as sess:
            sess.run(enqueue, feed_dict={v: 1.0})
            sess.run(enqueue, feed_dict={v: 2.0})
            sess.run(enqueue, feed_dict={v: 3.0})
            print(sess.run(output))
            print(sess.run(output, feed_dict={dequeue: 5}))
            print(sess.run(output))
            print(sess.run(output))
            try:
                print(sess.run(output))
            except tf.errors.DeadlineExceededError as ex:
                print("Timed out while dequeuing")
    """)
    assert out == "2.0\n6.0\n3.0\n4.0\nTimed out while dequeuing\n"


def test_queue_of_tuples_and_padding_cells():
    out = run_cell("""
        q = tf.FIFOQueue(capacity=10, dtypes=[tf.int32, tf.float32], shapes=[[], [3, 2]])
        a = tf.placeholder(tf.int32, shape=())
        b = tf.placeholder(tf.float32, shape=(3, 2))
        enqueue = q.enqueue((a, b))
        with tf.Session() as sess:
            sess.run(enqueue, feed_dict={a: 10, b: [[1., 2.], [3., 4.], [5., 6.]]})
            sess.run(enqueue, feed_dict={a: 11, b: [[2., 5.], [3., 7.], [1., 2.]]})
            sess.run(enqueue, feed_dict={a: 12, b: [[4., 4.], [8., 9.], [8., 6.]]})
            dequeue_as, dequeue_bs = q.dequeue_many(2)
            a_val, b_val = sess.run([dequeue_as, dequeue_bs])
            print(a_val)
            print(b_val)

        q = tf.PaddingFIFOQueue(capacity=50, dtypes=[tf.float32], shapes=[(None, None)])
        v = tf.placeholder(tf.float32, shape=(None, None))
        enqueue = q.enqueue([v])
        with tf.Session() as sess:
            sess.run(enqueue, feed_dict={v: [[1., 2.], [3., 4.], [5., 6.]]})       # 3x2
            sess.run(enqueue, feed_dict={v: [[1.]]})                               # 1x1
            sess.run(enqueue, feed_dict={v: [[7., 8., 9., 5.], [6., 7., 8., 9.]]}) # 2x4
            print(sess.run(q.dequeue_many(3)).shape)
    """)
    assert out.startswith("[10 11]\n[[[1. 2.]\n  [3. 4.]\n  [5. 6.]]\n\n [[2. 5.]\n")
    assert out.endswith("(3, 3, 4)\n")


def test_reader_cell_with_decode_csv(tmp_path):
    csv = tmp_path / "my_test.csv"
    # The book's file has whitespace-only fields, which TensorFlow 2.21 rejects (see
    # TF_SEMANTICS): here the missing field is empty.
    csv.write_text("x1,x2,target\n1.,,0\n4.,5.,1\n7.,8.,0\n")
    out = run_cell("""
        filename_queue = tf.FIFOQueue(capacity=10, dtypes=[tf.string], shapes=[()])
        filename = tf.placeholder(tf.string)
        enqueue_filename = filename_queue.enqueue([filename])
        close_filename_queue = filename_queue.close()

        reader = tf.TextLineReader(skip_header_lines=1)
        key, value = reader.read(filename_queue)

        x1, x2, target = tf.decode_csv(value, record_defaults=[[-1.], [-1.], [-1]])
        features = tf.stack([x1, x2])

        instance_queue = tf.RandomShuffleQueue(
            capacity=10, min_after_dequeue=2,
            dtypes=[tf.float32, tf.int32], shapes=[[2],[]],
            name="instance_q", shared_name="shared_instance_q")
        enqueue_instance = instance_queue.enqueue([features, target])
        close_instance_queue = instance_queue.close()

        minibatch_instances, minibatch_targets = instance_queue.dequeue_up_to(2)

        with tf.Session() as sess:
            sess.run(enqueue_filename, feed_dict={filename: path})
            sess.run(close_filename_queue)
            try:
                while True:
                    sess.run(enqueue_instance)
            except tf.errors.OutOfRangeError as ex:
                print("No more files to read")
            sess.run(close_instance_queue)
            try:
                while True:
                    print(sess.run([minibatch_instances, minibatch_targets]))
            except tf.errors.OutOfRangeError as ex:
                print("No more training instances")
    """, path=str(csv))
    lines = out.splitlines()
    assert lines[0] == "No more files to read" and lines[-1] == "No more training instances"
    batches = "".join(lines[1:-1]).replace(" ", "")
    assert batches.count("dtype=int32)]") == 2  # 3 instances, by up to 2
    assert all(row in batches for row in ("[1.,-1.]", "[4.,5.]", "[7.,8.]"))


def test_data_api_cells(tmp_path):
    out = run_cell("""
        dataset = tf.data.Dataset.from_tensor_slices(np.arange(10))
        dataset = dataset.repeat(3).batch(7)
        iterator = dataset.make_one_shot_iterator()
        next_element = iterator.get_next()
        with tf.Session() as sess:
            try:
                while True:
                    print(next_element.eval())
            except tf.errors.OutOfRangeError:
                print("Done")

        dataset = tf.data.Dataset.from_tensor_slices(np.arange(10))
        dataset = dataset.repeat(3).batch(7)
        dataset = dataset.interleave(
            lambda v: tf.data.Dataset.from_tensor_slices(v),
            cycle_length=3,
            block_length=2)
        iterator = dataset.make_one_shot_iterator()
        next_element = iterator.get_next()
        with tf.Session() as sess:
            try:
                while True:
                    print(next_element.eval(), end=",")
            except tf.errors.OutOfRangeError:
                print("Done")
    """)
    assert out.splitlines()[:1] == ["[0 1 2 3 4 5 6]"]
    assert out.splitlines()[-1] == \
        "0,1,7,8,4,5,2,3,9,0,6,7,4,5,1,2,8,9,6,3,0,1,2,8,9,3,4,5,6,7,Done"


PRODUCER = textwrap.dedent("""
    import sys
    import dtfnb as tf

    with tf.device("/job:ps/task:0"):
        q = tf.FIFOQueue(capacity=50, dtypes=[tf.int64], shapes=[()], shared_name="shared_q")
    values = tf.placeholder(tf.int64, shape=[None])
    enqueue_many = q.enqueue_many([values])
    close = q.close()
    with tf.Session(sys.argv[1]) as sess:
        for start in range(0, 200, 20):
            sess.run(enqueue_many, feed_dict={values: list(range(start, start + 20))})
        sess.run(close)
""")

CONSUMER = textwrap.dedent("""
    import sys
    import dtfnb as tf

    with tf.device("/job:ps/task:0"):
        q = tf.FIFOQueue(capacity=50, dtypes=[tf.int64], shapes=[()], shared_name="shared_q")
    batch = q.dequeue_up_to(32)
    total = []
    with tf.Session(sys.argv[1]) as sess:
        try:
            while True:
                total.extend(sess.run(batch).tolist())
        except tf.errors.OutOfRangeError:
            pass
    print(len(total), sum(total), total == sorted(total))
""")


def test_a_producer_and_a_consumer_process_share_a_queue_on_ps(tmp_path):
    cluster = cluster_dict(ps=1, worker=2)
    producer, consumer = tmp_path / "producer.py", tmp_path / "consumer.py"
    producer.write_text(PRODUCER)
    consumer.write_text(CONSUMER)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with Cluster(cluster, processes=True):
        targets = ["grpc://" + address for address in cluster["worker"]]
        consuming = subprocess.Popen([sys.executable, str(consumer), targets[1]],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=env)
        produced = subprocess.run([sys.executable, str(producer), targets[0]],
                                  capture_output=True, text=True, env=env, timeout=60)
        out, err = consuming.communicate(timeout=60)
    assert produced.returncode == 0, produced.stderr
    assert consuming.returncode == 0, err
    assert out.split() == ["200", str(sum(range(200))), "True"]
