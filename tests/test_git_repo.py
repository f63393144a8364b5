"""maestro.repo.Repo on real temporary repositories: snapshots that leave the user's index,
HEAD and refs alone, detached worktrees, tree diffs, three-way merges."""

import pytest

from maestro.git import GitError
from maestro.repo import Repo
from tests.test_git import git


@pytest.fixture
def repo(project):
    (project / "a.txt").write_text("one\ntwo\nthree\nfour\nfive\n")
    (project / ".gitignore").write_text("ignored/\n")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "init")
    return project


def state(root):
    return (
        git(root, "status", "--porcelain=v1", "--untracked-files=all"),
        git(root, "rev-parse", "HEAD"),
        git(root, "for-each-ref"),
        (root / ".git" / "index").read_bytes(),
    )


def test_snapshot_holds_uncommitted_work_and_touches_nothing(repo, tmp_path):
    (repo / "a.txt").write_text("ONE\n")
    (repo / "new.txt").write_text("new\n")
    (repo / "ignored").mkdir()
    (repo / "ignored" / "x").write_text("x\n")
    (repo / ".ai").mkdir()
    (repo / ".ai" / "plan.md").write_text("plan\n")
    before = state(repo)
    r = Repo.find(repo)
    tree = r.snapshot(repo, tmp_path / "idx", exclude=[".ai"])
    commit = r.commit_tree(tree, [r.head()], "snapshot")
    assert state(repo) == before
    files = git(repo, "ls-tree", "-r", "--name-only", commit).split()
    assert sorted(files) == [".gitignore", "a.txt", "new.txt"]
    assert git(repo, "show", f"{commit}:a.txt") == "ONE\n"


def test_worktree_add_diff_and_remove(repo, tmp_path):
    r = Repo.find(repo)
    base = r.commit_tree(r.snapshot(repo, tmp_path / "i1"), [r.head()], "base")
    wt = repo / ".ai" / "wt1"
    r.add_worktree(wt, base)
    assert (wt / "a.txt").read_text().startswith("one")
    (wt / "a.txt").write_text("one\ntwo\nTHREE\nfour\nfive\n")
    (wt / "b.txt").write_text("b\n")
    git(wt, "add", "b.txt")
    git(wt, "commit", "-q", "-m", "a spoke's own commit")  # counts like any other change
    (wt / ".gitignore").unlink()
    tree = r.snapshot(wt, tmp_path / "i2")
    changes = {c.path: c.status for c in r.tree_changes(base, tree)}
    assert changes == {"a.txt": "M", "b.txt": "A", ".gitignore": "D"}
    assert "+THREE" in r.patch(base, tree)
    assert "3 files changed" in r.shortstat(base, tree)
    assert git(repo, "branch", "--list") == "* main\n"  # no branch for the worktree
    r.remove_worktree(wt)
    assert not wt.exists() and [e.path for e in r.worktrees()] == [repo]


def test_blob_ids_match_git(repo):
    r = Repo.find(repo)
    assert (
        r.blob_id(b"one\ntwo\nthree\nfour\nfive\n") == git(repo, "rev-parse", "HEAD:a.txt").strip()
    )
    assert r.blob(git(repo, "rev-parse", "HEAD:a.txt").strip()).startswith(b"one\n")


def test_merge_commits_clean_and_conflicting(repo, tmp_path):
    r = Repo.find(repo)
    base = r.head()

    def mk(text, name):
        return r.commit_tree(_tree_with(repo, r, tmp_path / name, text), [base], name)

    top = mk("ONE\ntwo\nthree\nfour\nfive\n", "top")
    bottom = mk("one\ntwo\nthree\nfour\nFIVE\n", "bottom")
    tree, conflicts = r.merge_commits(top, bottom)
    assert (
        conflicts == []
        and git(repo, "cat-file", "-p", f"{tree}:a.txt") == "ONE\ntwo\nthree\nfour\nFIVE\n"
    )
    other = mk("uno\ntwo\nthree\nfour\nfive\n", "other")
    assert r.merge_commits(top, other) == (None, ["a.txt"])


