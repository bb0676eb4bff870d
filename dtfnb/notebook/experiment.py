"""compare(): repeated measurements for the tutorials, and conclusions rendered from them.

A notebook that compares configurations runs each of them several times, with the same
seeds, and prints medians with their spread; its prose conclusions are sentences this
module writes from those numbers, so they can never contradict the table beside them.

```python
def one_worker(seed):
    ...train with tf.set_random_seed(seed)...
    return {"seconds": elapsed, "accuracy": Proportion(correct, len(y_valid))}

result = compare({"1 worker": one_worker, "3 async": three_async}, repeats=5)
result                                   # the table, with the machine it ran on
result.plot()                            # every repeat, the median and the spread
result.conclude("3 async", "1 worker", "seconds", less="faster", more="slower")
result.conclude_against("3 async", "staleness", 2, "N − 1 = 2")   # against a fixed value
```

Both the table and a conclusion carry their data in their output's metadata
("dtfnb" key): `Result.from_metadata` and `Conclusion.recheck` rebuild a sentence from
the table a notebook shows, which is how the tests check that a saved or re-run notebook
says what its numbers say.
"""

import html
import math
import platform
import statistics
import uuid

from dtfnb.base.cores import usable_cores
from dtfnb.notebook.progress import in_notebook, progress
from dtfnb.notebook.widgets.base import plural

_Z95 = 1.959964   # the normal quantile of a two-sided 95% interval


def machine():
    """The machine a measurement ran on, as a notebook prints it: "2 CPU cores, Linux x86_64"."""
    cores = usable_cores()
    return f"{cores} CPU core{'s' if cores != 1 else ''}, {platform.system()} {platform.machine()}"


class Proportion:
    """`successes` of `trials` (an accuracy: correct answers of examples), whose uncertainty
    is the binomial one of a finite evaluation set: `interval()` is Wilson's score interval."""

    def __init__(self, successes, trials):
        if trials <= 0 or not 0 <= successes <= trials:
            raise ValueError(f"A Proportion needs 0 <= successes <= trials and trials > 0, "
                             f"got {successes} of {trials}")
        self.successes, self.trials = int(successes), int(trials)

    @property
    def value(self):
        """successes / trials."""
        return self.successes / self.trials

    def interval(self):
        """The 95% Wilson score interval of the proportion."""
        return wilson(self.value, self.trials)

    def __repr__(self):
        return f"Proportion({self.successes}, {self.trials})"


def wilson(p, trials):
    """The 95% Wilson score interval (low, high) of a proportion `p` seen in `trials` trials."""
    z2 = _Z95 * _Z95
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = _Z95 * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / (1 + z2 / trials)
    return max(0.0, centre - half), min(1.0, centre + half)


def compare(configs, repeats=5, warmup=1, seed=42, show_progress=None):
    """Measures every configuration `repeats` times and returns the Result.

    `configs` maps a name to a function of a seed that runs the configuration once and
    returns its measures, {name: number or Proportion}. Repeat r calls every function with
    the seed `seed + r`, so all configurations start from the same initial weights and
    data order in one repeat; the order of the configurations rotates from repeat to
    repeat, so a drift of the machine (another process, a warming cache) does not favour
    one. Before that, each runs `warmup` times with `seed`, and those runs are discarded:
    a first run pays for imports, compiled plans and cold caches.
    """
    if not configs:
        raise ValueError("compare() needs at least one configuration")
    names = list(configs)
    runs = {name: [] for name in names}

    def once(repeat, seed, done):
        shift = max(repeat, 0) % len(names)
        for name in names[shift:] + names[:shift]:
            measures = _checked(name, _run(configs[name], name, seed, repeat, repeats))
            if repeat >= 0:
                runs[name].append(measures)
            done()

    _repeat(once, len(names), "compare()", repeats, warmup, seed, show_progress)
    return Result(runs, repeats, warmup, machine())


