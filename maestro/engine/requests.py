"""What other processes ask of a running engine, through the office: the one channel.

While a run is live, the engine alone applies what others ask of the plan (a person's
editor save still merges as it always does). A caller sends a ``directive`` to the run's
desk (``engine-<run id>``, a recipient no person's inbox lists) whose subject names the
request and whose body is its JSON; the engine reads its desk on each idle tick, woken
by the desk's doorbell, and answers each directive with an ``answer`` whose
``reply_to`` is the directive: ``{"ok": {...}}`` or ``{"error": ..., "fix": ...}``. The
caller waits for that answer on its own doorbell, and gives up with a one-line error
when the engine stops or does not answer in time.

Two requests travel this way: ``task spawn`` (engine/hierarchy.py) and ``task stop``
(engine/stoptask.py). A directive's sender is who asks: a confined spoke reaches the
store only through its door (bus/door.py), which sends as its own session; the body is
still checked field by field, as anything a spoke wrote.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import Callable, Mapping
from typing import Any

from maestro.bus.mailbox import Mailbox
from maestro.bus.mailwait import Doorbell, bells
from maestro.bus.messages import Message, mail_id
from maestro.engine.rundir import RunLock
from maestro.errors import MaestroError
from maestro.formatting import one_line
from maestro.paths import ID_PATTERN, ProjectPaths
from maestro.watch import Watch, watch

ANSWER_TIMEOUT_S = 60.0
LIVENESS_RECHECK_S = 0.5
# The most of a directive the desk reads, in characters of its body (and of its sender
# and subject): past it the request is refused unread. The largest request the desk
# takes, a subtask with every field at plan input's bound and every character one JSON
# escapes, is about 420,000 (tests/cli/test_task_spawn.py checks it stays below).
MAX_REQUEST = 512 * 1024
_SENDER = re.compile(ID_PATTERN)

Handler = Callable[[Message, dict[str, Any]], dict[str, Any]]


def desk_id(run_id: str) -> str:
    return f"engine-{run_id}"


def ask(
    paths: ProjectPaths,
    sender: str,
    run_id: str,
    subject: str,
    payload: Mapping[str, Any],
    *,
    timeout_s: float = ANSWER_TIMEOUT_S,
) -> dict[str, Any]:
    """Send ``subject`` with ``payload`` to run ``run_id``'s engine and return what it
    answers; raise its refusal (with its fix) as a MaestroError, or say that the engine
    stopped or did not answer within ``timeout_s``."""
    with contextlib.closing(Mailbox(paths, keep_open=True)) as mailbox:
        folder, wanted = bells(paths, [sender])
        with watch([folder], wanted) as bell:  # armed before the send: no answer is missed
            request = mailbox.send(
                sender,
                [desk_id(run_id)],
                type="directive",
                priority="high",
                subject=subject,
                body=json.dumps(dict(payload), ensure_ascii=False),
            )
            answer = _await(paths, mailbox, bell, sender, run_id, request, timeout_s)
    try:
        body = json.loads(answer.body)
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise MaestroError(
            f"run {run_id}'s answer to {subject} ({mail_id(answer.id)}) is not what the engine writes.",
            f"see `maestro mail show {mail_id(answer.id)}`, then try again.",
        )
    if "error" in body:
        raise MaestroError(str(body["error"]), str(body.get("fix") or "") or None)
    result = body.get("ok")
    return result if isinstance(result, dict) else {}


def _await(
    paths: ProjectPaths,
    mailbox: Mailbox,
    bell: Watch,
    sender: str,
    run_id: str,
    request: Message,
    timeout_s: float,
) -> Message:
    deadline = time.monotonic() + timeout_s
    lock = RunLock(paths)
    while True:
        messages, _ = mailbox.inbox(sender, mark=False)
        for message in messages:
            if message.reply_to == request.id and message.sender == desk_id(run_id):
                mailbox.mark_read([message.id], sender)
                return message
        left = deadline - time.monotonic()
        if left <= 0:
            raise MaestroError(
                f"run {run_id} did not answer {request.subject} within {timeout_s:.0f} s.",
                "`maestro status` shows whether it still runs; try again when it is idle.",
            )
        if not lock.alive(run_id):
            raise MaestroError(
                f"run {run_id} stopped before it answered {request.subject}.",
                'nothing was changed; report it instead: `maestro task report blocked "..."`.',
            )
        bell.wait(min(left, LIVENESS_RECHECK_S))


class Desk:
    """The engine's side: answers the directives sent to its desk, each by the handler
    its subject names. Read on the scheduler's idle ticks; the doorbell is armed at the
    first read, which reads whether it rang or not."""

    def __init__(self, paths: ProjectPaths, run_id: str, handlers: Mapping[str, Handler]):
        self.paths, self.id, self.handlers = paths, desk_id(run_id), dict(handlers)
        self._doorbell = Doorbell(paths, self.id)

    def __enter__(self) -> Desk:  # noqa: PYI034 - a final helper class
        return self

    def __exit__(self, *exc: object) -> None:
        self._doorbell.close()

    def serve(self) -> int:
        """Answer every unread directive; return how many were answered."""
        if not self._doorbell.due():
            return 0
        mailbox = Mailbox(self.paths)
        if not mailbox.path.exists():
            return 0
        # Claimed, so answered once; each cut to MAX_REQUEST, so none is held whole.
        messages, _ = mailbox.inbox(self.id, unread_only=True, body_limit=MAX_REQUEST)
        for message in messages:
            if not _SENDER.match(message.sender):
                continue  # no session's inbox could hold the answer
            mailbox.send(
                self.id,
                [message.sender],
                type="answer",
                priority="high",
                subject=f"re: {message.subject}"[:200],
                body=json.dumps(self._answer(message)),
                thread=message.id,
                reply_to=message.id,
            )
        return len(messages)

    def _answer(self, message: Message) -> dict[str, Any]:
        handler = self.handlers.get(message.subject)
        if message.type != "directive" or handler is None:
            return {
                "error": f"the engine takes no {message.type} {one_line(message.subject, 60)!r}.",
                "fix": f"it takes: {', '.join(sorted(self.handlers)) or 'nothing'}.",
            }
        if message.whole is not None:  # longer than MAX_REQUEST: read cut
            return {
                "error": f"{message.subject}: the request is over {MAX_REQUEST:,} characters, "
                "the most the engine reads; it was not read.",
                "fix": "send less: every field has plan input's bound (`maestro plan --schema`).",
            }
        try:
            payload = json.loads(message.body)
        except ValueError:
            payload = None
        if not isinstance(payload, dict):
            return {"error": f"{message.subject}: the request is not a JSON object.", "fix": None}
        try:
            return {"ok": handler(message, payload)}
        except MaestroError as exc:
            return {"error": exc.message, "fix": exc.fix}
