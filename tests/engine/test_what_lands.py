"""What reaches a worktree and what lands from one stays in the project, and the run says
what it is (issue 23: copies that follow links, links that lead out, refused commits,
work that cannot land)."""

import os
import subprocess

import pytest
import yaml

from tests.engine.runkit import plan, step, task, write_plan
from tests.engine.test_workspaces import commit_ignoring, status
from tests.test_git import git


def test_a_copy_never_follows_a_link_out_of_the_project_finding_3(cli, project, runenv, tmp_path):
    """An ignored `.env` that is a link to a file outside the project is not copied into
    the worktrees (its content would reach every spoke), and the run says so once, with
    the fix; a link to a file inside the project is copied as before."""
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET\n")
    commit_ignoring(project, ".env\n.env.*\nconf/\n")
    (project / ".env").symlink_to(secret)
    (project / "conf").mkdir()
    (project / "conf" / "local.env").write_text("LOCAL=1\n")
    (project / ".env.local").symlink_to("conf/local.env")
    check = "test ! -e .env && grep -q LOCAL=1 .env.local && test -f src/m{}.py"
    write_plan(
        cli,
        project,
        [task(i, files=[f"src/m{i}.py"], validation=check.format(i)) for i in (1, 2)],
    )
    runenv.default("codex", step("src/m{task}.py"))
    res = cli("run")
    assert res.code == 0, res.out + res.err
    said = res.out + res.err
    assert said.count(".env is a symlink leading out of the project") == 1, said
    assert "workspace_copy" in said and "Traceback" not in said
    assert (project / ".env").is_symlink() and secret.read_text() == "TOP SECRET\n"


def with_app(project):
    """The project with src/app.py committed."""
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("def greet(name):\n    return name\n")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "app")


def test_a_link_leading_out_of_the_project_never_lands_finding_7(cli, project, runenv, tmp_path):
    """A spoke that replaces its own src/app.py with a link to /etc/passwd, adds one
    climbing out with '..', and one that leads out only through another link of the
    change, fails its scope gate naming each, at every strictness; nothing of it lands."""
    with_app(project)
    write_plan(cli, project, [task(1, files=["src/"], validation="test -e src/app.py")])
    (project / ".ai" / "maestro.toml").write_text('validation_strictness = "lenient"\n')
    s = step("src/ok.py")
    s["shell"] = [
        {
            "sh": "ln -sfn /etc/passwd src/app.py && ln -s ../../outside src/up.py"
            " && mkdir -p src/a/b && ln -s .. src/a/b/lnk && ln -s lnk/../../.. src/a/b/evil"
        }
    ]
    runenv.script("codex", [s])
    res = cli("run")
    assert res.code == 2, res.out + res.err
    t = plan(project).task("1")
    assert t.status == "failed", t.result
    for path in ("src/app.py", "src/up.py", "src/a/b/evil"):
        assert f"{path} is a symlink leading out of the project" in t.result
    assert "src/a/b/lnk " not in t.result  # it leads to src/a, inside
    assert "Fix:" in t.result
    assert not (project / "src" / "app.py").is_symlink()
    assert not (project / "src" / "ok.py").exists() and not (project / "src" / "a").exists()
    assert status(project) == ""


def test_a_link_inside_the_project_lands(cli, project, runenv):
    with_app(project)
    write_plan(cli, project, [task(1, files=["src/"], validation="test -e src/alias.py")])
    s = step("src/ok.py")
    s["shell"] = [{"sh": "ln -s app.py src/alias.py && ln -s ../README.md src/readme"}]
    runenv.script("codex", [s])
    res = cli("run")
    assert res.code == 0, res.out + res.err
    assert os.readlink(project / "src" / "alias.py") == "app.py"
    assert os.readlink(project / "src" / "readme") == "../README.md"


def refusing_hook(project):
    hook = project / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nexit 1\n")
    hook.chmod(0o755)


def merge_in_progress(project):
    """A merge stopped on a conflict in notes.txt, as `git merge` leaves it."""
    (project / "notes.txt").write_text("base\n")
    git(project, "add", "notes.txt")
    git(project, "commit", "-q", "-m", "notes")
    git(project, "checkout", "-q", "-b", "other")
    (project / "notes.txt").write_text("theirs\n")
    git(project, "commit", "-q", "-am", "theirs")
    git(project, "checkout", "-q", "-")
    (project / "notes.txt").write_text("ours\n")
    git(project, "commit", "-q", "-am", "ours")
    subprocess.run(["git", "merge", "-q", "other"], cwd=project, capture_output=True, check=False)
    assert (project / ".git" / "MERGE_HEAD").exists()


