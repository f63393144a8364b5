"""The stagger's rule, on order and counts: a spoke waits only while a spoke of its CLI that
started less than the delay ago still runs. The delay is an hour (so no wait ever ends by
the clock in these tests) or the clock is the test's own."""

import threading
import time

from maestro.engine.stagger import Stagger

HOUR = 3600.0


class Spokes:
    """Threads that each start a spoke through one Stagger and run until told to end."""

    def __init__(self, stagger: Stagger) -> None:
        self.stagger = stagger
        self.lock = threading.Lock()
        self.started: list[str] = []
        self.ends: dict[str, threading.Event] = {}
        self.threads: list[threading.Thread] = []

    def launch(self, name: str, cli: str = "gemini", stopping=lambda: None) -> None:
        self.ends[name] = threading.Event()
        asked = threading.Event()

        def spoke() -> None:
            asked.set()
            start = self.stagger.start(cli, stopping=stopping)
            if start is None:
                with self.lock:
                    self.started.append(f"{name}: held back")
                return
            with self.lock:
                self.started.append(name)
            self.ends[name].wait()
            start.ended()

        thread = threading.Thread(target=spoke, daemon=True)
        self.threads.append(thread)
        thread.start()
        asked.wait()

    def settle(self, count: int) -> list[str]:
        """What started, once ``count`` have (or ten seconds passed), and a moment more in
        which a wrongly released spoke would show (a waiting spoke looks again at least
        every quarter second)."""
        deadline = time.monotonic() + 10
        while len(self.started) < count and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.4)
        with self.lock:
            return list(self.started)

    def end(self, name: str) -> None:
        self.ends[name].set()

    def finish(self) -> None:
        for event in self.ends.values():
            event.set()
        for thread in self.threads:
            thread.join(10)
            assert not thread.is_alive()


def test_a_burst_of_one_cli_starts_one_at_a_time_in_the_order_asked():
    spokes = Spokes(Stagger(HOUR))
    for name in ("a", "b", "c"):
        spokes.launch(name)
    assert spokes.settle(1) == ["a"]  # b and c wait while a, started just now, runs
    spokes.end("a")
    assert spokes.settle(2) == ["a", "b"]
    spokes.end("b")
    assert spokes.settle(3) == ["a", "b", "c"]
    spokes.finish()


def test_the_next_spoke_of_a_chain_starts_at_once():
    stagger = Stagger(HOUR)
    started = []

    def chain() -> None:
        for n in range(5):  # each one's predecessor has ended: nothing holds it
            start = stagger.start("gemini")
            assert start is not None
            started.append(n)
            start.ended()

    thread = threading.Thread(target=chain, daemon=True)
    thread.start()
    thread.join(10)  # held by the stagger, it would wait an hour
    assert started == [0, 1, 2, 3, 4]


def test_spokes_of_different_clis_do_not_wait_for_each_other():
    spokes = Spokes(Stagger(HOUR))
    spokes.launch("g", "gemini")
    spokes.launch("c", "codex")
    spokes.launch("g2", "gemini")
    assert spokes.settle(2) == ["g", "c"]
    spokes.finish()


def test_a_spoke_that_started_longer_ago_than_the_delay_holds_nobody():
    now = [0.0]
    spokes = Spokes(Stagger(5.0, clock=lambda: now[0]))
    spokes.launch("a")
    assert spokes.settle(1) == ["a"]
    now[0] = 5.5  # a still runs, but started more than the delay ago
    spokes.launch("b")
    spokes.launch("c")
    assert spokes.settle(2) == ["a", "b"]  # c waits for b, which started just now
    now[0] = 11.0
    assert spokes.settle(3) == ["a", "b", "c"]  # b is past the delay: c goes while b runs
    spokes.finish()


def test_no_delay_never_holds():
    spokes = Spokes(Stagger(0))
    for name in ("a", "b", "c"):
        spokes.launch(name)
    assert sorted(spokes.settle(3)) == ["a", "b", "c"]
    spokes.finish()


def test_a_spoke_held_when_the_run_stops_never_starts_and_the_line_moves_on():
    stop: list[str] = []
    spokes = Spokes(Stagger(HOUR))
    spokes.launch("a")
    spokes.launch("b", stopping=lambda: stop[0] if stop else None)
    spokes.launch("c")
    assert spokes.settle(1) == ["a"]
    stop.append("aborted")
    assert spokes.settle(2) == ["a", "b: held back"]
    spokes.end("a")
    assert spokes.settle(3) == ["a", "b: held back", "c"]
    spokes.finish()
