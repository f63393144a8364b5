"""The mailbox: messages between sessions, with receipts, threads and priorities.

Stored in one SQLite database, ``.ai/maestro/mail/mail.db`` (standard library
``sqlite3``, WAL journal): a send is one transaction inserting the message and one
delivery row per recipient, so a message is whole in every inbox or in none, and is
never delivered twice; marking read is one ``UPDATE ... RETURNING`` on unread rows, so
two readers of one inbox never both get the same message as new. The inbox query is
indexed, which keeps ``mail inbox`` fast with tens of thousands of messages stored.

Files in ``mail/bell/`` are doorbells: after a send commits, each recipient's (empty) bell
file is opened for writing and closed, and ``mail wait`` (``bus.waiting``) watches only its
own bell with inotify.

A row whose values do not parse (a hand-edited or damaged database) is reported by
``inbox`` as garbled, never crashes it.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from maestro import clock
from maestro.bus.messages import (
    PRIORITIES,
    TYPES,
    Garbled,
    Message,
    Receipt,
    addressed_to,
    mail_id,
    sort_key,
)
from maestro.errors import MaestroError, NotFound
from maestro.paths import ProjectPaths

SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 30_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS mail (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    thread INTEGER NOT NULL,
    reply_to INTEGER,
    sender TEXT NOT NULL,
    type TEXT NOT NULL,
    priority TEXT NOT NULL,
    subject TEXT NOT NULL,
    body TEXT NOT NULL,
    created TEXT NOT NULL,
    created_ns INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS delivery (
    mail INTEGER NOT NULL REFERENCES mail(id),
    recipient TEXT NOT NULL,
    delivered TEXT NOT NULL,
    read_at TEXT,
    read_by TEXT,
    PRIMARY KEY (mail, recipient)
);
CREATE INDEX IF NOT EXISTS delivery_inbox ON delivery (recipient, read_at);
CREATE INDEX IF NOT EXISTS mail_thread ON mail (thread);
"""


def _columns(body_limit: int | None = None) -> str:
    """A message's columns; with ``body_limit``, the texts a sender chooses (sender,
    subject, body) cut to that many characters, and the whole body's length: a reader that
    bounds what it takes (the board's previews, the engine's desk) never holds a huge one."""
    sender, subject, body, length = "m.sender", "m.subject", "m.body", "NULL"
    if body_limit is not None:
        end = int(body_limit)
        sender, subject, body = (f"substr({c}, 1, {end})" for c in (sender, subject, body))
        length = "length(m.body)"
    return (
        f"m.id, m.thread, m.reply_to, {sender}, m.type, m.priority, {subject},"
        f" {body}, m.created, m.created_ns, {length}"
    )


def _message(row: Sequence[Any]) -> Message | Garbled:
    ident = row[0]
    try:
        number, thread, reply_to, sender, kind, priority, subject, body, created, created_ns = row[
            :10
        ]
        problems = []
        if not isinstance(number, int) or not isinstance(thread, int):
            problems.append("its id or thread is not a number")
        if reply_to is not None and not isinstance(reply_to, int):
            problems.append("its reply-to is not a number")
        if kind not in TYPES:
            problems.append(f"unknown type {kind!r}")
        if priority not in PRIORITIES:
            problems.append(f"unknown priority {priority!r}")
        for name, value in (
            ("sender", sender),
            ("subject", subject),
            ("body", body),
            ("time", created),
        ):
            if not isinstance(value, str):
                problems.append(f"its {name} is not text")
        if not isinstance(created_ns, int):
            problems.append("its time stamp is not a number")
        if problems:
            return Garbled(
                mail_id(ident) if isinstance(ident, int) else repr(ident), "; ".join(problems)
            )
        length = row[10]
        return Message(
            number,
            thread,
            reply_to,
            sender,
            kind,
            priority,
            subject,
            body,
            created,
            created_ns,
            whole=length if isinstance(length, int) and length > len(body) else None,
        )
    except (ValueError, TypeError) as exc:
        return Garbled(repr(ident), str(exc))


