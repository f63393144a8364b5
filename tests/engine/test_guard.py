"""The guard's snapshots of the user's tree: dispatches that wait for the landing lock
together share one, and never one older than their asking or than a write of the run."""

import threading
import time

from maestro.engine.guard import Guard
from maestro.repo import Repo
from tests.test_git import git


def guard_of(project, tmp_path) -> Guard:
    (project / "a.py").write_text("a = 1\n")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "init")
    return Guard(
        Repo(project),
        index=tmp_path / "guard.index",
        exclude=[],
        drop=[],
        saved=tmp_path / "outside",
    )


def counting(guard: Guard) -> list[str]:
    taken: list[str] = []
    snapshot = guard.repo.snapshot

    def counted(*args, **kwargs):
        taken.append(snapshot(*args, **kwargs))
        return taken[-1]

    guard.repo.snapshot = counted  # type: ignore[method-assign]
    return taken


def test_marks_that_wait_for_the_landing_lock_together_share_one_snapshot(project, tmp_path):
    guard = guard_of(project, tmp_path)
    taken = counting(guard)
    landing = threading.Lock()
    marks = []
    with landing:  # a landing in progress: both dispatches ask, and wait
        threads = [
            threading.Thread(target=lambda: marks.append(guard.mark(landing))) for _ in range(2)
        ]
        for thread in threads:
            thread.start()
        time.sleep(0.3)
    for thread in threads:
        thread.join()
    assert len(taken) == 1
    assert marks[0].tree == marks[1].tree == taken[0]


def test_a_snapshot_older_than_the_asking_is_never_served(project, tmp_path):
    guard = guard_of(project, tmp_path)
    before = guard.tree(since=time.time_ns())
    (project / "b.py").write_text("b = 2\n")  # a person's new file, after that snapshot
    after = guard.tree(since=time.time_ns())
    assert after != before
    assert "b.py" in git(project, "ls-tree", "--name-only", after)


def test_a_write_of_the_run_ends_the_sharing(project, tmp_path):
    guard = guard_of(project, tmp_path)
    asked = time.time_ns()
    first = guard.tree(since=asked)
    assert guard.tree(since=asked) == first  # nothing written since: shared
    (project / "landed.py").write_text("x = 1\n")  # a landing writes the user's tree
    guard.wrote()
    third = guard.tree(since=asked)
    assert third != first
    assert "landed.py" in git(project, "ls-tree", "--name-only", third)
