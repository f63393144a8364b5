"""`maestro wait`: block until a run needs its follower, without polling.

A hub model following a run pays for every turn (its whole fixed context, re-read), so a
wait returns only for what the hub must act on: a decision (retries exhausted), a
worker's question or blocker, the run's end; or when the longest its host's shell tool
lets a command run has passed. Progress (tasks done, failed, blocked) never wakes it: the
person sees that where it costs no model (the board, notifications, `maestro status`),
and the next answer sums it up. A host that stops a command silent for a while gets a
short line from the wait well before (``keepalive``).

The run's folder and doorbell are watched (``maestro.watch``); the engine's life is its run lock
(see ``RunLock``), checked every half second, so an engine killed without a chance to say
so (SIGKILL, the sandbox of the command that started it, another PID namespace) ends the
wait within a second. Events already shown are remembered in ``wait-cursor.json``, per run.

A worker's question or blocker addressed to the run (``run-<id>``) wakes the wait too,
through the mailbox's doorbell: the run's engine records its workers' reports but answers
no question; the hub following the run does. A message is shown once: showing it marks it read by the person (``user``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from maestro.bus.mailbox import Mailbox, pending
from maestro.bus.mailwait import bells
from maestro.bus.sessions import USER
from maestro.bus.workers import run_session_id
from maestro.engine.progress import ACT_KINDS
from maestro.engine.rundir import RunDir, RunLock, read_events
from maestro.fsutil import atomic_write
from maestro.watch import wait_until

if TYPE_CHECKING:
    from maestro.bus.messages import Message

# How often the engine's lock is tested while nothing else wakes the wait.
LIVENESS_RECHECK_S = 0.5


@dataclass
class WaitResult:
    run_id: str
    state: str  # ended | running | timeout
    # The events not shown before; once the run has ended, its run_ended is the last one
    # (shown again when an earlier wait showed it: nothing else is new).
    events: list[dict[str, Any]] = field(default_factory=list)
    last_seq: int = 0  # the last event shown, by this wait or an earlier one
    poll: int = 1  # this wait's number among those following the run
    mail: list[Message] = field(default_factory=list)  # workers' questions and blockers
    repeated: bool = False  # the run had ended already: its run_ended is all there is


def _record(run: RunDir) -> dict[str, Any]:
    """The run's wait cursor, or an empty one when it is missing or garbled."""
    try:
        data = json.loads(run.cursor_path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _cursor(run: RunDir, key: str) -> int:
    try:
        return max(0, int(_record(run).get(key, 0)))
    except (ValueError, TypeError):
        return 0


def read_cursor(run: RunDir) -> int:
    return _cursor(run, "offset")


def read_polls(run: RunDir) -> int:
    """How many waits have followed ``run`` so far (their ``--poll`` numbers)."""
    return _cursor(run, "polls")


def write_cursor(run: RunDir, offset: int, polls: int | None = None) -> None:
    polls = read_polls(run) if polls is None else polls
    # Lost in a crash, the next wait shows a few events again: no fsync.
    record = {"offset": offset, "polls": polls}
    atomic_write(run.cursor_path, json.dumps(record) + "\n", durable=False)


def engine_alive(run: RunDir) -> bool:
    """Is an engine still working on ``run``? Only if it holds the run lock (a detached
    run's lock is taken before its engine starts, and handed to it)."""
    return RunLock(run.paths).alive(run.run_id)


def ended_event(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    return next((e for e in reversed(events) if e.get("kind") == "run_ended"), None)


def last_run_ended(run: RunDir) -> dict[str, Any] | None:
    return ended_event(read_events(run.events_path)[0])


def wait_for(
    run: RunDir,
    timeout_s: float | None,
    after: int | None = None,
    poll: int | None = None,
    keepalive: tuple[float, Callable[[], None]] | None = None,
) -> WaitResult:
    """Return the events not shown yet once the follower must act (a decision, a worker's
    mail, the run's end), or when ``timeout_s`` passes (None: no limit). ``after``: show
    the events after that sequence number instead of those after the cursor, so a
    repeated call answers the same; ``poll``: this call's number (default: one more than
    the last recorded); ``keepalive``: (seconds, say) calls ``say()`` each time the wait
    has been silent that long."""
    shown = _Shown(run, after)
    poll = read_polls(run) + 1 if poll is None else poll
    mail: list[Message] = []
    said = time.monotonic()

    def finish(state: str) -> WaitResult:
        write_cursor(run, shown.offset, max(poll, read_polls(run)))
        return WaitResult(
            run.run_id, state, shown.events, shown.last_seq, poll, mail, shown.repeated
        )

    def check() -> WaitResult | None:
        nonlocal said
        shown.read()
        mail.extend(_questions(run))
        if ended_event(shown.events) is not None:
            return finish("ended")
        if not engine_alive(run):
            shown.last_words()
            return finish("ended")
        if mail or any(e.get("kind") in ACT_KINDS for e in shown.events):
            return finish("running")
        if keepalive is not None and time.monotonic() - said >= keepalive[0]:
            keepalive[1]()
            said = time.monotonic()
        return None

    # The run's folder (any change) and its doorbell; watched only once the wait has to
    # wait (a `--timeout 0` call, or one with something to show at once, arms no watch).
    folder, wanted = bells(run.paths, [run_session_id(run.run_id)])
    found = wait_until(
        [run.path, folder],
        lambda path: path.parent != folder or wanted(path),
        check,
        timeout_s,
        recheck_s=lambda: LIVENESS_RECHECK_S,
    )
    return found or finish("timeout")


class _Shown:
    """The events one wait shows: those after the cursor (or after sequence ``after``),
    read on as the run appends them."""

    def __init__(self, run: RunDir, after: int | None) -> None:
        self.run, self.after = run, after
        self.offset = 0 if after is not None else read_cursor(run)
        self.last_seq = after if after is not None else _count(run, self.offset)
        self.events: list[dict[str, Any]] = []
        self.repeated = False

    def read(self) -> None:
        events, self.offset = read_events(self.run.events_path, self.offset)
        after = self.after
        self.events.extend(e for e in events if after is None or int(e.get("seq") or 0) > after)
        self.last_seq = max([self.last_seq, *(int(e.get("seq") or 0) for e in events)])

    def last_words(self) -> None:
        """The run's end once its engine is gone, last among the events: its own
        run_ended, read once more (it may have written it and exited between the read and
        the liveness check), one an earlier wait showed, or a ``died`` event recorded now."""
        self.read()
        if ended_event(self.events) is not None:
            return
        end = last_run_ended(self.run)  # ended before; shown by an earlier wait
        self.repeated = end is not None and not self.events
        if end is None:
            end = _died(self.run)
            self.offset = read_events(self.run.events_path, self.offset)[1]  # past our own line
            self.last_seq = max(self.last_seq, int(end.get("seq") or 0))
        self.events.append(end)


def _questions(run: RunDir) -> list[Message]:
    """The workers' unread questions and blockers addressed to the run, marked read by
    the person now that the hub is shown them (the sender sees that receipt)."""

    mailbox = Mailbox(run.paths)
    if not mailbox.path.exists():
        return []
    messages = pending(run.paths, run_session_id(run.run_id))
    claimed = mailbox.mark_read([m.id for m in messages], USER)
    return [m for m in messages if m.id in claimed]


def _count(run: RunDir, offset: int) -> int:
    """How many events lie before byte ``offset``: the last sequence number shown."""
    try:
        with run.events_path.open("rb") as handle:
            return sum(1 for line in handle.read(offset).splitlines() if line.strip())
    except FileNotFoundError:
        return 0


def _died(run: RunDir) -> dict[str, Any]:
    """Record, once, that the run's engine stopped without ending the run."""
    message = (
        "its engine stopped without finishing it (no process holds the run lock any more: it was killed, "
        "or ended with the command or sandbox that started it); "
        "run `maestro run` to recover its tasks and continue."
    )
    event = run.events().emit("run_ended", run_id=run.run_id, status="died", message=message)
    run.write_meta(state="died")
    return event
