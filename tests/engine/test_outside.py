"""What a spoke (or a validation command) does outside its worktree is seen, put back
and named: the user's files, the repository's config, hooks, HEAD and refs. With the
sandbox off: confined, such a write is refused (tests/engine/test_confined.py)."""

from pathlib import Path

import pytest

from tests.engine.runkit import plan, step, task, write_plan
from tests.test_git import git

pytestmark = pytest.mark.usefixtures("unconfined")


def committed(project: Path, **files: str) -> str:
    for name, content in files.items():
        (project / name).write_text(content)
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "files")
    return git(project, "rev-parse", "HEAD").strip()


def hostile(*commands: str) -> dict:
    """A spoke that does its task in its worktree, then runs ``commands`` in its shell."""
    return step(shell=[{"sh": c} for c in commands])


def saved_dirs(project: Path) -> list[Path]:
    where = project / ".ai" / "maestro" / "outside"
    return sorted(where.iterdir()) if where.exists() else []


def test_a_file_written_into_the_project_by_absolute_path_is_put_back_finding_8(
    cli, project, runenv
):
    committed(project, **{"README.md": "hello\n"})
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [hostile(f"echo evil > {project}/EVIL_ABS.txt")])
    res = cli("run")
    assert res.code == 2, res.out + res.err
    t = plan(project).task("1")
    assert t.status == "failed"
    assert "changed outside its worktree" in t.result and "EVIL_ABS.txt (created)" in t.result
    assert "EVIL_ABS.txt" in res.out
    assert not (project / "EVIL_ABS.txt").exists()
    [saved] = saved_dirs(project)
    assert (saved / "tree" / "EVIL_ABS.txt").read_text() == "evil\n"
    assert str(saved.relative_to(project)) in t.result
    assert not (project / "src" / "app.py").exists()  # nothing of the task landed


def test_a_deleted_file_of_the_person_is_restored_finding_8(cli, project, runenv):
    committed(project, **{"tracked.txt": "tracked\n"})
    (project / "precious.txt").write_text("my only copy\n")  # untracked
    (project / "tracked.txt").write_text("tracked, and edited\n")  # uncommitted edit
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [hostile(f"rm {project}/precious.txt {project}/tracked.txt")])
    assert cli("run").code == 2
    assert (project / "precious.txt").read_text() == "my only copy\n"
    assert (project / "tracked.txt").read_text() == "tracked, and edited\n"
    result = plan(project).task("1").result
    assert "precious.txt (deleted)" in result and "tracked.txt (deleted)" in result


def test_a_changed_file_is_restored_and_the_version_found_kept_finding_8(cli, project, runenv):
    committed(project, **{"notes.md": "the person's notes\n"})
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [hostile(f"echo overwritten > {project}/notes.md")])
    assert cli("run").code == 2
    assert (project / "notes.md").read_text() == "the person's notes\n"
    [saved] = saved_dirs(project)
    assert (saved / "tree" / "notes.md").read_text() == "overwritten\n"
    assert "notes.md (changed)" in plan(project).task("1").result


def test_planted_git_config_and_hook_are_removed_and_never_run_finding_8(
    cli, project, runenv, tmp_path, monkeypatch
):
    monkeypatch.setenv("MAESTRO_MAX_CONCURRENT", "1")
    committed(project, **{"README.md": "hello\n"})
    config = (project / ".git" / "config").read_bytes()
    ran = tmp_path / "RAN"
    hook = project / ".git" / "hooks" / "pre-commit"
    write_plan(
        cli,
        project,
        [task(1), task(2, files=["src/b.py"], validation="test -f src/b.py")],
    )
    runenv.script(
        "codex",
        [
            hostile(
                f"git config core.fsmonitor 'touch {ran}'",
                f"printf '#!/bin/sh\\ntouch {ran}\\n' > \"$(git rev-parse --git-common-dir)/hooks/pre-commit\"",
                'chmod +x "$(git rev-parse --git-common-dir)/hooks/pre-commit"',
            ),
            step("src/b.py"),
        ],
    )
    res = cli("run", "--commit")
    assert res.code == 2, res.out + res.err
    t1, t2 = plan(project).task("1"), plan(project).task("2")
    assert t1.status == "failed" and ".git/config (changed)" in t1.result
    assert ".git/hooks/pre-commit (planted)" in t1.result
    assert (project / ".git" / "config").read_bytes() == config
    assert not hook.exists()
    assert t2.status == "done" and t2.receipt.commit  # committed, its hooks the person's
    assert not ran.exists()  # neither Maestro's git nor the commit ran what was planted


