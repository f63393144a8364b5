"""Many processes at once: exactly-once delivery, concurrent readers, a waiting spoke."""

from __future__ import annotations

import subprocess
import sys
import time

from maestro.bus.mailbox import Mailbox

SENDER = """
import sys
from pathlib import Path
from maestro.bus.mailbox import Mailbox
from maestro.paths import ProjectPaths
box = Mailbox(ProjectPaths(Path(sys.argv[1])))
for n in range(int(sys.argv[3])):
    box.send(sys.argv[2], [sys.argv[4]], type="status_update", priority="normal", subject="s", body=f"{sys.argv[2]}:{n}")
"""

READER = """
import sys, time
from pathlib import Path
from maestro.bus.mailbox import Mailbox
from maestro.paths import ProjectPaths
box = Mailbox(ProjectPaths(Path(sys.argv[1])))
done = Path(sys.argv[3])  # created once every sender has finished
deadline = time.monotonic() + 120
seen = []
while time.monotonic() < deadline:
    finished = done.exists()
    messages, _ = box.inbox(sys.argv[2], unread_only=True)
    seen += [m.body for m in messages if m.new]
    if finished and not messages:
        break
    time.sleep(0.005)
print("\\n".join(seen))
"""


def _spawn(code: str, *argv: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", code, *argv], stdout=subprocess.PIPE, text=True)


def test_eight_senders_two_readers_every_message_exactly_once(office, tmp_path):
    worker = office.worker("1")
    count, senders = 40, 8
    done = tmp_path / "senders-done"
    readers = [_spawn(READER, str(office.root), worker.id, str(done)) for _ in range(2)]
    procs = [
        _spawn(SENDER, str(office.root), f"s{i}", str(count), worker.id) for i in range(senders)
    ]
    for proc in procs:
        assert proc.wait(timeout=120) == 0
    done.touch()
    got = []
    for proc in readers:
        out, _ = proc.communicate(timeout=150)
        got += [line for line in out.splitlines() if line]
    expected = sorted(f"s{i}:{n}" for i in range(senders) for n in range(count))
    assert sorted(got) == expected  # every message read as new exactly once, by one reader
    messages, garbled = Mailbox(office.paths).inbox(worker.id, mark=False)
    assert not garbled and sorted(m.body for m in messages) == expected
    assert all(m.read_at for m in messages)


def test_concurrent_readers_claim_each_message_once(office):
    worker = office.worker("1")
    box = Mailbox(office.paths)
    for n in range(300):
        box.send(
            "user", [worker.id], type="notification", priority="normal", subject="s", body=str(n)
        )
    done = office.root / "done"
    done.touch()
    readers = [_spawn(READER, str(office.root), worker.id, str(done)) for _ in range(4)]
    got = []
    for proc in readers:
        out, _ = proc.communicate(timeout=60)
        got += [line for line in out.splitlines() if line]
    assert sorted(got, key=int) == [str(n) for n in range(300)]


def test_a_spoke_process_waits_and_is_woken_by_another_process(office):
    worker = office.worker("4")
    waiter = subprocess.Popen(
        [sys.executable, "-m", "maestro", "mail", "wait", "--timeout", "60"],
        env=office.env(worker.id),
        cwd=office.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(1.5)  # let it arm its watch; a send before that is found by its first read anyway
    sent = office.maestro(
        None,
        "mail",
        "send",
        "--to",
        worker.id,
        "--type",
        "directive",
        "--priority",
        "critical",
        "--subject",
        "Pivot",
        "--message",
        "use v2",
    )
    assert sent.returncode == 0, sent.stderr
    started = time.monotonic()
    out, err = waiter.communicate(timeout=30)
    assert waiter.returncode == 0, err
    assert out.startswith("m1 directive critical from user: Pivot\n  use v2\nnext: ")
    assert out.rstrip().endswith("mail wait --timeout 60 --poll 2")
    assert time.monotonic() - started < 10
    again = office.maestro(worker.id, "mail", "inbox", "--unread")
    assert again.stdout == "no unread mail\n"
