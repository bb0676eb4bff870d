"""One colour per device, decided by the device's name alone, so the panel, the widgets,
the timelines and the reprs can never disagree: a colour does not depend on which other
devices a view happens to show. Every view reads it from here (the panel and the cell
renderer get it in the data the kernel sends them).

A job has a family of colours and its tasks take them in turn: ps tasks are blues and
teals, workers warm colours, the chief green, an in-process session's devices blue (grey
means stopped). A second device of a task (CPU:1, GPU:0) is a lighter shade of its task's
colour.
"""

import re

from dtfnb.base.device_spec import DeviceSpec

_FAMILIES = {
    "ps": ("#2f5c85", "#76b7b2", "#5a8fc2", "#499894", "#86bcb6", "#1f3f5c"),
    "worker": ("#f28e2b", "#e15759", "#b07aa1", "#edc948", "#9c755f", "#ff9da7",
               "#d37295", "#b6992d"),
    "chief": ("#59a14f", "#8cd17d"),
    "master": ("#59a14f", "#8cd17d"),
    "localhost": ("#4e79a7", "#a0cbe8"),
}
_OTHER = ("#17becf", "#bcbd22", "#7f7f7f", "#8c564b")
_JOB_ORDER = ("chief", "master", "ps", "worker", "evaluator", "localhost")


def _parts(device):
    spec = DeviceSpec.from_string(device or "")
    return (spec.job or "localhost", spec.task or 0, spec.device_type or "CPU",
            spec.device_index or 0)


def _lighter(hex_colour, amount):
    """`hex_colour` mixed with white: `amount` 0 keeps it, 1 is white."""
    rgb = [int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(c + (255 - c) * amount):02x}" for c in rgb)


def colour(device):
    """The colour of `device` (a full name, "/job:ps/replica:0/task:1/device:CPU:0", or a
    task, "/job:ps/replica:0/task:1", which has its CPU:0's colour)."""
    job, task, kind, index = _parts(device)
    family = _FAMILIES.get(job)
    if family is None:   # a job of the user's own naming: stable across runs and views
        family = _OTHER[sum(job.encode()) % len(_OTHER)]
        family = (family,)
    base = family[task % len(family)]
    shade = index + (1 if kind.upper() != "CPU" else 0)
    return _lighter(base, min(0.15 * shade, 0.6))


def sort_key(device):
    """Devices in palette order: chief, ps, worker, ..., then by task and device."""
    job, task, kind, index = _parts(device)
    rank = _JOB_ORDER.index(job) if job in _JOB_ORDER else len(_JOB_ORDER)
    return rank, job, task, kind.upper() != "CPU", kind, index


def short(device):
    """"/job:ps/replica:0/task:1/device:CPU:0" -> "ps:1 CPU:0"; a local device keeps its
    kind only ("CPU:0")."""
    job = re.search(r"/job:([^/]+)", device or "")
    task = re.search(r"/task:(\d+)", device or "")
    kind = re.search(r"/device:([^/]+)", device or "")
    where = f"{job.group(1)}:{task.group(1) if task else 0}" if job and job.group(1) != \
        "localhost" else ""
    parts = [p for p in (where, kind.group(1) if kind else "") if p]
    return " ".join(parts) or device
