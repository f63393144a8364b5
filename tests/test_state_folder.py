"""The project's state folder (``.ai``) must be a folder: anything else there is refused
by every command, in one line naming it and the fix, and left as it is."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

from maestro.board.server import Board
from maestro.cli.context import Context
from tests.test_state_links import PLAN, one_line_refusal

NOTE = "my notes on this project\n"


@pytest.mark.parametrize(
    "argv",
    [
        ("mail", "send", "--to", "user", "--message", "hello"),
        ("plan", "--from", "plan.yaml", "--yes"),
        ("session", "list"),
        ("wait",),
        ("run",),
        ("status",),
    ],
)
def test_a_file_named_like_the_state_folder_is_refused_and_kept(project, cli, argv):
    (project / "plan.yaml").write_text(PLAN)
    (project / ".ai").write_text(NOTE)
    one_line_refusal(cli(*argv), ".ai is a file, not", "Fix: move .ai")
    assert (project / ".ai").read_text() == NOTE


def test_a_state_folder_linked_to_nothing_is_refused(project, cli):
    (project / ".ai").symlink_to("state")  # inside the project, but no folder there
    one_line_refusal(
        cli("mail", "send", "--to", "user", "--message", "hi"), ".ai is a symbolic link"
    )
    assert not (project / "state").exists()


def test_the_board_refuses_it_and_exits(project):
    (project / ".ai").write_text(NOTE)
    done = subprocess.run(
        [sys.executable, "-m", "maestro", "board", "--no-open"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 1 and done.stderr.count("\n") == 1 and ".ai is a file" in done.stderr
    assert (project / ".ai").read_text() == NOTE


def test_a_board_whose_feed_cannot_start_raises_and_closes(project):
    board = Board(Context(cwd=project, env=dict(os.environ)))
    (project / ".ai").write_text(NOTE)  # after the board was made: its feed finds a file
    with pytest.raises(OSError):
        board.serve()
    closing = threading.Thread(target=board.close, daemon=True)
    closing.start()
    closing.join(10)
    assert not closing.is_alive()


def test_a_file_named_like_the_machine_folder_is_refused_and_kept(project, cli):
    (project / ".ai").mkdir()
    (project / ".ai" / "maestro").write_text(NOTE)
    one_line_refusal(cli("session", "list"), ".ai/maestro is a file")
    assert (project / ".ai" / "maestro").read_text() == NOTE
