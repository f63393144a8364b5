"""`maestro run` and a dirty tree: a person's uncommitted edit to a file a task owns is
named before anything starts, asked about on a terminal, refused elsewhere unless
--allow-dirty; changes a run itself left are not asked about again."""

import io
import os
import subprocess
import sys
import time
from pathlib import Path

from maestro.cli import main
from maestro.cli.context import Context
from tests.engine.runkit import events, plan, step, task, write_plan

MINE = "def greet(name):\n    return 'my own uncommitted words'\n"


def commit(project, *paths):
    subprocess.run(["git", "add", *paths], cwd=project, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "work"], cwd=project, check=True)


def a_person_edits(project):
    (project / "src").mkdir(exist_ok=True)
    (project / "src" / "app.py").write_text("def greet(name):\n    return 'hi'\n")
    commit(project, "src/app.py")
    (project / "src" / "app.py").write_text(MINE)


class Terminal(io.StringIO):
    def isatty(self):
        return True


def run_on_terminal(answer, *argv):
    out = Terminal()
    ctx = Context(
        cwd=Path.cwd(),
        env=dict(os.environ),
        stdout=out,
        stderr=io.StringIO(),
        stdin=Terminal(answer),
    )
    return main(["run", *argv], ctx), out.getvalue(), ctx.stderr.getvalue()


def test_an_uncommitted_edit_to_an_owned_file_is_refused_without_a_terminal(cli, project, runenv):
    a_person_edits(project)
    write_plan(cli, project, [task(1), task(2, files=["docs/"], validation="true")])
    (project / "docs").mkdir()
    (project / "docs" / "notes.md").write_text("draft\n")  # untracked, inside a folder Task 2 owns
    res = cli("run")
    assert res.code == 1 and res.err.count("\n") == 1, res.err
    assert (
        "uncommitted changes to 2 file(s) the tasks own, which a task may overwrite: "
        "docs/notes.md (untracked; Task 2); src/app.py (modified; Task 1)."
    ) in res.err
    assert "--allow-dirty" in res.err and "git stash -u" in res.err
    assert runenv.runs("codex") == []  # nothing started
    assert not (project / ".ai" / "maestro" / "runs").exists()
    assert (project / "src" / "app.py").read_text() == MINE
    detached = cli("run", "--detach")  # the foreground checks before an engine is spawned
    assert detached.code == 1 and "src/app.py (modified; Task 1)" in detached.err
    assert not (project / ".ai" / "maestro" / "runs").exists()


def test_allow_dirty_lets_the_tasks_work_on_top(cli, project, runenv):
    a_person_edits(project)
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [step()])
    res = cli("run", "--allow-dirty")
    assert res.code == 0, res.err + res.out
    assert plan(project).task("1").status == "done"


def test_changes_to_files_no_pending_task_owns_are_not_asked_about(cli, project, runenv):
    write_plan(cli, project, [task(1)])
    (project / "README.md").write_text("edited, not committed\n")
    (project / "scratch.txt").write_text("untracked\n")
    runenv.script("codex", [step()])
    assert cli("run").code == 0
    assert cli("run", "1", "--tool", "codex").code == 1  # done: its file is nobody's to write now


def test_on_a_terminal_it_asks_and_no_means_nothing_starts(cli, project, runenv):
    a_person_edits(project)
    write_plan(cli, project, [task(1)])
    code, out, err = run_on_terminal("n\n")
    assert code == 1
    assert (
        "Uncommitted changes to files the tasks own" in out
        and "src/app.py (modified; Task 1)" in out
    )
    assert "Run anyway" in out and "answer y when asked" in err
    assert runenv.runs("codex") == [] and (project / "src" / "app.py").read_text() == MINE
    runenv.script("codex", [step()])
    code, out, err = run_on_terminal("y\n")
    assert code == 0, err
    assert plan(project).task("1").status == "done"


def test_a_json_caller_is_never_asked(cli, project, runenv):
    a_person_edits(project)
    write_plan(cli, project, [task(1)])
    code, out, err = run_on_terminal("y\n", "--json")
    assert code == 1 and "Run anyway" not in out and "--allow-dirty" in out and err == ""


def test_what_a_run_left_is_not_asked_about_but_a_later_edit_is(cli, project, runenv):
    """Task 2 builds on Task 1's uncommitted file; Task 2 fails, is run again, and only a
    person's edit in between makes the run ask."""
    write_plan(cli, project, [task(1), task(2, depends=[1], validation="test -f src/never.py")])
    runenv.script("codex", [step()])
    assert cli("run").code == 2
    p = plan(project)
    assert p.task("1").status == "done" and p.task("2").status in ("failed", "blocked")
    again = cli("run", "2")
    assert "uncommitted" not in again.err and again.code == 2, again.err
    assert events(project)[0]["kind"] == "run_started"
    (project / "src" / "app.py").write_text(MINE)
    res = cli("run", "2")
    assert res.code == 1 and "src/app.py (untracked; Task 2)" in res.err


def test_a_project_in_a_subfolder_sees_its_own_paths(cli, tmp_path, runenv, monkeypatch):
    sub = tmp_path / "proj" / "service"  # the git repository is tmp_path / "proj"
    sub.mkdir()
    monkeypatch.chdir(sub)
    monkeypatch.setenv("MAESTRO_PROJECT_DIR", str(sub))
    write_plan(cli, sub, [task(1)])
    (sub / "src").mkdir()
    (sub / "src" / "app.py").write_text(MINE)
    res = cli("run")
    assert res.code == 1 and "src/app.py (untracked; Task 1)" in res.err, res.err


def test_while_a_run_is_going_a_second_run_hears_that_not_its_edits(cli, project, runenv):
    write_plan(
        cli,
        project,
        [task(1), task(2, files=["src/b.py"], depends=[1], validation="test -f src/b.py")],
    )
    runenv.script("codex", [{**step(), "sleep": 1.5}, step("src/b.py")])
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    engine = subprocess.Popen(
        [sys.executable, "-m", "maestro", "run"],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 20
    while not runenv.runs("codex") and time.monotonic() < deadline:
        time.sleep(0.05)
    (project / "src").mkdir(exist_ok=True)
    (project / "src" / "b.py").write_text(MINE)  # what Task 2 will write, in the tree meanwhile
    res = cli("run")
    engine.communicate(timeout=30)
    assert (
        res.code == 1
        and "another Maestro run is in progress" in res.err
        and "uncommitted" not in res.err
    )
