"""Every dispatch in its own git worktree: the issue's cases on real temporary
repositories with the fake CLIs."""

import json
import os
import re
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.engine.runkit import answer, events, plan, step, task, write_plan
from tests.test_git import git

REPO = Path(__file__).resolve().parents[2]


def status(root):
    """`git status` of the user's files (the plan in .ai/ is Maestro's own, and changes)."""
    return git(root, "status", "--porcelain=v1", "--untracked-files=all", "--", ".", ":!.ai")


def worktree_dirs(root):
    where = root / ".ai" / "maestro" / "worktrees"
    return [p for p in where.iterdir() if p.is_dir()] if where.exists() else []


def commit_ignoring(project: Path, patterns: str) -> None:
    """Write ``patterns`` to the project's .gitignore and commit the tree as it is (what
    it ignores stays out)."""
    (project / ".gitignore").write_text(patterns)
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "ignore " + patterns.replace("\n", " ").strip())


def run_process(project: Path, *, concurrent: int, **io: Any) -> subprocess.CompletedProcess:
    """`maestro run` as a process of its own in ``project`` (no stagger)."""
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "MAESTRO_MAX_CONCURRENT": str(concurrent),
        "MAESTRO_STAGGER_DELAY": "0",
    }
    return subprocess.run(
        [sys.executable, "-m", "maestro", "run"],
        cwd=project,
        check=False,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=120,
        **io,
    )


def independent(n):
    return [
        task(i, files=[f"src/m{i}.py"], validation=f"test -f src/m{i}.py") for i in range(1, n + 1)
    ]


def test_run_redirected_into_the_project_passes_every_task(cli, project, runenv):
    """`maestro run > run.log` in the project: the log grows all along the run, and no task
    is blamed for it (its worktree never sees the user's tree change)."""
    commit_ignoring(project, ".ai/\n")
    write_plan(cli, project, independent(5))
    runenv.default("codex", step("src/m{task}.py", sleep=0.3))
    with (project / "run.log").open("w") as log:
        done = run_process(project, concurrent=3, stdout=log, stderr=subprocess.PIPE)
    text = (project / "run.log").read_text()
    assert done.returncode == 0, text + done.stderr.decode()
    assert "each task in its own git worktree" in text.splitlines()[0]
    assert {t.status for t in plan(project).tasks} == {"done"}
    assert all(f"src/m{i}.py" in status(project) for i in range(1, 6))
    started = [e for e in events(project) if e["kind"] == "task_started"]
    assert len(started) == 5 and not worktree_dirs(project)


def run_task_1_while(cli, project, runenv, edit):
    """Run task 1 (it writes src/app.py) and call ``edit`` while its spoke works."""
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [step(sleep=1.5)])
    result = {}
    runner = threading.Thread(target=lambda: result.setdefault("run", cli("run")))
    runner.start()
    deadline = time.monotonic() + 20
    while not runenv.runs("codex") and time.monotonic() < deadline:
        time.sleep(0.05)
    edit()
    runner.join(timeout=60)
    return result["run"]


def test_a_person_editing_during_a_run(cli, project, runenv):
    """A task's own file edited on the same lines keeps the person's text, and the task's
    patch is saved with how to apply it."""
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("def greet(name):\n    return 'old'\n")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "app")

    def edit():
        (project / "src" / "app.py").write_text("def greet(name):\n    return 'mine'\n")

    res = run_task_1_while(cli, project, runenv, edit)
    # Done, but its change is not in the tree: a distinct exit code, and the message says so.
    assert res.code == 3, res.out + res.err
    assert "does not hold the work of Task 1" in res.out
    assert (project / "src" / "app.py").read_text() == "def greet(name):\n    return 'mine'\n"
    t = plan(project).task("1")
    assert t.status == "done"
    assert t.receipt.files_changed == ["src/app.py"]
    patch = next(project.glob(".ai/maestro/patches/*-task-1.patch"))
    assert "you edited src/app.py meanwhile" in t.result
    assert str(patch.relative_to(project)) in t.result
    follow_the_advice(project, t.result, res.out)
    merged = (project / "src" / "app.py").read_text()
    assert "hi {name}" in merged and "'mine'" in merged and "<<<<<<<" in merged
    assert git(project, "diff", "--cached", "--name-only") == ""  # the index untouched


