"""`maestro run --detach` and `maestro wait`: a real background engine, followed by
inotify, with exit codes saying whether the run is still going."""

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from maestro.engine.rundir import RunLock
from maestro.paths import ProjectPaths
from tests.engine.runkit import events, left_running, plan, step, task, write_plan
from tests.fakes.plugin import stop_leftovers
from tests.helpers import new_pid_namespace

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def detachable(runenv, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(REPO))  # the detached engine is `python -m maestro`
    return runenv


def two_tasks(cli, project, fakes, sleep=0.4):
    write_plan(
        cli,
        project,
        [task(1), task(2, files=["src/b.py"], validation="test -f src/b.py", depends=[1])],
    )
    fakes.script("codex", [{**step(), "sleep": sleep}, {**step("src/b.py"), "sleep": sleep}])


def wait_until_ended(cli, limit=10):
    outputs = []
    for _ in range(limit):
        res = cli("wait", "--timeout", "30")
        outputs.append(res)
        assert res.code == 0, res.out + res.err
        if "\nnext: " not in "\n" + res.out:
            return outputs
    raise AssertionError("the run never ended")


def test_detach_returns_at_once_and_one_wait_follows_to_the_end(cli, project, detachable):
    """Tasks done are no reason to wake the hub; the run's end is, with a digest of what
    happened."""
    two_tasks(cli, project, detachable)
    started = time.monotonic()
    res = cli("run", "--detach")
    assert res.code == 0 and time.monotonic() - started < 3
    run_id = res.out.split()[1]
    assert "started in the background" in res.out and "maestro wait" in res.out
    outputs = wait_until_ended(cli)
    assert len(outputs) == 1, [r.out for r in outputs]
    text = outputs[0].out
    assert "tasks 1, 2 done" in text and f"run {run_id} finished: 2 done" in text
    assert "started" not in text and "next:" not in text
    again = cli("wait", "--timeout", "5")
    assert again.code == 0 and again.out.startswith("nothing new; run") and "finished" in again.out
    assert plan(project).task("2").status == "done"
    log = project / ".ai" / "maestro" / "runs" / run_id / "engine.log"
    assert "task 2 done" in log.read_text()


def test_detached_engine_is_this_maestro_whatever_the_project_holds(
    cli, project, runenv, monkeypatch
):
    """No PYTHONPATH from the caller (a source checkout run as `python -m maestro -C DIR`),
    and a `maestro` folder in the project that would shadow the package from its cwd."""
    monkeypatch.delenv("PYTHONPATH", raising=False)
    shadow = project / "maestro"
    shadow.mkdir()
    (shadow / "__init__.py").write_text("raise SystemExit('the project shadowed Maestro')\n")
    two_tasks(cli, project, runenv, sleep=0.1)
    assert cli("run", "--detach").code == 0
    text = "".join(r.out for r in wait_until_ended(cli))
    assert "finished: 2 done" in text, text
    assert plan(project).task("2").status == "done"


def test_wait_json_timeout_and_each_event_shown_once(cli, project, detachable):
    two_tasks(cli, project, detachable, sleep=2.0)
    assert cli("run", "--detach").code == 0
    first = cli("wait", "--timeout", "0.5", "--json")
    assert first.code == 0 and first.out.count("\n") == 1  # one line
    body = json.loads(first.out)
    assert body["data"]["state"] == "timeout" and body["exit_code"] == 0 and body["ok"]
    seqs = [e["seq"] for e in body["data"]["events"]]
    for _ in range(10):
        res = cli("wait", "--timeout", "30", "--json")
        data = json.loads(res.out)["data"]
        seqs += [e["seq"] for e in data["events"]]
        assert res.code == 0
        if "next" not in data:
            break
    assert data["state"] == "ended" and data["events"][-1]["status"] == "finished"
    assert "ended" not in data  # the run's end is an event, shown once
    assert seqs == sorted(set(seqs)) and seqs[-1] == data["last_seq"]  # each once, in order