def compare_together(run, repeats=5, warmup=0, seed=42, show_progress=None):
    """Measures configurations that one run measures all at once, `repeats` times, and
    returns the Result: six networks trained side by side, an ensemble evaluated with its
    members in one step.

    `run` is a function of a seed that returns {configuration: {name: number or
    Proportion}}; repeat r calls it with the seed `seed + r`, as compare() would each
    configuration. `warmup` runs with `seed` come first and are discarded (none by
    default: what one run measures together shares its warm-up, so time is rarely among it).
    """
    runs = {}

    def once(repeat, seed, done):
        measured = _run(run, "the run", seed, repeat, repeats)
        if not isinstance(measured, dict) or not measured:
            raise TypeError(f"The run returned {measured!r}: it returns one dict of measures "
                            "per configuration, {'ensemble': {'accuracy': ...}, ...}")
        if runs and set(measured) != set(runs):
            raise ValueError(f"The run measured {sorted(measured)}, and before "
                             f"{sorted(runs)}: every run measures the same configurations")
        if repeat >= 0:
            for name, measures in measured.items():
                runs.setdefault(name, []).append(_checked(name, measures))
        done()

    _repeat(once, 1, "compare_together()", repeats, warmup, seed, show_progress)
    return Result(runs, repeats, warmup, machine())


def _repeat(once, calls, caller, repeats, warmup, seed, show_progress):
    """Calls `once(repeat, seed, done)` for the warm-up runs (repeat < 0, with `seed`) and
    each repeat r (with `seed + r`), under a progress bar that `done()` moves by one of the
    `calls` each makes."""
    if repeats < 1 or warmup < 0:
        raise ValueError(f"{caller} needs repeats >= 1 and warmup >= 0, got "
                         f"repeats={repeats}, warmup={warmup}")
    show = in_notebook() if show_progress is None else show_progress
    bar = progress(calls * (warmup + repeats), "measuring") if show else None
    for repeat in range(-warmup, repeats):
        once(repeat, seed + max(repeat, 0), (lambda: bar.update(1)) if bar else (lambda: None))
    if bar is not None:
        bar.close()


def _run(config, name, seed, repeat, repeats):
    try:
        return config(seed)
    except Exception as error:
        what = "warm-up" if repeat < 0 else f"repeat {repeat + 1} of {repeats}"
        if hasattr(error, "add_note"):   # Python 3.11
            error.add_note(f"while measuring {name!r}, {what}")
        raise


def _checked(name, measures):
    if not isinstance(measures, dict) or not measures:
        raise TypeError(f"{name!r} returned {measures!r}: a configuration returns a dict of "
                        "its measures, {'seconds': 1.2, 'accuracy': Proportion(288, 300)}")
    return measures


class Summary:
    """The median and range (low, high) of one measure over the repeats; for a Proportion
    also `interval`, the 95% Wilson interval at the median."""

    def __init__(self, values, trials=None):
        self.values = list(values)
        self.median = statistics.median(self.values)
        self.low, self.high = min(self.values), max(self.values)
        self.trials = trials
        self.interval = wilson(self.median, trials) if trials else None

    def __str__(self):
        text = f"{_fmt(self.median)} [{_fmt(self.low)}–{_fmt(self.high)}]"
        if self.interval is not None:
            text += f" (95%: {_fmt(self.interval[0])}–{_fmt(self.interval[1])})"
        return text


