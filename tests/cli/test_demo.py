"""`maestro demo`: the README's first command, end to end, offline."""

import json
import time
from pathlib import Path

from maestro.paths import user_state_dir


def test_demo_runs_the_goal_in_parallel_and_cleans_up(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no spoke CLI anywhere: the demo needs none
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    started = time.monotonic()
    res = cli("demo")
    elapsed = time.monotonic() - started
    assert res.code == 0, res.out + res.err
    assert elapsed < 20
    out = res.out
    assert "finished: 6 done" in out
    for n in range(1, 7):
        assert f"task {n} done: sim" in out
    # Tasks 2 and 3 (and then 4 and 5) ran at the same time.
    lines = out.splitlines()
    assert lines.index(next(l for l in lines if "task 3 started" in l)) < lines.index(
        next(l for l in lines if "task 2 done" in l)
    )
    # It says what it simulates, and leaves nothing behind: no project, no report.
    assert "real goal" not in out and "simulated: no AI CLI is called" in out
    assert "(a temporary git repository, removed at the end)" in out.splitlines()[0]
    assert out.rstrip().endswith(
        "the temporary project was removed, with everything in it; "
        "`maestro demo --keep` keeps it and its report."
    )
    assert "report: " not in out and res.code == 0
    assert list(tmp_path.iterdir()) == []
    assert not any((user_state_dir() / "projects").glob("*"))  # nor Maestro's records of it


def test_demo_says_what_it_simulates_in_its_help(cli, capsys):
    assert cli("demo", "--help").code == 0 and cli("--help").code == 0
    text = capsys.readouterr().out
    assert "real goal" not in text and "simulated by the sim spoke" in text


def test_demo_keep_leaves_a_real_project(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    res = cli("demo", "--keep", "--json")
    assert res.code == 0, res.err
    body = json.loads(res.out)
    project = Path(body["data"]["project"])
    assert body["data"]["kept"] and body["data"]["run"]["counts"]["done"] == 6
    for name in (
        "textkit/__init__.py",
        "textkit/slug.py",
        "textkit/count.py",
        "tests/test_textkit.py",
        "docs/usage.md",
        ".ai/MAESTRO.md",
        ".ai/MAESTRO-LOG.md",
    ):
        assert (project / name).is_file(), name
    from tests.engine.runkit import plan

    tasks = plan(project).tasks
    assert [t.status for t in tasks] == ["done"] * 6
    assert all(t.receipt.validation_exit == 0 for t in tasks if t.validation)
    assert tasks[3].receipt.files_changed == ["tests/test_textkit.py"]
    report = Path(body["data"]["report"])
    assert report == project / ".ai/maestro/report.md" and report.is_file()
    # Its hint, as printed, works in the kept project.
    text = cli("-C", str(project), "status")
    assert text.code == 0 and "6 done" in text.out
    # `maestro board` there shows each task's transcript: the sim's stream is kept as a
    # CLI's is, and ends with the tokens its node shows.
    from maestro.board import snapshot, transcript
    from maestro.cli.context import Context

    paths = Context(cwd=project).paths
    for t in tasks:
        (kept,) = snapshot.attempts(paths, t)
        stream = snapshot.transcript_path(paths, kept["run"], t.id, kept["attempt"])
        shown, _, _ = transcript.tail(stream)
        writes = [e["text"] for e in shown if e["kind"] == "tool" and e["name"] == "Write"]
        assert writes == t.files and shown[-1]["text"].endswith(f" {t.usage.total:,} tokens")


def test_demo_refuses_inside_a_spoke(cli, monkeypatch):
    monkeypatch.setenv("MAESTRO_SPOKE", "1")
    res = cli("demo")
    assert res.code == 1 and "inside a spoke" in res.err


def test_demo_runs_where_no_sandbox_can_start_and_says_so(cli, tmp_path, monkeypatch):
    """The README's first command works on a machine without bubblewrap (macOS, a bare
    Linux): the demo's plan is Maestro's own, so it runs unconfined, and one line says so
    and what a run of the person's own would need."""
    from maestro import sandbox

    monkeypatch.setattr(sandbox, "BWRAP", "bwrap-not-installed")
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    res = cli("demo")
    assert res.code == 0, res.out + res.err
    assert "finished: 6 done" in res.out
    (line,) = [ln for ln in res.out.splitlines() if ln.startswith("unconfined: ")]
    assert "bubblewrap (bwrap) is not installed" in line and "apt install bubblewrap" in line
    assert "[unconfined]" in res.out  # each task's start line, as any unconfined run's
