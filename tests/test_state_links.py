"""Symbolic links in the state dir: writes never leave the project through one, and a
linked plan is written through to its target instead of being replaced by a copy."""

from __future__ import annotations

import subprocess

import pytest

PLAN = """\
goal: test
tasks:
  - id: "1"
    title: First
    tool: sim
    specialist: code
    files: [src/a.py]
    validation: "test -f src/a.py"
    criteria: ["writes a"]
"""


@pytest.fixture
def elsewhere(project):
    folder = project.parent / "elsewhere"
    folder.mkdir()
    (project / "plan.yaml").write_text(PLAN)
    return folder


def one_line_refusal(res, *words):
    assert res.code == 1 and res.err.count("\n") == 1 and "Fix:" in res.err, res.err
    for word in words:
        assert word in res.err, (word, res.err)


def test_a_committed_ai_link_out_of_the_project_is_refused_finding_2(project, cli, elsewhere):
    (project / ".ai").symlink_to("../elsewhere")
    subprocess.run(["git", "add", ".ai"], cwd=project, check=True)
    subprocess.run(["git", "commit", "-qm", "link"], cwd=project, check=True)
    one_line_refusal(
        cli("plan", "--from", "plan.yaml", "--yes"), ".ai", "outside the project", str(elsewhere)
    )
    assert list(elsewhere.iterdir()) == []


def test_a_machine_folder_link_out_of_the_project_is_refused_finding_2(project, cli, elsewhere):
    (project / ".ai").mkdir()
    (project / ".ai" / "maestro").symlink_to("../../elsewhere")
    one_line_refusal(cli("plan", "--from", "plan.yaml", "--yes"), ".ai/maestro")
    assert list(elsewhere.iterdir()) == []


def test_a_link_out_is_used_when_said_so_finding_2(project, cli, elsewhere, monkeypatch):
    (project / ".ai").symlink_to("../elsewhere")
    monkeypatch.setenv("MAESTRO_STATE_DIR_OUTSIDE", "1")
    assert cli("plan", "--from", "plan.yaml", "--yes").code == 0
    assert (elsewhere / "MAESTRO.md").is_file()


def test_a_state_dir_linked_inside_the_project_is_used_finding_2(project, cli, elsewhere):
    (project / "state").mkdir()
    (project / ".ai").symlink_to("state")
    assert cli("plan", "--from", "plan.yaml", "--yes").code == 0
    assert (project / "state" / "MAESTRO.md").is_file()


def test_a_linked_plan_is_written_through_to_its_target_finding_15(project, cli, elsewhere):
    assert cli("plan", "--from", "plan.yaml", "--yes").code == 0
    (project / "docs").mkdir()
    link = project / ".ai" / "MAESTRO.md"
    link.rename(project / "docs" / "plan.md")
    link.symlink_to("../docs/plan.md")
    res = cli("run")
    assert res.code == 0, res.out + res.err
    assert link.is_symlink() and "**Status:** done" in (project / "docs" / "plan.md").read_text()
    assert cli("status").code == 0


def test_a_linked_plan_leading_out_of_the_project_is_refused_finding_15(project, cli, elsewhere):
    assert cli("plan", "--from", "plan.yaml", "--yes").code == 0
    link = project / ".ai" / "MAESTRO.md"
    link.rename(elsewhere / "plan.md")
    link.symlink_to(elsewhere / "plan.md")
    before = (elsewhere / "plan.md").read_bytes()
    one_line_refusal(cli("run"), ".ai/MAESTRO.md", "outside the project")
    assert (elsewhere / "plan.md").read_bytes() == before and link.is_symlink()