@pytest.mark.parametrize("refusal", [refusing_hook, merge_in_progress])
def test_a_refused_commit_leaves_the_index_as_it_was_finding_13(cli, project, runenv, refusal):
    """`--commit` refused (a pre-commit hook that fails, a merge in progress): the task's
    files are in the tree, nothing of them staged (the index is exactly as it was: a
    person's merge commit never takes them), the terminal says so, and the exit code is 3."""
    refusal(project)
    (project / "mine.txt").write_text("staged by me\n")
    git(project, "add", "mine.txt")
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [step()])
    index = git(project, "ls-files", "--stage")
    head = git(project, "rev-parse", "HEAD")
    res = cli("run", "--commit", "--allow-dirty")
    assert res.code == 3, res.out + res.err
    assert "Task 1 is done, but its files are in your tree, uncommitted and unstaged" in res.out
    assert "git commit" in res.out and "(exit code 3)" in res.out
    assert git(project, "ls-files", "--stage") == index
    assert git(project, "rev-parse", "HEAD") == head
    assert "?? src/app.py" in status(project)
    assert (project / "src" / "app.py").exists()
    t = plan(project).task("1")
    assert t.status == "done" and "uncommitted" in t.result


def test_a_deliverable_git_ignores_fails_the_task_finding_14(cli, project, runenv):
    """build/out.txt is in the task's Files and the spoke writes it, but the project's
    .gitignore ignores build/: its work cannot land, so the task fails naming the file,
    the rule and the fix, instead of `done` with nothing landed. `maestro plan` and
    `run --dry-run` warn of it before any run."""
    commit_ignoring(project, "*.log\nbuild/\n")
    source = project.parent / "plan-input.yaml"
    source.write_text(
        yaml.safe_dump(
            {
                "version": 1,
                "goal": "Build the output",
                "hub": "claude",
                "tasks": [task(1, files=["build/out.txt"], validation="test -f build/out.txt")],
            }
        )
    )
    planned = cli("plan", "--from", str(source), "--yes")
    assert planned.code == 0, planned.out + planned.err
    assert "build/out.txt is ignored by git (.gitignore:2: build/)" in planned.out
    dry = cli("run", "--dry-run")
    assert "build/out.txt is ignored by git (.gitignore:2: build/)" in dry.out
    runenv.script("codex", [step("build/out.txt")])
    res = cli("run")
    assert res.code == 2, res.out + res.err
    t = plan(project).task("1")
    assert t.status == "failed", t.result
    assert "build/out.txt is ignored by git (.gitignore:2: build/), so it cannot land" in t.result
    assert "git check-ignore -v build/out.txt" in t.result  # the fix starts there
    assert not (project / "build").exists()


def test_a_file_inside_a_nested_repository_fails_the_task_finding_14(cli, project, runenv):
    """vendor/lib is a git repository of its own, not a submodule: a worktree holds it
    empty, and a file the spoke writes there is not the project's change. The task fails
    naming the file and the repository; a task whose Files lie inside it is refused before
    any dispatch, as for a submodule."""
    lib = project / "vendor" / "lib"
    lib.mkdir(parents=True)
    git(lib, "init", "-q")
    (lib / "v.py").write_text("v = 1\n")
    git(lib, "add", "v.py")
    git(lib, "commit", "-q", "-m", "v")
    write_plan(cli, project, [task(1, files=["vendor/"], validation="true")])
    runenv.script("codex", [step("vendor/lib/x.py")])
    res = cli("run", "--allow-dirty")  # (vendor/lib is untracked)
    assert res.code == 2, res.out + res.err
    t = plan(project).task("1")
    assert t.status == "failed", t.result
    assert "vendor/lib/x.py is inside vendor/lib, a git repository of its own" in t.result
    assert "Fix:" in t.result and not (lib / "x.py").exists()

    write_plan(cli, project, [task(2, files=["vendor/lib/x.py"], validation="true")])
    res = cli("run", "--allow-dirty")
    assert res.code == 1, res.out + res.err
    said = res.out + res.err
    assert "task 2 (vendor/lib/x.py, in vendor/lib, a git repository of its own" in said
    assert len(runenv.runs("codex")) == 1  # not dispatched again
