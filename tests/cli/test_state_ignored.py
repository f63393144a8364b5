"""Maestro's own files under .ai/ stay out of the person's `git status` without their
.gitignore changing; the plan and the log stay theirs to commit, and the advice for a
dirty tree keeps the plan where `maestro run` finds it."""

import re
import subprocess

from tests.engine.runkit import step, task, write_plan

YOURS = {".ai/MAESTRO.md", ".ai/MAESTRO-LOG.md"}


def untracked_in_state(project):
    out = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {line[3:] for line in out.splitlines() if line[3:].startswith(".ai/")}


def test_after_a_run_git_status_shows_only_the_plan_and_the_log(cli, project, runenv, monkeypatch):
    monkeypatch.setenv("MAESTRO_LOG", "summary")
    write_plan(cli, project, [task(1), task(2, files=["src/util.py"], depends=[1])])
    runenv.script("codex", [step(), step("src/util.py")])
    res = cli("run")
    assert res.code == 0, res.err
    assert (project / ".ai/maestro/runs").is_dir()  # plenty of Maestro's own files there
    assert untracked_in_state(project) == YOURS
    assert not (project / ".gitignore").exists()


def test_commands_other_than_run_leave_nothing_in_git_status(cli, project, runenv):
    write_plan(cli, project, [task(1)])  # the plan's history and lock
    assert (project / ".ai/maestro").is_dir()
    assert untracked_in_state(project) == {".ai/MAESTRO.md"}


def test_the_dirty_tree_advice_keeps_the_plan(cli, project, runenv):
    (project / "src").mkdir()
    (project / "src/app.py").write_text("a person's draft\n")  # untracked, owned by Task 1
    write_plan(cli, project, [task(1)])
    refused = cli("run")
    assert refused.code == 1
    stash = re.search(r"\(`(git stash [^`]+)`\)", refused.err).group(1)
    subprocess.run(stash, shell=True, cwd=project, check=True, capture_output=True)
    assert not (project / "src/app.py").exists()  # the person's draft is in the stash
    assert (project / ".ai/MAESTRO.md").is_file()  # and the plan is not
    runenv.script("codex", [step()])
    res = cli("run")
    assert res.code == 0 and "finished: 1 done" in res.out, res.err
