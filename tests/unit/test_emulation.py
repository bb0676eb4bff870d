"""Emulated cluster conditions without a cluster: the spec grammar, the token buckets'
lower bound, and the slow tasks' delays (distributed_runtime/emulation.py)."""

import statistics
import threading
import time

import pytest

from dtfnb.distributed_runtime.emulation import (
    PARETO_CAP,
    Conditions,
    Link,
    Slowness,
    parse_link,
    parse_slow,
    task_conditions,
)


@pytest.mark.parametrize("text, bits, latency", [
    ("100Mbit", 100e6, 0.0), ("100Mbit,2ms", 100e6, 2e-3), ("1Gbit, 500us", 1e9, 500e-6),
    ("2.5kbit,0.1s", 2500.0, 0.1), ("10 Mbit/s,1ms", 10e6, 1e-3), ("64bit", 64.0, 0.0)])
def test_links_are_read_in_bit_per_second_and_seconds(text, bits, latency):
    spec = parse_link(text)
    assert spec.bits_per_second == pytest.approx(bits)
    assert spec.latency == pytest.approx(latency)


@pytest.mark.parametrize("text, problem", [
    ("100MB", "'100MB' is not a bandwidth"), ("fast", "'fast' is not a bandwidth"),
    ("0Mbit", "must be above 0"), ("100Mbit,2", "'2' is not a duration"),
    ("100Mbit,", "'' is not a duration"), ("100Mbit,2ms,3ms", "'2ms,3ms' is not a duration")])
def test_a_bad_link_names_the_problem_and_the_form(text, problem):
    with pytest.raises(ValueError, match=problem) as raised:
        parse_link(text)
    assert "BANDWIDTH[,LATENCY]" in str(raised.value)


@pytest.mark.parametrize("text, problem", [
    ("x0.5", "at least 1"), ("xfast", "'fast' is not a factor"), ("+20", "not a duration"),
    ("pareto:0,10ms", "shape above 0"), ("pareto:1.5", "shape above 0"),
    ("pareto:1.5,10", "not a duration"), ("slow", "is not a slowness")])
def test_a_bad_slowness_names_the_problem(text, problem):
    with pytest.raises(ValueError, match=problem):
        parse_slow(text)


def test_conditions_describe_themselves():
    assert Conditions(link="100Mbit,2ms", slow="+20ms").description == \
        "100 Mbit/s, 2 ms · +20 ms/step"
    assert Conditions(link="1Gbit").description == "1 Gbit/s"
    assert Conditions(slow="x3").description == "x3 compute"
    assert Conditions(slow="pareto:1.5,10ms").description == "Pareto(1.5, 10 ms)/step"
    assert Conditions().description == "" and Conditions().link is None


def test_a_task_key_wins_over_its_job_and_unknown_names_are_refused():
    tasks = ["ps:0", "worker:0", "worker:1", "worker:2"]
    chosen = task_conditions(tasks, link="100Mbit", links={"ps:0": "1Gbit"},
                             slow={"worker:2": "x3", "worker": "+20ms"})
    assert chosen == {"ps:0": ("1Gbit", None), "worker:0": ("100Mbit", "+20ms"),
                      "worker:1": ("100Mbit", "+20ms"), "worker:2": ("100Mbit", "x3")}
    with pytest.raises(ValueError, match="'chief'.* jobs ps, worker and tasks ps:0, worker:0"):
        task_conditions(tasks, slow={"chief": "x3"})
    with pytest.raises(ValueError, match="'worker:3'"):
        task_conditions(tasks, links={"worker:3": "1Gbit"})
    with pytest.raises(ValueError, match="not a bandwidth"):
        task_conditions(tasks, links={"ps": "fast"})


def delivered_after(send):
    """Seconds from calling send(done) until done() ran."""
    done = threading.Event()
    start = time.monotonic()
    send(done.set)
    assert done.wait(10)
    return time.monotonic() - start


def test_a_link_never_delivers_before_its_bytes_and_latency_have_gone():
    link = Link(parse_link("100Mbit,5ms"))
    try:
        nbytes = 250_000   # 20 ms at 12.5 MB/s
        for _ in range(3):
            assert delivered_after(lambda go: link.send(nbytes, lambda s: go())) >= 0.025
            assert delivered_after(lambda go: link.receive(nbytes, 0.0, go)) >= 0.025
        # a message that took 20 ms to leave a link as fast began to arrive 20 ms ago
        assert delivered_after(lambda go: link.receive(nbytes, 0.020, go)) >= 0.005
        # eight messages at once share the bucket: the last goes after all their bytes
        done, start = threading.Semaphore(0), time.monotonic()
        for _ in range(8):
            link.send(nbytes, lambda s: done.release())
        for _ in range(8):
            assert done.acquire(timeout=10)
        assert time.monotonic() - start >= 8 * 0.020 + 0.005
        start = time.monotonic()
        assert link.sent(nbytes) == pytest.approx(0.020)
        link.received(nbytes, 0.0)
        assert time.monotonic() - start >= 0.025 + 0.025
    finally:
        link.close()


def test_slow_factors_and_delays():
    assert Slowness(parse_slow("x3")).delay(0.010) == pytest.approx(0.020)
    assert Slowness(parse_slow("+20ms")).delay(0.5) == pytest.approx(0.020)


def test_pareto_delays_repeat_per_task_and_have_a_heavy_tail():
    spec = parse_slow("pareto:1.5,10ms")

    def draws(task, n=20000):
        slow = Slowness(spec, task)
        return [slow.delay(0.0) for _ in range(n)]

    worker = draws("/job:worker/replica:0/task:1")
    assert worker == draws("/job:worker/replica:0/task:1")
    assert worker != draws("/job:worker/replica:0/task:2")
    assert min(worker) >= 0.010 and max(worker) <= PARETO_CAP * 0.010
    # P(X > k x scale) = k^-1.5: a power law, far above an exponential's e^-k
    for k, expected in ((3, 3 ** -1.5), (10, 10 ** -1.5), (30, 30 ** -1.5)):
        share = sum(d > k * 0.010 for d in worker) / len(worker)
        assert share == pytest.approx(expected, rel=0.25)
    assert statistics.median(worker) == pytest.approx(0.010 * 2 ** (1 / 1.5), rel=0.05)
