"""A message between sessions as the office reads it: its fields, types and priorities,
how it is addressed (the person's inbox holds the runs' mail too), its id as people type
it (``m12``), and its order in an inbox. The mailbox (mailbox.py) stores them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from maestro.errors import MaestroError

TYPES = ("directive", "query", "status_update", "blocked", "answer", "notification")
PRIORITIES = ("critical", "high", "normal", "low")


def addressed_to(session_id: str) -> tuple[str, list[str]]:
    """The SQL condition on ``d.recipient`` for a session's inbox. The person (``user``)
    also reads what is addressed to the runs: a run's engine reads no mail, and the hub
    at the person's shell answers for it."""
    if session_id == "user":
        return "(d.recipient = 'user' OR d.recipient GLOB 'run-*')", []
    return "d.recipient = ?", [session_id]


def reads_for(session_id: str, recipient: str) -> bool:
    """Does ``session_id``'s inbox hold mail addressed to ``recipient``?"""
    return recipient == session_id or (session_id == "user" and recipient.startswith("run-"))


def mail_id(number: int) -> str:
    return f"m{number}"


def parse_mail_id(text: str) -> int:
    raw = text.strip().lower().removeprefix("m")
    if not raw.isdigit():
        raise MaestroError(
            f"{text!r} is not a mail id.", "give one as `mail inbox` shows it, e.g. m12."
        )
    return int(raw)


@dataclass
class Message:
    id: int
    thread: int
    reply_to: int | None
    sender: str
    type: str
    priority: str
    subject: str
    body: str
    created: str
    created_ns: int
    to: list[str] = field(default_factory=list)
    read_at: str | None = None  # for the inbox it is listed in
    read_by: str | None = None
    new: bool = False  # first shown to its reader by this call
    whole: int | None = None  # the body's length, when only its start was read

    @property
    def rank(self) -> int:
        return PRIORITIES.index(self.priority)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": mail_id(self.id),
            "thread": mail_id(self.thread),
            "reply_to": mail_id(self.reply_to) if self.reply_to else None,
            "from": self.sender,
            "to": self.to,
            "type": self.type,
            "priority": self.priority,
            "subject": self.subject,
            "message": self.body,
            "created": self.created,
            "read_at": self.read_at,
            "read_by": self.read_by,
            "new": self.new,
        }


@dataclass
class Garbled:
    """A stored row that does not parse: reported, skipped, never fatal."""

    id: str
    problem: str

    def to_dict(self) -> dict[str, str]:
        return {"id": self.id, "problem": self.problem}


@dataclass
class Receipt:
    recipient: str
    delivered: str
    read_at: str | None
    read_by: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "to": self.recipient,
            "delivered": self.delivered,
            "read_at": self.read_at,
            "read_by": self.read_by,
        }


def sort_key(message: Message) -> tuple[int, int, int]:
    """Priority first (critical on top), then oldest first."""
    return (message.rank, message.created_ns, message.id)
