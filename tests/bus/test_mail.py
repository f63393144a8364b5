"""The mailbox verbs, in-process: addressing, receipts, threads, order, garbled rows."""

from __future__ import annotations

import json
import sqlite3
import threading
import time

import pytest

from maestro.bus.mailbox import Mailbox, pending
from maestro.bus.mailwait import bells, wait_for_mail
from maestro.bus.sessions import SessionStore
from maestro.tokens import count_tokens


def unread(office, session_id):
    return len(Mailbox(office.paths).inbox(session_id, unread_only=True, mark=False)[0])


def test_send_to_coordinator_and_the_hub_answers(office, cli, monkeypatch):
    worker = office.worker("4")
    office.become(monkeypatch, worker.id)
    sent = cli(
        "mail",
        "send",
        "--to-coordinator",
        "--type",
        "query",
        "--subject",
        "Token format?",
        "--message",
        "JWT or opaque?",
    )
    assert sent.code == 0 and sent.out == "sent m1 to run-R1\n"
    office.become(monkeypatch, None)  # the person's inbox holds the runs' mail
    inbox = cli("mail", "inbox")
    assert inbox.out == (
        f"m1 query from {worker.id}: Token format?\n  JWT or opaque?\n"
        '  answer: maestro mail reply m1 --message "..."\n'
    )
    assert cli("mail", "reply", "m1", "--message", "JWT, RS256").out == f"sent m2 to {worker.id}\n"
    office.become(monkeypatch, worker.id)
    answer = cli("mail", "inbox", "--unread")
    assert answer.out == "m2 answer from user re m1: Re: Token format?\n  JWT, RS256\n"
    assert cli("mail", "inbox", "--unread").out == "no unread mail\n"
    thread = cli("mail", "thread", "m2").out
    assert thread.index("m1 query") < thread.index("m2 answer")


def test_receipts_say_delivered_and_read_by_whom(office, cli, monkeypatch):
    a, b = office.worker("1"), office.worker("2")
    office.become(monkeypatch, None)
    cli(
        "mail",
        "send",
        "--to",
        f"{a.id},{b.id}",
        "--type",
        "directive",
        "--message",
        "Use the v2 API",
    )
    shown = cli("mail", "show", "m1").out
    assert f"{a.id}: delivered " in shown and shown.count(", unread") == 2
    office.become(monkeypatch, a.id)
    cli("mail", "inbox")
    office.become(monkeypatch, None)
    receipts = json.loads(cli("mail", "show", "m1", "--json").out)["data"]["receipts"]
    assert receipts[0]["to"] == a.id and receipts[0]["read_by"] == a.id and receipts[0]["read_at"]
    assert receipts[1]["to"] == b.id and receipts[1]["read_at"] is None


def test_inbox_is_sorted_by_priority_then_time(office, cli, monkeypatch):
    worker = office.worker("1")
    office.become(monkeypatch, None)
    for priority, text in (
        ("low", "a"),
        ("normal", "b"),
        ("critical", "c"),
        ("high", "d"),
        ("critical", "e"),
    ):
        cli("mail", "send", "--to", worker.id, "--priority", priority, "--message", text)
    office.become(monkeypatch, worker.id)
    data = json.loads(cli("mail", "inbox", "--json").out)["data"]["messages"]
    assert [m["message"] for m in data] == ["c", "e", "d", "b", "a"]
    assert all(m["new"] for m in data)
    again = cli("mail", "inbox").out.splitlines()
    assert again[0] == "m3 notification critical from user: c (read)"


def test_unknown_recipient_is_an_error_and_a_dead_one_a_warning(office, cli, monkeypatch):
    worker = office.worker("1")
    office.become(monkeypatch, None)
    missing = cli("mail", "send", "--to", "t1-nobody", "--message", "hi")
    assert missing.code == 1 and "no session t1-nobody" in missing.err
    assert not Mailbox(office.paths).path.exists()  # nothing was stored
    office.leases.pop(worker.id).release()
    dead = cli("mail", "send", "--to", worker.id, "--message", "hi")
    assert dead.code == 0 and f"warning: {worker.id} is dead: nobody will read it" in dead.out
    no_coordinator = cli("mail", "send", "--to-coordinator", "--message", "hi")
    assert no_coordinator.code == 1
    assert no_coordinator.err.startswith(
        "maestro: error: the person at a shell (no MAESTRO_SESSION_ID) has no coordinator."
    )


