import subprocess

import pytest

from maestro.engine.receipts import Observer
from maestro.repo import Repo


def git(root, *args):
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture
def repo(project):
    (project / "src").mkdir()
    (project / "src" / "a.py").write_text("a = 1\n")
    (project / "README.md").write_text("hello\n")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "init")
    return project


def make(repo, owners):
    return Observer(repo, lambda tid: owners.get(tid, []), exclude=[".ai/**"])


def test_owned_edit_and_untracked_file_are_the_tasks(repo):
    obs = make(repo, {"1": ["src/a.py", "src/new.py"]})
    obs.begin("spoke", "1")
    (repo / "src" / "a.py").write_text("a = 2\n")
    (repo / "src" / "new.py").write_text("b = 1\n")
    changes = obs.end("spoke", "1")
    assert changes.owned == {"src/a.py", "src/new.py"} and not changes.out_of_scope
    receipt = obs.receipt("1", validation="true", validation_exit=0)
    assert receipt.files_changed == ["src/a.py", "src/new.py"]
    assert "2 files changed" in receipt.diff_stat
    assert receipt.commit and len(receipt.diff_sha) == 64
    # The user's index and HEAD are untouched.
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout
    assert " M src/a.py" in status and "?? src/new.py" in status


def test_out_of_scope_edit_by_the_only_running_task(repo):
    obs = make(repo, {"1": ["src/a.py"]})
    obs.begin("spoke", "1")
    (repo / "README.md").write_text("changed\n")
    changes = obs.end("spoke", "1")
    assert changes.out_of_scope == {"README.md"}


def test_concurrent_tasks_attributed_by_ownership_and_unowned_is_ambiguous(repo):
    obs = make(repo, {"1": ["src/a.py"], "2": ["docs/"]})
    obs.begin("spoke", "1")
    obs.begin("spoke", "2")
    (repo / "src" / "a.py").write_text("a = 3\n")
    (repo / "docs").mkdir()
    (repo / "docs" / "x.md").write_text("x\n")
    (repo / "README.md").write_text("who?\n")
    one = obs.end("spoke", "1")
    two = obs.end("spoke", "2")
    assert one.owned == {"src/a.py"} and two.owned == {"docs/x.md"}
    assert one.ambiguous == {"README.md"} == two.ambiguous
    assert not one.out_of_scope and not two.out_of_scope


def test_state_dir_and_caches_are_not_measured(repo):
    obs = make(repo, {"1": ["src/a.py"]})
    obs.begin("spoke", "1")
    (repo / ".ai").mkdir()
    (repo / ".ai" / "MAESTRO.md").write_text("plan\n")
    (repo / "src" / "__pycache__").mkdir()
    (repo / "src" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0")
    changes = obs.end("spoke", "1")
    assert not changes.owned and not changes.out_of_scope


def test_changes_while_nothing_runs_are_unattributed(repo):
    obs = make(repo, {"1": ["src/a.py"]})
    obs.begin("spoke", "1")
    obs.end("spoke", "1")
    (repo / "README.md").write_text("a person\n")
    obs.begin("spoke", "1")
    obs.end("spoke", "1")
    assert obs.unattributed == {"README.md"} and not obs.tasks["1"].out_of_scope


def test_validation_writes_are_not_blamed_on_a_spoke(repo):
    obs = make(repo, {"1": ["src/a.py"], "2": ["docs/"]})
    obs.begin("spoke", "2")
    obs.begin("validate", "1")
    (repo / "report.xml").write_text("<x/>")
    obs.end("validate", "1")
    two = obs.end("spoke", "2")
    assert not two.out_of_scope and two.ambiguous == {"report.xml"}


def test_not_a_repository(tmp_path):
    obs = Observer(tmp_path, lambda tid: [])
    assert not obs.measures
    obs.begin("spoke", "1")
    assert obs.end("spoke", "1").files == []
    assert obs.receipt("1", validation=None, validation_exit=None).commit is None


def test_project_in_a_subfolder_of_the_repository(repo):
    sub = repo / "pkg"
    sub.mkdir()
    obs = Observer(sub, lambda tid: ["mod.py"])
    obs.begin("spoke", "1")
    (sub / "mod.py").write_text("x = 1\n")
    (repo / "README.md").write_text("outside the project\n")
    assert obs.end("spoke", "1").owned == {"mod.py"}


def test_empty_repository_without_commits(project):
    obs = make(project, {"1": ["a.txt"]})
    obs.begin("spoke", "1")
    (project / "a.txt").write_text("a\n")
    obs.end("spoke", "1")
    receipt = obs.receipt("1", validation=None, validation_exit=None)
    assert receipt.commit is None and receipt.files_changed == ["a.txt"]


def test_head_is_read_from_the_ref_files_as_git_reads_it(repo):
    tree = Repo.find(repo)
    real = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert tree.head() == real
    git(repo, "pack-refs", "--all")  # the branch now lives in packed-refs only
    assert not (repo / ".git" / "refs" / "heads" / "main").exists() and tree.head() == real
    git(repo, "checkout", "-q", "--detach")
    assert tree.head() == real
    git(repo, "checkout", "-q", "-b", "other")
    (repo / "x.txt").write_text("x\n")
    git(repo, "add", "x.txt")
    git(repo, "commit", "-q", "-m", "x")
    newer = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert tree.head() == newer != real


def test_head_in_a_worktree_asks_git(repo, tmp_path):
    git(repo, "worktree", "add", "-q", str(tmp_path / "wt"), "-b", "wt")
    tree = Repo.find(tmp_path / "wt")
    assert (
        tree.head()
        == subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=tmp_path / "wt",
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )


def test_a_file_that_appears_and_vanishes_within_a_task_is_not_its_change(repo):
    # Task 1 writes src/a.py atomically: a temp file beside it, then a rename. Task 2
    # ends while the temp file exists, so one interval sees it appear (two writers) and
    # the next sees it vanish (task 1 alone). Its net change over task 1's life is nil.
    obs = make(repo, {"1": ["src/a.py"], "2": ["docs/x.md"]})
    obs.begin("spoke", "1")
    obs.begin("spoke", "2")
    (repo / "docs").mkdir()
    (repo / "docs" / "x.md").write_text("x\n")
    temp = repo / "src" / ".a.py.1234.tmp"
    temp.write_text("a = 9\n")
    two = obs.end("spoke", "2")
    temp.replace(repo / "src" / "a.py")
    one = obs.end("spoke", "1")
    assert one.owned == {"src/a.py"} and not one.out_of_scope and not one.ambiguous
    # When task 2 ended the temp file existed and two spokes were writing: for task 2 it
    # is ambiguous (a warning), never out of scope.
    assert two.owned == {"docs/x.md"} and not two.out_of_scope
    assert obs.receipt("1", validation=None, validation_exit=None).files_changed == ["src/a.py"]


def test_an_out_of_scope_file_left_behind_still_counts(repo):
    obs = make(repo, {"1": ["src/a.py"]})
    obs.begin("spoke", "1")
    (repo / "notes.txt").write_text("stray\n")
    (repo / "scratch.tmp").write_text("gone soon\n")
    obs.end("spoke", "1")
    obs.begin("spoke", "1")  # a retry of the same task
    (repo / "scratch.tmp").unlink()
    changes = obs.end("spoke", "1")
    assert changes.out_of_scope == {"notes.txt"}