def _tree_with(repo, r, index, text):
    (repo / "a.txt").write_text(text)
    tree = r.snapshot(repo, index)
    git(repo, "checkout", "-q", "--", "a.txt")
    return tree


def test_merge_file(repo, tmp_path):
    r = Repo.find(repo)
    base = b"1\n2\n3\n4\n5\n6\n7\n"
    merged = r.merge_file(b"1\nX\n3\n4\n5\n6\n7\n", base, b"1\n2\n3\n4\n5\n6\nY\n", tmp_path / "m")
    assert merged == b"1\nX\n3\n4\n5\n6\nY\n"
    assert r.merge_file(b"1\nX\n", b"1\n2\n", b"1\nY\n", tmp_path / "m") is None
    assert r.merge_file(b"\0", b"", b"x", tmp_path / "m") is None


def test_commit_paths_commits_only_those(repo, tmp_path):
    (repo / "a.txt").write_text("landed\n")
    (repo / "new.txt").write_text("new\n")
    (repo / "mine.txt").write_text("staged by the user\n")
    git(repo, "add", "mine.txt")
    r = Repo.find(repo)
    sha = r.commit_paths(["a.txt", "new.txt"], "Task 1: landed", tmp_path / "commit.index")
    assert git(repo, "show", "--name-only", "--format=%s", sha).split() == [
        "Task",
        "1:",
        "landed",
        "a.txt",
        "new.txt",
    ]
    assert git(repo, "status", "--porcelain") == "A  mine.txt\n"
    assert not (tmp_path / "commit.index").exists()


def test_not_a_repository(tmp_path):
    assert Repo.find(tmp_path) is None


def test_ignoring_names_the_rule_and_honours_a_negation(repo):
    (repo / ".gitignore").write_text("ignored/\n*.log\n!keep.log\n")
    r = Repo.find(repo)
    rules = r.ignoring(["ignored/out.txt", "a.log", "keep.log", "a.txt"])
    assert rules == {"ignored/out.txt": ".gitignore:1: ignored/", "a.log": ".gitignore:2: *.log"}
    assert r.ignored(["a.log", "keep.log"]) == {"a.log"}


def test_a_worktree_is_registered_as_git_registers_one(repo):
    """Made by hand, it is git's: listed detached, clean, unlocked, removable by git."""
    r = Repo.find(repo)
    wt = repo / ".ai" / "wt2"
    r.add_worktree(wt, r.head())
    listed = git(repo, "worktree", "list", "--porcelain")
    assert f"worktree {wt.resolve()}\nHEAD {r.head()}\ndetached" in listed
    assert "locked" not in listed and "prunable" not in listed
    assert git(wt, "status", "--porcelain") == ""
    git(repo, "worktree", "prune")  # the person's prune leaves it
    git(repo, "worktree", "remove", "--force", str(wt))
    assert not wt.exists() and [e.path for e in r.worktrees()] == [repo]


def test_a_worktree_that_cannot_be_checked_out_leaves_nothing(repo):
    r = Repo.find(repo)
    wt = repo / ".ai" / "wt3"
    with pytest.raises(GitError, match="cannot check out a worktree"):
        r.add_worktree(wt, "0" * 40)
    assert not wt.exists() and [e.path for e in r.worktrees()] == [repo]


def test_a_worktree_that_cannot_be_made_leaves_no_registration(repo):
    r = Repo.find(repo)
    (repo / ".ai").mkdir(exist_ok=True)
    (repo / ".ai" / "taken").write_text("a file where the folder's parent would be\n")
    with pytest.raises(GitError, match="cannot make a worktree"):
        r.add_worktree(repo / ".ai" / "taken" / "wt4", r.head())
    assert not (r.common_dir / "worktrees" / "wt4").exists()
    assert [e.path for e in r.worktrees()] == [repo]
