"""Runs tutorials and saves them with their outputs, each output as its own cell made it.

`jupyter nbconvert --execute` also applies a display's later updates to the cell that
showed it: a PlacementView greys its devices when a later cell stops the session or the
cluster, and the saved text then differs from what nbval sees that cell make. Here an
update from a later cell leaves the earlier output as it was.

    CUDA_VISIBLE_DEVICES= .venv/bin/python notebooks/execute.py notebooks/NN_name.ipynb ...
"""

import os
import sys

import nbformat
from nbclient import NotebookClient


class AsMade(NotebookClient):
    """A NotebookClient that applies a display update only to outputs of the cell running."""

    _running = None

    def process_message(self, msg, cell, cell_index):
        """Notes which cell runs, then processes `msg` as NotebookClient does."""
        self._running = cell_index
        return super().process_message(msg, cell, cell_index)

    def _update_display_id(self, display_id, msg):
        if set(self._display_id_map.get(display_id, {})) - {self._running}:
            return   # shown by an earlier cell: it keeps what it made
        super()._update_display_id(display_id, msg)


def main(paths):
    """Executes each notebook in its own folder and writes it back with its outputs."""
    for path in paths:
        notebook = nbformat.read(path, as_version=4)
        AsMade(notebook, timeout=600, kernel_name="python3",
               resources={"metadata": {"path": os.path.dirname(os.path.abspath(path))}}
               ).execute()
        nbformat.write(notebook, path)
        print("saved", path)


if __name__ == "__main__":
    main(sys.argv[1:])
