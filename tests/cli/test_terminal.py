"""What a terminal gets: the live view where the cursor can move (as wide as the
terminal, its last line printed once), plain lines under TERM=dumb or into a pipe, and
status words in colour only on a terminal that wants colour (NO_COLOR)."""

import io
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest

from maestro.cli import main
from maestro.cli.context import Context
from maestro.engine.progress import LiveProgress
from tests.engine.runkit import task, write_plan

REPO = Path(__file__).resolve().parents[2]
CURSOR = re.compile(r"\x1b\[\d*[A-HJKF]")  # cursor moves and line clearing
COLOUR = re.compile(r"\x1b\[\d*m")


def on_a_terminal(project, env, *argv):
    """`maestro ARGV` with its stdin and stdout on a pseudo-terminal: what it printed."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "maestro", *argv],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "120", **env},
        stdin=follower,
        stdout=follower,
        stderr=subprocess.PIPE,
    )
    os.close(follower)
    chunks = []
    while True:
        ready, _, _ = select.select([leader], [], [], 60)
        if not ready:
            proc.kill()
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert proc.wait(timeout=60) == 0, proc.stderr.read()
    return b"".join(chunks).decode("utf-8", "replace")


@pytest.fixture
def simulated(cli, project):
    write_plan(
        cli,
        project,
        [
            task(1, tool="sim", files=["a.md"], validation="test -f a.md"),
            task(2, tool="sim", files=["b.md"], validation="test -f b.md", depends=[1]),
        ],
    )
    return project


def test_a_terminal_gets_the_live_view_and_the_last_line_once(simulated):
    out = on_a_terminal(simulated, {"TERM": "xterm"}, "run")
    assert CURSOR.search(out)  # the live table redraws in place
    assert len(re.findall(r"run \S+ finished", out)) == 1
    assert COLOUR.search(out)  # done in green


def test_term_dumb_gets_plain_lines_without_cursor_codes_or_colour(simulated):
    out = on_a_terminal(simulated, {"TERM": "dumb"}, "run")
    assert "\x1b" not in out
    assert "task 1 done" in out and len(re.findall(r"run \S+ finished", out)) == 1


def test_no_color_keeps_the_live_view_and_drops_the_colour(simulated):
    out = on_a_terminal(simulated, {"TERM": "xterm", "NO_COLOR": "1"}, "run")
    assert CURSOR.search(out) and not COLOUR.search(out)


class Tty(io.StringIO):
    def isatty(self):
        return True


def status_output(project, stdout, **env):
    ctx = Context(cwd=project, env={**os.environ, **env}, stdout=stdout, stderr=io.StringIO())
    assert main(["status"], ctx) == 0
    return stdout.getvalue()


def test_status_words_are_coloured_on_a_terminal_only_and_never_under_no_color(simulated):
    subprocess.run(
        [sys.executable, "-m", "maestro", "run", "1"],
        cwd=simulated,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=True,
        capture_output=True,
    )
    coloured = status_output(simulated, Tty(), TERM="xterm")
    assert "\x1b[32mdone\x1b[0m" in coloured and "pending" in coloured
    row = next(line for line in coloured.splitlines() if line.startswith("1 "))
    assert COLOUR.sub("", row).split()[:2] == ["1", "done"]  # the colour keeps the columns
    for plain in (
        status_output(simulated, Tty(), TERM="xterm", NO_COLOR="1"),
        status_output(simulated, Tty(), TERM="dumb"),
        status_output(simulated, io.StringIO(), TERM="xterm"),  # a pipe
    ):
        assert "\x1b" not in plain and COLOUR.sub("", coloured) == plain


def test_the_live_view_uses_the_terminals_width_for_titles(monkeypatch):
    title = "Implement the tokenizer and its error recovery for nested blocks"  # 64 chars
    for columns, shown in (("140", title), ("80", title[:23])):
        monkeypatch.setenv("COLUMNS", columns)
        out = io.StringIO()
        LiveProgress(out, [("1", title)], "R1").tick()
        row = next(line for line in out.getvalue().splitlines() if "pending" in line)
        assert shown in row and len(row.removeprefix("\x1b[2K")) <= int(columns) - 1