def test_a_file_a_person_writes_while_a_spoke_runs_is_never_lost(cli, project, runenv, unconfined):
    """Unconfined, Maestro cannot tell who wrote into the user's tree while a spoke ran:
    the file is put back like a spoke's write and fails the task, and the one command the
    message names brings the person's version back, byte for byte. (Confined, it is the
    person's: tests/engine/test_confined.py.)"""
    git(project, "commit", "-q", "--allow-empty", "-m", "start")

    def edit():
        (project / "notes.txt").write_text("my own notes\n")

    res = run_task_1_while(cli, project, runenv, edit)
    assert res.code == 2, res.out + res.err
    t = plan(project).task("1")
    assert "notes.txt (created)" in t.result and "if the change was yours" in t.result
    [command] = re.findall(r"`(cp -a [^`]+)`", t.result)
    assert command in res.out
    subprocess.run(shlex.split(command), check=True, cwd=project)
    assert (project / "notes.txt").read_text() == "my own notes\n"


def follow_the_advice(project, result, out):
    """Run the commands the task's Result names, as a person would, in the project; the
    run's final message names the same ones."""
    commands = re.findall(r"`((?:git merge-file|cp) [^`]+)`", result)
    assert commands, result
    for command in commands:
        assert command in out
        done = subprocess.run(
            shlex.split(command), check=False, cwd=project, capture_output=True, text=True
        )
        assert done.returncode >= 0 and "error" not in done.stderr.lower(), done.stderr


def test_a_file_both_sides_added_is_recovered_by_the_advice(cli, project, runenv):
    """The task creates src/app.py while the person creates it too, untracked: nothing
    is written, and the advised command puts the task's work beside the person's."""

    def edit():
        (project / "src").mkdir()
        (project / "src" / "app.py").write_text("mine = 1\n")

    res = run_task_1_while(cli, project, runenv, edit)
    assert res.code == 3, res.out + res.err
    t = plan(project).task("1")
    assert "you edited src/app.py meanwhile" in t.result, res.out + res.err
    assert (project / "src" / "app.py").read_text() == "mine = 1\n"
    patch = next(project.glob(".ai/maestro/patches/*-task-1.patch"))
    # What the old advice said fails on a file the person created, untracked:
    tried = subprocess.run(
        ["git", "apply", "--3way", "--check", str(patch)],
        check=False,
        cwd=project,
        capture_output=True,
    )
    assert tried.returncode != 0
    follow_the_advice(project, t.result, res.out)
    merged = (project / "src" / "app.py").read_text()
    assert "hi {name}" in merged and "mine = 1" in merged
    assert git(project, "diff", "--cached", "--name-only") == ""


def test_a_failed_task_leaves_git_status_as_it_was(cli, project, runenv, monkeypatch):
    monkeypatch.setenv("MAESTRO_MAX_RETRIES", "1")
    (project / "README.md").write_text("edited, not committed\n")
    (project / "todo.txt").write_text("untracked\n")
    write_plan(cli, project, [task(1, validation="false")])
    before = status(project)
    runenv.default("codex", step())
    assert cli("run").code == 2
    assert plan(project).task("1").status == "blocked"
    assert status(project) == before and not (project / "src").exists()
    assert (project / "README.md").read_text() == "edited, not committed\n"
    assert not worktree_dirs(project)


def test_keep_worktrees_keeps_a_failed_attempt_and_names_it(cli, project, runenv, monkeypatch):
    monkeypatch.setenv("MAESTRO_MAX_RETRIES", "0")
    write_plan(cli, project, [task(1, validation="false")])
    runenv.script("codex", [step()])
    assert cli("run", "--keep-worktrees").code == 2
    [kept] = worktree_dirs(project)
    assert (kept / "src" / "app.py").exists()
    t = plan(project).task("1")
    assert f"its worktree is kept: {kept.relative_to(project)}" in t.result
    assert any(e["kind"] == "worktree_kept" for e in events(project))


