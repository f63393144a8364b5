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


def words(argv: list[str]) -> bytes:
    return json.dumps({"words": argv}).encode()


def test_words_through_a_door_run_as_its_session_whatever_they_claim(office):
    worker = office.worker("4")
    with door.Door(here(), office.env(worker.id), office.root) as opened:
        entry = opened.folder / door.SOCKET
        said = door.knock(entry, ["mail", "send", "--to", "user", "--message=hello"])
        assert said["exit"] == 0, said
        # The engine's side refuses, whatever reaches it: a flag naming another project
        # or another command, a request too long, or one that is not a request.
        assert ask(entry, words(["-C", "/", "mail", "inbox"]))["exit"] == 1
        refused = ask(entry, words(["run"]))
        assert refused["exit"] == 1 and "only the office's commands" in refused["stderr"]
        huge = ask(entry, b"x" * (door.MAX_REQUEST + 10))
        assert huge["exit"] == 1 and "it was not read" in huge["stderr"]
        wide = ["mail", "send", "--to", "user", "--message=" + "é" * (door.MAX_WORD // 2)]
        too_wide = ask(entry, words(wide))
        assert too_wide["exit"] == 1 and "131,071 bytes" in too_wide["stderr"]
        assert door.knock(entry, wide) == too_wide  # refused before it is sent
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
