"""The workers' reports to their run, as the run's own record: events and log rows.

A worker's ``maestro task report progress|blocked|complete "..."`` is mail to the run's
session (``run-<id>``): a ``status_update`` for progress and completion, ``blocked`` for a
blocker. Each becomes a ``task_report`` event (so `maestro wait`, the live view and
``engine.log`` show it) and a row of ``.ai/MAESTRO-LOG.md`` (Action ``Report``, the kind
as its Outcome, the worker's words as its Notes).

Progress and completion are marked read by the run (the worker sees that receipt).
Blockers and questions stay unread: they are for the hub, whose `maestro wait` shows them
with the `mail reply` line and marks them read by the person. The run still records a
blocker, read or not: it keeps the last message id it has recorded, and the run's session
is its own (one per run), so nothing is recorded twice.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from maestro import clock
from maestro.bus.mailbox import Mailbox
from maestro.bus.mailwait import Doorbell
from maestro.bus.sessions import SessionStore
from maestro.bus.workers import run_session_id
from maestro.logfile import LogRow, short_name

if TYPE_CHECKING:
    from maestro.bus.messages import Message
    from maestro.logfile import ExecutionLog
    from maestro.paths import ProjectPaths

RECORDED = ("status_update", "blocked")
# `task report` writes its subject as "task <ids> <kind>: <first line>".
_KIND = re.compile(r"^task \S+ (progress|blocked|complete):")


def report_kind(message: Message) -> str:
    """progress, blocked or complete; a report sent by hand says its mail type."""
    match = _KIND.match(message.subject)
    if match:
        return match.group(1)
    return "blocked" if message.type == "blocked" else "progress"


class WorkerReports:
    """Read on the scheduler's idle ticks when the run's doorbell rang, and once at the
    end whether it rang or not (a report sent just before its spoke ended). The doorbell
    is watched from the first read on; armed before that read, it misses nothing sent
    meanwhile."""

    def __init__(
        self,
        paths: ProjectPaths,
        run_id: str,
        emit: Callable[..., object],
        log: ExecutionLog | None = None,
    ) -> None:
        self.paths, self.emit, self.log = paths, emit, log
        self.session_id = run_session_id(run_id)
        self.recorded = 0  # the last message id turned into an event
        self._doorbell = Doorbell(paths, self.session_id)

    def __enter__(self) -> WorkerReports:  # noqa: PYI034 - a final helper class
        return self

    def __exit__(self, *exc: object) -> None:
        self._doorbell.close()

    def deliver(self, *, last: bool = False) -> None:
        """Turn new reports into events and log rows; ``last``: the run's final read
        (no watch after it, and it reads whether the bell rang or not)."""
        if not self._doorbell.due(last=last):  # the first read: reports may predate it
            return
        mailbox = Mailbox(self.paths)
        if not mailbox.path.exists():
            return
        messages, _ = mailbox.inbox(self.session_id, mark=False)
        fresh = sorted(
            (m for m in messages if m.id > self.recorded and m.type in RECORDED),
            key=lambda m: m.id,
        )
        if not fresh:
            return
        self.recorded = fresh[-1].id
        mailbox.mark_read([m.id for m in fresh if m.type == "status_update"], self.session_id)
        sessions = SessionStore(self.paths)
        for message in fresh:
            sender = sessions.peek(message.sender) if sessions.exists(message.sender) else None
            tasks = ",".join(sender.task_ids) if sender else ""
            self.emit(
                "task_report",
                task=tasks or None,
                session=message.sender,
                report=message.subject,
                detail=message.body,
                mail=message.id,  # `maestro wait` shows a blocker once: as the mail to answer
            )
            self._log(message, tasks, sender.data.get("cli") if sender else None)

    def _log(self, message: Message, tasks: str, cli: str | None) -> None:
        if self.log is None:
            return
        self.log.append(
            LogRow(
                time=clock.iso(),
                actor=short_name(cli) if cli else message.sender,
                action="Report",
                target=f"Task {tasks}" if tasks else message.sender,
                tokens=None,
                duration_s=None,
                outcome=report_kind(message),
                notes=f"{message.body} ({message.sender})",
                task=tasks.split(",")[0] if tasks else None,
            )
        )