def test_spokes_start_from_uncommitted_work_and_dependencies(cli, project, runenv):
    (project / "draft.txt").write_text("uncommitted\n")
    write_plan(
        cli,
        project,
        [
            task(1),
            task(
                2,
                files=["src/b.py"],
                validation="test -f src/app.py && test -f draft.txt",
                depends=[1],
            ),
        ],
    )
    runenv.script("codex", [step(), step("src/b.py")])
    assert cli("run").code == 0
    second = runenv.runs("codex")[1]
    cwd = Path(second["argv"][second["argv"].index("-C") + 1])
    assert cwd.parent == project / ".ai" / "maestro" / "worktrees"
    # Confined by Maestro, its own sandbox (which cannot nest) bypassed.
    assert "--dangerously-bypass-approvals-and-sandbox" in second["argv"]
    assert str(cwd) in max(second["argv"], key=len)
    assert git(project, "branch", "--list") == "* main\n"  # no branch for any worktree
    assert git(project, "log", "--format=%s") == "init\n"  # HEAD never moved


def test_a_spoke_writing_into_the_users_tree_fails_scope(cli, project, runenv, unconfined):
    write_plan(cli, project, [task(1)])
    target = project / "src" / "app.py"
    runenv.script(
        "codex",
        [{"text": answer(), "write": [{"path": str(target), "content": "x = 1\n"}], "force": True}],
    )
    assert cli("run").code == 2
    t = plan(project).task("1")
    assert t.status == "failed" and "changed outside its worktree" in t.result
    assert "src/app.py (created)" in t.result and not target.exists()


def test_commit_commits_each_landed_task_on_the_branch(cli, project, runenv):
    (project / "mine.txt").write_text("staged by me\n")
    git(project, "add", "mine.txt")
    write_plan(
        cli,
        project,
        [task(1), task(2, files=["src/b.py"], validation="test -f src/b.py", depends=[1])],
    )
    runenv.script("codex", [step(), step("src/b.py")])
    res = cli("run", "--commit", "--json")
    assert res.code == 0, res.out + res.err
    log = git(project, "log", "--format=%s%n%b").split("\n")
    assert "Task 2: Write module number 2" in log and "Task 1: Write module number 1" in log
    assert any(line.startswith("Landed by maestro run ") for line in log)
    t = plan(project).task("2")
    assert t.receipt.commit == git(project, "rev-parse", "HEAD").strip()
    assert git(project, "show", "--name-only", "--format=", "HEAD").split() == ["src/b.py"]
    assert status(project) == "A  mine.txt\n"  # the person's staged file stays staged
    done = [e for e in events(project) if e["kind"] == "task_done"]
    assert all(e["commit"] for e in done)


def test_in_place_says_so(cli, project, runenv):
    commit_ignoring(project, ".ai/\n")  # the state dir ignored, as projects do
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [step()])
    res = cli("run", "--in-place")
    assert res.code == 0
    assert "in place, in the shared working tree (--in-place)" in res.out.splitlines()[0]
    first = runenv.runs("codex")[0]
    assert first["argv"][first["argv"].index("-C") + 1] == str(project)
    assert plan(project).task("1").receipt.files_changed == ["src/app.py"]


def test_the_receipt_records_the_change_and_later_tasks_see_it(cli, project, runenv):
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [step()])
    assert cli("run").code == 0
    receipt = plan(project).task("1").receipt
    parent = git(project, "rev-parse", f"{receipt.change}^").strip()
    shown = git(project, "diff", "--name-only", parent, receipt.change).split()
    assert shown == ["src/app.py"] and receipt.files_changed == ["src/app.py"]
    event = next(e for e in events(project) if e["kind"] == "task_done")
    assert event["landed"] == "landed"
    assert json.dumps(event)  # plain data


