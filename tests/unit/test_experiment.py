"""compare() and the sentences it writes: the protocol (warm-up, seeds, rotation), the
statistics against known values, and conclusions that follow the numbers."""

import pytest

from dtfnb.notebook.experiment import (
    Conclusion,
    Proportion,
    Result,
    compare,
    compare_together,
    machine,
    wilson,
)


def test_repeats_share_seeds_rotate_order_and_discard_warmup():
    calls = []

    def config(name):
        def run(seed):
            calls.append((name, seed))
            return {"seconds": float(seed)}
        return run

    result = compare({"a": config("a"), "b": config("b"), "c": config("c")},
                     repeats=3, warmup=1, seed=10, show_progress=False)
    assert calls[:3] == [("a", 10), ("b", 10), ("c", 10)]        # the warm-up
    assert calls[3:] == [("a", 10), ("b", 10), ("c", 10),
                         ("b", 11), ("c", 11), ("a", 11),
                         ("c", 12), ("a", 12), ("b", 12)]
    assert result.values("a", "seconds") == [10.0, 11.0, 12.0]   # warm-up not among them
    assert result.repeats == 3 and result.names == ["a", "b", "c"]


def test_configurations_measured_together_share_each_repeat_and_discard_warmup():
    seeds = []

    def run(seed):
        seeds.append(seed)
        return {"member": {"accuracy": Proportion(seed, 100)},
                "ensemble": {"accuracy": Proportion(seed + 1, 100), "seconds": 0.5}}

    result = compare_together(run, repeats=3, warmup=1, seed=10, show_progress=False)
    assert seeds == [10, 10, 11, 12]
    assert result.names == ["member", "ensemble"] and result.repeats == 3
    assert result.values("member", "accuracy") == [0.10, 0.11, 0.12]
    assert result.values("ensemble", "seconds") == [0.5] * 3
    assert "cannot be told apart" in str(result.conclude("ensemble", "member", "accuracy"))


def test_configurations_measured_together_must_be_the_same_in_every_run():
    runs = iter([{"a": {"x": 1.0}}, {"a": {"x": 1.0}, "b": {"x": 2.0}}])
    with pytest.raises(ValueError, match="every run measures the same configurations"):
        compare_together(lambda seed: next(runs), repeats=2, show_progress=False)
    with pytest.raises(TypeError, match="one dict of measures per configuration"):
        compare_together(lambda seed: [1.0], repeats=1, show_progress=False)
    with pytest.raises(TypeError, match="'a' returned 1.0"):
        compare_together(lambda seed: {"a": 1.0}, repeats=1, show_progress=False)


def test_wilson_interval_matches_known_values():
    low, high = wilson(0.5, 100)
    assert (round(low, 4), round(high, 4)) == (0.4038, 0.5962)
    low, high = wilson(1.0, 300)           # never above 1, and not a zero-width interval
    assert high == 1.0 and 0.98 < low < 0.99
    assert Proportion(288, 300).interval() == wilson(0.96, 300)


def test_summary_table_names_repeats_and_machine():
    result = Result({"x": [{"seconds": 2.0, "accuracy": Proportion(90, 100)},
                           {"seconds": 1.0, "accuracy": Proportion(80, 100)},
                           {"seconds": 4.0, "accuracy": Proportion(85, 100)}]}, 3, 1, machine())
    summary = result.summary("x", "seconds")
    assert (summary.median, summary.low, summary.high) == (2.0, 1.0, 4.0)
    text = repr(result)
    assert "3 repeats after 1 warm-up run" in text and machine() in text
    assert "2 [1–4]" in text and "0.85 [0.8–0.9] (95%: " in text
    data, metadata = result._repr_mimebundle_()
    assert "<table>" in data["text/html"]
    assert metadata["dtfnb"]["result"]["runs"]["x"][0] == {"seconds": 2.0, "accuracy": [90, 100]}


def _two(a_values, b_values):
    return Result({"a": [{"seconds": v} for v in a_values],
                   "b": [{"seconds": v} for v in b_values]}, len(a_values), 0, "test")


def test_a_conclusion_says_consistently_only_when_every_repeat_agrees():
    faster = _two([1, 2, 3], [2, 3, 4]).conclude("a", "b", "seconds", "faster", "slower")
    assert str(faster).startswith("**a** was faster than **b** in every one of the 3 repeats")
    assert "0.50x–0.75x (median 0.67x)" in str(faster)
    slower = _two([3, 4, 5], [1, 2, 3]).conclude("a", "b", "seconds", "faster", "slower")
    assert "slower than **b** in every one" in str(slower)
    mixed = _two([1, 3, 3], [2, 2, 4]).conclude("a", "b", "seconds", "faster", "slower")
    assert "not consistently faster or slower than **b** (faster in 2 of 3 repeats)" in str(mixed)
    same = _two([1, 2, 3], [1, 2, 3]).conclude("a", "b", "seconds", "faster", "slower")
    assert str(same) == ("**a** was the same as **b** in every one of the 3 repeats: its "
                         "seconds came to 1.00x of **b**'s.")


