"""What the examples share to run: a cluster to train on and a command line."""

import argparse
import contextlib

from dtfnb.notebook import LocalCluster


def cluster_or_local(cluster, jobs):
    """A context manager that gives `cluster` as it is (it keeps running) or, when it is
    None, a new LocalCluster of `jobs` (`{"ps": 1, "worker": 2}`) stopped on leaving."""
    if cluster is not None:
        return contextlib.nullcontext(cluster)
    return LocalCluster(jobs)


def training_parser(doc, learning_rate):
    """The command line of a data-parallel example: --workers, --steps, --batch-size,
    --learning-rate; its description is the first paragraph of `doc`."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=learning_rate)
    return parser