def test_ignored_dependency_folders_are_linked_not_copied(cli, project, runenv):
    (project / "node_modules" / "left-pad").mkdir(parents=True)
    (project / "node_modules" / "left-pad" / "index.js").write_text("module.exports = 1\n")
    (project / "vendor").mkdir()  # tracked: in every worktree already, never linked
    (project / "vendor" / "lib.txt").write_text("tracked\n")
    commit_ignoring(project, "node_modules/\n")
    check = "test -f node_modules/left-pad/index.js && test ! -L vendor && test -f src/app.py"
    write_plan(cli, project, [task(1, validation=check)])
    runenv.script("codex", [step()])
    res = cli("run")
    assert res.code == 0, res.out + res.err
    t = plan(project).task("1")
    assert t.receipt.validation_exit == 0 and t.receipt.files_changed == ["src/app.py"]
    assert (project / "node_modules" / "left-pad" / "index.js").exists()  # the user's, intact


def test_workspace_links_can_be_switched_off(cli, project, runenv):
    (project / "node_modules").mkdir()
    commit_ignoring(project, "node_modules/\n")
    write_plan(cli, project, [task(1, validation="test ! -e node_modules")])
    (project / ".ai" / "maestro.toml").write_text("workspace_links = []\n")
    runenv.script("codex", [step()])
    assert cli("run").code == 0


def test_a_file_in_workspace_links_is_refused_with_the_fix(cli, project, runenv):
    """Only folders are linked: a configured file entry (.env) would silently be absent
    from every worktree, so the run refuses it in one line before any dispatch."""
    (project / "node_modules").mkdir()
    commit_ignoring(project, ".env\nnode_modules/\n")
    (project / ".env").write_text("SECRET=1\n")
    write_plan(cli, project, [task(1, validation="test -f .env")])
    (project / ".ai" / "maestro.toml").write_text('workspace_links = [".env", "node_modules"]\n')
    runenv.script("codex", [step()])
    res = cli("run")
    said = res.out + res.err
    assert res.code == 1, said
    assert "names .env, which is a file: only folders are linked" in said
    assert "move it to workspace_copy" in said
    assert "Traceback" not in said and not runenv.runs("codex")
    assert (project / ".env").read_text() == "SECRET=1\n"


def test_a_spokes_own_commits_in_its_worktree_count_as_its_change(cli, project, runenv):
    write_plan(cli, project, [task(1)])
    s = step()
    # Its shell tool commits the file it wrote, in its worktree (detached: no branch moves).
    s["shell"] = [{"sh": "git add src/app.py && git commit -q -m 'spoke commit'"}]
    runenv.script("codex", [s])
    res = cli("run")
    assert res.code == 0, res.out + res.err
    call = runenv.runs("codex")[0]
    assert call["shell"][0]["exit"] == 0, call["shell"]
    t = plan(project).task("1")
    assert t.status == "done" and t.receipt.files_changed == ["src/app.py"]
    assert "hi {name}" in (project / "src" / "app.py").read_text()
    assert git(project, "log", "--format=%s") == "init\n"  # the user's branch never moved
    assert git(project, "branch", "--list") == "* main\n"


def test_a_task_inside_a_submodule_is_refused_before_dispatch(cli, project, runenv, tmp_path):
    """A worktree holds a submodule empty and a change under it is not the project's: the
    task's work would be lost, so the run refuses it with the fix before any dispatch."""
    sub = tmp_path / "sub"
    sub.mkdir()
    git(sub, "init", "-q")
    (sub / "s.txt").write_text("s\n")
    git(sub, "add", "s.txt")
    git(sub, "commit", "-q", "-m", "s")
    git(project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "lib")
    git(project, "commit", "-q", "-m", "lib")
    write_plan(cli, project, [task(1, files=["lib/s.txt"], validation="test -f lib/s.txt")])
    runenv.default("codex", step("lib/s.txt", content="changed\n"))
    res = cli("run")
    assert res.code == 1, res.out + res.err
    said = res.out + res.err
    assert "task 1 (lib/s.txt, in the submodule lib)" in said
    assert "maestro run --in-place" in said and "Traceback" not in said
    assert not runenv.runs("codex")
    assert plan(project).task("1").status == "pending"
    assert (project / "lib" / "s.txt").read_text() == "s\n"