def test_message_from_stdin_and_empty_refused(office, cli, monkeypatch):
    office.become(monkeypatch, office.worker("1").id)
    assert cli("mail", "send", "--to-coordinator", stdin="line one\nline two\n").code == 0
    message = Mailbox(office.paths).get(1)[0]
    assert message.subject == "line one" and message.body == "line one\nline two"
    empty = cli("mail", "send", "--to-coordinator", stdin="  \n")
    assert empty.code == 1 and "the message is empty" in empty.err


def test_siblings_and_broadcast_scopes(office, cli, monkeypatch):
    a, b, c = office.worker("1"), office.worker("2"), office.worker("3")
    office.leases.pop(c.id).release()  # dead: left out of every scope
    office.become(monkeypatch, a.id)
    assert (
        cli("mail", "send", "--to-siblings", "--message", "who has auth?").out
        == f"sent m1 to {b.id}\n"
    )
    assert (
        cli("mail", "broadcast", "--scope", "team", "--message", "x").out
        == f"sent m2 to run-R1,{b.id}\n"
    )
    mine = cli("mail", "broadcast", "--scope", "my-workers", "--message", "x")
    assert mine.code == 1 and "nobody live in scope my-workers" in mine.err
    assert (
        cli("mail", "broadcast", "--scope", "all", "--message", "x").out
        == f"sent m3 to user,run-R1,{b.id}\n"
    )
    office.become(monkeypatch, office.run)
    assert (
        cli(
            "mail",
            "broadcast",
            "--scope",
            "my-workers",
            "--type",
            "directive",
            "--priority",
            "critical",
            "--message",
            "pivot",
        ).out
        == f"sent m4 to {a.id},{b.id}\n"
    )


def test_task_report_sends_the_right_type_and_priority(office, cli, monkeypatch):
    worker = office.worker("7")
    office.become(monkeypatch, worker.id)
    for kind in ("progress", "blocked", "complete"):
        assert cli("task", "report", kind, f"{kind} text").out.startswith(
            f"reported {kind} to run-R1"
        )
    box = Mailbox(office.paths)
    got = [(m.type, m.priority, m.subject) for m in (box.get(n)[0] for n in (1, 2, 3))]
    assert got == [
        ("status_update", "normal", "task 7 progress: progress text"),
        ("blocked", "high", "task 7 blocked: blocked text"),
        ("status_update", "high", "task 7 complete: complete text"),
    ]
    assert (
        json.loads(cli("session", "whoami", "--json").out)["data"]["session"]["status"]
        == "completed"
    )
    office.become(monkeypatch, None)
    person = cli("task", "report", "progress", "x")
    assert person.code == 1 and "MAESTRO_SESSION_ID is not set" in person.err


def test_a_garbled_row_is_reported_and_the_rest_shown(office, cli, monkeypatch):
    worker = office.worker("1")
    office.become(monkeypatch, None)
    cli("mail", "send", "--to", worker.id, "--message", "good one")
    cli("mail", "send", "--to", worker.id, "--message", "bad one")
    with sqlite3.connect(Mailbox(office.paths).path) as conn:
        conn.execute("UPDATE mail SET priority = 'urgent', body = x'00ff' WHERE id = 2")
    office.become(monkeypatch, worker.id)
    inbox = cli("mail", "inbox")
    assert inbox.code == 0
    assert "m1 notification from user: good one" in inbox.out
    assert "m2: garbled (unknown priority 'urgent'; its body is not text); skipped" in inbox.out
    shown = cli("mail", "show", "m2")
    assert shown.code == 1 and "garbled" in shown.err


def test_a_damaged_store_is_one_line_with_the_fix(office, cli, monkeypatch):
    store = Mailbox(office.paths).path
    store.parent.mkdir(parents=True)
    garbage = b"this is not a database at all" * 100
    store.write_bytes(garbage)
    for argv in (("inbox",), ("send", "--to", office.run, "--message", "hello")):
        done = cli("mail", *argv)
        assert done.code == 1 and done.err.count("\n") == 1 and "Traceback" not in done.err
        assert "the mail store cannot be read (file is not a database)" in done.err
        assert f"Fix: move {store} aside" in done.err
    assert store.read_bytes() == garbage


