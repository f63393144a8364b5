"""The full parse kept in the user's cache (maestro/state/layoutcache.py): a process that
edits a plan the last one parsed imports no mistune, and edits exactly as a fresh parse
would; anything unexpected in the cache is a miss."""

from __future__ import annotations

import pickle
import subprocess
import sys
import tempfile
from pathlib import Path
from unittest import mock

from hypothesis import HealthCheck, given, settings

from maestro.paths import ProjectPaths
from maestro.state import layoutcache
from maestro.state.planfile import PARSER_VERSION, parse_bytes, render
from maestro.state.store import PlanStore
from tests.state.test_store import make_store
from tests.state.test_store_memo import HAND_WRITTEN, OPS, STEPS

REPO = Path(__file__).resolve().parents[2]


def _project(root: Path, text: str = HAND_WRITTEN) -> PlanStore:
    (root / ".ai").mkdir(parents=True, exist_ok=True)
    (root / ".ai" / "MAESTRO.md").write_text(text)
    return PlanStore(ProjectPaths(root))


def test_the_next_process_edits_without_mistune(tmp_path):
    """As `maestro run` after `maestro plan --from` (a plan in Maestro's own form: a hand
    written one may need mistune to read the edit back, see writer._read_back)."""
    store = make_store(tmp_path)
    text = store.path.read_text()
    store.keep_parse()
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from maestro.paths import ProjectPaths\n"
        "from maestro.state.store import PlanStore\n"
        "store = PlanStore(ProjectPaths(Path(sys.argv[1])))\n"
        "store.prime()\n"
        "with store.edit() as plan:\n"
        "    plan.tasks[0].status = 'running'\n"
        "print('mistune' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    assert out.stdout.strip() == "False"
    control = parse_bytes(text.encode(), ".ai/MAESTRO.md")
    control.tasks[0].status = "running"
    assert store.path.read_text() == render(control, ".ai/MAESTRO.md")


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=STEPS)
def test_a_kept_parse_edits_as_mistunes_own(tmp_path, steps):
    """Each edit by a new store (a new process) takes the kept parse of the bytes the last
    one wrote; the file it writes is the one a fresh parse would give, edit after edit."""
    root = Path(tempfile.mkdtemp(dir=tmp_path))  # (one tmp_path for all examples)
    store = _project(root)
    store.keep_parse()
    expected = HAND_WRITTEN
    for n, (op, tid) in enumerate(steps, 1):
        unparsed = mock.patch("maestro.state.planfile.parse_bytes", side_effect=AssertionError)
        with unparsed, PlanStore(ProjectPaths(root)).edit() as plan:  # the kept parse only
            OPS[op](plan, tid, n)
        control = parse_bytes(expected.encode(), ".ai/MAESTRO.md")
        OPS[op](control, tid, n)
        expected = render(control, ".ai/MAESTRO.md")
        assert store.path.read_text() == expected, n
        PlanStore(ProjectPaths(root)).keep_parse()  # what the next process then finds


def test_a_hand_edit_is_parsed_again(tmp_path):
    store = _project(tmp_path)
    store.keep_parse()
    store.path.write_text(HAND_WRITTEN.replace("Write the module", "Write the module well"))
    with PlanStore(ProjectPaths(tmp_path)).edit() as plan:
        assert plan.tasks[0].title == "Write the module well"


def test_anything_unexpected_in_the_cache_is_a_miss(tmp_path):
    store = make_store(tmp_path)
    kept = layoutcache.path_for(store.path)
    data = store.path.read_bytes()
    key = layoutcache.key(data, PARSER_VERSION, store.display)
    for content in (
        b"not a pickle",
        pickle.dumps(("another key", parse_bytes(data, store.display))),
        pickle.dumps((key, {"goal": "a dict, not a plan"})),
        pickle.dumps((key,)),
    ):
        kept.parent.mkdir(parents=True, exist_ok=True)
        kept.write_bytes(content)
        with PlanStore(ProjectPaths(tmp_path)).edit() as plan:
            assert plan.tasks[1].title == "Task number 2"
        assert layoutcache.read(kept, key) is not None  # parsed, and kept again


def test_each_plan_file_has_its_own_and_only_one(tmp_path):
    one, two = _project(tmp_path / "one"), _project(tmp_path / "two")
    for store in (one, two, one):
        store.keep_parse()
    assert layoutcache.path_for(one.path) != layoutcache.path_for(two.path)
    assert len(list(layoutcache.path_for(one.path).parent.iterdir())) == 2


def test_a_kept_parse_nobody_else_could_have_written_is_all_it_reads(tmp_path):
    """Loading a pickle runs code: a file another user owns (root's `sudo` keeping HOME,
    say), or that others may write, or in a folder others may write, a symbolic link, or
    a cache folder given as a relative path (which would be in the project the command
    runs in) is never read."""
    import os

    import pytest

    from maestro.fsutil import read_own
    from maestro.paths import user_cache_dir

    store = make_store(tmp_path)
    store.keep_parse()
    kept = layoutcache.path_for(store.path)
    assert read_own(kept) is not None
    kept.chmod(0o666)
    assert read_own(kept) is None
    kept.chmod(0o644)
    assert read_own(Path(os.path.relpath(kept))) is None
    link = kept.with_name("link.pickle")
    link.symlink_to(kept)
    assert read_own(link) is None  # (a link could lead into a project)
    kept.parent.chmod(0o777)
    assert read_own(kept) is None
    kept.parent.chmod(0o775)  # (made with a umask of 002)
    PlanStore(ProjectPaths(tmp_path)).keep_parse()  # refused, so parsed, and the folder closed
    assert kept.parent.stat().st_mode & 0o777 == 0o700 and read_own(kept) is not None
    kept.chmod(0o664)
    PlanStore(ProjectPaths(tmp_path)).keep_parse()  # refused, so parsed and written again
    assert kept.stat().st_mode & 0o777 == 0o600 and read_own(kept) is not None
    assert user_cache_dir({"XDG_CACHE_HOME": "cache", "HOME": "/home/u"}) == Path(
        "/home/u/.cache/maestro"
    )
    if os.getuid() != 0:
        pytest.skip("only root can give the file to another user")
    os.chown(kept, 4242, -1)
    assert read_own(kept) is None
