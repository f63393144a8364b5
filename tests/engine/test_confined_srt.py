"""A run whose spokes and validation commands are confined by Anthropic's sandbox runtime
(srt), as on macOS, with the fake CLIs and the real srt (on Linux srt confines with
bubblewrap): its task completes, its spoke reports to the office through its door, and
what it tries outside its worktree stays out of its reach."""

from __future__ import annotations

import pytest

from tests.engine.runkit import plan, step, task, write_plan
from tests.engine.test_confined import shell_said

pytestmark = pytest.mark.srt


def test_a_run_confined_by_srt_completes_its_task(cli, project, runenv, temp_home, srt):
    (temp_home / ".ssh").mkdir()
    (temp_home / ".ssh" / "id_rsa").write_text("SECRET KEY\n")
    check = f"test -f src/app.py && echo checked > $TMPDIR/x && echo pwned > {temp_home}/x"
    write_plan(cli, project, [task(1, validation=f"{check}; test -f src/app.py")])
    tried = [
        ["task", "report", "progress", "halfway there"],
        {"sh": f"cat {temp_home}/.ssh/id_rsa"},
        {"sh": f"echo pwned >> {project}/README.md && echo ESCAPED-tree"},
        {"sh": f"echo pwned >> {project}/.git/config && echo ESCAPED-config"},
        {"sh": "echo done > src/app.py && git add -A && git commit -qm mine && echo COMMITTED"},
    ]
    runenv.script("codex", [step(shell=tried)])
    res = cli("run")
    assert res.code == 0, res.out + res.err
    assert "confined (Anthropic's sandbox runtime)" in res.out
    (call,) = runenv.runs("codex")
    assert call["sandboxed"] and call["shell"][0]["exit"] == 0, call["shell"]
    said = shell_said(call)
    assert "SECRET KEY" not in said and "ESCAPED" not in said, said
    assert "COMMITTED" in said  # its worktree, its private git dir
    assert plan(project).task("1").status == "done"
    assert (project / "README.md").read_text() == "project\n"
    assert (project / "src" / "app.py").exists()  # the task landed
    assert not (temp_home / "x").exists()  # the validation command ran confined too
