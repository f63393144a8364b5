"""Claude Code's session store: the slug rule, and a transcript made findable from
another folder without writing anywhere else (maestro/clis/claudestore.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from maestro.clis.claudestore import reach, slug
from maestro.process import ProcessOutcome
from maestro.spokes.contract import DispatchRequest
from maestro.spokes.registry import get_spoke
from tests.fakes.samples import read_sample

SESSION = "5d0c8a52-3f1e-4b7a-9c2d-6e8f0a1b2c3d"


@pytest.mark.parametrize(
    ("folder", "expected"),
    [
        # Claude Code 2.1.197's own function, run by node on these paths.
        (
            "/home/ann/My Project/.ai/maestro/worktrees/20261126T065346Z-d424-task-1-p24046",
            "-home-ann-My-Project--ai-maestro-worktrees-20261126T065346Z-d424-task-1-p24046",
        ),
        ("/srv/é😀_x.y", "-srv-----x-y"),  # the emoji is two UTF-16 units
        (
            "/w/" + "projekt-ü/" * 30,
            "-w-" + "projekt---" * 19 + "projekt-mbrpo7",
        ),
        ("/w/" + "c" * 250, "-w-" + "c" * 197 + "-h4erl3"),
    ],
)
def test_slug_is_claude_codes(folder, expected):
    assert slug(folder) == expected


@pytest.fixture
def projects(tmp_path):
    folder = tmp_path / "home" / ".claude" / "projects"
    folder.mkdir(parents=True)
    return folder


def env_of(projects: Path) -> dict[str, str]:
    return {"HOME": str(projects.parent.parent)}


def kept(projects: Path, folder: str, text: str, mtime: int) -> Path:
    path = projects / folder / f"{SESSION}.jsonl"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    os.utime(path, (mtime, mtime))
    return path


def test_the_latest_transcript_is_copied_under_the_new_folders_slug(projects, tmp_path):
    first = kept(projects, "-old-worktree", "first\n", 1_000)
    kept(projects, "-older-worktree", "stale\n", 500)
    work = tmp_path / "new worktree"
    work.mkdir()
    assert reach(env_of(projects), SESSION, work) is None
    copy = projects / slug(os.path.realpath(work)) / f"{SESSION}.jsonl"
    assert copy.read_text() == "first\n" and first.read_text() == "first\n"
    assert copy.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in copy.parent.iterdir()] == [copy.name]  # no temporary file left
    # The copy resumed from there grows; a later revision takes it, not the first one.
    os.utime(copy, (2_000, 2_000))
    copy.write_text("first\nsecond\n")
    later = tmp_path / "later"
    later.mkdir()
    assert reach(env_of(projects), SESSION, later) is None
    again = projects / slug(os.path.realpath(later)) / f"{SESSION}.jsonl"
    assert again.read_text() == "first\nsecond\n"


def test_claude_config_dir_moves_the_store(tmp_path):
    config = tmp_path / "config"
    (config / "projects").mkdir(parents=True)
    kept(config / "projects", "-old", "first\n", 1_000)
    env = {"HOME": str(tmp_path / "nohome"), "CLAUDE_CONFIG_DIR": str(config)}
    assert reach(env, SESSION) is None
    assert reach({"HOME": str(tmp_path / "nohome")}, SESSION) is not None


@pytest.mark.parametrize(
    ("session", "why"),
    [
        ("thread-1", "'thread-1' is not a Claude Code session id"),
        ("../" + SESSION, "is not a Claude Code session id"),
        (SESSION, f"no transcript of session {SESSION} under "),
    ],
)
def test_what_cannot_be_resumed_says_why(projects, session, why):
    kept(projects, "-empty", "", 1_000)  # an empty transcript is none
    assert why in (reach(env_of(projects), session) or "")


def test_no_link_is_followed_into_or_out_of_the_store(projects, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / f"{SESSION}.jsonl").write_text("a file of the user's\n")
    (projects / "-linked").symlink_to(outside)  # a folder link: not a transcript of Claude's
    (projects / "-file-link").mkdir()
    (projects / "-file-link" / f"{SESSION}.jsonl").symlink_to(outside / f"{SESSION}.jsonl")
    assert "no transcript" in (reach(env_of(projects), SESSION) or "")
    kept(projects, "-old", "first\n", 1_000)
    work = tmp_path / "work"
    work.mkdir()
    (projects / slug(os.path.realpath(work))).symlink_to(
        outside
    )  # where the copy would go: a link out
    why = reach(env_of(projects), SESSION, work)
    assert why and "could not be read or copied" in why
    assert (outside / f"{SESSION}.jsonl").read_text() == "a file of the user's\n"
    assert [p.name for p in outside.iterdir()] == [f"{SESSION}.jsonl"]


def outcome(stdout: str = "", stderr: str = "", code: int = 0) -> ProcessOutcome:
    return ProcessOutcome(stdout, stderr, code, timed_out=False, duration_s=0.1)


def test_a_resume_claude_still_refuses_is_dispatched_afresh(projects, tmp_path):
    kept(projects, "-old", "first\n", 1_000)
    argvs: list[list[str]] = []
    missing, answered = read_sample("claude_resume_missing"), read_sample("claude_json")

    def runner(argv, **_):
        argvs.append(argv)
        if "--resume" in argv:
            return outcome(missing.stdout, missing.stderr, missing.exit_code)
        return outcome(answered.stdout)

    req = DispatchRequest(prompt="fix it", cwd=tmp_path, resume_session=SESSION)
    result = get_spoke("claude").dispatch(req, runner=runner, base_env=env_of(projects))
    assert result.success and [("--resume" in a) for a in argvs] == [True, False]
    assert result.not_resumed == f"claude found no conversation {SESSION} from {tmp_path}"


def test_a_session_without_a_transcript_is_never_passed_to_claude(projects, tmp_path):
    argvs: list[list[str]] = []

    def runner(argv, **_):
        argvs.append(argv)
        return outcome(read_sample("claude_json").stdout)

    req = DispatchRequest(prompt="fix it", cwd=tmp_path, resume_session=SESSION)
    result = get_spoke("claude").dispatch(req, runner=runner, base_env=env_of(projects))
    assert result.success and len(argvs) == 1 and "--resume" not in argvs[0]
    assert result.not_resumed and "no transcript" in result.not_resumed
