"""The office's door (maestro/bus/door.py): what comes in on a dispatch's socket runs as
that dispatch's session and no other, bounded; only the office's commands go through."""

from __future__ import annotations

import json
import os
import socket

from maestro.bus import door
from maestro.bus.mailbox import Mailbox
from maestro.install.invocation import here


def ask(entry, raw: bytes) -> dict:
    with socket.socket(socket.AF_UNIX) as conn:
        conn.connect(str(entry))
        conn.sendall(raw)
        conn.shutdown(socket.SHUT_WR)
        return json.loads(door._read(conn, None))


def test_words_through_a_door_run_as_its_session_whatever_they_claim(office):
    worker = office.worker("4")
    with door.Door(here(), office.env(worker.id), office.root) as opened:
        entry = opened.folder / door.SOCKET
        said = door.knock(entry, ["mail", "send", "--to", "user", "--message=hello"])
        assert said["exit"] == 0, said
        # A flag naming another project, or another command, goes nowhere.
        assert door.knock(entry, ["-C", "/", "mail", "inbox"])["exit"] == 1
        refused = door.knock(entry, ["run"])
        assert refused["exit"] == 1 and "only the office's commands" in refused["stderr"]
        huge = ask(entry, b"x" * (door.MAX_REQUEST + 10))
        assert huge["exit"] == 1 and "it was not read" in huge["stderr"]
        long_word = door.knock(
            entry, ["mail", "send", "--to", "user", "--message=" + "y" * door.MAX_WORD + "y"]
        )
        assert long_word["exit"] == 1 and "131,071" in long_word["stderr"]
        assert ask(entry, b"not json")["exit"] == 1
    (message,) = Mailbox(office.paths).inbox("user", mark=False)[0]
    assert message.sender == worker.id and message.body == "hello"
    assert not opened.folder.exists()
    closed = door.knock(entry, ["mail", "inbox"])
    assert closed["exit"] == 1 and "did not answer" in closed["stderr"]


def test_a_door_is_only_a_socket_in_a_folder_of_ones_own(tmp_path):
    folder = tmp_path / "office"
    folder.mkdir(mode=0o700)
    assert door.found(folder) is None  # no socket
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(folder / door.SOCKET))
        assert door.found(folder) == folder / door.SOCKET
        folder.chmod(0o777)  # anyone could have put it there
        assert door.found(folder) is None
        folder.chmod(0o700)
        if os.getuid() == 0:
            os.chown(folder, 12345, 12345)  # another user's
            assert door.found(folder) is None
