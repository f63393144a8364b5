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
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from maestro.bus.mailbox import Mailbox
from maestro.bus.messages import Garbled, Message, reads_for
from maestro.paths import ProjectPaths
from maestro.watch import Wanted, watch

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


def wait_for_mail(
    paths: ProjectPaths,
    session_id: str,
    timeout_s: float | None,
    *,
    coordinator_alive: Callable[[], bool] | None = None,
    ready: threading.Event | None = None,
    mailbox: Mailbox | None = None,
) -> MailWaitResult:
    """Return the session's unread mail (critical first) as soon as there is some, or
    ``timeout`` when ``timeout_s`` passes, or ``coordinator_gone`` when
    ``coordinator_alive`` says the session it would hear from has died. ``ready`` is set
    once the watch is armed (mail sent after that wakes this wait). A long-lived waiter
    passes its own ``Mailbox(paths, keep_open=True)``, reused from one wait to the next."""
    if mailbox is None:
        with contextlib.closing(Mailbox(paths, keep_open=True)) as own:
            return wait_for_mail(
                paths,
                session_id,
                timeout_s,
                coordinator_alive=coordinator_alive,
                ready=ready,
                mailbox=own,
            )
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    folder, wanted = bells(paths, [session_id])
    with watch([folder], wanted) as bell:
        if ready is not None:
            ready.set()
        while True:
            messages, garbled = mailbox.inbox(session_id, unread_only=True)
            if messages or garbled:
                return MailWaitResult("mail", messages, garbled)
            if coordinator_alive is not None and not coordinator_alive():
                return MailWaitResult("coordinator_gone")
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return MailWaitResult("timeout")
            slice_s = remaining
            if coordinator_alive is not None:
                slice_s = (
                    LIVENESS_RECHECK_S if remaining is None else min(remaining, LIVENESS_RECHECK_S)
                )
            bell.wait(slice_s)
