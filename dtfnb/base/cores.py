"""The CPUs this process may run on. TensorFlow sizes its thread pools by its schedulable
CPUs (sched_getaffinity on Linux), not by the machine's: a process kept to some cores
(taskset, a container's cpuset, Slurm's binding) sizes its threads to those."""

import os


def usable_cpus():
    """The numbers of the CPUs this process may run on."""
    try:
        return os.sched_getaffinity(0)
    except AttributeError:   # not Linux
        return set(range(os.cpu_count() or 1))


def usable_cores():
    """How many CPUs this process may run on."""
    return len(usable_cpus())
