"""`maestro board` opening a browser: the browser's command line, public in the process
list, holds a private file's path and never the token; the file goes once the page has
used the token, or when the board stops."""

from __future__ import annotations

import stat
import threading
import time
import webbrowser
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from urllib.request import url2pathname

import pytest

from maestro.board.server import Board
from maestro.cli import board as board_command
from tests.board.conftest import fetch
from tests.engine.runkit import task, write_plan


@pytest.fixture
def opened_board(cli, project, monkeypatch) -> Any:
    """`maestro board` run in a thread on a desktop, the browser opener recording what it
    was given: ``(board, opened, stop)``, where ``opened`` fills with one (argv, file,
    file's mode, folder's mode) per call and ``stop()`` ends the command."""
    write_plan(cli, project, [task(1, tool="sim")])
    monkeypatch.setenv("DISPLAY", ":0")
    boards: list[Board] = []
    opened: list[tuple[str, Path, int, int]] = []

    class Kept(Board):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            boards.append(self)

    def browser_open(url: str, *args: Any, **kwargs: Any) -> bool:
        path = Path(url2pathname(urlsplit(url).path))
        modes = [stat.S_IMODE(p.stat().st_mode) for p in (path, path.parent)]
        opened.append((url, path, *modes))
        return True

    monkeypatch.setattr(board_command, "Board", Kept)
    monkeypatch.setattr(webbrowser, "open", browser_open)
    ended: list[Any] = []
    command = threading.Thread(target=lambda: ended.append(cli("board")), daemon=True)
    command.start()
    deadline = time.monotonic() + 10
    while not opened:
        assert time.monotonic() < deadline, "no browser was opened"
        time.sleep(0.01)

    def stop() -> None:
        boards[0].close()
        command.join(10)
        assert ended[0].code == 0

    yield boards[0], opened, stop
    if command.is_alive():
        stop()


def test_the_browser_is_opened_on_a_private_file_and_never_given_the_token(opened_board, page):
    board, opened, stop = opened_board
    ((argv, path, mode, folder_mode),) = opened
    assert argv.startswith("file://") and board.token not in argv
    assert (mode, folder_mode) == (0o600, 0o700)
    page.goto(argv)  # what the browser does with it: on to the board, the token with it
    page.wait_for_selector('.node[data-task="1"]')
    assert page.url == board.origin + "/"
    assert not path.exists() and not path.parent.exists()  # the page used the token
    stop()


def test_a_file_no_page_ever_read_goes_when_the_board_stops(opened_board):
    board, opened, stop = opened_board
    ((_, path, _, _),) = opened
    assert fetch(board, "/api/state", token=False)[0] == 401
    assert path.exists()  # a request without the token is no page of the board's
    stop()
    assert not path.exists() and not path.parent.exists()
