"""What waits for the person, read from the plan, the office and the latest run."""

from __future__ import annotations

import pytest

from maestro.bus import workers
from maestro.bus.mailbox import Mailbox
from maestro.bus.sessions import SessionStore
from maestro.config import load_settings
from maestro.engine.needs import cause, waiting
from maestro.engine.rundir import RunDir
from maestro.state.model import Review
from maestro.state.store import PlanStore
from tests.engine.runkit import task, write_plan


@pytest.fixture
def paths(cli, project):
    write_plan(cli, project, [task(1, "Pick the port"), task(2, "Write the client")])
    return load_settings(project).paths


def ask(paths, sender: str, text: str, kind: str = "query") -> int:
    sent = Mailbox(paths).send(
        sender, ["run-R1"], type=kind, priority="normal", subject=text, body=text
    )
    return sent.id


def test_nothing_waits_on_a_fresh_plan(paths):
    assert waiting(paths, PlanStore(paths).view()) == []


def test_a_workers_open_question_waits_while_it_is_there_to_read_the_answer(paths):
    run = workers.start_run_session(paths, "R1")
    store = SessionStore(paths)
    asking = store.create(
        mode="coordinated-worker", coordinator="run-R1", run_id="R1", task_ids=["1"]
    )
    held = store.lease(asking.id)
    gone = store.create(
        mode="coordinated-worker", coordinator="run-R1", run_id="R1", task_ids=["2"]
    )
    try:
        first = ask(paths, asking.id, "Which port?")
        ask(paths, asking.id, "Stuck on the schema", "blocked")
        answered = ask(paths, asking.id, "Tabs or spaces?")
        Mailbox(paths).send(
            "user",
            [asking.id],
            type="answer",
            priority="normal",
            subject="re",
            body="tabs",
            thread=answered,
            reply_to=answered,
        )
        ask(paths, gone.id, "Nobody reads this answer")
        store.end(gone.id, "completed")
        found = waiting(paths, PlanStore(paths).view())
    finally:
        held.release()
        run.release()
    assert [(n.kind, n.asked, n.task, n.title, n.run) for n in found] == [
        ("question", "Which port?", "1", "Pick the port", "R1"),
        ("blocker", "Stuck on the schema", "1", "Pick the port", "R1"),
    ]
    question = found[0]
    assert (question.id, question.mail, question.who) == (f"mail:m{first}", f"m{first}", asking.id)
    assert question.command == f'maestro mail reply m{first} --message "<your answer>"'
    assert question.headline == "Question: Task 1 · Pick the port"


def test_a_failed_and_a_blocked_task_wait_with_maestros_words_only(paths):
    with PlanStore(paths).edit() as plan:
        one, two = plan.tasks
        one.status, one.attempts, one.run_id, one.finished = (
            "failed",
            1,
            "R1",
            "2026-11-21T12:00:00Z",
        )
        one.result = "codex: auth: a CLI's words. Fix: log in. Options: 1) ..."
        two.status, two.attempts, two.run_id, two.finished = (
            "blocked",
            3,
            "R1",
            "2026-11-21T12:01:00Z",
        )
        two.result = (
            "needs decomposition: format gate: no Result Submission found (after 3 attempts)"
        )
    found = waiting(paths, PlanStore(paths).view())
    assert [(n.id, n.kind, n.asked) for n in found] == [
        ("failed:1:R1:1", "failed", "codex: auth (after 1 attempt)"),
        ("decision:2:R1:3", "decision", "needs decomposition: format gate (after 3 attempts)"),
    ]
    assert found[1].command == 'maestro run 2 --clarify "<what the task needs to know>"'


def test_an_approved_review_waits_for_the_persons_yes(paths):
    with PlanStore(paths).edit() as plan:
        plan.tasks[0].status = "done"
        plan.reviews.append(
            Review(
                id="R-1",
                task="1",
                reviewer="gemini",
                round=1,
                time="2026-11-21T12:00:00Z",
                verdict="approve",
            )
        )
    (need,) = waiting(paths, PlanStore(paths).view())
    assert (need.id, need.kind, need.command) == (
        "review:R-1",
        "decision",
        "maestro review 1 --auto",
    )


def test_a_run_stopped_at_its_token_budget_waits(paths):
    run = RunDir(paths, "20261121T120000Z-1a2b").create(
        state="ended", finished="2026-11-21T12:00:00Z"
    )
    run.write_meta(cap="run token budget reached: 1,200 of 1,000 tokens used")
    (need,) = waiting(paths, PlanStore(paths).view())
    assert (need.id, need.kind, need.command) == ("cap:20261121T120000Z-1a2b", "cap", "maestro run")
    assert need.asked.startswith("run token budget reached") and need.headline.startswith("Token")


@pytest.mark.parametrize(
    ("reason", "head"),
    [
        ("codex: auth: You are not logged in <words>", "codex: auth"),
        (
            "needs decomposition: gemini: other: its output starts with 'x'",
            "needs decomposition: gemini: other",
        ),
        ("scope gate: edited a.py outside its files", "scope gate"),
        ("stopped by user: wrong approach", "stopped by user"),
        ("4.1 failed, 4.2 pending", "4.1 failed, 4.2 pending"),
    ],
)
def test_a_reasons_head_keeps_maestros_labels_and_drops_what_follows(reason, head):
    assert cause(reason) == head
