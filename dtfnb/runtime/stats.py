"""Step stats: per device, which node ran when, on which thread, producing how many bytes."""

import threading
import time

from dtfnb.protos import config_pb2, tensor_pb2

_DIM = tensor_pb2.TensorShapeProto.Dim


def transfer_label(key):
    """The timeline label of both halves of a transfer (its rendezvous key,
    "src;dst;tensor", or "src;dst;tensor;reader" for a variable's read on another
    device): "<tensor> <src device> -> <dst device>"."""
    src, dst, tensor = key.split(";")[:3]
    return f"{tensor} {src} -> {dst}"


def _allocator(device):
    """The allocator of a device, by TensorFlow's names: "cpu", or "GPU_0_bfc"."""
    kind, _, index = device.rpartition("/device:")[2].partition(":")
    return "cpu" if kind == "CPU" else f"{kind}_{index}_bfc"


class DeviceStats:
    """The nodes one device ran in a traced step: (name, start, end, thread, outputs,
    timeline label or None for the name)."""
    __slots__ = ("device", "records", "_lock")

    def __init__(self, device):
        self.device = device
        self.records = []
        self._lock = threading.Lock()

    def record(self, node_name, start, end, outputs, label=None):
        """Records that node `node_name` ran from `start` to `end` producing `outputs`;
        its timeline shows `label`, or else its name."""
        described = [(getattr(v, "nbytes", 0), getattr(v, "shape", ())) for v in outputs]
        with self._lock:
            self.records.append((node_name, start, end, threading.get_ident(), described,
                                 label))


class StepStatsCollector:
    """Collects what every executor of a step ran; converts to a StepStats proto.

    A run with `RunOptions(trace_level=FULL_TRACE)` gets one; its step stats come
    back in `RunMetadata.step_stats`:

    ```python
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        sess.run(tf.reduce_sum(tf.ones([10])), options=options, run_metadata=metadata)
    for device in metadata.step_stats.dev_stats:
        print(device.device, [node.node_name for node in device.node_stats])
    ```
    """

    def __init__(self):
        self._devices = {}
        self._remote = []   # StepStats protos that other tasks sent back
        self._lock = threading.Lock()
        # perf_counter is monotonic but has no epoch: anchor it to wall-clock time once.
        self._offset_us = time.time() * 1e6 - time.perf_counter() * 1e6

    def device(self, name):
        """The stats of device `name`, asked for as its executor starts the step: they
        begin with that start, as TensorFlow's begin with the graph's _SOURCE node."""
        with self._lock:
            stats = self._devices.get(name)
            if stats is None:
                stats = self._devices[name] = DeviceStats(name)
                now = time.perf_counter()
                stats.record("_SOURCE", now, now, ())
            return stats

    def add_proto(self, step_stats):
        """Adds the StepStats another task sent back for this step."""
        with self._lock:
            self._remote.append(step_stats)

    def to_proto(self, step_stats=None):
        """The StepStats of the step: every device here and those other tasks sent."""
        step_stats = step_stats if step_stats is not None else config_pb2.StepStats()
        for name, stats in sorted(self._devices.items()):
            dev = step_stats.dev_stats.add(device=name)
            for node_name, start, end, thread, outputs, label in stats.records:
                start_us = int(start * 1e6 + self._offset_us)
                duration = max(0, int((end - start) * 1e6))
                node = dev.node_stats.add(
                    node_name=node_name, all_start_micros=start_us, op_start_rel_micros=0,
                    op_end_rel_micros=duration, all_end_rel_micros=duration,
                    timeline_label=label or node_name, thread_id=thread & 0xFFFFFFFF)
                for slot, (size, shape) in enumerate(outputs):
                    description = node.output.add(slot=slot).tensor_description
                    description.allocation_description.requested_bytes = size
                    description.shape.dim.extend(_DIM(size=d) for d in shape)
                allocated = sum(size for size, _ in outputs)
                if allocated:
                    node.memory.add(allocator_name=_allocator(name), total_bytes=allocated,
                                    peak_bytes=allocated)
        for remote in self._remote:
            step_stats.MergeFrom(remote)
        return step_stats


def cost_graph(partitions, step_stats, cost_graph):
    """Fills TensorFlow's CostGraphDef of one step from its partitions ({device: nodes})
    and what its StepStats say each node produced and took (in microseconds)."""
    ran = {(dev.device, stats.node_name): stats
           for dev in step_stats.dev_stats for stats in dev.node_stats}
    placed = [(device, node) for device, nodes in sorted(partitions.items()) for node in nodes]
    ids = {node.name: i for i, (_, node) in enumerate(placed)}
    for device, node in placed:
        cost = cost_graph.node.add(name=node.name, device=device, id=ids[node.name])
        for src, index in node.inputs:
            cost.input_info.add(preceding_node=ids[src], preceding_port=index)
        cost.control_input.extend(ids[name] for name in node.control_inputs if name in ids)
        stats = ran.get((device, node.name))
        if stats is None:
            continue
        cost.compute_cost = stats.op_end_rel_micros - stats.op_start_rel_micros
        for output, dtype in zip(stats.output, node.output_types):
            description = output.tensor_description
            cost.output_info.add(size=description.allocation_description.requested_bytes,
                                 alias_input_port=-1, shape=description.shape,
                                 dtype=dtype.as_datatype_enum)