def test_a_timeout_after_new_events_does_not_say_nothing_new(cli, project, detachable):
    write_plan(
        cli,
        project,
        [task(1), task(2, files=["src/b.py"], validation="test -f src/b.py", depends=[1])],
    )
    detachable.script("codex", [{**step(), "sleep": 0.2}, {**step("src/b.py"), "sleep": 5.0}])
    assert cli("run", "--detach").code == 0
    for _ in range(60):
        res = cli("wait", "--timeout", "0.3")
        assert res.code == 0 and "after 0.3s" in res.out, res.out
        if "task 1 done" in res.out:
            break
    assert "task 1 done" in res.out
    assert "nothing new" not in res.out and "still going" in res.out
    cli("run", "--abort")
    wait_until_ended(cli)


def test_wait_wakes_when_the_engine_dies(cli, project, detachable):
    import os
    import signal

    write_plan(cli, project, [task(1)])
    detachable.script("codex", [{"hang": True}])
    assert cli("run", "--detach").code == 0
    deadline = time.monotonic() + 20
    while not detachable.runs("codex") and time.monotonic() < deadline:
        time.sleep(0.05)
    holder = None
    while holder is None and time.monotonic() < deadline:
        holder = RunLock(ProjectPaths(project)).holder()
    os.kill(holder["pid"], signal.SIGKILL)
    started = time.monotonic()
    res = cli("wait", "--timeout", "30")
    assert res.code == 0 and "died" in res.out and "maestro run" in res.out
    assert "nothing to do" not in res.out and "0 tokens" not in res.out  # it had a task running
    assert time.monotonic() - started < 10  # woken by the engine's exit, not the timeout
    # Its confined spoke ended with it (bwrap dies with its parent): nothing to stop.
    assert left_running(str(detachable.path("codex")).encode()) == []