def test_an_answer_naming_changes_with_none_measured_is_not_silently_done(cli, project, runenv):
    """The answer says it wrote src/app.py, but its worktree holds no change: the task is
    done with a warning that says so, not silently."""
    write_plan(cli, project, [task(1, validation="true")])
    runenv.default("codex", step(""))
    res = cli("run")
    t = plan(project).task("1")
    assert t.status == "done", res.out + res.err
    assert "its answer names changed files but its worktree holds no change: src/app.py" in (
        t.result or ""
    )


def test_ignored_env_files_are_copied_into_each_worktree(cli, project, runenv):
    """The task's validation reads `.env` in its worktree; the spoke's edit to its copy
    never reaches the user's `.env` (a copy, not a link)."""
    commit_ignoring(project, ".env\n.env.*\nsecrets/\n")
    (project / ".env").write_text("API_KEY=users-secret\n")
    (project / ".env.local").write_text("LOCAL=1\n")
    (project / "secrets").mkdir()
    (project / "secrets" / "token").write_text("t0k3n\n")
    (project / ".worktreeinclude").write_text("secrets/token\n")
    check = (
        "grep -q API_KEY=spokes-own .env && test ! -L .env && test -f .env.local"
        " && test -f secrets/token && test -f src/app.py"
    )
    write_plan(cli, project, [task(1, validation=check)])
    s = step()
    # Its shell reads the user's value in its copy, then edits the copy.
    s["shell"] = [{"sh": "grep -q API_KEY=users-secret .env && echo API_KEY=spokes-own > .env"}]
    runenv.script("codex", [s])
    res = cli("run")
    assert res.code == 0, res.out + res.err
    assert runenv.runs("codex")[0]["shell"][0]["exit"] == 0
    t = plan(project).task("1")
    assert t.receipt.validation_exit == 0 and t.receipt.files_changed == ["src/app.py"]
    assert (project / ".env").read_text() == "API_KEY=users-secret\n"
    assert not worktree_dirs(project)


def test_a_tracked_env_is_in_the_snapshot_not_copied_again(cli, project, runenv):
    """A `.env` git does not ignore is part of the base: the worktree has it from git, and
    a spoke's edit to it is the task's change like any other file."""
    (project / ".env").write_text("MODE=dev\n")
    git(project, "add", ".env")
    git(project, "commit", "-q", "-m", "a tracked .env")
    write_plan(cli, project, [task(1, files=[".env"], validation="grep -q MODE=test .env")])
    runenv.script("codex", [step(".env", content="MODE=test\n")])
    res = cli("run")
    assert res.code == 0, res.out + res.err
    t = plan(project).task("1")
    assert t.receipt.files_changed == [".env"]
    assert (project / ".env").read_text() == "MODE=test\n"  # landed as the task's change


def test_workspace_copy_can_be_switched_off(cli, project, runenv):
    commit_ignoring(project, ".env\n")
    (project / ".env").write_text("API_KEY=x\n")
    write_plan(cli, project, [task(1, validation="test ! -e .env")])
    (project / ".ai" / "maestro.toml").write_text("workspace_copy = []\n")
    runenv.script("codex", [step()])
    res = cli("run")
    assert res.code == 0, res.out + res.err


def test_a_landed_change_survives_gc_until_archive(cli, project, runenv):
    """The change commit no branch points at is held by a ref under refs/maestro/, so
    `git gc --prune=now` keeps it (and review still reads the exact change); `maestro
    archive` lets it go."""
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [step()])
    assert cli("run").code == 0
    change = plan(project).task("1").receipt.change
    assert git(project, "for-each-ref", "--format=%(refname)", "refs/maestro/").split() == [
        f"refs/maestro/changes/{change}"
    ]
    assert git(project, "branch", "--list") == "* main\n"  # not a branch
    git(project, "reflog", "expire", "--expire=now", "--all")
    git(project, "gc", "-q", "--prune=now")
    assert git(project, "cat-file", "-t", change).strip() == "commit"
    parent = git(project, "rev-parse", f"{change}^").strip()
    assert git(project, "diff", "--name-only", parent, change).split() == ["src/app.py"]
    res = cli("archive")
    assert res.code == 0, res.out + res.err
    assert git(project, "for-each-ref", "refs/maestro/") == ""
    git(project, "gc", "-q", "--prune=now")
    gone = subprocess.run(["git", "cat-file", "-e", change], cwd=project, check=False)
    assert gone.returncode != 0  # released: gc takes it