class Result:
    """What compare() measured: `runs[name]` is one dict of measures per repeat.

    Displayed, it is a table of median [min–max] per configuration and measure, headed by
    the number of repeats and the machine. `summary`, `ratio`, `plot` and `conclude` read it.
    """

    def __init__(self, runs, repeats, warmup, machine, result_id=None):
        self.runs, self.repeats, self.warmup, self.machine = runs, repeats, warmup, machine
        self.id = result_id or uuid.uuid4().hex[:12]
        self.measures = list(dict.fromkeys(m for per_repeat in runs.values()
                                           for measures in per_repeat for m in measures))

    @property
    def names(self):
        """The configurations, in the order they were given."""
        return list(self.runs)

    def values(self, name, measure):
        """The measure's value in every repeat of configuration `name` (a Proportion's
        value is its fraction)."""
        self._check(name, measure)
        return [_value(measures[measure]) for measures in self.runs[name]]

    def summary(self, name, measure):
        """The Summary of `measure` over the repeats of `name`."""
        self._check(name, measure)
        first = self.runs[name][0][measure]
        trials = first.trials if isinstance(first, Proportion) else None
        return Summary(self.values(name, measure), trials)

    def ratio(self, a, b, measure):
        """a's measure over b's, repeat by repeat (the repeats of one seed are paired)."""
        return Ratio([x / y for x, y in zip(self.values(a, measure), self.values(b, measure))])

    def conclude(self, a, b, measure, less="lower", more="higher"):
        """The sentence that compares configuration a with b on `measure`, written from the
        numbers: for a number, from the per-repeat ratios (consistently lower, consistently
        higher, the same in every repeat, or neither); for a Proportion, from the 95%
        intervals (apart or overlapping).
        `less`/`more` name what a lower/higher value means ("faster"/"slower")."""
        return Conclusion([dict(result=self.id, a=a, b=b, measure=measure, less=less,
                                more=more, text=self._sentence(a, b, measure, less, more))])

    def conclude_against(self, a, measure, value, name, less="lower", more="higher"):
        """The sentence that compares configuration a's `measure` with a fixed `value`
        called `name` (a threshold, a theory's prediction: "N − 1 = 2"), written from the
        numbers: for a number, repeat by repeat (below in every one, above in every one, or
        neither); for a Proportion, from its 95% interval (wholly below, above, or across)."""
        return Conclusion([dict(result=self.id, a=a, measure=measure, value=value, name=name,
                                less=less, more=more,
                                text=self._against(a, measure, value, name, less, more))])

    def _against(self, a, measure, value, name, less, more):
        first = self.runs[a][0][measure]
        summary = self.summary(a, measure)
        n = self.repeats
        if isinstance(first, Proportion):
            low, high = summary.interval
            figures = f"{_with_interval(summary)}, the median of {plural(n, 'repeat')}"
            if high < value or low > value:
                return f"**{a}** was {less if high < value else more} than {name} on " \
                    f"{measure}: {figures}."
            return (f"**{a}** cannot be told from {name} on {measure} with {first.trials} "
                    f"examples: {figures}; the 95% interval contains it.")
        values = self.values(a, measure)
        verdict = _verdict(sum(v < value for v in values), sum(v > value for v in values), n,
                           less, more, name)
        return f"**{a}**'s {measure} was {verdict}: median {summary}."

    def _sentence(self, a, b, measure, less, more):
        first = self.runs[a][0][measure]
        n = self.repeats
        if isinstance(first, Proportion):
            x, y = self.summary(a, measure), self.summary(b, measure)
            figures = (f"{_with_interval(x)} against {_with_interval(y)}, "
                       f"medians of {plural(n, 'repeat')}")
            if x.interval[0] > y.interval[1] or y.interval[0] > x.interval[1]:
                return (f"**{a}** was {less if x.median < y.median else more} than **{b}** "
                        f"on {measure}: {figures}.")
            return (f"**{a}** and **{b}** cannot be told apart on {measure} with "
                    f"{first.trials} examples: {figures}; the 95% intervals overlap.")
        ratio = self.ratio(a, b, measure)
        verdict = _verdict(sum(r < 1 for r in ratio.values), sum(r > 1 for r in ratio.values),
                           n, less, more, f"**{b}**")
        return f"**{a}** was {verdict}: its {measure} came to {ratio} of **{b}**'s."

    def plot(self, measures=None):
        """A matplotlib figure, one panel per measure: every repeat as a dot, the median as
        a bar and the range as a line (for a Proportion, also its 95% interval)."""
        import matplotlib.pyplot as plt

        measures = measures or self.measures
        # Made by pyplot, which sets up IPython's display of figures (a bare Figure shows
        # as text until something else has), and closed, so that it shows once: as the value.
        figure = plt.figure(figsize=(4.2 * len(measures), 0.5 * len(self.runs) + 1.6),
                            layout="constrained")
        plt.close(figure)
        axes = figure.subplots(1, len(measures), squeeze=False)[0]
        for ax, measure in zip(axes, measures):
            for row, name in enumerate(self.names):
                if measure not in self.runs[name][0]:
                    continue
                summary = self.summary(name, measure)
                if summary.interval is not None:
                    ax.plot(summary.interval, [row, row], color="tab:orange", lw=6, alpha=0.35,
                            solid_capstyle="butt")
                ax.plot([summary.low, summary.high], [row, row], color="tab:blue", lw=1.5)
                ax.plot([summary.median] * 2, [row - 0.3, row + 0.3], color="tab:blue", lw=3)
                ax.plot(summary.values, [row] * len(summary.values), "o", color="black",
                        ms=3, alpha=0.6)
            ax.set_yticks(range(len(self.names)), self.names)
            ax.set_ylim(len(self.names) - 0.5, -0.5)
            ax.set_title(measure)
            ax.grid(axis="x", alpha=0.3)
        proportions = any(isinstance(self.runs[name][0].get(m), Proportion)
                          for name in self.names for m in measures)
        figure.suptitle(f"median (bar), range (line), each repeat (dot)"
                        f"{', 95% interval (orange)' if proportions else ''}: {self.repeats} "
                        f"repeats on {self.machine}", fontsize=9)
        return figure

    def _check(self, name, measure):
        if name not in self.runs:
            raise KeyError(f"No configuration {name!r}: measured {', '.join(map(repr, self.runs))}")
        if any(measure not in measures for measures in self.runs[name]):
            raise KeyError(f"{name!r} has no measure {measure!r}: it has "
                           f"{', '.join(map(repr, self.runs[name][0]))}")

    def _header(self):
        warm = f" after {plural(self.warmup, 'warm-up run')}" if self.warmup else ""
        return f"{plural(self.repeats, 'repeat')}{warm}, on {self.machine}: median [min–max]"

    def _cells(self):
        return [[name] + [str(self.summary(name, m)) if m in self.runs[name][0] else ""
                          for m in self.measures] for name in self.names]

    def __repr__(self):
        rows = [[""] + self.measures] + self._cells()
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip()
                 for row in rows]
        return "\n".join([self._header()] + lines)

    def _repr_mimebundle_(self, include=None, exclude=None):
        head = "".join(f"<th>{html.escape(m)}</th>" for m in self.measures)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
                       for row in self._cells())
        table = (f"<div class='dtfnb-result'><p>{html.escape(self._header())}</p><table>"
                 f"<tr><th></th>{head}</tr>{body}</table></div>")
        data = {"text/plain": repr(self), "text/html": table}
        return data, {"dtfnb": {"result": self.to_metadata()}}

    def to_metadata(self):
        """The result as JSON: every repeat's measures ([successes, trials] for a Proportion)."""
        return dict(id=self.id, repeats=self.repeats, warmup=self.warmup, machine=self.machine,
                    runs={name: [{m: _json(v) for m, v in measures.items()}
                                 for measures in per_repeat]
                          for name, per_repeat in self.runs.items()})

    @classmethod
    def from_metadata(cls, data):
        """The Result that `to_metadata` wrote (as a displayed table carries it)."""
        runs = {name: [{m: Proportion(*v) if isinstance(v, list) else v
                        for m, v in measures.items()} for measures in per_repeat]
                for name, per_repeat in data["runs"].items()}
        return cls(runs, data["repeats"], data["warmup"], data["machine"], data["id"])