def _creating(box):
    """Another process in the middle of creating the store: its write lock held on the
    new (still empty, not yet WAL) database file."""
    box.folder.mkdir(parents=True)
    creator = sqlite3.connect(box.path, isolation_level=None, check_same_thread=False)
    creator.execute("BEGIN IMMEDIATE")
    return creator


def test_the_first_send_waits_for_another_process_creating_the_store(office):
    box = Mailbox(office.paths)
    creator = _creating(box)
    threading.Timer(0.3, creator.execute, ("COMMIT",)).start()
    try:
        started = time.monotonic()
        sent = box.send(
            office.run, ["user"], type="notification", priority="normal", subject="s", body="b"
        )
        assert time.monotonic() - started >= 0.25  # it waited for the creator, then sent
    finally:
        creator.close()
    assert [m.id for m in box.inbox("user", mark=False)[0]] == [sent.id]


def test_a_store_held_past_the_timeout_is_busy_not_broken(office, cli, monkeypatch):
    from maestro.bus import mailbox as mailbox_module

    monkeypatch.setattr(mailbox_module, "BUSY_TIMEOUT_MS", 300)
    creator = _creating(Mailbox(office.paths))
    try:
        done = cli("mail", "send", "--to", office.run, "--message", "hello")
    finally:
        creator.close()
    assert done.code == 1 and done.err.count("\n") == 1
    assert "stayed busy" in done.err and "try again" in done.err and "aside" not in done.err


def test_wait_returns_at_once_critical_first(office, cli, monkeypatch):
    worker = office.worker("1")
    box = Mailbox(office.paths)
    box.send(
        "user", [worker.id], type="notification", priority="low", subject="later", body="later"
    )
    box.send(
        "user", [worker.id], type="directive", priority="critical", subject="stop", body="stop now"
    )
    office.become(monkeypatch, worker.id)
    done = cli("mail", "wait", "--timeout", "5")
    assert done.code == 0
    assert done.out.splitlines()[0] == "m2 directive critical from user: stop"
    empty = cli("mail", "wait", "--timeout", "0")
    assert empty.code == 11 and empty.out.splitlines()[0] == "no mail after 0s"


def test_mail_wait_names_the_next_call_and_never_the_same_twice(office, cli, monkeypatch):
    office.become(monkeypatch, office.worker("1").id)
    seen = []
    command = ["mail", "wait", "--timeout", "0"]
    for _ in range(6):  # Gemini CLI stops a model at the 6th identical call
        done = cli(*command)
        assert done.code == 11
        last = done.out.splitlines()[-1]
        assert last.startswith("next: ") and " mail wait --timeout 0 --poll " in last
        seen.append(last)
        command = last.split(" mail ", 1)[1].split()
        command.insert(0, "mail")
    assert len(set(seen)) == 6
    body = json.loads(cli("mail", "wait", "--timeout", "0", "--json").out)
    assert body["data"]["next"].endswith(" mail wait --json --timeout 0 --poll 2")


@pytest.mark.parametrize("watcher", ["inotify", "watchdog"])
def test_wait_wakes_on_a_send_without_polling(office, monkeypatch, watcher):
    from maestro import watch

    if watcher == "watchdog":
        monkeypatch.setattr(watch, "_LIBC", None)
    else:
        assert watch._LIBC is not None
    worker = office.worker("1")
    ready = threading.Event()
    result = {}

    def waiter():
        result["r"] = wait_for_mail(office.paths, worker.id, 20, ready=ready)
        result["t"] = time.monotonic()

    thread = threading.Thread(target=waiter)
    thread.start()
    assert ready.wait(10)
    time.sleep(0.2)
    sent = time.monotonic()
    Mailbox(office.paths).send(
        office.run, [worker.id], type="answer", priority="normal", subject="s", body="b"
    )
    thread.join(20)
    assert result["r"].state == "mail" and [m.body for m in result["r"].messages] == ["b"]
    assert result["t"] - sent < 2  # woken by the doorbell, not by the 20 s timeout