def test_an_engine_gone_with_its_pid_namespace_is_reported_dead_at_once(cli, project, detachable):
    """As in Codex's command sandbox: `run --detach` runs in a PID namespace of its own,
    the engine it leaves behind dies with the namespace when the command ends, and the
    pid it recorded means nothing here (pid 2 or 3: often a kernel thread, alive)."""
    prefix = new_pid_namespace()
    write_plan(cli, project, [task(1)])
    detachable.script("codex", [{"hang": True}])
    out = subprocess.run(
        [*prefix, sys.executable, "-m", "maestro", "run", "--detach"],
        cwd=project,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    run_id = out.stdout.split()[1]
    assert RunLock(ProjectPaths(project)).holder() is None  # the kernel dropped the engine's lock
    started = time.monotonic()
    res = cli("wait", "--timeout", "30")
    assert time.monotonic() - started < 1.0
    assert res.code == 0 and "died" in res.out and "maestro run" in res.out, res.out
    assert f"run {run_id}" in res.out
    assert cli("status", "--json").code == 0


def test_wait_without_a_run(cli, project):
    res = cli("wait")
    assert res.code == 1 and "no run has been started" in res.err


def test_detach_refused_while_a_run_holds_the_lock(cli, project, detachable):
    write_plan(cli, project, [task(1)])
    lock = RunLock(ProjectPaths(project))
    lock.acquire("R-other")
    try:
        res = cli("run", "--detach")
    finally:
        lock.release()
    assert res.code == 1 and "R-other" in res.err


def test_help_documents_the_exit_codes(cli, capsys):
    assert cli("wait", "--help").code == 0
    out = capsys.readouterr().out
    assert "0 it returned normally" in out and "1 an error" in out


def test_watchdog_log_lines_never_reach_the_terminal():
    """watchdog logs an error when its emitter is stopped mid-read (a race on our own
    stop); with no logging set up Python would print it on stderr, under wait's answer."""
    import subprocess
    import sys

    code = (  # maestro.watch starts every watchdog observer: importing it sets the guard
        "import logging, maestro.watch\n"
        "logging.getLogger('watchdog.observers.inotify').error("
        "'InotifyEmitter.queue_events() called when the thread is inactive')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0 and done.stderr == ""


def _next(res) -> str | None:
    """The `next:` line of a text answer; it is always the last line."""
    last = res.out.rstrip("\n").splitlines()[-1]
    return last.removeprefix("next: ") if last.startswith("next: ") else None


def _run_next(cli, command: str):
    """Run a `next` command line as a hub would, in-process: its words after `wait`."""
    words = shlex.split(command)
    return cli(*words[words.index("wait") :])


def test_each_answer_names_the_next_command_until_the_run_ends(cli, project, detachable):
    two_tasks(cli, project, detachable, sleep=1.0)
    res = cli("run", "--detach")
    run_id = res.out.split()[1]
    command = _next(res)
    assert command is not None and f"wait --run {run_id} --after 0 --poll 1" in command
    seen = [command]
    for _ in range(60):
        res = _run_next(cli, f"{command} --timeout 0.3")
        assert res.code == 0, res.out + res.err
        command = _next(res)
        if command is None:
            break
        assert command is not None and command != seen[-1]  # differs even when nothing happened
        seen.append(command)
    assert command is None and "finished: 2 done" in res.out
    assert len(seen) == len(set(seen)) and len(seen) > 2
    assert [int(c.rsplit(" ", 1)[1]) for c in seen] == list(range(1, len(seen) + 1))


def test_json_answers_carry_next_and_a_repeated_next_answers_the_same(cli, project, detachable):
    two_tasks(cli, project, detachable, sleep=0.2)
    started = json.loads(cli("run", "--detach", "--json").out)
    command = started["data"]["next"]
    assert " wait --json --run " in command
    while True:
        body = json.loads(_run_next(cli, command).out)
        if "next" not in body["data"]:
            break
        command = body["data"]["next"]
    assert body["data"]["state"] == "ended" and body["data"]["events"][-1]["status"] == "finished"
    # The last call, repeated (its answer lost, say): the same events again.
    again = json.loads(_run_next(cli, command).out)
    assert again["data"]["events"] == body["data"]["events"]
    assert again["data"]["last_seq"] == body["data"]["last_seq"]


def test_next_names_this_very_program(cli, project, detachable, monkeypatch):
    from maestro.install.invocation import current

    script = project.parent / "bin" / "maestro"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n")
    monkeypatch.setattr(sys, "argv", [str(script), "wait"])
    assert current() == str(script)
    monkeypatch.setattr(sys, "argv", ["/x/pytest"])
    monkeypatch.delenv("PYTHONPATH", raising=False)
    assert current() == shlex.join([sys.executable, "-P", "-m", "maestro"])


def test_plain_waits_count_up_too(cli, project, detachable):
    """A hub that types `maestro wait` instead of the `next` line still never gets the
    same `next` twice in a row."""
    two_tasks(cli, project, detachable, sleep=1.5)
    assert cli("run", "--detach").code == 0
    lines = []
    for _ in range(4):
        res = cli("wait", "--timeout", "0.2")
        if _next(res) is None:
            break
        lines.append(_next(res))
    assert len(lines) >= 2 and len(set(lines)) == len(lines), lines
    cli("run", "--abort")
    wait_until_ended(cli)


def _hung_run(cli, project, detachable):
    """A detached run whose one task hangs in its spoke, with the start already shown."""
    write_plan(cli, project, [task(1)])
    detachable.script("codex", [{"hang": True}])
    res = cli("run", "--detach")
    assert res.code == 0
    run_id = res.out.split()[1]
    deadline = time.monotonic() + 20
    while not detachable.runs("codex") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "nothing new after 0.5s" in cli("wait", "--timeout", "0.5").out
    return run_id


def _kill_run(project, detachable):
    import signal

    # The fake records its call after its shell steps: a blocker reported by one can be
    # seen before the call it came from is.
    deadline = time.monotonic() + 10
    while not detachable.runs("codex") and time.monotonic() < deadline:
        time.sleep(0.05)
    holder = RunLock(ProjectPaths(project)).holder()
    if holder:
        os.kill(holder["pid"], signal.SIGKILL)
    stop_leftovers(detachable)  # (a confined fake's own pid names another process here)


def test_wait_wakes_on_a_workers_question_and_prints_the_reply_line(cli, project, detachable):
    import threading

    from maestro.bus.mailbox import Mailbox

    run_id = _hung_run(cli, project, detachable)
    mailbox = Mailbox(ProjectPaths(project))
    mailbox.send(
        "t1-abc",
        [f"run-{run_id}"],
        type="status_update",
        priority="normal",
        subject="task 1: progress",
        body="halfway",
    )
    sender = threading.Timer(
        0.8,
        lambda: mailbox.send(
            "t1-abc",
            [f"run-{run_id}"],
            type="query",
            priority="normal",
            subject="Token format?",
            body="JWT or opaque ids?",
        ),
    )
    started = time.monotonic()
    sender.start()
    try:
        res = cli("wait", "--timeout", "30")
    finally:
        sender.join()
    assert res.code == 0 and "still going" in res.out, res.out
    assert time.monotonic() - started < 10  # woken by the doorbell, not the timeout
    assert "m2 query from t1-abc: Token format?\n  JWT or opaque ids?\n" in res.out
    answer = next(line for line in res.out.splitlines() if line.startswith("  answer: "))
    assert answer.endswith(' mail reply m2 --message "..."')
    assert (
        answer.removeprefix("  answer: ").split(" mail reply")[0]
        == res.out.split("next: ")[1].split(" wait")[0]
    )
    assert "halfway" not in res.out  # progress is no question: it does not wake the hub
    assert "\nnext: " in res.out
    # Shown once, and the worker sees that the hub read it.
    again = cli("wait", "--timeout", "0.5")
    assert "nothing new after" in again.out and "Token format" not in again.out
    assert "read " in cli("mail", "show", "m2").out and "by user" in cli("mail", "show", "m2").out
    blocked = mailbox.send(
        "t1-abc",
        [f"run-{run_id}"],
        type="blocked",
        priority="high",
        subject="task 1: blocked",
        body="no database",
    )
    data = json.loads(cli("wait", "--json", "--timeout", "5").out)["data"]
    assert [m["id"] for m in data["mail"]] == [f"m{blocked.id}"] and data["state"] == "running"
    assert data["mail"][0]["reply"].endswith(f'mail reply m{blocked.id} --message "..."')
    _kill_run(project, detachable)


def test_a_workers_blocker_is_shown_once_as_the_mail_to_answer(cli, project, detachable):
    """A blocker is both a task_report event and unread mail to the run: `maestro wait`
    shows it once, with its reply line (its JSON keeps the event)."""
    write_plan(cli, project, [task(1)])
    report = {"sh": "maestro task report blocked 'no database'"}
    detachable.script("codex", [{**step(shell=[report]), "hang": True}])
    assert cli("run", "--detach").code == 0

    def reported() -> bool:
        try:
            return any(e["kind"] == "task_report" for e in events(project))
        except FileNotFoundError:
            return False  # the detached engine has not begun its events yet

    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not reported():
        time.sleep(0.05)
    res = cli("wait", "--timeout", "5")
    try:
        assert res.code == 0 and "still going" in res.out, res.out
        said = [line for line in res.out.splitlines() if "blocked: no database" in line]
        assert len(said) == 1 and "answer: " in res.out, res.out
        data = json.loads(cli("wait", "--json", "--after", "0", "--timeout", "0").out)["data"]
        assert any(e["kind"] == "task_report" and e.get("mail") for e in data["events"])
    finally:
        _kill_run(project, detachable)


def test_progress_never_wakes_the_hub_but_a_decision_does_at_once(
    cli, project, detachable, monkeypatch
):
    """Tasks done are no reason to wake the hub, whatever earlier versions' digest interval
    said; a decision (task 3's retries exhausted) ends the wait as soon as it is made, and
    its answer sums up the tasks done meanwhile."""
    monkeypatch.setenv("MAESTRO_WAKE_INTERVAL", "1")  # read by earlier versions only
    monkeypatch.setenv("MAESTRO_MAX_RETRIES", "0")
    write_plan(
        cli,
        project,
        [
            task(1),
            task(2, files=["src/b.py"], validation="test -f src/b.py", depends=[1]),
            task(3, files=["src/c.py"], validation="test -f src/never.py", depends=[2]),
        ],
    )
    spoke_s = 3.0  # task 3's: its decision comes that long after tasks 1 and 2 are done
    detachable.script(
        "codex",
        [
            {**step(), "sleep": 0.3},
            {**step("src/b.py"), "sleep": 0.3},
            {**step("src/c.py"), "sleep": spoke_s},
        ],
    )
    assert cli("run", "--detach").code == 0
    started = time.monotonic()
    first = cli("wait", "--timeout", "60")
    waited = time.monotonic() - started
    assert "tasks 1, 2 done" in first.out and "decision needed on task 3" in first.out, first.out
    assert "started" not in first.out
    assert spoke_s <= waited < 30, waited  # woken by the decision, not the timeout
    cli("run", "--abort")
    wait_until_ended(cli)


def test_run_follow_starts_the_run_and_answers_once_it_needs_the_hub(cli, project, detachable):
    """What a hub runs: the start and its first wait in one call, one hub turn less."""
    two_tasks(cli, project, detachable, sleep=0.3)
    res = cli("run", "--follow")
    assert res.code == 0, res.err
    first = res.out.splitlines()[0]
    assert first.startswith("run ") and "started in the background" in first
    run_id = first.split()[1]
    assert "tasks 1, 2 done" in res.out and f"run {run_id} finished: 2 done" in res.out
    assert "next:" not in res.out
    assert plan(project).task("2").status == "done"
    assert "nothing new; run" in cli("wait", "--timeout", "5").out  # shown once


def test_run_follow_json_is_one_object_with_the_wait_in_it(cli, project, detachable):
    two_tasks(cli, project, detachable, sleep=0.1)
    body = json.loads(cli("run", "--follow", "--json").out)
    data = body["data"]
    assert body["ok"] and data["detached"] and data["state"] == "ended" and "next" not in data
    assert data["events"][-1]["status"] == "finished"


@pytest.mark.parametrize(
    ("marker", "limit"),
    [
        ({}, 600.0),
        ({"CLAUDECODE": "1"}, 7140),
        ({"GEMINI_CLI": "1"}, None),
        ({"CODEX_CI": "1"}, None),
    ],
)
def test_a_wait_blocks_as_long_as_its_hosts_shell_tool_lets_it(marker, limit):
    """A person's shell: 10 minutes; Claude Code: under its background Bash limit (2 h);
    Gemini CLI and Codex CLI: no limit (a keep-alive line, or polls)."""
    from maestro.cli.wait import default_timeout

    assert default_timeout(marker) == limit


@pytest.mark.parametrize(
    ("user", "project_limit", "silence"),
    [(None, None, 300.0), (60, None, 60.0), (60, 20, 20.0), (None, 0, None)],
    ids=["default", "user", "project-wins", "never"],
)
def test_geminis_silence_limit_is_its_settings_inactivity_timeout(
    tmp_path, user, project_limit, silence
):
    from maestro.roster import CLIS

    home, project = tmp_path / "home", tmp_path / "project"
    for folder, seconds in ((home, user), (project, project_limit)):
        (folder / ".gemini").mkdir(parents=True)
        if seconds is not None:
            settings = {"tools": {"shell": {"inactivityTimeout": seconds}}}
            (folder / ".gemini" / "settings.json").write_text(json.dumps(settings))
    assert CLIS["gemini"].host.shell_silence_s({"HOME": str(home)}, project) == silence


def test_a_wait_in_geminis_shell_says_a_line_before_its_silence_limit(
    cli, project, detachable, monkeypatch, temp_home
):
    """Gemini CLI stops a command silent for tools.shell.inactivityTimeout (300 s unless
    set; the project's setting wins): a wait there says a short line at half that, and
    under --json only blank lines, so its answer is still one JSON object."""
    for folder, seconds in ((temp_home, 60), (project, 0.8)):
        (folder / ".gemini").mkdir(exist_ok=True)
        settings = {"tools": {"shell": {"inactivityTimeout": seconds}}}
        (folder / ".gemini" / "settings.json").write_text(json.dumps(settings))
    _hung_run(cli, project, detachable)
    monkeypatch.setenv("GEMINI_CLI", "1")
    try:
        lines = cli("wait", "--timeout", "1.5").out.splitlines()
        said = [line for line in lines if line.startswith("still waiting (")]
        assert len(said) >= 2 and lines[: len(said)] == said, lines
        assert all(line.endswith("): nothing needs you yet") for line in said)
        assert lines[len(said)].startswith("nothing new after 1.5s")
        out = cli("wait", "--json", "--timeout", "1.5").out
        assert out.startswith("\n\n") and json.loads(out)["data"]["state"] == "timeout"
    finally:
        _kill_run(project, detachable)
