"""The one rule for what a task's Files entry covers: a file, a folder, or a glob read
the way a .gitignore line is (`**` spans folders, `*` stays within one)."""

from __future__ import annotations

import pytest

from maestro import graph
from maestro.engine.ownership import overlapping, owns
from maestro.state.model import Task


@pytest.mark.parametrize(
    "entry,path,covered",
    [
        ("src/**/*.py", "src/a.py", True),
        ("src/**/*.py", "src/x/y/b.py", True),
        ("src/**/*.py", "srcx/a.py", False),
        ("src/**/*.py", "src/a.md", False),
        ("src/**", "src/x/y/b.md", True),
        ("**/test_*.py", "test_a.py", True),
        ("**/test_*.py", "pkg/tests/test_a.py", True),
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/x/a.py", False),  # `*` stays within one folder
        ("*.md", "docs/deep/a.md", True),  # a glob without a slash matches at any depth
        ("src/*/", "src/x/y.py", True),  # a folder a glob matches owns what is below it
        ("tests/test_?.py", "tests/test_ab.py", False),
        ("src/[ab].py", "src/b.py", True),
        ("src/", "src/x/y.py", True),
        ("src/a.py", "src/a.py", True),
        ("src/a.py", "src/a.pyc", False),
    ],
)
def test_a_files_entry_covers_paths_by_one_rule_finding_12(entry, path, covered):
    assert owns(entry, path) is covered


@pytest.mark.parametrize(
    "a,b,overlap",
    [
        ("src/**/*.py", "src/a.py", True),
        ("src/**/*.py", "src/", True),
        ("src/**/*.py", "src/x/**/*.py", True),
        ("src/**/*.py", "docs/**/*.md", False),
        ("src/*.py", "src/*.md", False),
        ("src/**/*.py", "docs/a.py", False),
        ("tests/test_*.py", "tests/*_api.py", True),
        ("tests/test_*.py", "tests/conftest.py", False),
        ("*.md", "docs/**", True),
        ("src/*.py", "src/x/a.py", False),
    ],
)
def test_two_entries_overlap_when_a_path_could_be_both_finding_12(a, b, overlap):
    assert bool(overlapping([a], [b])) is overlap
    assert bool(overlapping([b], [a])) is overlap


def test_a_recursive_glob_conflicts_with_a_file_it_covers_finding_12():
    tasks = [Task("1", "one", files=["src/**/*.py"]), Task("2", "two", files=["src/a.py"])]
    assert graph.file_conflicts(tasks) == [("1", "2", "src/a.py")]
    tasks[1].depends = ["1"]
    assert graph.file_conflicts(tasks) == []