def count_worktree_adds(monkeypatch) -> list[str]:
    from maestro.repo import Repo

    made: list[str] = []
    add = Repo.add_worktree

    def counted(self, path, commit):
        made.append(path.name)
        add(self, path, commit)

    monkeypatch.setattr(Repo, "add_worktree", counted)
    return made


def test_a_burst_gets_a_worktree_each_and_leaves_none(cli, project, runenv, monkeypatch):
    """Three tasks ready at the start, three at once: three worktrees, none left."""
    monkeypatch.setenv("MAESTRO_MAX_CONCURRENT", "3")
    monkeypatch.setenv("MAESTRO_STAGGER_DELAY", "0")
    made = count_worktree_adds(monkeypatch)
    write_plan(cli, project, independent(3))
    runenv.default("codex", step("src/m{task}.py"))
    assert cli("run").code == 0
    assert {t.status for t in plan(project).tasks} == {"done"}
    assert len(made) == 3 and not worktree_dirs(project)


def test_a_chain_leaves_no_worktree_behind(cli, project, runenv, monkeypatch):
    """A chain: a worktree for each task, none left behind."""
    made = count_worktree_adds(monkeypatch)
    tasks = [
        task(i, files=[f"src/m{i}.py"], validation=f"test -f src/m{i}.py", depends=[i - 1])
        if i > 1
        else task(1, files=["src/m1.py"], validation="test -f src/m1.py")
        for i in range(1, 5)
    ]
    write_plan(cli, project, tasks)
    runenv.default("codex", step("src/m{task}.py", sleep=0.2))
    assert cli("run").code == 0
    assert {t.status for t in plan(project).tasks} == {"done"}
    started = [e for e in events(project) if e["kind"] == "task_started"]
    assert len(started) == 4
    assert len(made) == 4 and not worktree_dirs(project)
    out = git(project, "worktree", "list", "--porcelain")
    assert out.count("worktree ") == 1  # only the project's own tree is registered


def test_a_dependent_starts_before_the_finished_task_is_tidied(cli, project, runenv, monkeypatch):
    """A chain: Task 2's worktree is made before Task 1's is removed (and its log row
    written): what a finished task leaves to tidy is done once its dependents are on
    their way, and the run still ends with nothing left behind."""
    from maestro.repo import Repo

    order: list[str] = []
    second = threading.Event()
    add, remove = Repo.add_worktree, Repo.remove_worktree

    def added(self, path, commit):
        order.append(f"add {path.name.split('-task-')[1].split('-')[0]}")
        if "-task-2-" in path.name:
            second.set()
        add(self, path, commit)

    def removed(self, path):
        if "-task-1-" in path.name:
            second.wait(5)  # the old order never gets there: Task 2 waited for this
        order.append(f"remove {path.name.split('-task-')[1].split('-')[0]}")
        remove(self, path)

    from maestro.engine import dispatch

    end = dispatch.end_session

    def ended(paths, session_id, *args, **kwargs):
        order.append(f"end {session_id.split('-')[0]}")
        return end(paths, session_id, *args, **kwargs)

    monkeypatch.setattr(Repo, "add_worktree", added)
    monkeypatch.setattr(Repo, "remove_worktree", removed)
    monkeypatch.setattr(dispatch, "end_session", ended)
    write_plan(
        cli,
        project,
        [
            task(1, files=["src/m1.py"], validation="test -f src/m1.py"),
            task(2, files=["src/m2.py"], validation="test -f src/m2.py", depends=[1]),
        ],
    )
    runenv.default("codex", step("src/m{task}.py"))
    assert cli("run").code == 0
    assert {t.status for t in plan(project).tasks} == {"done"}
    assert order.index("add 2") < order.index("remove 1"), order
    assert order.index("add 2") < order.index("end t1"), order
    assert not worktree_dirs(project)
    log = (project / ".ai" / "MAESTRO-LOG.md").read_text()
    assert "Task 1" in log and "Task 2" in log