@pytest.mark.parametrize("watcher", ["inotify", "watchdog"])
def test_the_doorbell_wakes_an_engine_waiting_on_its_run(office, monkeypatch, watcher):
    from maestro import watch

    if watcher == "watchdog":
        monkeypatch.setattr(watch, "_LIBC", None)
    worker = office.worker("2")
    folder, wanted = bells(office.paths, [office.run])
    with watch.watch([folder], wanted) as bell:
        Mailbox(office.paths).send(
            worker.id, [worker.id], type="notification", priority="low", subject="s", body="b"
        )
        assert not bell.wait(0.5)  # mail for someone else
        Mailbox(office.paths).send(
            worker.id, [office.run], type="query", priority="normal", subject="q", body="?"
        )
        assert bell.wait(5)
    assert [m.subject for m in pending(office.paths, office.run)] == ["q"]
    assert unread(office, office.run) == 1  # pending() does not mark read


def test_a_doorbell_rings_without_a_write_and_wakes_its_waiter_each_time(office):
    """Ringing opens the bell for writing and closes it: no truncate and no write, which
    on ext4 could wait for the disk to flush the previous ring, in the send's latency."""
    from maestro.watch import watch

    worker = office.worker("3")
    box = Mailbox(office.paths)
    box.ring(worker.id)
    with watch([box.bells], lambda path: path.name == worker.id) as bell:
        for _ in range(3):
            box.send(
                office.run, [worker.id], type="notification", priority="low", subject="s", body="b"
            )
            assert bell.wait(5)
    assert box.bell(worker.id).stat().st_size == 0


def test_a_check_that_finds_nothing_does_not_wait_for_a_sender(office, monkeypatch):
    """Only a reader with something to claim takes the write lock: an empty check (a
    waiter's, most checks) reads while a sender holds it, instead of sleeping in SQLite's
    busy handler until the sender is done."""
    import sqlite3

    from maestro.bus import mailbox as mailbox_module

    worker = office.worker("4")
    box = Mailbox(office.paths)
    box.send(office.run, [worker.id], type="notification", priority="low", subject="s", body="b")
    assert [m.body for m in box.inbox(worker.id, unread_only=True)[0]] == ["b"]
    monkeypatch.setattr(mailbox_module, "BUSY_TIMEOUT_MS", 3000)
    sender = sqlite3.connect(box.path, isolation_level=None)
    sender.execute("BEGIN IMMEDIATE")  # a send in the middle of its transaction
    try:
        started = time.monotonic()
        assert box.inbox(worker.id, unread_only=True)[0] == []
        assert [m.body for m in box.inbox(worker.id)[0]] == ["b"]  # `mail inbox`: all read
        assert time.monotonic() - started < 1
    finally:
        sender.execute("ROLLBACK")
        sender.close()


def test_wait_ends_when_the_coordinator_dies(office, cli, monkeypatch):
    worker = office.worker("1")
    office.become(monkeypatch, worker.id)
    office.leases.pop(office.run).release()
    SessionStore(office.paths).update(office.run, process=None)  # the engine was this test process
    started = time.monotonic()
    done = cli("mail", "wait", "--timeout", "30")
    assert done.code == 12 and "your coordinator run-R1 is gone" in done.out
    assert time.monotonic() - started < 5


def test_an_empty_check_costs_a_few_tokens(office, cli, monkeypatch):
    office.become(monkeypatch, office.worker("1").id)
    assert count_tokens(cli("mail", "inbox").out) <= 3
    assert count_tokens(cli("mail", "inbox", "--unread").out) <= 4


def test_reply_to_an_urgent_blocker_is_urgent_and_in_its_thread(office, cli, monkeypatch):
    worker = office.worker("1")
    office.become(monkeypatch, worker.id)
    cli("task", "report", "blocked", "need the schema")
    office.become(monkeypatch, None)
    cli("mail", "reply", "m1", "--message", "see docs/schema.md")
    answer = Mailbox(office.paths).get(2)[0]
    assert (answer.type, answer.priority, answer.thread, answer.reply_to) == (
        "answer",
        "high",
        1,
        1,
    )
    assert answer.to == [worker.id]
    receipt = Mailbox(office.paths).get(1)[1][0]
    assert receipt.read_by == "user"  # replying reads it


