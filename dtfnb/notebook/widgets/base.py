"""EventWidget: a widget fed by a task's monitor stream, shown as one mimebundle."""

import base64
import html
import io
import threading

from dtfnb.notebook.stream import Feed, event_streams


class EventWidget:
    """Folds the events of `source` (see `event_streams`) into state on a background
    thread and redraws its ipywidgets view in place, at most 5 times a second and only
    when the drawing changed. Displayed, it is one mimebundle: the live widget, an HTML
    snapshot (once the events of the steps that just ended are in), and a text form
    without addresses, ports or timings (so that saved notebooks compare equal from run
    to run). `close()` stops watching.

    Subclasses set `kinds`, build `self._view` in `_make_view()`, fold events in
    `_apply(event)`, and draw in `_draw()` and `_text()`.
    """

    kinds = ()

    def __init__(self, source):
        self._lock = threading.Lock()
        self._view = self._make_view()
        self._feed = Feed(event_streams(source, self.kinds), self._on_events)
        self._feed.drain()
        self._redraw()
        self._feed.start()

    def _make_view(self):
        import ipywidgets

        return ipywidgets.HTML()

    def _on_events(self, events):
        with self._lock:
            for event in events:
                self._apply(event)
        self._redraw()

    def _redraw(self):
        with self._lock:
            drawing = self._draw()
        if self._view.value != drawing:
            self._view.value = drawing

    def _html(self):
        """The HTML snapshot of what the view shows."""
        return self._view.value

    def _repr_mimebundle_(self, include=None, exclude=None):
        self._feed.settle()   # a snapshot that includes the steps that just ended
        data = self._view._repr_mimebundle_()
        data["text/plain"] = repr(self)
        data["text/html"] = self._html()
        return data

    def __repr__(self):
        with self._lock:
            return self._text()

    def close(self):
        """Stops watching; the view keeps showing what it showed last, redrawn once more
        (a stopped cluster's tasks show as stopped)."""
        self._feed.close()
        self._redraw()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def plural(n, noun):
    """"1 node", "3 nodes"."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def figure_img(figure, alt):
    """A matplotlib figure as an HTML <img> of its PNG, inline, with `alt` text."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    png = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img src="data:image/png;base64,{png}" alt="{escape(alt)}"/>'


def escape(text):
    """`text` as a str, escaped for HTML (quotes too)."""
    return html.escape(str(text), quote=True)


def human_bytes(n):
    """12 -> "12 B", 1234 -> "1.2 KB", as the panel and the graph write them
    (extension/src/format.ts)."""
    if n < 1000:
        return f"{n} B"
    for unit in ("KB", "MB", "GB"):
        n /= 1000
        if n < 1000 or unit == "GB":
            return f"{n:.1f} {unit}"