class Ratio:
    """Per-repeat ratios of two configurations' measures: their median and range."""

    def __init__(self, values):
        self.values = list(values)
        self.median = statistics.median(self.values)
        self.low, self.high = min(self.values), max(self.values)

    def __str__(self):
        if self.low == self.high:
            return f"{self.median:.2f}x"
        return f"{self.low:.2f}x–{self.high:.2f}x (median {self.median:.2f}x)"


class Conclusion:
    """Sentences written from a Result, displayed as a Markdown list that carries, in its
    metadata, what each was computed from. `a + b` joins two into one list."""

    def __init__(self, claims):
        self.claims = list(claims)

    def __add__(self, other):
        return Conclusion(self.claims + other.claims)

    def __str__(self):
        return "\n".join(claim["text"] for claim in self.claims)

    def _repr_mimebundle_(self, include=None, exclude=None):
        markdown = "\n".join(f"- {claim['text']}" for claim in self.claims)
        return ({"text/markdown": markdown, "text/plain": str(self)},
                {"dtfnb": {"conclusions": self.claims}})

    @staticmethod
    def recheck(claim, result):
        """The sentence `claim` (one entry of a Conclusion's metadata) would say now, written
        again from `result`, the Result it names."""
        if "value" in claim:
            return result._against(claim["a"], claim["measure"], claim["value"], claim["name"],
                                   claim["less"], claim["more"])
        return result._sentence(claim["a"], claim["b"], claim["measure"], claim["less"],
                                claim["more"])


def _verdict(below, above, n, less, more, other):
    """How n repeats, `below` of them under `other` and `above` over it, compare with it."""
    if below == n:
        return f"{less} than {other} in every one of the {n} repeats"
    if above == n:
        return f"{more} than {other} in every one of the {n} repeats"
    if below == above == 0:
        return f"the same as {other} in every one of the {n} repeats"
    return f"not consistently {less} or {more} than {other} ({less} in {below} of {n} repeats)"


def _with_interval(summary):
    """A Proportion's median with its 95% interval: "0.947 (95%: 0.915–0.967)"."""
    low, high = summary.interval
    return f"{summary.median:.3f} (95%: {low:.3f}–{high:.3f})"


def _value(measure):
    return measure.value if isinstance(measure, Proportion) else float(measure)


def _json(measure):
    return [measure.successes, measure.trials] if isinstance(measure, Proportion) \
        else float(measure)


def _fmt(value):
    """Three significant digits, as a table shows them."""
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