@pytest.mark.parametrize("where", [(), ("--in-place",)], ids=["worktree", "in-place"])
def test_a_filter_a_spokes_gitattributes_names_never_runs(cli, project, runenv, tmp_path, where):
    """The person's own filter driver (git-lfs's, a script's), named for every file by
    the .gitattributes a spoke writes: Maestro's reading of what the spoke wrote (its
    worktree; in place, the project before and after its dispatch) runs none of it, and
    the change is read and lands as its bytes. (Once landed, the attributes are in the
    person's tree, where their own git, and a `git status`, apply them.)"""
    ran = tmp_path / "filter-ran"
    parent = 'tr "\\000" " " < /proc/$PPID/cmdline'
    git(project, "config", "filter.mark.clean", f"({parent}; echo) >> {ran}; sed s/x/FILTERED/")
    write_plan(cli, project, [task(1, files=["src/app.py", ".gitattributes"])])
    written = [
        {"path": ".gitattributes", "content": "* filter=mark\n"},
        {"path": "src/app.py", "content": "x = 1\n"},
    ]
    runenv.script("codex", [step("", write=written)])
    res = cli("run", *where)
    assert res.code == 0, res.out + res.err
    assert plan(project).task("1").status == "done"
    calls = ran.read_text().splitlines() if ran.exists() else []
    assert not [c for c in calls if " add " in c or "write-tree" in c], calls
    assert (project / "src" / "app.py").read_text() == "x = 1\n"


def test_a_nested_dependency_folder_under_an_ignored_one_is_linked(cli, project, runenv):
    """`workspace_links = ["build/cache"]` with build/ ignored: the worktree has no build/,
    and the link is made with its parent (it used to fail the attempt)."""
    (project / "build" / "cache").mkdir(parents=True)
    (project / "build" / "cache" / "hit.txt").write_text("cached\n")
    commit_ignoring(project, "build/\n")
    write_plan(cli, project, [task(1, validation="test -f build/cache/hit.txt")])
    (project / ".ai" / "maestro.toml").write_text('workspace_links = ["build/cache"]\n')
    runenv.script("codex", [step()])
    res = cli("run")
    assert res.code == 0, res.out + res.err
    assert plan(project).task("1").receipt.validation_exit == 0


def test_a_start_that_fails_changes_nothing_of_the_plan(cli, project, runenv):
    """The workspaces' start fails (a file in workspace_links) after the main thread did
    its share of the start: the retried task stays failed, and no run_started is told."""
    commit_ignoring(project, ".env\n")
    (project / ".env").write_text("SECRET=1\n")
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [step(path="elsewhere.py")] * 3)  # never writes src/app.py
    assert cli("run").code == 2
    assert plan(project).task("1").status in ("failed", "blocked")
    before = plan(project).task("1").status
    (project / ".ai" / "maestro.toml").write_text('workspace_links = [".env"]\n')
    res = cli("run", "1")
    assert res.code == 1 and "only folders are linked" in res.out + res.err
    assert plan(project).task("1").status == before
    kinds = [e["kind"] for e in events(project)]  # the refused run's own
    assert "run_ended" in kinds and "run_started" not in kinds
    assert not worktree_dirs(project)