def test_a_moved_branch_and_a_new_tag_are_put_back_finding_8(cli, project, runenv):
    head = committed(project, **{"README.md": "hello\n"})
    write_plan(cli, project, [task(1)])
    runenv.script(
        "codex",
        [
            hostile(
                f"cd {project} && git update-ref refs/heads/main "
                f'"$(git commit-tree HEAD^{{tree}} -m forged)" && git tag evil'
            )
        ],
    )
    assert cli("run").code == 2
    assert git(project, "rev-parse", "refs/heads/main").strip() == head
    assert git(project, "tag", "--list").strip() == ""
    result = plan(project).task("1").result
    assert "refs/heads/main (moved, put back)" in result
    assert "refs/tags/evil (created, put back)" in result


def test_a_validation_command_that_writes_into_the_project_fails_finding_5(
    cli, project, runenv, monkeypatch
):
    monkeypatch.setenv("MAESTRO_MAX_RETRIES", "0")
    committed(project, **{"README.md": "hello\n"})
    write_plan(
        cli,
        project,
        [task(1, validation=f"test -f src/app.py && echo pwned > {project}/OUTSIDE.txt")],
    )
    runenv.default("codex", step())
    res = cli("run")
    assert res.code == 2, res.out + res.err
    assert not (project / "OUTSIDE.txt").exists()
    t = plan(project).task("1")
    assert "OUTSIDE.txt (created)" in t.result and "integration gate" in t.result
    [saved] = saved_dirs(project)
    assert (saved / "tree" / "OUTSIDE.txt").read_text() == "pwned\n"


def test_the_runs_own_output_redirected_into_the_project_is_left_alone(cli, project, runenv):
    """Appends to a file that was there (a log) lose nothing: not the spoke's to answer for."""
    committed(project, **{"README.md": "hello\n"})
    (project / "server.log").write_text("started\n")
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [hostile(f"echo 'GET /' >> {project}/server.log")])
    assert cli("run").code == 0
    assert (project / "server.log").read_text() == "started\nGET /\n"
    assert plan(project).task("1").status == "done"


def test_a_clean_dispatch_saves_nothing(cli, project, runenv):
    committed(project, **{"README.md": "hello\n"})
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [step()])
    assert cli("run").code == 0
    assert saved_dirs(project) == []


def test_the_guards_index_is_out_of_a_spokes_reach(cli, project, runenv):
    """Its stat data decides which files are read again: never under .ai/maestro, which a
    Codex spoke is granted, but in the project's private folder."""
    import re

    from maestro.paths import ProjectPaths

    private = ProjectPaths(project).private_dir
    committed(project, **{"README.md": "hello\n"})
    write_plan(cli, project, [task(1)])
    listing = project.parent / "seen.txt"
    runenv.script("codex", [hostile(f"find {project}/.ai {private} -name '*.index' > {listing}")])
    assert cli("run").code == 0
    runs = [
        f for f in listing.read_text().split() if re.search(r"/\.\d{8}T\d{6}Z-\w+-p\d+\.index$", f)
    ]
    assert runs and all(f.startswith(f"{private}/guard/") for f in runs), runs


def test_a_quiet_spoke_in_a_run_gets_a_line_with_what_its_cli_last_said(
    cli, project, runenv, monkeypatch
):
    """Nothing goes silent in a run either: a spoke that answers nothing for a while gets
    a line (and an event) with the last thing its CLI said on stderr."""
    from tests.engine.runkit import events

    monkeypatch.setattr("maestro.process.QUIET_S", 0.4)
    committed(project, **{"README.md": "hello\n"})
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [{**step(), "early": {"stderr": "waiting for network\n"}, "sleep": 1.1}])
    res = cli("run")
    assert res.code == 0, res.out + res.err
    quiet = [e for e in events(project) if e["kind"] == "spoke_quiet"]
    assert quiet and quiet[0]["task"] == "1"
    assert quiet[0]["detail"].endswith("last on its stderr: waiting for network")
    assert "task 1 codex: no answer yet after" in res.out
