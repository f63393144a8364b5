"""The run tells the person, away from the board, what waits for them: a webhook POST
and a desktop notification per moment, once, holding no transcript; a channel that fails
is logged in the run's record and never stops or holds up the run."""

from __future__ import annotations

import json
import os
import time

from maestro.clock import parse_iso
from maestro.config import load_settings
from maestro.engine.notifier import Notifier
from maestro.engine.rundir import RunDir
from maestro.errors import PlanError
from maestro.state.model import Plan
from maestro.state.store import PlanStore
from tests.engine.runkit import answer, events, plan, step, task, write_plan
from tests.notifykit import calls

MARKER = "TRANSCRIPT-MARKER-5f3a9"


def three_moments(cli, project, runenv, monkeypatch):
    """Task 1's worker asks a question and waits a little for the answer; Task 2 fails
    (its CLI's login is gone); Task 3 is blocked once its one attempt fails: a decision.
    Each spoke prints the marker into its transcript."""
    monkeypatch.setenv("MAESTRO_MAX_RETRIES", "0")
    write_plan(
        cli,
        project,
        [
            task(
                1,
                "Pick the port",
                tool="claude",
                files=["src/one.py"],
                validation="test -f src/one.py",
            ),
            task(2, "Write the client", tool="codex", files=["src/two.py"]),
            task(3, "Write the server", tool="gemini", files=["src/three.py"]),
        ],
    )
    ask = ["mail", "send", "--to-coordinator", "--type", "query", "--message", "Which port?"]
    wait = {"maestro": ["mail", "wait", "--timeout", "1"], "until": "never answered", "tries": 3}
    runenv.script("claude", [step("src/one.py", shell=[ask, wait], text=answer(summary=MARKER))])
    runenv.script("codex", [{"http": 401, "early": {"stdout": MARKER + "\n"}}])
    runenv.script("gemini", [{"exit": 1, "stdout": MARKER, "stderr": MARKER}])
    return cli("run")


def test_each_moment_of_a_run_is_posted_once_and_none_holds_a_transcript(
    cli, project, runenv, receiver, monkeypatch
):
    monkeypatch.setenv("MAESTRO_NOTIFY_WEBHOOK", receiver.url)
    done = three_moments(cli, project, runenv, monkeypatch)
    assert done.code == 2, done.out + done.err
    assert (
        MARKER
        in (project / ".ai/maestro/runs")
        .joinpath(events(project)[0]["run_id"], "task-1-attempt-1.stream.jsonl")
        .read_text()
    )
    bodies = {b["kind"]: b for b in receiver.bodies}
    assert sorted(b["kind"] for b in receiver.bodies) == ["decision", "failed", "question"]
    assert all(MARKER not in raw.decode() for raw in receiver.raw)
    assert all("SECRET" not in raw.decode() for raw in receiver.raw)  # the URL's own path
    run_id = events(project)[0]["run_id"]
    question = bodies["question"]
    assert question["text"] == question["content"]  # Slack's key and Discord's
    assert question["title"] == "maestro · proj: Question: Task 1 · Pick the port"
    assert (question["project"], question["run"], question["task"]) == ("proj", run_id, "1")
    assert (question["task_title"], question["asked"]) == ("Pick the port", "Which port?")
    assert question["command"] == 'maestro mail reply m1 --message "<your answer>"'
    assert bodies["failed"]["task_title"] == "Write the client"
    assert bodies["failed"]["asked"] == "codex: auth (after 1 attempt)"
    assert bodies["decision"]["command"] == (
        'maestro run 3 --clarify "<what the task needs to know>"'
    )
    record = json.loads((project / ".ai/maestro/runs" / run_id / "notified.json").read_text())
    assert sorted(record["sent"]) == sorted(b["id"] for b in receiver.bodies)

    # The engine started again on the same run sends none of them again.
    again = cli("run", "--run-id", run_id)
    assert again.code in (0, 2), again.out + again.err
    assert len(receiver.bodies) == 3


def test_a_desktop_notification_per_moment_through_notify_send(
    cli, project, runenv, desktop, monkeypatch
):
    monkeypatch.setenv("MAESTRO_NOTIFY_DESKTOP", "1")
    assert three_moments(cli, project, runenv, monkeypatch).code == 2
    shown = calls(desktop)
    assert sorted(args[1] for args in shown) == [
        "maestro · proj: Decision: Task 3 · Write the server",
        "maestro · proj: Failed: Task 2 · Write the client",
        "maestro · proj: Question: Task 1 · Pick the port",
    ]
    assert all(args[0] == "--app-name=maestro" for args in shown)
    assert all(MARKER not in " ".join(args) for args in shown)
    assert not [e for e in events(project) if e["kind"] == "notify"]