def test_one_ctrl_c_while_tasks_start_stops_gracefully(cli, project, runenv, unconfined):
    """One SIGINT lands while the run is launching its tasks (the first spoke sends it
    to the run as it starts: unconfined, as a confined one cannot reach the run): the run stops launching, lets the started task finish,
    exits 2 with the others pending, and leaves no worktree: never the second Ctrl-C's
    quick exit."""
    write_plan(cli, project, independent(3))
    to_run = "kill -INT \"$(awk '{print $4}' /proc/$PPID/stat)\""  # the spoke's parent
    runenv.script("codex", [step("src/m1.py", shell=[{"sh": to_run}], sleep=0.3)])
    runenv.default("codex", step("src/m{task}.py", sleep=0.3))
    done = run_process(project, concurrent=1, capture_output=True, text=True)
    said = done.stdout + done.stderr
    assert done.returncode == 2, said
    assert "stopping (interrupted (Ctrl-C))" in said and "second Ctrl-C" not in said
    statuses = sorted(t.status for t in plan(project).tasks)
    assert statuses == ["done", "pending", "pending"], said
    assert not worktree_dirs(project)
    assert git(project, "worktree", "list", "--porcelain").count("worktree ") == 1


def _spaces(project, run_id="r1"):
    from types import SimpleNamespace

    from maestro.engine.workspace import Worktrees
    from maestro.paths import ProjectPaths
    from maestro.repo import Repo

    settings = SimpleNamespace(workspace_links=(), workspace_copy=())
    return Worktrees(ProjectPaths(project), Repo.find(project), run_id, settings)


def test_the_cleanup_of_dead_runs_leaves_this_runs_worktrees(project):
    """The start cleans what dead runs left while this run's worktrees are being made:
    those, named with this process's pid, are in use."""
    from maestro.engine.worktree import clean_stale

    spaces = _spaces(project)
    spaces.prepare()
    made = spaces.create("task")
    assert clean_stale(spaces.paths, spaces.repo) == []
    assert made.path.is_dir() and (made.path / ".git").exists()
    spaces.discard(made)
    spaces.close()
    assert not worktree_dirs(project)


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_the_cleanup_takes_only_what_dead_processes_left(project):
    """Each worktree, and each scratch file or folder beside it (a landing's merge folder,
    a snapshot's index: a challenge's, say), ends in its maker's pid: the cleanup takes
    those of dead processes and leaves those of live ones. One named with this process's
    pid is taken unless this process made it: a dead process had the same pid (in a
    container every run may be pid 1)."""
    from maestro.engine.worktree import clean_stale
    from maestro.repo import mine

    spaces = _spaces(project)
    spaces.prepare()
    dead, other, this = _dead_pid(), os.getppid(), os.getpid()
    left = spaces.dir / f"old-task-1-p{dead}"
    git(project, "worktree", "add", "--detach", "--quiet", str(left), spaces.base)
    same_pid = spaces.dir / f"old-task-1-p{this}"
    git(project, "worktree", "add", "--detach", "--quiet", str(same_pid), spaces.base)
    for pid in (dead, other, this):
        (spaces.dir / f".run-task-2-p{pid}.merge").mkdir()
        (spaces.dir / f".challenge-codex-20261124T000000-p{pid}.index").write_text("")
    (spaces.dir / f".run-task-3-p{this}.merge").mkdir()
    (spaces.dir / f".run-task-4-p{dead}.index.lock").write_text("")  # git's, left by a kill
    (spaces.dir / f".run-task-4-p{other}.index.lock").write_text("")  # a live add's
    mine(f"run-task-3-p{this}")  # this process's worktree: its merge folder is in use
    removed = clean_stale(spaces.paths, spaces.repo)
    assert sorted(removed) == sorted(
        [
            left,
            same_pid,
            spaces.dir / f".run-task-2-p{dead}.merge",
            spaces.dir / f".run-task-2-p{this}.merge",
        ]
    )
    listed = git(project, "worktree", "list")
    assert not left.exists() and str(left) not in listed and str(same_pid) not in listed
    names = sorted(p.name for p in spaces.dir.iterdir())
    assert names == [
        f".challenge-codex-20261124T000000-p{other}.index",
        ".gitignore",
        f".run-task-2-p{other}.merge",
        f".run-task-3-p{this}.merge",
        f".run-task-4-p{other}.index.lock",
    ]
    spaces.close()