def test_proportions_are_told_apart_only_by_their_intervals():
    def result(a, b):
        return Result({"a": [{"acc": Proportion(a, 300)}], "b": [{"acc": Proportion(b, 300)}]},
                      1, 0, "test")
    assert "cannot be told apart on acc with 300 examples" in str(
        result(294, 290).conclude("a", "b", "acc"))
    assert str(result(294, 240).conclude("a", "b", "acc")).startswith("**a** was higher than")
    assert str(result(240, 294).conclude("a", "b", "acc")).startswith("**a** was lower than")


def test_a_conclusion_rechecks_against_the_table_it_was_written_from():
    result = _two([1, 2, 3], [2, 3, 4])
    conclusion = result.conclude("a", "b", "seconds") + result.conclude("b", "a", "seconds")
    data, metadata = conclusion._repr_mimebundle_()
    assert data["text/markdown"].count("\n- ") == 1
    shown = Result.from_metadata(result._repr_mimebundle_()[1]["dtfnb"]["result"])
    for claim in metadata["dtfnb"]["conclusions"]:
        assert claim["result"] == shown.id
        assert Conclusion.recheck(claim, shown) == claim["text"]
    edited = Result.from_metadata({**result.to_metadata(),
                                   "runs": {"a": [{"seconds": 5.0}] * 3,
                                            "b": [{"seconds": 1.0}] * 3}})
    assert Conclusion.recheck(metadata["dtfnb"]["conclusions"][0], edited) != \
        metadata["dtfnb"]["conclusions"][0]["text"]


def test_a_conclusion_against_a_fixed_value_says_consistently_only_when_every_repeat_agrees():
    result = _two([0.4, 0.5, 0.9], [1.5, 2.5, 3.0])
    below = result.conclude_against("a", "seconds", 1, "one second", "shorter", "longer")
    assert str(below) == "**a**'s seconds was shorter than one second in every one of the 3 " \
        "repeats: median 0.5 [0.4–0.9]."
    above = result.conclude_against("b", "seconds", 1, "one second", more="longer")
    assert "longer than one second in every one" in str(above)
    mixed = result.conclude_against("b", "seconds", 2, "2")
    assert "not consistently lower or higher than 2 (lower in 1 of 3 repeats)" in str(mixed)
    shown = Result.from_metadata(result.to_metadata())
    for claim in (below + mixed).claims:
        assert Conclusion.recheck(claim, shown) == claim["text"]


def test_a_proportion_against_a_fixed_value_is_judged_by_its_interval():
    def result(successes):
        return Result({"a": [{"acc": Proportion(successes, 300)}]}, 1, 0, "test")
    assert str(result(294).conclude_against("a", "acc", 0.9, "90%")).startswith(
        "**a** was higher than 90% on acc: 0.980 (95%: ")
    assert "cannot be told from 90% on acc with 300 examples" in str(
        result(272).conclude_against("a", "acc", 0.9, "90%"))


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="at least one configuration"):
        compare({})
    with pytest.raises(ValueError, match="repeats >= 1"):
        compare({"a": lambda seed: {"s": 1}}, repeats=0)
    with pytest.raises(TypeError, match="'a' returned 1.5: a configuration returns a dict"):
        compare({"a": lambda seed: 1.5}, show_progress=False)
    with pytest.raises(ValueError, match="successes <= trials"):
        Proportion(5, 3)
    with pytest.raises(KeyError, match="No configuration 'c'"):
        _two([1], [2]).values("c", "seconds")
    with pytest.raises(KeyError, match="'a' has no measure 'acc'"):
        _two([1], [2]).summary("a", "acc")


def test_a_failing_run_says_which_configuration_and_repeat():
    def flaky(seed):
        if seed == 43:
            raise RuntimeError("worker died")
        return {"s": 1.0}
    with pytest.raises(RuntimeError, match="worker died") as raised:
        compare({"flaky": flaky}, repeats=3, show_progress=False)
    if hasattr(raised.value, "__notes__"):
        assert raised.value.__notes__ == ["while measuring 'flaky', repeat 2 of 3"]


def test_plot_draws_one_panel_per_measure():
    result = Result({"a": [{"seconds": 1.0, "acc": Proportion(9, 10)}] * 2}, 2, 0, "test")
    figure = result.plot()
    assert [ax.get_title() for ax in figure.axes] == ["seconds", "acc"]
    assert "95% interval" in figure._suptitle.get_text()
