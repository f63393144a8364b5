"""A confined process's way out, opened in its own network namespace before it runs.

bwrap gives a confined process a network namespace of its own (``--unshare-net``): its
own loopback and nothing else. Maestro's proxy (``maestro.netproxy``) listens there for
it, on ``PORT`` of that loopback, which its proxy variables name. bwrap tells the pid of
the sandbox it made (``--info-fd``) and holds the program back (``--block-fd``); a child
of Maestro's process joins the sandbox's user and network namespaces (setns(2), as
slirp4netns does for rootless containers), makes the listening socket there, hands it
back over a socket pair and exits; then bwrap is let go on, and the program starts with
the proxy already listening. The socket is served from Maestro's process: nothing of
Maestro's runs inside the sandbox.

Why a child, and a fork: joining a user namespace takes a process of one thread, and
joining the network namespace takes ``CAP_SYS_ADMIN`` in its user namespace, which an
unprivileged Maestro has only once there; a fork needs no program started. The child
runs no Maestro code: a few system calls on what the parent prepared, then ``_exit``.
Measured (``python bench/sandbox.py``): its way out adds 2.0 ms to a confined start,
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
import socket

# On the sandbox's own loopback: above the kernel's range of ports for outgoing connections
# (32768-60999) and no server's default, so a spoke's own servers and tests do not want it.
PORT = 61128
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
NO_PROXY_VARS = ("NO_PROXY", "no_proxy")
SAID_S = 30.0  # bwrap names its sandbox within milliseconds, once it has made it
NS_GET_USERNS = 0xB701  # ioctl_ns(2): the user namespace that owns a namespace
CLONE_NEWUSER, CLONE_NEWNET = 0x10000000, 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


def proxy_env(port: int) -> dict[str, str]:
    """The proxy variables naming ``port`` of 127.0.0.1, and none bypassing it (the
    loopback the process sees is its own: nothing there needs the proxy bypassed)."""
    url = f"http://127.0.0.1:{port}"
    return {**dict.fromkeys(PROXY_VARS, url), **dict.fromkeys(NO_PROXY_VARS, "")}


class Opening:
    """bwrap's two pipes for one confined process: ``args`` go on its command line,
    ``fds`` are passed to it; once it has started, ``listener`` and ``release``."""

    def __init__(self) -> None:
        self.info, self._info_w = os.pipe()
        self._block_r, self.block = os.pipe()

    @property
    def args(self) -> list[str]:
        return ["--info-fd", str(self._info_w), "--block-fd", str(self._block_r)]

    @property
    def fds(self) -> tuple[int, int]:
        return (self._info_w, self._block_r)

    def listener(self) -> socket.socket | None:
        """The listening socket in the started sandbox's namespace; None when the sandbox
        ended first (bwrap's own words say why). OSError when it cannot be made."""
        for fd in self.fds:  # bwrap's now: its end of the info pipe closed, ours reads EOF
            os.close(fd)
        self._info_w = self._block_r = -1
        said = b""
        while not said.rstrip().endswith(b"}"):
            if not select.select([self.info], [], [], SAID_S)[0]:
                raise OSError(errno.ETIMEDOUT, f"bwrap said nothing of its sandbox in {SAID_S:g}s")
            more = os.read(self.info, 4096)
            if not more:
                return None
            said += more
        try:
            net = os.open(f"/proc/{_in_proc(json.loads(said)['child-pid'])}/ns/net", os.O_RDONLY)
        except (FileNotFoundError, ProcessLookupError):
            return None
        try:
            return _listen_in(net)
        finally:
            os.close(net)

    def release(self) -> None:
        """Let bwrap start the program (unless it has ended meanwhile: it says why)."""
        with contextlib.suppress(BrokenPipeError):
            os.write(self.block, b"x")

    def close(self) -> None:
        for fd in (self.info, self.block, *self.fds):
            if fd >= 0:
                os.close(fd)
        self.info = self.block = self._info_w = self._block_r = -1


def _in_proc(pid: int) -> int:
    """``pid`` (of this process's pid namespace) as /proc numbers it: itself, unless /proc
    is another pid namespace's (Maestro started in a pid namespace of its own with the
    machine's /proc, as a command of Codex's sandbox is): then as its pidfd's fdinfo says.
    ProcessLookupError when it has ended."""
    if os.readlink("/proc/self") == str(os.getpid()):
        return pid
    fd = os.pidfd_open(pid)
    try:
        with open(f"/proc/self/fdinfo/{fd}", encoding="ascii") as info:
            found = [line.split()[1] for line in info if line.startswith("Pid:")]
    finally:
        os.close(fd)
    if not found or int(found[0]) <= 0:
        raise ProcessLookupError(errno.ESRCH, f"pid {pid} is not in this /proc")
    return int(found[0])


def _listen_in(net: int) -> socket.socket:
    """A socket listening on ``PORT`` in the network namespace ``net`` (a descriptor)."""
    ours, theirs = socket.socketpair()
    try:
        child = os.fork()
        if child == 0:  # pragma: no cover - the child (coverage does not follow it)
            _join(net, theirs)
        theirs.close()
        said, fds, _, _ = socket.recv_fds(ours, 64, 1)
        os.waitpid(child, 0)
    finally:
        ours.close()
        theirs.close()
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
            if _libc.setns(fd, kind) != 0:
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
