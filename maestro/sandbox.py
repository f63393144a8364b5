"""The confinement of every process Maestro starts for a plan: its spokes (task workers,
reviewers, challengers, planners) and the plan's validation commands, by the kernel.

A confined process sees the whole machine read-only (``--ro-bind / /``), a private
``/dev`` (read-only), ``/proc``, ``/tmp`` (``TMPDIR=/tmp``) and ``/dev/shm`` (memory of a
bounded size, gone when it ends), and writes only the folders its ``Policy`` names: a
task's worktree, its CLI's own state folder (whose config files stay read-only: a hook
or an MCP server planted there would run the next time the person starts that CLI). The office's store (its mail and sessions) is hidden: a spoke
reaches the office through its own door, a socket bound at ``OFFICE`` (``bus.door``).
Secrets (``~/.ssh``, cloud and
registry credentials, the other CLIs' state) are hidden, and so are the sockets of the
machine's session and system buses and container engines: each is a way to have a
process started outside. It is always hardened: its own user namespace with no
capabilities and no nested namespaces (run by root without them, bubblewrap leaves every
capability and ``mount -o remount,rw /`` succeeds), its own pid, ipc and uts namespaces
(it cannot see or signal Maestro, and everything it started ends with it), a session of
its own (no typing into the person's terminal), and it dies with Maestro.

Its processes are bounded (``bounded``): it and all it starts may have so many at once
(threads count), by a cgroup of its own (``pids.max``) where Maestro can make one (cgroup
v2 where its own cgroup is delegated to it, v1's pids hierarchy where writable, as root),
else by ``RLIMIT_NPROC``, which counts all the person's processes and does not bind root.
A ``sh`` puts it there and becomes bwrap (``_bound``): a ``preexec_fn`` would cost every
start a fork of the engine (no vfork with one), 3 ms more. When its cgroup refused it a
fork, the dispatch's result says so (``refusals``).

Why plain bubblewrap and not Anthropic's sandbox-runtime (srt), both measured with the
three CLIs on Linux: a bwrap start costs about 6 ms, an srt start 0.4-0.6 s and 72 MB of
resident memory for each process it wraps (its Node process and socat); srt needs Node
22.12 or later, calls itself a beta research preview, leaves its placeholder files
(``.bashrc``, ``.gitconfig``, ``.idea``...) in the working folder after a kill (then
``git add -A`` fails), and exits 0 on SIGTERM, so a stopped spoke would read as a
success. bwrap has none of those and ran Claude Code, Gemini CLI and Codex (its own
sandbox bypassed: it cannot nest) to the end, hardened. What srt offers beyond it
(credential masking) is not used yet; its allow-listing proxy Maestro has its own of.

On macOS, which has no bubblewrap, srt confines instead (``BACKEND``): it writes a
Seatbelt profile and runs the process under ``sandbox-exec``. The same ``Policy`` becomes
its settings (``srt_settings``): the writable folders less the read-only ones, the hidden
ones unreadable, Unix sockets none but the office's door, the network only a port of
127.0.0.1 where Maestro's proxy listens for that process (srt's ``httpProxyPort``: srt
starts no proxy of its own, so what is refused is named by Maestro's). Each process has
a folder of its own (``bounded``): srt's settings, its temporary files (TMPDIR) and its
exit status; srt starts there, not in the worktree, where it would leave its placeholder
files. What Seatbelt does not give (no pid namespace, no private /tmp of a bounded size)
is in docs/sandbox.md, *macOS*. Tests choose srt on Linux too (srt confines with bwrap
there), so its translation is tried with the real srt.

Its network is a namespace of its own (``--unshare-net``): only its own loopback, so no
host, no server of the machine's loopback, no abstract Unix socket of the machine (a
read-only mount does not stop those), and two processes may serve the same port at once.
Its one way out is a door of Maestro's proxy (``maestro.netproxy``), listening on a port
of that loopback (``netns.PORT``), opened there by Maestro while the program waits at
its gate (``maestro.netns``: ``--info-fd``, ``GATE``), and named by its proxy variables.
The door lets through its CLI's API hosts, the model endpoint its environment configures
and the ``sandbox_hosts`` setting's (a validation command: those alone); what it refuses
is named in the dispatch's result.

The environment is the one Maestro built for the process, passed to bwrap as its own:
not with ``--clearenv`` and one ``--setenv`` each, which would put API keys on a command
line every user of the machine can read (``/proc/<pid>/cmdline``); an environment is
readable only by its owner. Only the agent sockets it names are taken out.

"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import socket
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from maestro import netns, roster
from maestro.errors import ConfigError, MaestroError, SpokeError
from maestro.netns import NO_PROXY_VARS, PROXY_VARS
from maestro.pids import pid_alive
from maestro.process import ProcessOutcome, ended, run_process

if TYPE_CHECKING:
    from maestro.netproxy import Door

BWRAP = "bwrap"
SRT = "srt"  # Anthropic's sandbox runtime (npm: @anthropic-ai/sandbox-runtime)
# Which confines here: bubblewrap on Linux, srt on macOS. Tests set it to srt on Linux to
# try srt's translation with the real srt; not a setting.
BACKEND = SRT if sys.platform == "darwin" else BWRAP
TMP = Path("/tmp")
# Where a confined process finds the office's door (``Policy.door`` bound there), in its
# private /tmp: no other process's sandbox has it.
OFFICE = TMP / "maestro-office"
# Where it finds it when its door is at its own path on the machine (srt: no /tmp of its own).
DOOR_VAR = "MAESTRO_DOOR"
HARDENING = (
    "--unshare-user",
    "--disable-userns",
    "--cap-drop",
    "ALL",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-net",
    "--die-with-parent",
    "--new-session",
)
# The default of the ``sandbox_hide`` setting: what no confined process reads.
SECRETS = (
    "~/.ssh",
    "~/.aws",
    "~/.gnupg",
    "~/.netrc",
    "~/.git-credentials",
    "~/.docker/config.json",
    "~/.config/gh",
    "~/.kube",
    "~/.config/gcloud",
    "~/.azure",
    "~/.pypirc",
)
# Always hidden: a process that reaches one of these has something started outside
# (systemd's transient units over D-Bus, a container with / mounted).
SOCKETS = (
    "/run/user",
    "/run/dbus",
    "/var/run/dbus",
    "/run/systemd/private",
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/containerd",
    "/run/podman",
)
# Environment entries that point at those sockets (or at the person's agents).
AGENT_VARS = ("SSH_AUTH_SOCK", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR")
# The defaults of the ``sandbox_tmp_mb`` and ``sandbox_processes`` settings (docs/sandbox.md,
# *Bounds*): room for a build's temporary files, a pytest run's folders and a browser's
# shared memory, in memory; and for the thousands of threads of a big parallel test run.
TMP_MB = 2048
PROCESSES = 8192


@dataclass(frozen=True)
class Rules:
    """What every confined process of one command shares: the sandbox it starts with
    (bwrap or srt, the program's path), the settings' folders (``sandbox_hide``,
    ``sandbox_write``), hosts and bounds."""

    program: str
    hide: tuple[Path, ...] = ()
    write: tuple[Path, ...] = ()
    hosts: tuple[str, ...] = ()  # the ``sandbox_hosts`` setting: what every one may reach
    # Each of its /tmp and /dev/shm at most so many MB; None: this bwrap cannot size them.
    tmp_mb: int | None = TMP_MB
    processes: int = PROCESSES  # at once, it and all it starts (threads count)
    # Where each confined process gets a cgroup of its own (``bounded``); None: none here.
    cgroups: Path | None = None
    backend: str = BWRAP  # which of BWRAP, SRT ``program`` is


@dataclass(frozen=True)
class Policy:
    """One confined process: where it runs, with what environment, what it writes.

    ``read_only`` are laid over ``writable`` folders (a worktree's ``.git``, a CLI's
    config files), ``hidden`` over everything (a folder becomes an empty read-only one, a
    file an empty one). ``visible`` are paths under ``/tmp`` it must see, read-only (an
    install, the project, a home folder there): the rest of the host's ``/tmp`` is not.
    ``door``: a folder bound read-only at ``OFFICE`` (the socket of its session's door).
    """

    cwd: Path
    env: Mapping[str, str]
    writable: Sequence[Path] = ()
    read_only: Sequence[Path] = ()
    hidden: Sequence[Path] = ()
    visible: Sequence[Path] = ()
    extra_env: Mapping[str, str] = field(default_factory=dict)
    door: Path | None = None
    # Its way out: this port of 127.0.0.1 (``netproxy.Door.port``), its own loopback's
    # under bwrap (``opening`` brings the proxy's listener there), the machine's under srt.
    # None: it reaches nothing (its network namespace has only its own loopback).
    port: int | None = None
    opening: netns.Opening | None = None
    # Its own cgroup (``Bound.cgroup``), entered before bwrap starts; None: RLIMIT_NPROC.
    cgroup: Path | None = None
    # srt: its own folder (``Bound.folder``) holds its settings, temporary files and exit status.
    folder: Path | None = None


def expand(names: Iterable[str], env: Mapping[str, str]) -> tuple[Path, ...]:
    """Setting entries as paths: ``~`` is the home of ``env``."""
    home = env.get("HOME") or str(Path.home())
    return tuple(
        Path(home + name[1:]) if name.startswith("~") else Path(name) for name in names if name
    )


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _under(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)


def _install(path: Path) -> Path:
    """A ``bin`` folder stands for its prefix (a virtualenv, npm's ``--prefix``): the
    programs in it read their libraries beside it."""
    return path.parent if path.name == "bin" else path


def _depth(path: Path) -> int:
    return len(path.parts)


def command(argv: Sequence[str], policy: Policy, rules: Rules) -> list[str]:
    """``argv`` (its program an absolute path) wrapped by the sandbox as ``policy`` says."""
    if rules.backend == SRT:
        return srt_command(argv, policy, rules)
    size = ["--size", str(rules.tmp_mb << 20)] if rules.tmp_mb else []
    args = [*_bound(policy, rules), rules.program, "--ro-bind", "/", "/", "--proc", "/proc"]
    # bwrap's /dev is a tmpfs of its own, /dev/shm a folder in it: read-only but for a
    # shared memory as bounded as /tmp.
    args += ["--dev", "/dev", *size, "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]
    args += [*size, "--tmpfs", str(TMP)]
    writable = sorted(
        {_real(p) for p in (*policy.writable, *rules.write) if p.exists()}, key=_depth
    )
    home = policy.env.get("HOME")
    seen = [Path(p) for p in policy.env.get("PATH", "").split(os.pathsep) if p]
    seen += [Path(home)] if home else []
    # Maestro's own install: a spoke's shell runs `maestro` (bus.workers.shim).
    seen += [Path(sys.prefix)]
    visible = {_install(_real(p)) for p in (*policy.visible, *seen, policy.cwd) if p.exists()}
    for path in sorted((p for p in visible if _under(p, TMP) and p != TMP), key=_depth):
        args += ["--ro-bind", str(path), str(path)]
    if policy.door is not None:
        args += ["--ro-bind", str(policy.door), str(OFFICE)]
    # Deeper binds go over shallower ones, and at one depth a read-only one goes last:
    # a worktree (writable) in the state folder (read-only) in the project (writable,
    # when the spokes share the person's tree), its ``.git`` read-only again.
    laid = [(p, "--bind") for p in writable]
    laid += [(_real(p), "--ro-bind") for p in policy.read_only if p.exists()]
    for path, bind in sorted(set(laid), key=lambda pb: (_depth(pb[0]), pb[1] == "--ro-bind")):
        args += [bind, str(path), str(path)]
    kept = {_real(p) for p in policy.read_only if p.exists()}
    for path in sorted(
        {_real(p) for p in (*policy.hidden, *rules.hide, *map(Path, SOCKETS))}, key=_depth
    ):
        if not path.exists() or any(_under(w, path) for w in writable):
            continue  # (not there, or holds the process's own folder)
        if path.is_dir():
            args += ["--tmpfs", str(path)]
            # What the process must still read there (its CLI's login) is laid back.
            for inner in sorted(p for p in kept if p != path and _under(p, path)):
                args += ["--ro-bind", str(inner), str(inner)]
            args += ["--remount-ro", str(path)]
        else:
            args += ["--ro-bind", "/dev/null", str(path)]
    if policy.opening is not None:
        args += policy.opening.args
        argv = policy.opening.gated(argv)
    return [*args, *HARDENING, "--chdir", str(policy.cwd), "--", *argv]


def _bound(policy: Policy, rules: Rules) -> list[str]:
    """The ``sh`` that bounds the process's count before it becomes bwrap: it enters its
    cgroup, else lowers RLIMIT_NPROC (``ulimit -u`` in bash, ``-p`` in dash), which
    root is exempt from (then nothing)."""
    if policy.cgroup is not None:
        # 0: itself. v1's ``tasks`` moves the one thread (sh has no other) without the
        # global lock that ``cgroup.procs`` takes: a grace period of RCU, 6-10 ms.
        tasks = policy.cgroup / "tasks"
        entry = tasks if tasks.exists() else policy.cgroup / "cgroup.procs"
        return ["/bin/sh", "-c", 'command echo 0 > "$0" && exec "$@"', str(entry)]
    if os.geteuid() == 0:
        return []
    hard = resource.getrlimit(resource.RLIMIT_NPROC)[1]
    most = rules.processes if hard == resource.RLIM_INFINITY else min(rules.processes, hard)
    lower = (
        f'command ulimit -u {most} 2>/dev/null || command ulimit -p {most} || exit 125; exec "$@"'
    )
    return ["/bin/sh", "-c", lower, "sh"]


def environment(policy: Policy, rules: Rules) -> dict[str, str]:
    """The confined process's environment: the policy's, its private ``/tmp`` as TMPDIR
    (srt: its own folder's), without the agent and bus sockets, and, reaching out through
    Maestro's proxy, without the person's (unreachable there, and its URL may hold a
    password): its door's instead (srt: ``srt_command``). Under srt, its door's
    folder is named (``DOOR_VAR``): no /tmp of its own has it at ``OFFICE``."""
    out = policy.port is not None
    dropped = (*AGENT_VARS, DOOR_VAR, *((*PROXY_VARS, *NO_PROXY_VARS) if out else ()))
    env = {k: v for k, v in policy.env.items() if k not in dropped}
    if policy.port is not None and rules.backend == BWRAP:
        env.update(netns.proxy_env(policy.port))
    tmp = str(policy.folder / "tmp") if rules.backend == SRT and policy.folder else str(TMP)
    env.update({"TMPDIR": tmp, "TMP": tmp, "TEMP": tmp})
    if rules.backend == SRT:
        env["CLAUDE_CODE_TMPDIR"] = tmp  # srt sets TMPDIR inside to this
        if policy.door is not None:
            env[DOOR_VAR] = str(policy.door)
    env.update(policy.extra_env)
    return env


def wrap(argv: Sequence[str], policy: Policy, rules: Rules) -> tuple[list[str], dict[str, str]]:
    """The argv and environment to hand the process runner for ``argv`` confined."""
    return command(argv, policy, rules), environment(policy, rules)


# -- srt (macOS): the same policy as srt's settings --------------------------------------

# Inside srt's sandbox, before the program: into its working folder (srt starts in the
# process's own folder), its proxy variables at its door by 127.0.0.1 (srt names
# `localhost`, which a client may try as ::1 first, and keeps loopback and the LAN off
# the proxy with NO_PROXY, though it has no other way there), and after it its exit
# status noted: srt answers 0 when a SIGTERM ended its program.
_PROXIED = (
    'u="http://127.0.0.1:${HTTP_PROXY##*:}"; export '
    + " ".join([*(f'{v}="$u"' for v in PROXY_VARS), *(f"{v}=" for v in NO_PROXY_VARS)])
    + "; "
)
_INNER = ('cd "$1" || exit 125; s=$2; shift 2; ', '"$@"; r=$?; echo "$r" > "$s"; exit "$r"')
# Outside, around srt: srt started in the process's folder; the program's exit status as
# noted; without one, srt ended it: 0, srt's answer to a SIGTERM, or srt killed by a
# signal (128 + N) end this shell by that signal too (a killed sandbox, ``fault``); any
# other is srt's own refusal to start it.
_OUTER = (
    'cd "$0" || exit 125; "$@"; s=$?; { read -r r < status; } 2>/dev/null; '
    'case $r in ""|*[!0-9]*) ;; *) exit "$r";; esac; '
    '[ "$s" = 0 ] && s=143; [ "$s" -gt 128 ] && kill -$((s - 128)) $$; '
    'echo "maestro: cannot start the sandbox: srt exited $s" >&2; exit "$s"'
)


def srt_command(argv: Sequence[str], policy: Policy, rules: Rules) -> list[str]:
    """``argv`` confined by srt as ``policy`` says (its settings written in its folder)."""
    assert policy.folder is not None, "an srt-confined process has a folder (bounded)"
    settings = policy.folder / "settings.json"
    settings.write_text(json.dumps(srt_settings(policy, rules), indent=1), encoding="utf-8")
    inner = _INNER[0] + (_PROXIED if policy.port is not None else "") + _INNER[1]
    status = policy.folder / "status"
    run = ["/bin/sh", "-c", inner, "sh", str(policy.cwd), str(status), *argv]
    srt = [rules.program, "--settings", str(settings), "--", *run]
    return [*_bound(policy, rules), "/bin/sh", "-c", _OUTER, str(policy.folder), *srt]


def _literal(paths: Iterable[Path]) -> list[dict[str, Any]]:
    """Paths as srt takes a name that is no pattern, whatever characters it holds."""
    return [{"path": str(p), "literal": True} for p in dict.fromkeys(paths)]


def _around(folder: Path, inner: Sequence[Path]) -> list[Path]:
    """What srt must keep from writing for read-only ``folder`` to be so where writable
    folders (``inner``) lie deeper in it: srt's denials win over its allowances at any
    depth, where bwrap lays the deeper over the shallower. The folder, else each of its
    entries that holds none of them, and so on into those that do (a name made new
    beside the way down is writable)."""
    held = [w for w in inner if w != folder and _under(w, folder)]
    if not held:
        return [folder]
    found = []
    for entry in sorted(folder.iterdir()):
        if entry not in held:
            found += _around(entry, held) if any(_under(w, entry) for w in held) else [entry]
    return found


def srt_settings(policy: Policy, rules: Rules) -> dict[str, Any]:
    """``policy`` as srt's settings: it writes its writable folders less its read-only
    ones, its temporary folder and its exit status; reads all but the hidden paths (its
    read-only ones in them aside) and the other srt-confined processes' folders; reaches
    Unix sockets none but its door (macOS; srt on Linux takes all or none: all, as bwrap,
    the machine's own hidden: ``SOCKETS``), and the network only through its port of
    Maestro's proxy (none: nothing)."""
    assert policy.folder is not None
    own = _real(policy.folder)
    writable = sorted(
        {_real(p) for p in (*policy.writable, *rules.write) if p.exists()}, key=_depth
    )
    read_only = sorted({_real(p) for p in policy.read_only if p.exists()}, key=_depth)
    denied = [
        p for r in read_only if any(_under(r, w) for w in writable) for p in _around(r, writable)
    ]
    hidden = [
        path
        for path in sorted({_real(p) for p in (*policy.hidden, *rules.hide, *map(Path, SOCKETS))})
        if path.exists() and not any(_under(w, path) for w in writable)
    ]
    kept = [p for p in read_only if any(_under(p, h) for h in hidden)]
    network: dict[str, Any] = {"allowedDomains": [], "deniedDomains": []}
    if policy.port is not None:
        network.update(httpProxyPort=policy.port, socksProxyPort=policy.port)
    if policy.door is not None:
        network["allowUnixSockets"] = [str(_real(policy.door) / "socket")]
    network["allowAllUnixSockets"] = sys.platform != "darwin"
    mine = [own / "tmp", own / "status"]  # (read too: macOS reads no allowWrite of a denyRead)
    return {
        "network": network,
        "filesystem": {
            "denyRead": _literal([*hidden, own.parent]),
            "allowRead": _literal([*kept, *mine]),
            "allowWrite": _literal([*writable, *mine]),
            "denyWrite": _literal(denied),
        },
    }


def _own_folder() -> Path:
    """A new folder for one srt-confined process, in this user's folder of them (in the
    temporary folder, mode 0700; each one's hidden from the others: ``srt_settings``):
    its temporary files (``tmp``) and its exit status, noted inside (``status``)."""
    parent = Path(tempfile.gettempdir()) / f"maestro-srt-{os.getuid()}"
    parent.mkdir(mode=0o700, exist_ok=True)
    info = parent.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise SpokeError(
            f"{parent} is not a folder of yours that only you may open.",
            "remove it; Maestro makes it again.",
        )
    folder = Path(tempfile.mkdtemp(dir=parent))
    (folder / "tmp").mkdir()
    (folder / "status").touch()
    return folder


# -- whether it can start here, and the refusal when it cannot ---------------------------


def probe(env: Mapping[str, str]) -> tuple[Rules | None, str]:
    """(bare rules, "") when a hardened bwrap (srt: ``BACKEND``) starts ``true`` here;
    else (None, why). A bwrap that cannot size a tmpfs (before 0.7, or setuid) is tried
    again without: its rules say so (``tmp_mb`` None)."""
    if BACKEND == SRT:
        return _probe_srt(env)
    if not sys.platform.startswith("linux"):
        return None, f"confinement is built on Linux's bubblewrap, and this is {sys.platform}"
    found = shutil.which(BWRAP, path=env.get("PATH") or os.defpath) or shutil.which(BWRAP)
    if found is None:
        return None, "bubblewrap (bwrap) is not installed"
    for bare in (Rules(found), Rules(found, tmp_mb=None)):
        # With a way out opened in its namespace, as every confined process has one.
        opening = netns.Opening()
        policy = Policy(cwd=Path("/"), env={"PATH": os.defpath}, port=netns.PORT, opening=opening)
        try:
            out = run_process(
                command(["true"], policy, bare),
                cwd="/",
                env={"PATH": os.defpath},
                timeout_s=30,
                **opening.runner(socket.socket.close),
            )
        except OSError as exc:
            why = f"Maestro cannot open a way out in bwrap's network namespace here ({exc})"
            return None, why + (_SETUID if os.stat(found).st_mode & stat.S_ISUID else "")
        finally:
            opening.close()
        if out.exit_code == 0:
            return bare, ""
        said = (out.stderr.strip().splitlines() or [f"exit {out.exit_code}"])[-1]
        if "--size" not in said:
            break
    return None, f"bwrap cannot start a confined process here ({said})"


_SETUID = (
    " (bwrap is installed setuid, which makes its sandboxes' namespaces root's: use one "
    "that is not, where your kernel allows user namespaces)"
)


def _probe_srt(env: Mapping[str, str]) -> tuple[Rules | None, str]:
    """srt (on PATH) starting ``true`` confined, under Node from ``env``'s PATH."""
    found = shutil.which(SRT, path=env.get("PATH") or os.defpath) or shutil.which(SRT)
    if found is None:
        return None, "Anthropic's sandbox runtime (srt) is not installed"
    bare = Rules(found, tmp_mb=None, backend=SRT)
    try:
        folder = _own_folder()
    except (OSError, SpokeError) as exc:
        return None, f"srt has no folder to start in ({exc})"
    try:
        policy = Policy(cwd=Path("/"), env={"PATH": env.get("PATH") or os.defpath}, folder=folder)
        argv, run_env = wrap(["true"], policy, bare)
        out = run_process(argv, cwd="/", env=run_env, timeout_s=60)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if out.exit_code == 0:
        return bare, ""
    said = [line for line in out.stderr.splitlines() if line.strip()] or [ended(out.exit_code)]
    return None, f"srt cannot start a confined process here ({said[0][:300]})"


# What confines where, in words, and what to do when it cannot start.
NAMES = {BWRAP: "bubblewrap", SRT: "Anthropic's sandbox runtime (srt)"}
UNCONFINED = (
    "or run unconfined on purpose: `maestro run --no-sandbox`, "
    "or MAESTRO_SANDBOX=0 in your environment"
)
FIXES = {
    BWRAP: "install bubblewrap (`apt install bubblewrap`, `dnf install bubblewrap`) and allow "
    "user namespaces (`sysctl kernel.apparmor_restrict_unprivileged_userns=0` on Ubuntu 24.04)",
    SRT: "install Anthropic's sandbox runtime, with Node.js 22 or later: "
    "`npm install -g @anthropic-ai/sandbox-runtime`",
}


def fix() -> str:
    """How to make confinement start here, or to run without it."""
    return f"{FIXES[BACKEND]}, {UNCONFINED}"


def unavailable(why: str) -> MaestroError:
    return MaestroError(
        f"Maestro confines every process it starts for the plan, and cannot here: {why}.",
        fix() + ".",
    )


def rules(settings: Any, env: Mapping[str, str]) -> Rules | None:
    """The confinement ``settings`` ask for: None when switched off (``MAESTRO_SANDBOX=0``);
    refused (``MaestroError``) when bwrap cannot start here. Starts bwrap once."""
    if not settings.sandbox:
        return None
    # Here, not at the top: asyncio (which the proxy needs) would cost every command
    # about 8 ms at its start (python -X importtime).
    from maestro import netproxy

    for entry in settings.sandbox_hosts:
        try:
            netproxy.rule(entry)
        except ValueError:
            raise ConfigError(
                f"MAESTRO_SANDBOX_HOSTS holds {entry!r}, which names no host.",
                "list hosts as host, host:port, *.domain or an IP address (e.g. pypi.org:443).",
            ) from None
    probed, why = probe(env)
    if probed is None:
        raise unavailable(why)
    return configured(probed, settings, env)


def configured(probed: Rules, settings: Any, env: Mapping[str, str]) -> Rules:
    """What ``probe`` found, with the settings' folders, hosts and bounds, and the folder
    its processes' cgroups go in."""
    return replace(
        probed,
        hide=expand(settings.sandbox_hide, env),
        write=expand(settings.sandbox_write, env),
        hosts=tuple(settings.sandbox_hosts),
        tmp_mb=settings.sandbox_tmp_mb if probed.tmp_mb else None,
        processes=settings.sandbox_processes,
        cgroups=cgroups(),
    )


@contextmanager
def network(
    confined: Rules | None, hosts: Iterable[str] = (), endpoints: Iterable[str] = ()
) -> Iterator[Door | None]:
    """A confined process's way out while it runs (``Policy.port``): a door of Maestro's
    proxy that lets through ``hosts``, the ``sandbox_hosts`` setting's and the configured
    ``endpoints`` (base URLs); None unconfined. Under bwrap its listener is opened in the
    process's namespace as it starts (``starting``); under srt it is a port of the
    machine's loopback, served at once. ``SpokeError`` when it cannot be opened."""
    if confined is None:
        yield None
        return
    from maestro import netproxy

    allowed = netproxy.Allowed.of((*hosts, *confined.hosts), endpoints)
    try:
        proxy = netproxy.proxy()
        if confined.backend == SRT:
            listener = socket.create_server(("127.0.0.1", 0))
            door = netproxy.Door(allowed, listener.getsockname()[1])
            proxy.serve(door, listener)
        else:
            door = netproxy.Door(allowed, netns.PORT, netns.Opening())
    except (OSError, RuntimeError) as exc:
        raise SpokeError(
            f"Maestro's network proxy could not listen for a confined process ({exc}).",
            "close some programs (it needs a port of 127.0.0.1 under srt, two pipes under "
            "bwrap), or run unconfined on purpose: `maestro run --no-sandbox`.",
        ) from None
    try:
        yield door
    finally:
        proxy.close(door)


def starting(door: Door | None, on_start: Callable[[int], None] | None = None) -> dict[str, Any]:
    """What the process runner is given to start a process confined with ``door``: bwrap's
    info pipe (``pass_fds``), the program's gate (``stdin``) and, once bwrap has started,
    the door's listener opened in its namespace, served, and the program let go
    (``on_start``, before the caller's own). ``SpokeError`` when it cannot be opened there
    (the runner then stops what it started, and the program never runs)."""
    opening = door.opening if door is not None else None
    if door is None or opening is None:
        return {"on_start": on_start}

    from maestro import netproxy

    runner = opening.runner(lambda listener: netproxy.proxy().serve(door, listener))
    opened = runner["on_start"]

    def started(pid: int) -> None:
        try:
            opened(pid)
        except (OSError, RuntimeError) as exc:
            raise SpokeError(
                f"Maestro could not open the confined process's way out in its network "
                f"namespace ({exc}).",
                f"`maestro doctor` checks it; {UNCONFINED}.",
            ) from None
        if on_start is not None:
            on_start(pid)

    return {**runner, "on_start": started}


# -- the bound on its processes ---------------------------------------------------------


def _own_cgroups() -> dict[str, str]:
    """This process's cgroup in each hierarchy (``/proc/self/cgroup``): "" names v2's."""
    own = {}
    for line in Path("/proc/self/cgroup").read_text(encoding="utf-8").splitlines():
        _, controllers, path = line.split(":", 2)
        own.update(dict.fromkeys(controllers.split(","), path))
    return own


def _cgroup_mounts() -> list[tuple[str, str, str]]:
    """(hierarchy, its mount point, the cgroup mounted there) of cgroup v2 and of v1's
    pids hierarchy, v2 first (``/proc/self/mountinfo``)."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text(encoding="utf-8").splitlines():
        mount, _, kind = line.partition(" - ")
        fields, fs = mount.split(), kind.split()
        if len(fields) > 4 and len(fs) > 2:
            if fs[0] == "cgroup2":
                found.append(("", fields[4], fields[3]))
            elif fs[0] == "cgroup" and "pids" in fs[2].split(","):
                found.append(("pids", fields[4], fields[3]))
    return sorted(found, key=lambda mount: mount[0] != "")


def cgroups() -> Path | None:
    """The cgroup in which each confined process can get one of its own with a limit on
    its processes: this process's own, in cgroup v2 where it is ours to write (delegated,
    or root) and the pids controller is on there for its children or can be turned on,
    else in v1's pids hierarchy where writable; None where neither (checked by making one)."""
    try:
        own = _own_cgroups()
        mounts = _cgroup_mounts()
    except (OSError, ValueError):
        return None
    for hierarchy, point, root in mounts:
        path = own.get(hierarchy)
        if path is None or not (path + "/").startswith(root.rstrip("/") + "/"):
            continue
        folder = Path(point + path[len(root.rstrip("/")) :])
        try:
            if hierarchy == "":
                control = folder / "cgroup.subtree_control"
                if "pids" not in control.read_text(encoding="utf-8").split():
                    control.write_text("+pids", encoding="utf-8")
            made = _made(folder, PROCESSES)
        except OSError:
            continue
        if made is not None:
            _ended(made)
            _sweep(folder)
            return folder
    return None


def _sweep(folder: Path) -> None:
    """Remove the cgroups an engine killed before it could left in ``folder`` (empty:
    their processes died with it)."""
    for made in folder.glob("maestro-*-*"):
        pid = made.name.split("-")[1]
        if pid.isdigit() and not pid_alive(int(pid)):
            with suppress(OSError):
                made.rmdir()


def _made(folder: Path, limit: int) -> Path | None:
    """A new cgroup in ``folder`` holding at most ``limit`` tasks; None when it cannot be."""
    try:
        made = Path(tempfile.mkdtemp(prefix=f"maestro-{os.getpid()}-", dir=folder))
    except OSError:
        return None
    try:
        (made / "pids.max").write_text(str(limit), encoding="utf-8")
    except OSError:
        made.rmdir()
        return None
    return made


# Its processes die with their pid namespace, a moment after bwrap has ended.
_EMPTY_S = 5.0


def _ended(cgroup: Path) -> int:
    """How many forks ``cgroup`` refused at its limit, once every process in it is gone
    and it is removed (waited for up to ``_EMPTY_S``, then left)."""
    deadline, refused = time.monotonic() + _EMPTY_S, 0
    while True:
        try:
            events = (cgroup / "pids.events").read_text(encoding="utf-8").split()
            refused = int(dict(zip(events[::2], events[1::2], strict=False)).get("max", 0))
            cgroup.rmdir()
            return refused
        except FileNotFoundError:
            return 0
        except OSError:  # (EBUSY: still dying)
            if time.monotonic() > deadline:
                return refused
            time.sleep(0.0005)


@dataclass
class Bound:
    """The bound on one confined process's count while it runs: its cgroup (None: its
    RLIMIT_NPROC), and once it has ended, the forks its cgroup refused. Under srt, its
    own folder too (``Policy.folder``)."""

    limit: int
    cgroup: Path | None = None
    refused: int = 0
    folder: Path | None = None


@contextmanager
def bounded(confined: Rules | None) -> Iterator[Bound | None]:
    """A confined process's bound while it runs (``Policy.cgroup``): a cgroup of its own
    where ``confined`` has where to make one, removed after it, with what it refused
    (``refusals``); under srt its own folder, removed after it; None unconfined."""
    if confined is None:
        yield None
        return
    cgroup = _made(confined.cgroups, confined.processes) if confined.cgroups else None
    folder = _own_folder() if confined.backend == SRT else None
    bound = Bound(confined.processes, cgroup, folder=folder)
    try:
        yield bound
    finally:
        if cgroup is not None:
            bound.refused = _ended(cgroup)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def placed(policy: Policy, door: Door | None, bound: Bound | None) -> Policy:
    """``policy`` with what its process has while it runs: its way out, its cgroup and
    (srt) its folder."""
    return replace(
        policy,
        port=door.port if door else None,
        opening=door.opening if door else None,
        cgroup=bound.cgroup if bound else None,
        folder=bound.folder if bound else None,
    )


def refusals(door: Door | None, bound: Bound | None = None) -> str:
    """What a process was refused, in one line ("" when nothing): by the proxy, and forks
    past its limit."""
    said = [f"network: refused {', '.join(door.refused)}"] if door and door.refused else []
    if bound and bound.refused:
        forks = "a fork" if bound.refused == 1 else f"{bound.refused} forks"
        said.append(
            f"processes: {forks} refused at the limit of {bound.limit} at once "
            "(MAESTRO_SANDBOX_PROCESSES)"
        )
    return "; ".join(said)


def bounds(confined: Rules) -> str:
    """How a confined process's /tmp and processes are bounded here, in a few words."""
    if confined.backend == SRT:
        tmp = "its temporary folder unbounded (srt sizes none)"
    elif confined.tmp_mb:
        tmp = f"/tmp and /dev/shm at most {confined.tmp_mb} MB each"
    else:
        tmp = "/tmp and /dev/shm unbounded (bubblewrap 0.7 or later, not setuid, sizes them)"
    if confined.cgroups is not None:
        return f"{tmp}, at most {confined.processes} processes by a cgroup of each"
    if os.geteuid() == 0:
        return f"{tmp}, processes unbounded (root, and no cgroup Maestro can write)"
    return f"{tmp}, at most {confined.processes} processes by RLIMIT_NPROC (all of yours count)"


# -- when the sandbox, not the program, is why it gave no answer --------------------------

# bwrap says why it cannot start the program ("bwrap: Can't find source path ...") and
# exits 1 before it runs; so do srt's shell (``_OUTER``) when srt could not start it and
# the gate (``netns.GATE``) when its way out was not opened.
_UNSTARTED = ("bwrap: ", "maestro: cannot start ")
_READ_ONLY = re.compile(r"read-only file system|\bEROFS\b", re.IGNORECASE)
_PATH = re.compile(r"(?:^|[\s'\"`(\u2018])(/[^\s'\"`,:;()\u2019]*)")
_DOC = "docs/sandbox.md, Faults"


def fault(who: str, outcome: ProcessOutcome, *, read_only: bool = True) -> str | None:
    """Why confined ``who`` (``the claude spoke``) gave no answer, in one line naming the
    fix, when its sandbox is why: bwrap could not start it, bwrap itself was killed (a
    negative exit: a program killed inside ends bwrap with exit 128 + the signal), or it
    needed to write a path the sandbox keeps read-only (a CLI upgraded to keep its state
    in a new place gets EROFS; not with ``read_only=False``: a validation command's own
    words, which say what its test tried). None else, and when the runner stopped it."""
    if outcome.timed_out or outcome.aborted or outcome.stopped_on_stderr:
        return None
    said = [line.strip() for line in outcome.stderr.splitlines() if line.strip()]
    if said and said[-1].startswith(_UNSTARTED) and not outcome.stdout.strip():
        return (
            f"the sandbox could not start {who}: {said[-1][:300]}; fix: bwrap names what "
            "stopped it; a folder removed during the run is made again by `maestro run`, and "
            f"`maestro doctor` checks that bwrap starts here ({_DOC})."
        )
    if outcome.exit_code is not None and outcome.exit_code < 0:
        return (
            f"the sandbox of {who} {ended(outcome.exit_code)} before it answered; fix: something "
            "outside Maestro ended it (a kill, the out-of-memory killer: `journalctl -k`); "
            "nothing of yours was touched: `maestro run` again."
        )
    for line in reversed(said if read_only else []):
        found = _PATH.search(line) if _READ_ONLY.search(line) else None
        if found:
            return (
                f"the sandbox kept {found[1]} read-only, and {who} needed to write it; fix: to "
                "let it, add that path (or the folder it belongs in, made first if missing) to "
                f"MAESTRO_SANDBOX_WRITE in your environment ({_DOC})."
            )
    return None


def describe(confined: Rules | None) -> str:
    """How a run's processes run, in a few words (the run's first line, its status)."""
    if confined is None:
        return "spokes and checks unconfined, with your full rights (sandbox off)"
    return f"spokes and checks confined ({NAMES[confined.backend].split(' (')[0]})"


# -- a worktree's git, kept out of the process's reach -------------------------------------


def _git_dirs(top: Path) -> tuple[Path, Path] | None:
    """(git dir, common dir) of the checkout whose top is ``top``."""
    dot = top / ".git"
    if dot.is_dir():
        return dot, dot
    try:
        text = dot.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not text.startswith("gitdir: "):
        return None
    gitdir = Path(text[8:])
    gitdir = gitdir if gitdir.is_absolute() else (top / gitdir)
    try:
        common = Path((gitdir / "commondir").read_text(encoding="utf-8").strip())
    except OSError:
        return gitdir, gitdir
    return gitdir, common if common.is_absolute() else (gitdir / common)


def checkout_top(cwd: Path) -> Path | None:
    for folder in (cwd, *cwd.parents):
        if (folder / ".git").exists():
            return folder
    return None


@dataclass(frozen=True)
class GitLayout:
    """A checkout a confined process may commit in, and not harm: its real git dir and
    the repository's objects stay read-only; ``git add`` and ``commit`` go to a private
    git dir and object folder (the repository's objects its alternates), thrown away
    with the process. The checkout's ``.git`` is read-only, so it cannot be pointed
    elsewhere; Maestro's own git sees the process's edits as working-tree changes."""

    writable: tuple[Path, ...]
    read_only: tuple[Path, ...]
    env: dict[str, str]
    project: Path  # the repository's own checkout (its common git dir's folder)


def git_layout(cwd: Path, folder: Path) -> GitLayout | None:
    """The layout for a process working in ``cwd`` (a checkout), its private git dir made
    in ``folder``; None outside git."""
    top = checkout_top(cwd)
    dirs = _git_dirs(top) if top is not None else None
    if top is None or dirs is None:
        return None
    gitdir, common = (_real(d) for d in dirs)
    private = folder / "gitdir"
    objects = folder / "objects"
    private.mkdir(parents=True, exist_ok=True)
    objects.mkdir(parents=True, exist_ok=True)
    for name in ("HEAD", "index"):
        if (gitdir / name).is_file():
            shutil.copyfile(gitdir / name, private / name)
    (private / "commondir").write_text(f"{common}\n", encoding="utf-8")
    (private / "gitdir").write_text(f"{top / '.git'}\n", encoding="utf-8")
    env = {
        "GIT_DIR": str(private),
        "GIT_WORK_TREE": str(top),
        "GIT_OBJECT_DIRECTORY": str(objects),
        "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(common / "objects"),
    }
    return GitLayout((folder,), (top / ".git", gitdir, common), env, common.parent)


def others_state(env: Mapping[str, str], own: str | None = None) -> list[Path]:
    """What the CLIs other than ``own`` keep (logins, sessions, settings): hidden."""
    return [
        path
        for cli in roster.CLIS.values()
        if cli.name != own
        for path in cli.spoke().private_paths(env)
    ]


def work_policy(
    cwd: Path,
    env: Mapping[str, str],
    *,
    writes: bool,
    scratch: Path,
    state: Path | None,
    own: str | None = None,
    writable: Sequence[Path] = (),
    read_only: Sequence[Path] = (),
    visible: Sequence[Path] = (),
    hidden: Sequence[Path] = (),
    door: Path | None = None,
) -> Policy:
    """A process working in ``cwd``: with ``writes``, its checkout is writable (its git as
    ``git_layout`` makes it, in ``scratch``; the project's ``state`` folder in it
    read-only), else only what ``writable`` adds; the CLIs' state but ``own``'s is hidden,
    and ``hidden``; ``door``: its office's door (``Policy.door``)."""
    write, ro, shown, extra = list(writable), list(read_only), list(visible), {}
    if writes:
        top = checkout_top(cwd)
        write.append(top or cwd)
        layout = git_layout(cwd, scratch)
        if layout is not None:
            write += layout.writable
            ro += layout.read_only
            shown.append(layout.project)  # what links in the worktree lead to
            extra = layout.env
        if state is not None:
            ro.append(state)
    return Policy(cwd, env, write, ro, [*others_state(env, own), *hidden], shown, extra, door)


def pre_create(folder: Path, names: Iterable[str]) -> list[Path]:
    """A CLI's config files and folders in its state ``folder``, made when missing (empty:
    ``{}`` for JSON) so they can be laid read-only over it: a missing one could be
    created by the process, and a file where a folder belongs breaks the CLI."""
    made = []
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        path = folder / name.rstrip("/")
        if name.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
        elif not path.exists() and not path.is_symlink():
            path.write_text("{}\n" if name.endswith(".json") else "", encoding="utf-8")
        made.append(path)
    return made
