"""progress(): a progress bar that is a widget in a notebook and a text line in a terminal."""

import sys
import time

_REDRAW_SECONDS = 0.2   # at most 5 redraws a second


def in_notebook():
    """Whether this code runs in a Jupyter kernel. IPython is not imported for this: a
    kernel has imported it already."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return getattr(shell, "kernel", None) is not None


def progress(iterable_or_total, description="", file=None):
    """A Progress bar over an iterable, or over `total` steps counted with `update()`."""
    return Progress(iterable_or_total, description, file)


class Progress:
    """A progress bar over an iterable, or over `total` steps counted with `update()`.

    ```python
    for step in progress(range(1000), "training"):
        sess.run(training_op)

    bar = progress(5, "starting")
    bar.update(1)      # ... as each part is done
    bar.close()
    ```

    In a notebook it is an ipywidgets bar whose text form is only `description` and the
    total (so saved outputs do not change from run to run); elsewhere a line of text on
    `file` (default stderr), redrawn at most 5 times a second.
    """

    def __init__(self, iterable_or_total, description="", file=None):
        if isinstance(iterable_or_total, int):
            iterable_or_total = range(iterable_or_total)
        self._iterable = iterable_or_total
        self.total = len(iterable_or_total) if hasattr(iterable_or_total, "__len__") else None
        self.description = description
        self.n = 0
        self._drawn_at, self._drawn_n = 0.0, None
        self._closed = False
        self._view = _WidgetBar(self) if in_notebook() else _TextBar(self, file or sys.stderr)
        self._draw(time.monotonic())

    def __iter__(self):
        try:
            for item in self._iterable:
                yield item
                self.update(1)
        finally:
            self.close()

    def __len__(self):
        return self.total

    def update(self, n=1):
        """Counts `n` more steps done."""
        self.n += n
        now = time.monotonic()
        if now - self._drawn_at >= _REDRAW_SECONDS or self.n == self.total:
            self._draw(now)

    def close(self):
        """Draws the final count and ends the bar."""
        if not self._closed:
            self._closed = True
            if self._drawn_n != self.n:
                self._draw(time.monotonic())
            self._view.close()

    def _draw(self, now):
        self._drawn_at, self._drawn_n = now, self.n
        self._view.draw()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        total = "" if self.total is None else f" of {self.total}"
        return f"<progress {self.description!r}{total}>"

    def count(self):
        """The count as shown: "n/total", or "n" without a total."""
        return f"{self.n}/{self.total}" if self.total is not None else str(self.n)


class _TextBar:
    _WIDTH = 30

    def __init__(self, bar, file):
        self._bar, self._file = bar, file

    def draw(self):
        bar = self._bar
        if bar.total:
            done = min(self._WIDTH, self._WIDTH * bar.n // bar.total)
            line = f"[{'#' * done}{'.' * (self._WIDTH - done)}] {bar.count()}"
        else:
            line = bar.count()
        label = f"{bar.description}: " if bar.description else ""
        self._file.write(f"\r{label}{line}")
        self._file.flush()

    def close(self):
        self._file.write("\n")
        self._file.flush()


class _WidgetBar:
    def __init__(self, bar):
        import ipywidgets
        from IPython.display import display

        self._bar = bar
        self._progress = ipywidgets.IntProgress(value=0, max=max(bar.total or 1, 1),
                                                description=bar.description)
        self._count = ipywidgets.Label()
        self._box = ipywidgets.HBox([self._progress, self._count])
        display(self)

    def _repr_mimebundle_(self, include=None, exclude=None):
        data = self._box._repr_mimebundle_()
        data["text/plain"] = repr(self._bar)
        return data

    def draw(self):
        if self._bar.total is None:
            self._progress.max = max(self._bar.n, 1)
        self._progress.value = min(self._bar.n, self._progress.max)
        self._count.value = self._bar.count()

    def close(self):
        self._progress.bar_style = "success"
