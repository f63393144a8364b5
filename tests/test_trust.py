"""Nothing Maestro trusts can be written by a spoke.

A spoke may write the project's `.ai/maestro/` (a sandboxed Codex spoke is given it with
`--add-dir`, for the mailbox and its session), and a process it leaves behind may go on
writing there after it ended. What Maestro later reads there as truth (the versions of the
plan it wrote, what runs left in the tree, who each session is) must then not come from
there: each test plays such a forger and checks that the next command does what the plan
file and Maestro's own records say."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace

import pytest

from maestro.paths import ProjectPaths
from maestro.state.history import History
from maestro.state.model import Plan, Task
from maestro.state.planfile import render
from maestro.state.store import PlanStore
from tests.cli.test_run_dirty import MINE, a_person_edits
from tests.engine.runkit import plan, step, task, write_plan


def test_a_forged_plan_history_never_runs_a_command_the_plan_file_does_not_show_plan_history_forged(
    cli, project, tmp_path
):
    """The spoke writes a newer "version Maestro wrote" in which Task 2's validation
    differs, and the `latest.md` that goes with it, where the history was kept; the next
    run took the plan file for a stale save and merged the forged command in."""
    forged = tmp_path / "FORGED"
    write_plan(
        cli,
        project,
        [
            task(1, tool="sim", files=["src/a.py"], validation="test -f src/a.py"),
            task(2, tool="sim", files=["src/b.py"], validation="test -f src/b.py"),
        ],
    )
    assert cli("run", "1").code == 0
    shown = plan(project)
    bad = replace(shown, tasks=[replace(t) for t in shown.tasks], layout=None)
    bad.task("2").validation = f"touch {forged}; test -f src/b.py"
    History(project / ".ai" / "maestro" / "plan-history").record(
        render(bad, "MAESTRO.md").encode(), bad
    )
    res = cli("run")
    assert res.code == 0, res.out + res.err
    assert not forged.exists()
    assert plan(project).task("2").receipt.validation == "test -f src/b.py"


def test_the_plan_history_is_the_users_own_folder_outside_the_project(project):
    store = PlanStore(ProjectPaths(project))
    made = Plan(goal="Ship it.", tasks=[Task("1", "First")])
    store.create(made)
    folder = store.history.folder
    assert not folder.is_relative_to(project)
    assert folder.stat().st_mode & 0o777 == folder.parent.stat().st_mode & 0o777 == 0o700
    assert store.history.latest() == store.path.read_bytes()
    assert store.history.nearest(made) is not None
    folder.chmod(0o770)  # another could write it: not read
    assert store.history.latest() is None and store.history.nearest(made) is None
    assert not (project / ".ai" / "maestro" / "plan-history").exists()


def test_a_forged_record_of_what_runs_left_never_hides_a_persons_edit_left_by_runs_forged(
    cli, project, runenv
):
    """Files a run left uncommitted are not asked about again: a record naming the
    person's own uncommitted edit as left by a run would let a task overwrite it unasked."""
    a_person_edits(project)
    write_plan(cli, project, [task(1)])
    record = {"format": 1, "files": {"src/app.py": hashlib.sha256(MINE.encode()).hexdigest()}}
    (project / ".ai" / "maestro").mkdir(parents=True, exist_ok=True)
    (project / ".ai" / "maestro" / "left-by-runs.json").write_text(json.dumps(record))
    runenv.script("codex", [step()])
    res = cli("run")
    assert res.code == 1 and "src/app.py (modified; Task 1)" in res.err, res.out + res.err
    assert runenv.runs("codex") == []
    assert (project / "src" / "app.py").read_text() == MINE


@pytest.mark.parametrize("verb", ["install", "uninstall"])
def test_a_forged_install_manifest_never_removes_a_persons_file_install_manifest_forged(
    cli, project, verb
):
    """Install and uninstall remove a file the manifest lists while its content still has
    the hash recorded: a manifest a spoke wrote listing the person's file had it deleted."""
    assert cli("install", "--host", "claude").code == 0
    precious = project / "precious.txt"
    precious.write_text("the person's own words\n")
    data = json.loads(ProjectPaths(project).install_manifest.read_text())
    data["installs"][0]["files"].append(
        {"path": "precious.txt", "sha256": hashlib.sha256(precious.read_bytes()).hexdigest()}
    )
    forged = project / ".ai" / "maestro" / "install-manifest.json"
    forged.parent.mkdir(parents=True, exist_ok=True)
    forged.write_text(json.dumps(data))
    assert cli(verb, "--host", "claude").code == 0
    assert precious.read_text() == "the person's own words\n"
