"""`maestro mail wait`: block until mail for a session arrives, woken by inotify.

Each send rings its recipients' doorbell files (``mail/bell/<session>``); a waiter
watches that folder (``maestro.watch``: inotify read by the waiting thread itself on
Linux) and wakes only for its own bell, then reads its unread mail in one
transaction (so two waiters on one inbox never both get a message). There
is no sleep loop: the only timed re-check is of the coordinator's liveness (a lock the
kernel releases makes no file event), so a worker waiting on a dead coordinator returns
instead of waiting forever.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from maestro.bus.mailbox import Mailbox
from maestro.bus.messages import Garbled, Message, reads_for
from maestro.paths import ProjectPaths
from maestro.watch import Wanted, Watch, wait_until, watch

EXIT_MAIL = 0
EXIT_TIMEOUT = 11
EXIT_COORDINATOR_GONE = 12
LIVENESS_RECHECK_S = 0.5


@dataclass
class MailWaitResult:
    state: str  # mail | timeout | coordinator_gone
    messages: list[Message] = field(default_factory=list)
    garbled: list[Garbled] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return {"mail": EXIT_MAIL, "timeout": EXIT_TIMEOUT}.get(self.state, EXIT_COORDINATOR_GONE)


def bells(paths: ProjectPaths, readers: Iterable[str]) -> tuple[Path, Wanted]:
    """The doorbell folder and which of its bells wake a wait for mail ``readers`` read
    (the person's inbox holds the runs' mail too): for ``watch.watch``."""
    readers = list(readers)
    return Mailbox(paths).bells, lambda bell: any(reads_for(r, bell.name) for r in readers)


class Doorbell:
    """A session's doorbell, read on a loop's own ticks (the engine's idle tick): the
    first read is always due and arms the watch first, so nothing sent before it is
    missed; later reads only once it rang (``last``: a final read, due whether it rang
    or not, with no watch after it)."""

    def __init__(self, paths: ProjectPaths, session_id: str) -> None:
        self.paths, self.session_id = paths, session_id
        self._bell: Watch | None = None

    def due(self, *, last: bool = False) -> bool:
        if self._bell is None:
            if not last:
                folder, wanted = bells(self.paths, [self.session_id])
                self._bell = watch([folder], wanted)
            return True
        return self._bell.wait(0) or last

    def close(self) -> None:
        if self._bell is not None:
            self._bell.close()
            self._bell = None


def wait_for_mail(
    paths: ProjectPaths,
    session_id: str,
    timeout_s: float | None,
    *,
    coordinator_alive: Callable[[], bool] | None = None,
    ready: threading.Event | None = None,
) -> MailWaitResult:
    """Return the session's unread mail (critical first) as soon as there is some, or
    ``timeout`` when ``timeout_s`` passes, or ``coordinator_gone`` when
    ``coordinator_alive`` says the session it would hear from has died. ``ready`` is set
    once the watch is armed (mail sent after that wakes this wait)."""
    with contextlib.closing(Mailbox(paths, keep_open=True)) as box:

        def check() -> MailWaitResult | None:
            messages, garbled = box.inbox(session_id, unread_only=True)
            if messages or garbled:
                return MailWaitResult("mail", messages, garbled)
            if coordinator_alive is not None and not coordinator_alive():
                return MailWaitResult("coordinator_gone")
            return None

        folder, wanted = bells(paths, [session_id])
        alive_every = LIVENESS_RECHECK_S if coordinator_alive is not None else None
        found = wait_until(
            [folder], wanted, check, timeout_s, recheck_s=lambda: alive_every, armed=ready
        )
    return found or MailWaitResult("timeout")
