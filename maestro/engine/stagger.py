"""The stagger: spokes of one CLI that would start together are spread out.

It exists so that a CLI and its provider do not see many starts in the same instant, and
costs nothing otherwise. The rule, kept where a spoke's process starts (the one place,
so a task's own varying work before its spoke cannot bring two starts closer): a spoke
waits only while another spoke of the same CLI that started less than ``delay_s`` ago is
still running. A chain's next task starts at once (its dependency's spoke has ended); a
burst of ready tasks of one CLI is spread ``delay_s`` apart, in the order they asked;
spokes of different CLIs never wait for each other.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Callable


class Stagger:
    def __init__(self, delay_s: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.delay_s = max(0.0, float(delay_s))
        self._clock = clock
        self._changed = threading.Condition()
        self._tickets = itertools.count()
        self._queues: dict[str, deque[int]] = {}  # per CLI, the spokes waiting, first first
        self._running: dict[int, tuple[str, float]] = {}  # ticket -> (CLI, started)

    def start(
        self, cli: str, *, stopping: Callable[[], str | None] = lambda: None
    ) -> SpokeStart | None:
        """Wait until a spoke of ``cli`` may start, and count it as running from now until
        its :meth:`SpokeStart.ended`. None when ``stopping()`` said the run is stopping
        while it waited: the spoke must not start."""
        with self._changed:
            ticket = next(self._tickets)
            queue = self._queues.setdefault(cli, deque())
            queue.append(ticket)
            try:
                while (hold := self._hold(cli, ticket)) is not None:
                    if stopping():
                        return None
                    # Woken early by a spoke's end or another start; stop requests are
                    # seen within a quarter of a second.
                    self._changed.wait(timeout=0.25 if hold == 0 else min(hold, 0.25))
            finally:
                queue.remove(ticket)
                self._changed.notify_all()  # the next in line looks again
            self._running[ticket] = (cli, self._clock())
        return SpokeStart(self, ticket)

    def _hold(self, cli: str, ticket: int) -> float | None:
        """None when ``ticket`` may start now; else how long at most before it looks again
        (0: until something changes)."""
        if self._queues[cli][0] != ticket:
            return 0.0  # one ahead of it in line starts first
        if self.delay_s <= 0:
            return None
        now = self._clock()
        recent = [
            started + self.delay_s - now
            for name, started in self._running.values()
            if name == cli and started + self.delay_s > now
        ]
        return max(recent) if recent else None

    def _ended(self, ticket: int) -> None:
        with self._changed:
            self._running.pop(ticket, None)
            self._changed.notify_all()


class SpokeStart:
    """One spoke counted as running by its `Stagger`."""

    def __init__(self, stagger: Stagger, ticket: int) -> None:
        self._stagger, self._ticket = stagger, ticket

    def ended(self) -> None:
        self._stagger._ended(self._ticket)