def test_a_long_lived_reader_keeps_one_connection_across_reads(office):
    worker = office.worker("1")
    kept = Mailbox(office.paths, keep_open=True)
    try:
        for n in range(3):
            Mailbox(office.paths).send(
                "user",
                [worker.id],
                type="notification",
                priority="normal",
                subject="s",
                body=str(n),
            )
            messages, _ = kept.inbox(worker.id, unread_only=True)
            assert [m.body for m in messages] == [str(n)]
        assert kept._kept is not None  # the one connection, still open
    finally:
        kept.close()
    assert unread(office, worker.id) == 0


def test_send_into_an_existing_thread(office, cli, monkeypatch):
    worker = office.worker("1")
    office.become(monkeypatch, None)
    cli("mail", "send", "--to", worker.id, "--message", "first")
    cli(
        "mail", "reply", "m1", "--message", "second"
    )  # the person answering its own note: same thread
    assert cli("mail", "send", "--to", worker.id, "--thread", "m2", "--message", "third").code == 0
    assert Mailbox(office.paths).get(3)[0].thread == 1
    assert [m.body for m in Mailbox(office.paths).thread(3)[0]] == ["first", "second", "third"]
    missing = cli("mail", "send", "--to", worker.id, "--thread", "m99", "--message", "x")
    assert missing.code == 1 and "no mail m99 to thread onto" in missing.err
    assert unread(office, worker.id) == 2  # the refused one was not stored
    bad = cli("mail", "show", "12x")
    assert bad.code == 1 and "'12x' is not a mail id" in bad.err


def test_a_reader_of_previews_gets_each_body_cut_with_its_whole_length(office):
    worker = office.worker("1")
    mailbox = Mailbox(office.paths)
    fields = {"type": "query", "priority": "normal", "subject": "s"}
    mailbox.send(worker.id, ["user"], body="é" * 10, **fields)
    mailbox.send(worker.id, ["user"], body="short", thread=1, **fields)
    inbox, _ = mailbox.inbox("user", mark=False, body_limit=4)
    thread, _ = mailbox.thread(1, body_limit=4)
    for read in (inbox, thread):
        assert [(m.body, m.whole) for m in read] == [("éééé", 10), ("shor", 5)]
    assert [(m.body, m.whole) for m in mailbox.thread(1)[0]] == [("é" * 10, None), ("short", None)]
    assert mailbox.inbox("user", body_limit=5)[0][1].whole is None  # whole already


def test_worker_session_ids_are_safe_for_any_task_id(office):
    assert office.worker("4.1").id.startswith("t4.1-")
    assert office.worker("a/b c").id.startswith("tabc-")


def test_a_session_is_shown_only_the_mail_it_sent_or_received(office, cli, monkeypatch):
    mine, theirs = office.worker("1"), office.worker("2")
    office.become(monkeypatch, None)
    cli("mail", "send", "--to", theirs.id, "--message", "for task 2 only")
    office.become(monkeypatch, mine.id)
    cli("mail", "send", "--to", theirs.id, "--message", "mine to 2")
    # Another's mail is as if not there: not shown, not answered, not threaded onto.
    for verb in (
        ["show", "m1"],
        ["thread", "m1"],
        ["reply", "m1", "--message", "x"],
        ["send", "--to", theirs.id, "--thread", "m1", "--message", "x"],
    ):
        refused = cli("mail", *verb)
        assert refused.code == 1 and "no mail m1 of yours" in refused.err, verb
    assert "no mail m99 of yours" in cli("mail", "show", "m99").err
    assert "mine to 2" in cli("mail", "show", "m2").out  # one it sent
    office.become(monkeypatch, theirs.id)
    assert "for task 2 only" in cli("mail", "show", "m1").out
    assert cli("mail", "reply", "m1", "--message", "from 2").code == 0
    office.become(monkeypatch, None)  # the person: the whole project's
    assert "from 2" in cli("mail", "thread", "m1").out
    assert Mailbox(office.paths).get(1)[1][0].read_by == theirs.id
    assert [m.body for m in Mailbox(office.paths).inbox("user", mark=False)[0]] == ["from 2"]