def test_no_desktop_notifier_is_said_once_and_the_run_goes_on(cli, project, runenv, monkeypatch):
    monkeypatch.setenv("MAESTRO_NOTIFY_DESKTOP", "1")  # and no notify-send on this PATH
    assert three_moments(cli, project, runenv, monkeypatch).code == 2
    said = [e for e in events(project) if e["kind"] == "notify"]
    assert len(said) == 1 and said[0]["channel"] == "desktop"
    assert "no notify-send on PATH" in said[0]["detail"] and "libnotify" in said[0]["fix"]
    assert [t.status for t in plan(project).tasks] == ["done", "failed", "blocked"]


def one_fails_then_one_runs(cli, project, runenv, monkeypatch):
    """One slot: Task 1 fails at once, then Task 2 runs and is done."""
    monkeypatch.setenv("MAESTRO_MAX_CONCURRENT", "1")
    write_plan(
        cli,
        project,
        [
            task(1, "First", tool="codex", files=["src/one.py"]),
            task(2, "Second", tool="claude", files=["src/app.py"]),
        ],
    )
    runenv.script("codex", [{"http": 401}])
    runenv.script("claude", [step()])
    return cli("run")


def test_a_webhook_that_fails_is_logged_and_the_run_is_as_without_it(
    cli, project, runenv, receiver, monkeypatch
):
    receiver.status = 500
    monkeypatch.setenv("MAESTRO_NOTIFY_WEBHOOK", receiver.url)
    done = one_fails_then_one_runs(cli, project, runenv, monkeypatch)
    assert done.code == 2, done.out + done.err
    assert [t.status for t in plan(project).tasks] == ["failed", "done"]
    (said,) = [e for e in events(project) if e["kind"] == "notify"]
    assert (
        said["channel"].startswith("webhook http://127.0.0.1:") and "SECRET" not in said["channel"]
    )
    assert "HTTP 500" in said["detail"] and said["need"].startswith("failed:1:")


def test_a_webhook_that_never_answers_holds_up_no_dispatch(
    cli, project, runenv, receiver, monkeypatch
):
    receiver.hang = True
    monkeypatch.setenv("MAESTRO_NOTIFY_WEBHOOK", receiver.url)
    begun = time.monotonic()
    done = one_fails_then_one_runs(cli, project, runenv, monkeypatch)
    took = time.monotonic() - begun
    assert done.code == 2, done.out + done.err
    seen = {(e["kind"], e.get("task")): e for e in events(project)}
    failed = parse_iso(seen[("task_failed", "1")]["time"]).timestamp()
    started = parse_iso(seen[("task_started", "2")]["time"]).timestamp()
    assert started - failed < 2.0  # the next dispatch did not wait for the webhook
    assert receiver.bodies and "no answer within 5 s" in seen[("notify", None)]["detail"]
    assert took < 30


def test_without_a_channel_nothing_is_recorded(cli, project, runenv, monkeypatch):
    assert one_fails_then_one_runs(cli, project, runenv, monkeypatch).code == 2
    run_id = events(project)[0]["run_id"]
    assert not (project / ".ai/maestro/runs" / run_id / "notified.json").exists()


def test_a_run_stopped_at_its_token_budget_is_posted_once(
    cli, project, runenv, receiver, monkeypatch
):
    monkeypatch.setenv("MAESTRO_NOTIFY_WEBHOOK", receiver.url)
    monkeypatch.setenv("MAESTRO_MAX_CONCURRENT", "1")
    write_plan(cli, project, [task(1, "First"), task(2, "Second", depends=[1])])
    runenv.script("claude", [step(), step()])
    done = cli("run", "--budget-tokens", "100")
    assert done.code == 2 and "run token budget reached" in done.out + done.err
    (body,) = receiver.bodies
    assert (body["kind"], body["title"]) == ("cap", "maestro · proj: Token budget reached: the run")
    assert body["asked"].startswith("run token budget reached: ")
    assert "of 100 tokens used; remaining tasks stay pending" in body["asked"]
    assert body["command"] == "maestro run"


def test_a_plan_that_cannot_be_read_mid_run_is_looked_at_again_later(
    cli, project, receiver, monkeypatch
):
    """A look never stops the run: the plan saved half-edited, a full disk."""
    monkeypatch.setenv("MAESTRO_NOTIFY_WEBHOOK", receiver.url)
    write_plan(cli, project, [task(1, "First")])
    settings = load_settings(project)
    run = RunDir(settings.paths, "20261121T120000Z-1a2b").create(state="running")
    store = PlanStore(settings.paths)
    with store.edit() as edited:
        edited.tasks[0].status, edited.tasks[0].run_id = "failed", run.run_id

    def broken() -> Plan:
        raise PlanError("the plan is being edited.")

    emitted: list[tuple[str, dict]] = []
    with Notifier(
        settings, dict(os.environ), run, lambda k, **d: emitted.append((k, d))
    ) as notices:
        notices.look(broken)
        assert notices.sent == set()
        notices.saw({"kind": "task_failed"})
        notices.look(store.view)
        notices.finish(store.view)
    assert [b["id"] for b in receiver.bodies] == [f"failed:1:{run.run_id}:0"]
    assert emitted == []