class Mailbox:
    """One project's mail store; every method is its own transaction.

    A connection is opened per call and closed after it, unless ``keep_open``: a
    long-lived process (a waiting engine or hub) keeps one for its life, which spares it
    the checkpoint SQLite runs when the last connection to a WAL database closes (an
    fsync: ~10 ms here). ``close()`` ends it.
    """

    def __init__(self, paths: ProjectPaths, *, keep_open: bool = False) -> None:
        self.folder = paths.machine_dir / "mail"
        self.path = self.folder / "mail.db"
        self.bells = self.folder / "bell"
        self.keep_open = keep_open
        self._kept: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection:
        self.folder.mkdir(parents=True, exist_ok=True)
        try:
            conn = sqlite3.connect(
                self.path,
                timeout=BUSY_TIMEOUT_MS / 1000,
                isolation_level=None,
                check_same_thread=False,
            )
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            # WAL with synchronous=NORMAL: a commit is atomic and survives any process
            # crash; only an OS crash or power loss may drop the last commits. Mail
            # between processes that such a crash ends anyway is not worth an fsync per
            # send and per read (which doubled wait's wake-up latency).
            conn.execute("PRAGMA synchronous=NORMAL")
            self._prepare(conn)
        except sqlite3.DatabaseError as exc:
            raise self._failure(exc) from None
        return conn

    @contextmanager
    def _db(self, *, write: bool = False) -> Iterator[sqlite3.Connection]:
        if self._kept is not None:
            conn, owned = self._kept, False
        elif not write and not self.path.exists():
            # Nothing was ever sent: an empty store, without creating one from a read.
            conn, owned = sqlite3.connect(":memory:", isolation_level=None), True
            conn.executescript(_SCHEMA)
        else:
            conn = self._connect()
            owned = not self.keep_open
            if self.keep_open:
                self._kept = conn
        try:
            yield conn
        except sqlite3.DatabaseError as exc:
            raise self._failure(exc) from None
        finally:
            if owned:
                conn.close()

    def close(self) -> None:
        if self._kept is not None:
            self._kept.close()
            self._kept = None

    def _failure(self, exc: sqlite3.DatabaseError) -> MaestroError:
        """A store another process held past the timeout is no fault of the store's;
        only one SQLite cannot read (not a database, damaged) is to be moved aside."""
        if _busy(exc):
            return MaestroError(
                f"the mail store {self.path} stayed busy for {BUSY_TIMEOUT_MS // 1000}s.",
                "try again; if it persists, find the process holding it (`fuser`).",
            )
        return MaestroError(
            f"the mail store cannot be read ({exc}).",
            f"move {self.path} aside (mail in it is lost to Maestro, not deleted) and retry.",
            file=self.path,
        )

    def _prepare(self, conn: sqlite3.Connection) -> None:
        """Create or check the tables, waiting as long as SQLite's busy handler would.
        Turning a new store's journal to WAL answers "database is locked" at once, without
        that handler, while another connection holds the write lock: several processes
        sending the first mail of a project at once, one of them creating the store."""
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        while True:
            try:
                return self._create(conn)
            except sqlite3.OperationalError as exc:
                if not _busy(exc) or time.monotonic() >= deadline:
                    raise
            time.sleep(0.005)

    def _create(self, conn: sqlite3.Connection) -> None:
        """The first process to open a new store creates the tables inside one immediate
        transaction; the others wait for it and find them."""
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION:
            return
        if version > SCHEMA_VERSION:
            raise MaestroError(
                f"the mail store is format {version}, newer than this Maestro reads.",
                "upgrade Maestro.",
                file=self.path,
            )
        conn.execute("PRAGMA journal_mode=WAL")  # persistent: readers never block the writer
        conn.execute("BEGIN IMMEDIATE")
        try:
            if conn.execute("PRAGMA user_version").fetchone()[0] == 0:
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    # -- sending -----------------------------------------------------------------------

    def send(
        self,
        sender: str,
        recipients: Sequence[str],
        *,
        type: str,
        priority: str,
        subject: str,
        body: str,
        thread: int | None = None,
        reply_to: int | None = None,
    ) -> Message:
        if type not in TYPES:
            raise MaestroError(f"unknown mail type {type!r}.", f"use one of: {', '.join(TYPES)}.")
        if priority not in PRIORITIES:
            raise MaestroError(
                f"unknown priority {priority!r}.", f"use one of: {', '.join(PRIORITIES)}."
            )
        targets = list(dict.fromkeys(recipients))
        if not targets:
            raise MaestroError("the message has no recipient.", "name one with --to.")
        now, now_ns = clock.iso(), time.time_ns()
        with self._db(write=True) as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                if thread is not None:
                    thread = self._thread_of(conn, thread)
                cursor = conn.execute(
                    "INSERT INTO mail (thread, reply_to, sender, type, priority, subject, body, created, created_ns)"
                    " VALUES (0, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (reply_to, sender, type, priority, subject, body, now, now_ns),
                )
                number = int(cursor.lastrowid or 0)
                thread = thread if thread is not None else number
                conn.execute("UPDATE mail SET thread = ? WHERE id = ?", (thread, number))
                conn.executemany(
                    "INSERT INTO delivery (mail, recipient, delivered) VALUES (?, ?, ?)",
                    [(number, target, now) for target in targets],
                )
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            # Committed and visible: ring now, not after the close's checkpoint.
            for target in targets:
                self.ring(target)
        return Message(
            number, thread, reply_to, sender, type, priority, subject, body, now, now_ns, to=targets
        )

    def _thread_of(self, conn: sqlite3.Connection, number: int) -> int:
        row = conn.execute("SELECT thread FROM mail WHERE id = ?", (number,)).fetchone()
        if row is None:
            raise NotFound(
                f"no mail {mail_id(number)} to thread onto.",
                "give a mail id that `mail inbox` shows.",
            )
        return int(row[0])

    def bell(self, session_id: str) -> Path:
        return self.bells / session_id

    def ring(self, session_id: str) -> None:
        """Ring the recipient's doorbell: open it for writing and close it. The close is
        the inotify event (IN_CLOSE_WRITE) its watcher wakes on; nothing is written. A
        truncate-and-write would wait for the disk: on ext4 the truncate of a file whose
        last write is still being flushed waits for that flush (0.1 ms typical, 10 ms
        and more on a busy disk, all of it in the sender's wake-up latency)."""
        self.bells.mkdir(parents=True, exist_ok=True)
        os.close(os.open(self.bell(session_id), os.O_WRONLY | os.O_CREAT, 0o644))

    # -- reading -----------------------------------------------------------------------

    def inbox(
        self,
        session_id: str,
        *,
        unread_only: bool = False,
        mark: bool = True,
        body_limit: int | None = None,
    ) -> tuple[list[Message], list[Garbled]]:
        """The session's mail, by priority then time. Unread messages are marked read by
        the session in the same transaction that selects them, and
        come back with ``new=True``: to exactly one reader, whatever runs at once.
        Only a reader with something to claim takes the write lock. One that finds
        nothing unread (a waiter's check, most checks) stays in a read transaction, which
        in WAL never waits: taking the lock there, it would meet any sender's transaction
        and sleep in SQLite's busy handler, whose steps are 1, 2, 5, 10 ms and more.

        ``body_limit``: each sender, subject and body cut to its first characters
        (``Message.whole``: the whole body's length, when it was longer)."""
        mine, mine_args = addressed_to(session_id)
        stored = self.path.exists()
        with self._db(write=mark and stored) as conn:
            conn.execute("BEGIN")
            try:
                claim = mark and stored and self._any_unread(conn, mine, mine_args)
                if claim:
                    # Upgraded: what the read saw unread is claimed (or found claimed by
                    # another reader) under the lock; nothing in between is lost.
                    conn.execute("COMMIT")
                    conn.execute("BEGIN IMMEDIATE")
                claimed: set[int] = set()
                if claim:
                    claimed = {
                        row[0]
                        for row in conn.execute(
                            f"UPDATE delivery AS d SET read_at = ?, read_by = ? WHERE {mine} AND d.read_at IS NULL"
                            " RETURNING mail",
                            (clock.iso(), session_id, *mine_args),
                        )
                    }
                where, args = mine, list[Any](mine_args)
                if unread_only:
                    chosen = f" OR d.mail IN ({','.join('?' * len(claimed))})" if claimed else ""
                    where += f" AND (d.read_at IS NULL{chosen})"
                    args += sorted(claimed)
                rows = conn.execute(
                    f"SELECT {_columns(body_limit)}, d.read_at, d.read_by, d.recipient FROM delivery d"
                    f" JOIN mail m ON m.id = d.mail WHERE {where}",
                    args,
                ).fetchall()
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        messages, garbled = [], []
        for row in rows:
            parsed = _message(row)
            if isinstance(parsed, Garbled):
                garbled.append(parsed)
                continue
            parsed.read_at, parsed.read_by = row[11], row[12]
            parsed.new = parsed.id in claimed or (not mark and row[11] is None)
            parsed.to = [row[13]]
            messages.append(parsed)
        messages.sort(key=sort_key)
        return messages, garbled

    @staticmethod
    def _any_unread(conn: sqlite3.Connection, mine: str, args: Sequence[Any]) -> bool:
        found = conn.execute(
            f"SELECT 1 FROM delivery d WHERE {mine} AND d.read_at IS NULL LIMIT 1", args
        ).fetchone()
        return found is not None

    def get(self, number: int) -> tuple[Message, list[Receipt]]:
        with self._db() as conn:
            row = conn.execute(
                f"SELECT {_columns()} FROM mail m WHERE m.id = ?", (number,)
            ).fetchone()
            if row is None:
                raise NotFound(
                    f"no mail {mail_id(number)} in this project.",
                    "`maestro mail inbox` lists yours.",
                )
            receipts = [
                Receipt(*r)
                for r in conn.execute(
                    "SELECT recipient, delivered, read_at, read_by FROM delivery WHERE mail = ? ORDER BY rowid",
                    (number,),
                )
            ]
        parsed = _message(row)
        if isinstance(parsed, Garbled):
            raise MaestroError(
                f"mail {parsed.id} is garbled: {parsed.problem}.",
                "ask its sender to send it again.",
                file=self.path,
            )
        parsed.to = [r.recipient for r in receipts]
        return parsed, receipts

    def mark_read(self, numbers: Sequence[int], session_id: str) -> set[int]:
        """Mark these messages read in ``session_id``'s inbox; returns those newly read."""
        if not numbers or not self.path.exists():
            return set()
        mine, args = addressed_to(session_id)
        with self._db(write=True) as conn:
            marks = ",".join("?" * len(numbers))
            return {
                row[0]
                for row in conn.execute(
                    f"UPDATE delivery AS d SET read_at = ?, read_by = ? WHERE {mine} AND d.read_at IS NULL"
                    f" AND d.mail IN ({marks}) RETURNING mail",
                    (clock.iso(), session_id, *args, *numbers),
                )
            }

    def thread(
        self, number: int, body_limit: int | None = None
    ) -> tuple[list[Message], list[Garbled]]:
        """The messages of ``number``'s thread, oldest first (``body_limit``: as ``inbox``)."""
        with self._db() as conn:
            row = conn.execute("SELECT thread FROM mail WHERE id = ?", (number,)).fetchone()
            if row is None:
                raise NotFound(
                    f"no mail or thread {mail_id(number)} in this project.",
                    "give a mail id that `mail inbox` shows.",
                )
            rows = conn.execute(
                f"SELECT {_columns(body_limit)} FROM mail m WHERE m.thread = ?"
                " ORDER BY m.created_ns, m.id",
                (row[0],),
            ).fetchall()
            recipients: dict[int, list[str]] = {}
            for mail, recipient in conn.execute(
                "SELECT d.mail, d.recipient FROM delivery d JOIN mail m ON m.id = d.mail WHERE m.thread = ?",
                (row[0],),
            ):
                recipients.setdefault(mail, []).append(recipient)
        messages, garbled = [], []
        for item in rows:
            parsed = _message(item)
            if isinstance(parsed, Garbled):
                garbled.append(parsed)
            else:
                parsed.to = recipients.get(parsed.id, [])
                messages.append(parsed)
        return messages, garbled

    def unanswered(self, body_limit: int | None = None) -> list[Message]:
        """The questions and blockers in the person's inbox (the runs' mail with it) that
        no reply answers yet, oldest first (``body_limit``: as ``inbox``); read or not,
        nothing is marked."""
        mine, args = addressed_to("user")  # the person
        with self._db() as conn:
            rows = conn.execute(
                f"SELECT {_columns(body_limit)}, d.recipient FROM delivery d JOIN mail m"
                f" ON m.id = d.mail WHERE {mine} AND m.type IN ('query', 'blocked') AND NOT"
                " EXISTS (SELECT 1 FROM mail r WHERE r.thread = m.thread AND r.reply_to = m.id)"
                " ORDER BY m.created_ns, m.id",
                args,
            ).fetchall()
        found = []
        for row in rows:
            parsed = _message(row)
            if isinstance(parsed, Message):
                parsed.to = [row[11]]
                found.append(parsed)
        return found


def _busy(exc: sqlite3.DatabaseError) -> bool:
    """Another connection holds the lock (SQLITE_BUSY, SQLITE_LOCKED, their extended
    codes). An error the sqlite3 module raises itself carries no SQLite code."""
    code = getattr(exc, "sqlite_errorcode", 0)
    return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def pending(paths: ProjectPaths, session_id: str) -> list[Message]:
    """Unread queries and blockers addressed to ``session_id``, without marking them:
    what the run's ``maestro wait`` shows the hub (a worker's question or blocker)."""
    messages, _ = Mailbox(paths).inbox(session_id, unread_only=True, mark=False)
    return [m for m in messages if m.type in ("query", "blocked")]
