"""`maestro mail wait`: block until mail for a session arrives, woken by inotify.

Each send rings its recipients' doorbell files (``mail/bell/<session>``); a waiter
watches that folder with inotify from its own thread (``bus.inotify``; watchdog where
inotify is missing) and wakes only for its own bell, then reads its unread mail in one
transaction (so two waiters on one inbox never both get a message). There
is no sleep loop: the only timed re-check is of the coordinator's liveness (a lock the
kernel releases makes no file event), so a worker waiting on a dead coordinator returns
instead of waiting forever.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from maestro.bus.mailbox import Garbled, Mailbox, Message, reads_for
from maestro.paths import ProjectPaths

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


class Doorbell:
    """Sets ``event`` when the bell of mail any of ``session_ids`` reads rings (the
    person's inbox holds the runs' mail too). The engine may reuse it to wake its own
    wait on mail addressed to the run (``maestro wait``)."""

    def __init__(
        self, paths: ProjectPaths, session_ids: Iterable[str], event: threading.Event | None = None
    ) -> None:
        self.mailbox = Mailbox(paths)
        self.readers = list(session_ids)
        self.event = event or threading.Event()
        self._watch: Any = None

    def __enter__(self) -> Doorbell:  # noqa: PYI034 - a final helper class
        from maestro.watch import FolderObserver

        readers = self.readers
        self._watch = FolderObserver(
            self.mailbox.bells,
            event=self.event,
            accept=lambda bell: any(reads_for(reader, bell) for reader in readers),
        )
        self._watch.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._watch is not None:
            self._watch.__exit__(*exc)


class _EventWatch:
    """The watchdog fallback, with the same ``wait`` as ``inotify.FolderWatch``."""

    def __init__(self, bell: Doorbell) -> None:
        self.bell = bell

    def wait(self, timeout_s: float | None) -> bool:
        fired = self.bell.event.wait(timeout_s)
        self.bell.event.clear()
        return fired


# A process's inotify watches, one per bell folder, session and thread (two waits at
# once never share one), kept for the process's life: closing an inotify descriptor waits for the kernel's SRCU grace period (~16 ms
# measured here), which a wait that closed its watch paid between the mail's arrival
# and its return. The kernel closes them at exit.
_WATCHES: dict[tuple[str, str, int], tuple[Any, tuple[int, int]]] = {}


def _folder_id(folder: Path) -> tuple[int, int]:
    info = folder.stat()
    return info.st_dev, info.st_ino


@contextmanager
def _watch(paths: ProjectPaths, session_id: str) -> Iterator[Any]:
    """Armed on entry: any bell rung afterwards wakes the next ``wait``. A watch kept
    from an earlier wait is reused, its old events dropped (the read that follows the
    arming covers them); one on a bell folder since replaced is made anew."""
    from maestro.bus import inotify

    bells = Mailbox(paths).bells
    bells.mkdir(parents=True, exist_ok=True)
    if not inotify.available():
        with Doorbell(paths, [session_id]) as bell:
            yield _EventWatch(bell)
        return
    key, folder = (str(bells), session_id, threading.get_ident()), _folder_id(bells)
    kept = _WATCHES.get(key)
    if kept is not None:
        kept[0].drain()
    if kept is not None and kept[1] == folder and not kept[0].gone:
        watch = kept[0]
    else:
        if kept is not None:
            kept[0].close()
        watch = inotify.FolderWatch(str(bells), lambda name: reads_for(session_id, name))
        _WATCHES[key] = (watch, folder)
    yield watch


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
    with _watch(paths, session_id) as watch:
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
            watch.wait(slice_s)
