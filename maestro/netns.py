"""A confined process's way out, opened in its own network namespace before it runs.

bwrap gives a confined process a network namespace of its own (``--unshare-net``): its
own loopback and nothing else. Maestro's proxy (``maestro.netproxy``) listens there for
it, on ``PORT`` of that loopback, which its proxy variables name. bwrap tells the pid of
the sandbox it made (``--info-fd``); a child of Maestro's process joins the sandbox's
user and network namespaces (setns(2), as slirp4netns does for rootless containers),
makes the listening socket there, hands it back over a socket pair and exits; the
proxy serves it, and only then is the program let start: a shell in the sandbox
(``GATE``) reads its standard input, a pipe of Maestro's, and becomes the program when
it reads ``go``. Nothing else lets it: an engine that dies first closes the pipe, and
the shell ends without starting it (bwrap's own ``--block-fd`` takes the pipe's end as
leave to go on). The socket is served from Maestro's process: nothing of Maestro's runs
inside the sandbox.

Why a child, and a fork: joining a user namespace takes a process of one thread, and
joining the network namespace takes ``CAP_SYS_ADMIN`` in its user namespace, which an
unprivileged Maestro has only once there; a fork needs no program started. The child
runs no Maestro code, and no signal reaches it: a few system calls on what the parent
prepared, then ``_exit``. A bwrap installed setuid makes its sandboxes' namespaces
root's: no way out can be opened there (``maestro doctor`` says so).

Measured (``python bench/sandbox.py``): its way out adds 1.3-2.0 ms to a confined start,
against 13.7 ms for the first process the sandbox used to start instead (a Python
forwarder between a port of its loopback and a Unix socket of the proxy's); in a run's
engine, some 40 MB to fork, opening it takes 5-6 ms, much of it while bwrap is still
setting the sandbox up.

Its port is bound on every address of the namespace (``0.0.0.0``): bwrap may not have
brought its loopback up yet, and there is no other interface. Two confined processes
each have theirs: the same number, in namespaces of their own.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import json
import os
import select
import signal
import socket
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from maestro.pids import pidfd_number, proc_level

# On the sandbox's own loopback: above the kernel's range of ports for outgoing connections
# (32768-60999) and no server's default, so a spoke's own servers and tests do not want it.
PORT = 61128
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
NO_PROXY_VARS = ("NO_PROXY", "no_proxy")
SAID_S = 30.0  # bwrap names its sandbox within milliseconds, once it has made it
# The program's gate: it starts on `go`, with /dev/null as its standard input, as every
# process Maestro starts has; on anything else (the pipe's end) it never does.
GATE = (
    'IFS= read -r go && [ "$go" = go ] && exec "$@" </dev/null; '
    'echo "maestro: cannot start $1: its way out was not opened" >&2; exit 125'
)
NS_GET_USERNS = 0xB701  # ioctl_ns(2): the user namespace that owns a namespace
CLONE_NEWUSER, CLONE_NEWNET = 0x10000000, 0x40000000
_setns = ctypes.CDLL(None, use_errno=True).setns  # (looked up here, not in a forked child)
_setns.argtypes = (ctypes.c_int, ctypes.c_int)
# Python 3.12 and later warn at every fork of a process with threads: this one's child
# takes no lock and runs nothing of the engine's (``_join``).
warnings.filterwarnings("ignore", r".*use of fork\(\) may lead to deadlocks", DeprecationWarning)


def proxy_env(port: int) -> dict[str, str]:
    """The proxy variables naming ``port`` of 127.0.0.1, and none bypassing it (the
    loopback the process sees is its own: nothing there needs the proxy bypassed)."""
    url = f"http://127.0.0.1:{port}"
    return {**dict.fromkeys(PROXY_VARS, url), **dict.fromkeys(NO_PROXY_VARS, "")}


class Opening:
    """What one confined process is started with and let go by: bwrap's info pipe
    (``args``) and the program's gate (``gated``, read from ``stdin``); once bwrap has
    started, ``listener``, then ``release`` (``runner`` does both)."""

    def __init__(self) -> None:
        self.info, self._info_w = os.pipe()
        self.stdin, self.gate = os.pipe()

    @property
    def args(self) -> list[str]:
        return ["--info-fd", str(self._info_w)]

    @staticmethod
    def gated(argv: Sequence[str]) -> list[str]:
        return ["/bin/sh", "-c", GATE, "sh", *argv]

    def runner(self, take: Callable[[socket.socket], object]) -> dict[str, Any]:
        """The process runner's arguments (``process.run_process``) for bwrap started
        through this opening: its info pipe kept open in it, the gate as its standard
        input, and once it has started, the listener given to ``take`` (none when the
        sandbox ended first) and the program let go. What ``listener`` or ``take``
        raises stops it there: the program never runs."""

        def started(pid: int) -> None:
            listener = self.listener()
            if listener is not None:
                take(listener)
            self.release()

        return {"pass_fds": (self._info_w,), "stdin": self.stdin, "on_start": started}

    def listener(self) -> socket.socket | None:
        """The listening socket in the started sandbox's namespace; None when the sandbox
        ended first (bwrap's own words say why). OSError when it cannot be made."""
        for fd in (self._info_w, self.stdin):  # bwrap's now: ours would keep EOF away
            os.close(fd)
        self._info_w = self.stdin = -1
        said = b""
        poll = select.poll()
        poll.register(self.info, select.POLLIN)
        while not said.rstrip().endswith(b"}"):
            if not poll.poll(SAID_S * 1000):
                raise OSError(errno.ETIMEDOUT, f"bwrap said nothing of its sandbox in {SAID_S:g}s")
            more = os.read(self.info, 4096)
            if not more:
                return None
            said += more
        try:
            pid = int(json.loads(said)["child-pid"])
        except (ValueError, KeyError, TypeError):
            raise OSError(
                errno.EPROTO, f"bwrap said {said[:200]!r}, not its sandbox's pid"
            ) from None
        net = _namespace(pid)
        if net is None:
            return None
        try:
            return _listen_in(net)
        finally:
            os.close(net)

    def release(self) -> None:
        """Let the program start (unless its sandbox has ended meanwhile: it says why)."""
        with contextlib.suppress(BrokenPipeError):
            os.write(self.gate, b"go\n")
        os.close(self.gate)
        self.gate = -1

    def close(self) -> None:
        for fd in (self.info, self.gate, self._info_w, self.stdin):
            if fd >= 0:
                os.close(fd)
        self.info = self.gate = self._info_w = self.stdin = -1


def _namespace(pid: int) -> int | None:
    """A descriptor of the network namespace of process ``pid`` (of this process's pid
    namespace); None when it has ended. /proc numbers it otherwise where /proc is another
    pid namespace's (Maestro started in a pid namespace of its own with the machine's
    /proc, as a command of Codex's sandbox is): there its pidfd's fdinfo says how.
    Before Linux 5.3 (no pidfd), /proc is taken to be this pid namespace's."""
    try:
        handle: int | None = os.pidfd_open(pid)
    except ProcessLookupError:
        return None
    except OSError as exc:
        if exc.errno != errno.ENOSYS:
            raise
        handle = None
    try:
        numbered = pid
        if handle is not None and proc_level():
            found = pidfd_number(handle)
            if found is None:
                return None  # (ended)
            numbered = found
        try:
            net = os.open(f"/proc/{numbered}/ns/net", os.O_RDONLY)
        except (FileNotFoundError, ProcessLookupError):
            return None
        if handle is not None:  # still that process: its pid was not another's meanwhile
            try:
                signal.pidfd_send_signal(handle, 0)
            except ProcessLookupError:
                os.close(net)
                return None
        return net
    finally:
        if handle is not None:
            os.close(handle)


def _listen_in(net: int) -> socket.socket:
    """A socket listening on ``PORT`` in the network namespace ``net`` (a descriptor)."""
    ours, theirs = socket.socketpair()
    ours.settimeout(SAID_S)
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
    try:
        child = os.fork()
        if child == 0:  # pragma: no cover - the child (coverage does not follow it)
            try:
                _join(net, theirs)
            finally:
                os._exit(1)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    try:
        theirs.close()
        said, fds, _, _ = socket.recv_fds(ours, 64, 1, socket.MSG_CMSG_CLOEXEC)
    finally:
        ours.close()
        theirs.close()
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)  # (gone already, but for a wait that timed out)
        os.waitpid(child, 0)
    if not fds:  # "<errno> <step>" (nothing: the child was killed)
        code, _, where = said.decode().partition(" ")
        number = int(code) if code.isdigit() else 0
        why = os.strerror(number) if number else "it ended without a word"
        raise OSError(number, f"{why} ({where or 'the joining process'})")
    return socket.socket(fileno=fds[0])


def _join(net: int, back: socket.socket) -> None:
    """In the forked child: into ``net`` and its user namespace, a listener sent ``back``."""
    where = "ioctl"
    try:
        user = fcntl.ioctl(net, NS_GET_USERNS)
        for fd, kind, where in (
            (user, CLONE_NEWUSER, "setns user"),
            (net, CLONE_NEWNET, "setns net"),
        ):
            if _setns(fd, kind) != 0:
                raise OSError(ctypes.get_errno(), where)
        where = "listen"
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("0.0.0.0", PORT))
        listener.listen(128)
        socket.send_fds(back, [b"0"], [listener.fileno()])
    except BaseException as exc:  # noqa: BLE001 - said to the parent; the child only exits
        back.send(f"{getattr(exc, 'errno', 0) or 0} {where}".encode())
    finally:
        os._exit(0)
