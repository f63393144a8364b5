"""The program behind the fake ``claude``, ``gemini`` and ``codex`` executables.

Each call takes the next step of its CLI's script (one step per invocation, counted in
a state file under a lock, so parallel dispatches each get their own step), records how
it was called, and prints a genuine host sample edited as the step asks. See README.md.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import signal
import stat
import subprocess
import sys
import time
import tomllib
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fake_args import PARSERS, Opts, Rejected
from fake_render import compact, gemini_retries, gemini_retry_notice, render
from samples import read_sample

VERSIONS = {"claude": "2.1.197 (Claude Code)", "gemini": "0.61.0", "codex": "codex-cli 0.169.0"}
GARBAGE = '<html><body><h1>502 Bad Gateway</h1></body></html>\nthis is not JSON {"type": "res\n'
MARKERS = (
    "MAESTRO_SPOKE",
    "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT",
    "GEMINI_CLI_TRUST_WORKSPACE",
    "IS_SANDBOX",
    "CLAUDE_CODE_MAX_RETRIES",
    "PATH",  # where the spoke's shell finds `maestro`
)


@contextlib.contextmanager
def locked(state: Path) -> Iterator[None]:
    with open(state / ".lock", "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def next_step(state: Path, cli: str) -> tuple[int, dict[str, Any]]:
    with locked(state):
        counter = state / f"{cli}.count"
        index = int(counter.read_text() or 0) if counter.exists() else 0
        counter.write_text(str(index + 1))
        script_file = state / f"{cli}.script.json"
        script = json.loads(script_file.read_text()) if script_file.exists() else []
        if index < len(script):
            return index, script[index]
        default_file = state / f"{cli}.default.json"
        return index, json.loads(default_file.read_text()) if default_file.exists() else {}


CALL = uuid.uuid4().hex


def sandboxed() -> bool:
    """Run by Maestro's sandbox: its pid namespace's first process is bwrap."""
    try:
        return Path("/proc/1/comm").read_text(encoding="utf-8").strip() == "bwrap"
    except OSError:
        return False


def record(state: Path, cli: str, entry: dict[str, Any]) -> None:
    with locked(state), open(state / f"{cli}.calls.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps(entry) + "\n")


def terminated(state: Path, cli: str) -> None:
    """A CLI that cleans up on SIGTERM: says so in its record of signals, then exits."""
    with locked(state), open(state / f"{cli}.signals.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"call": CALL, "signal": "SIGTERM", "time": time.time()}) + "\n")
    sys.exit(128 + signal.SIGTERM)


def keep_state(step: dict[str, Any]) -> str | None:
    """Make the state folder a newer version keeps (``state_path``, ``~`` its HOME); when
    the system refuses, what Node prints for the uncaught error its CLI dies of."""
    path = Path(os.path.expanduser(step["state_path"]))
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        code, where = errno.errorcode.get(exc.errno or 0, "EIO"), exc.filename
        return (
            f"Error: {code}: {(exc.strerror or '').lower()}, mkdir '{where}'\n"
            "    at Object.mkdirSync (node:fs:1391:3)\n"
            f"{{ errno: -{exc.errno}, syscall: 'mkdir', code: '{code}', path: '{where}' }}\n\n"
            "Node.js v22.12.0\n"
        )
    return None


def die_writing(step: dict[str, Any], workdir: Path) -> None:
    """SIGKILLed halfway through writing its first file (the OOM killer, a ``kill -9``)."""
    wanted = step["write"]
    spec = wanted[0] if isinstance(wanted, list) else wanted
    path = workdir / spec["path"]
    path.parent.mkdir(parents=True, exist_ok=True)
    content = spec.get("content", "")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(content[: len(content) // 2])
        handle.flush()
        os.fsync(handle.fileno())
        os.kill(os.getpid(), signal.SIGKILL)


def stdin_is_devnull() -> bool:
    try:
        mine, null = os.fstat(0), os.stat(os.devnull)
    except OSError:
        return False
    return stat.S_ISCHR(mine.st_mode) and mine.st_rdev == null.st_rdev


def mode_of(cli: str, opts: Opts) -> str:
    if cli == "codex":
        return "json" if "--json" in opts.flags else "text"
    return opts.get("--output-format", "text") or "text"


def in_git(folder: Path) -> bool:
    return any((p / ".git").exists() for p in (folder, *folder.parents))


def precheck(cli: str, opts: Opts, workdir: Path) -> tuple[str, int] | None:
    """The real CLI's refusals that come before any model call."""
    if cli == "claude":
        if "--print" not in opts.flags:
            return "fake claude: only headless `claude -p` is scripted\n", 2
        if opts.get("--output-format") == "stream-json" and "--verbose" not in opts.flags:
            return read_sample("claude_stream_no_verbose").stderr, 1
        bypass = (
            opts.get("--permission-mode") == "bypassPermissions"
            or "--dangerously-skip-permissions" in opts.flags
        )
        if bypass and os.getuid() == 0 and os.environ.get("IS_SANDBOX") != "1":
            return read_sample("claude_bypass_as_root").stderr, 1
        if not opts.positional:
            return (
                "Error: Input must be provided either through stdin or as a prompt argument when using --print\n",
                1,
            )
    elif cli == "gemini":
        if opts.get("--prompt") is None:
            return "fake gemini: only headless `gemini -p` is scripted\n", 2
        if (
            "--skip-trust" not in opts.flags
            and os.environ.get("GEMINI_CLI_TRUST_WORKSPACE") != "true"
        ):
            return read_sample("gemini_no_trust_env").stderr, 55
    else:
        if "--skip-git-repo-check" not in opts.flags and not in_git(workdir):
            return read_sample("codex_no_git").stderr.replace(
                "Reading additional input from stdin...\n", ""
            ), 1
        if not opts.positional:
            return (
                "No prompt provided. Either specify one as an argument or pipe the prompt into stdin.\n",
                1,
            )
    return None


def claude_transcript(session: str) -> Path:
    """Where the real claude keeps ``session`` when it runs in this folder:
    ``$CLAUDE_CONFIG_DIR`` (else ``~/.claude``) ``/projects/<slug of the real cwd>/``
    (the tests' paths are ASCII and short: no UTF-16 units, no cut and hash)."""
    config = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.environ["HOME"], ".claude")
    folder = re.sub(r"[^a-zA-Z0-9]", "-", os.path.realpath(os.getcwd()))
    return Path(config) / "projects" / folder / f"{session}.jsonl"


def earlier_conversation(session: str) -> list[Any]:
    """The turns claude --resume finds from this folder (none: "No conversation found")."""
    try:
        lines = claude_transcript(session).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    turns = []
    for line in lines:
        with contextlib.suppress(ValueError):
            turns.append(json.loads(line))
    return turns


def printed_session(lines: list[str]) -> str | None:
    """The session id in claude's result (its last line), if it printed one."""
    with contextlib.suppress(ValueError, IndexError, AttributeError):
        return json.loads(lines[-1]).get("session_id")
    return None


def keep_turn(session: str, prompt: str) -> None:
    """Claude keeps each session on disk unless --no-session-persistence."""
    path = claude_transcript(session)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"type": "user", "prompt": prompt}) + "\n")


def policy_denials(opts: Opts) -> tuple[set[str], list[dict[str, Any]]]:
    denied: set[str] = set()
    seen = []
    for path in opts.all("--policy"):
        entry: dict[str, Any] = {"path": path, "text": None, "rules": []}
        try:
            entry["text"] = Path(path).read_text(encoding="utf-8")
            entry["rules"] = tomllib.loads(entry["text"]).get("rule", [])
        except (OSError, tomllib.TOMLDecodeError) as exc:
            entry["error"] = str(exc)
        for rule in entry["rules"]:
            names = rule.get("toolName", [])
            if rule.get("decision") == "deny":
                denied.update([names] if isinstance(names, str) else names)
        seen.append(entry)
    return denied, seen


def write_refusal(cli: str, opts: Opts, path: Path, workdir: Path, denied: set[str]) -> str | None:
    """Why the real CLI, under these flags, would not let the model write ``path``."""
    inside = path.resolve().is_relative_to(workdir.resolve())
    if cli == "claude":
        split = lambda name: {
            t.strip() for v in opts.all(name) for t in v.replace(" ", ",").split(",") if t.strip()
        }
        if opts.all("--tools") and not {"Write", "Edit"} & split("--tools"):
            return "Write is not offered: --tools leaves it out"
        if {"Write", "Edit"} & split("--disallowedTools"):
            return "Write is in --disallowedTools"
        if not inside:
            return "outside the working directory"
        mode = opts.get("--permission-mode")
        if mode in ("acceptEdits", "bypassPermissions") or {"Write", "Edit"} & split(
            "--allowedTools"
        ):
            return None
        return "Write needs permission and -p cannot ask"
    if cli == "gemini":
        mode = opts.get("--approval-mode") or ("yolo" if "--yolo" in opts.flags else "default")
        if mode not in ("yolo", "auto_edit"):
            return "write_file is not offered headless without yolo or auto_edit"
        if "write_file" in denied:
            return "write_file is denied by the --policy file"
        return None if inside else "outside the workspace"
    sandbox = (
        "danger-full-access"
        if "--dangerously-bypass-approvals-and-sandbox" in opts.flags
        else opts.get("--sandbox", "read-only")
    )
    if sandbox == "read-only":
        return "the read-only sandbox blocks writes"
    if sandbox == "workspace-write" and not (inside or str(path.resolve()).startswith("/tmp/")):
        return "outside the workspace-write sandbox"
    return None


def do_writes(
    cli: str, opts: Opts, step: dict[str, Any], workdir: Path, denied: set[str]
) -> list[dict[str, Any]]:
    wanted = step.get("write") or []
    done = []
    for spec in [wanted] if isinstance(wanted, dict) else wanted:
        # "{task}" in a path: the task this call is for (concurrent tasks take steps in
        # whatever order they start).
        path = Path(spec["path"].replace("{task}", os.environ.get("MAESTRO_TASK_ID", "")))
        path = path if path.is_absolute() else workdir / path
        reason = None if step.get("force") else write_refusal(cli, opts, path, workdir, denied)
        if reason is None:
            try:  # the tool's error when the system refuses (a confined spoke: EROFS)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(spec.get("content", ""), encoding="utf-8")
            except OSError as exc:
                reason = exc.strerror or str(exc)
        done.append({"path": str(path), "written": reason is None, "refused": reason})
    return done


def shell_refusal(cli: str, opts: Opts, denied: set[str]) -> str | None:
    """Why the real CLI, under these flags, would not give the model a shell tool."""
    if cli == "claude":
        tools = {t.strip() for v in opts.all("--tools") for t in v.replace(" ", ",").split(",")}
        if opts.all("--tools") and "Bash" not in tools:
            return "Bash is not offered: --tools leaves it out"
    if cli == "gemini" and "run_shell_command" in denied:
        return "run_shell_command is denied by the --policy file"
    return None


def run_shell(
    cli: str, opts: Opts, step: dict[str, Any], workdir: Path, denied: set[str]
) -> list[dict[str, Any]]:
    """The `maestro ...` commands a model types in its shell tool, in order, with the
    spoke's environment (its session, its project). An item is the argv after `maestro`,
    or {"maestro": argv, "until": text, "tries": n}: repeated until its output so far
    holds the text (a model waiting for mail in a loop), or {"sh": command}: a command
    line run by `sh -c` as typed, so `maestro` is the one the spoke's PATH finds."""
    done = []
    refusal = shell_refusal(cli, opts, denied)
    for item in step.get("shell") or []:
        spec = item if isinstance(item, dict) else {"maestro": item}
        argv = (
            ["/bin/sh", "-c", spec["sh"]]
            if "sh" in spec
            else [sys.executable, "-m", "maestro", *spec["maestro"]]
        )
        if refusal:
            done.append({"argv": spec.get("maestro") or spec["sh"], "refused": refusal})
            continue
        until = spec.get("until")
        seen = ""
        for _ in range(int(spec.get("tries", 1 if until is None else 30))):
            proc = subprocess.run(
                argv,
                cwd=workdir,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                check=False,
                text=True,
                timeout=float(spec.get("timeout", 150)),
            )
            seen += proc.stdout
            done.append(
                {
                    "argv": spec.get("maestro") or spec["sh"],
                    "exit": proc.returncode,
                    "stdout": proc.stdout,
                    "stderr": proc.stderr,
                }
            )
            if until is None or until in seen:
                break
    return done


def spawn_child(spec: dict[str, Any]) -> int:
    code = "import signal, sys, time\n"
    if spec.get("ignore_term", True):
        code += "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    code += "time.sleep(float(sys.argv[1]))\n"
    child = subprocess.Popen(
        [sys.executable, "-c", code, str(spec.get("sleep", 120))], stdin=subprocess.DEVNULL
    )
    return child.pid


def emit(lines: list[str], stderr: str, step: dict[str, Any], cli: str, mode: str) -> None:
    stream = step.get("stream")
    if stderr:
        sys.stderr.write(stderr)
        sys.stderr.flush()
    if step.get("truncate"):
        whole = "".join(lines)
        lines = [whole[: max(1, len(whole) // 2)]]
    # Claude's stream-json and Codex's JSONL carry events mid-run; Gemini's carry no usage
    # before its final result, so a Gemini stream step only takes its time.
    if stream and (
        (cli == "claude" and mode == "stream-json") or (cli == "codex" and mode == "json")
    ):
        keep = 2 if cli == "codex" else 1  # the answer and its closing event(s) come last
        head, tail = lines[:-keep], lines[-keep:]
        for line in head:
            sys.stdout.write(line)
        sys.stdout.flush()
        for index in range(int(stream.get("events", 5))):
            sys.stdout.write(compact(progress_event(cli, index, stream)) + "\n")
            sys.stdout.flush()
            time.sleep(float(stream.get("interval", 0.05)))
        lines = tail
    elif stream:
        time.sleep(int(stream.get("events", 5)) * float(stream.get("interval", 0.05)))
    for line in lines:
        sys.stdout.write(line)
    sys.stdout.flush()


def progress_event(cli: str, index: int, stream: dict[str, Any]) -> dict[str, Any]:
    """One mid-run event; Claude's carry the usage of their API message."""
    if cli == "claude":
        usage = {
            "input_tokens": stream.get("input", 1000),
            "output_tokens": stream.get("output", 100),
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
        message = {
            "id": f"msg_stream_{index}",
            "type": "message",
            "role": "assistant",
            "model": "claude-opus-4-8",
            "content": [{"type": "text", "text": f"working, step {index}"}],
            "usage": usage,
        }
        return {
            "type": "assistant",
            "message": message,
            "parent_tool_use_id": None,
            "session_id": "fake-stream",
        }
    item = {
        "id": f"item_s{index}",
        "type": "command_execution",
        "command": f"/bin/bash -lc 'echo step {index}'",
        "aggregated_output": f"step {index}",
        "exit_code": 0,
        "status": "completed",
    }
    return {"type": "item.completed", "item": item}


def forked_at() -> float | None:
    """When the kernel created this process (seconds since boot, to its 10 ms tick): the
    moment the engine started it, free of the interpreter's own start-up, which a loaded
    machine stretches by a varying amount. None where /proc is not there."""
    try:
        stat_line = Path("/proc/self/stat").read_text()
    except OSError:
        return None
    ticks = int(stat_line.rsplit(")", 1)[1].split()[19])  # field 22, starttime
    return ticks / os.sysconf("SC_CLK_TCK")


def main(cli: str, state_dir: str) -> int:
    state = Path(state_dir)
    args = sys.argv[1:]
    entry: dict[str, Any] = {
        "cli": cli,
        "argv": args,
        "cwd": os.getcwd(),
        "pid": os.getpid(),
        "pgid": os.getpgid(0),
        # Its pid means nothing outside a sandbox's pid namespace: this names the call.
        "call": CALL,
        "sandboxed": sandboxed(),
        "stdin_devnull": stdin_is_devnull(),
        "env": {
            k: v
            for k, v in os.environ.items()
            if k in MARKERS or k.startswith(("MAESTRO_", "FAKE_ENV_"))
        },
        "environ": dict(os.environ),
        "time": time.time(),
        # The same moment on the clock /proc's start times count on: a bench turns
        # "forked" into wall-clock time with the two.
        "boottime": time.clock_gettime(time.CLOCK_BOOTTIME),
        "forked": forked_at(),
    }
    if args in (["--version"], ["-v"], ["-V"]):
        version = state / f"{cli}.version"
        print(version.read_text().strip() if version.exists() else VERSIONS[cli])
        record(state, cli, {**entry, "version": True})
        return 0
    try:
        opts = PARSERS[cli](args)
    except Rejected as rejected:
        record(state, cli, {**entry, "rejected": rejected.stderr.splitlines()[0]})
        sys.stderr.write(rejected.stderr)
        return rejected.code
    workdir = Path(opts.get("--cd") or os.getcwd())
    if cli == "codex" and not sys.stdin.isatty():
        # Like the real codex exec: read stdin to EOF (an open pipe hangs here).
        sys.stderr.write("Reading additional input from stdin...\n")
        sys.stderr.flush()
        sys.stdin.read()
    refusal = precheck(cli, opts, workdir)
    if refusal is not None:
        record(state, cli, {**entry, "rejected": refusal[0].splitlines()[0] if refusal[0] else ""})
        sys.stderr.write(refusal[0])
        return refusal[1]
    session = opts.get("--resume") if cli == "claude" else None
    if session is not None:
        entry["resumed"] = earlier_conversation(session)
        if not entry["resumed"]:
            stream = opts.get("--output-format") == "stream-json"
            missing = read_sample(f"claude_{'stream_' if stream else ''}resume_missing")
            said = missing.meta["argv"][-1]
            refusal = missing.stderr.replace(said, session)
            record(state, cli, {**entry, "rejected": refusal.splitlines()[0]})
            sys.stdout.write(missing.stdout.replace(said, session))
            sys.stderr.write(refusal)
            return missing.exit_code
    index, step = next_step(state, cli)
    if session is not None:
        step = {"session_id": session, **step}  # a resumed session keeps its id
    if step.get("ignore_term"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    elif step.get("record_term"):
        signal.signal(signal.SIGTERM, lambda *_: terminated(state, cli))
    if step.get("state_path"):
        crash = keep_state(step)
        if crash is not None:
            record(state, cli, {**entry, "step": index, "crashed": crash.splitlines()[0]})
            sys.stderr.write(crash)
            return 1
    if step.get("killed_writing"):
        record(state, cli, {**entry, "step": index, "killed_writing": True})
        die_writing(step, workdir)
    denied, policies = policy_denials(opts)
    writes = do_writes(cli, opts, step, workdir, denied)
    shell = run_shell(cli, opts, step, workdir, denied)
    entry.update(step=index, writes=writes, policies=policies, mode=mode_of(cli, opts))
    if shell:
        entry["shell"] = shell
    if step.get("child"):
        entry["child_pid"] = spawn_child(step["child"] if isinstance(step["child"], dict) else {})
    record(state, cli, entry)
    early = step.get("early", {})  # what the CLI says before it waits (a retry, a stall)
    for stream in ("stdout", "stderr"):
        if early.get(stream):
            getattr(sys, stream).write(early[stream])
            getattr(sys, stream).flush()
    time.sleep(float(step.get("sleep", 3600 if step.get("hang") else 0)))
    # A task's own duration: one default step serves a whole plan whose calls come in an
    # order the scheduler decides (bench/launch.py).
    time.sleep(float(step.get("sleep_for_task", {}).get(os.environ.get("MAESTRO_TASK_ID"), 0)))
    if cli == "gemini" and gemini_retries(step):
        # The real gemini retries a 429 or 5xx itself (10 attempts with backoff, minutes)
        # after printing its first retry notice; only then does it exit with the error.
        sys.stderr.write(gemini_retry_notice(int(step["http"])))
        sys.stderr.flush()
        time.sleep(float(step.get("retry_wait", 3600)))
    mode = mode_of(cli, opts)
    if "stdout" in step or "stderr" in step:
        lines, stderr, code = (
            [step.get("stdout", "")],
            step.get("stderr", ""),
            int(step.get("exit", 0)),
        )
    elif step.get("garbage"):
        lines, stderr, code = [GARBAGE], step.get("stderr", ""), int(step.get("exit", 0))
    else:
        denials = [
            {
                "tool_name": "Write",
                "tool_use_id": f"toolu_fake_{i}",
                "tool_input": {"file_path": w["path"]},
            }
            for i, w in enumerate(writes)
            if not w["written"]
        ]
        if cli == "claude" and denials:
            step = {**step, "denials": denials}
        # The model it ran: the step's (the CLI's own switch, as Gemini CLI falls back on
        # quota), else the one it was given, else its default.
        ran = step.get("model") or opts.get("--model") or "gemini-2.5-flash"
        lines, stderr, code = render(cli, mode, step, ran)
        last = opts.get("--output-last-message")
        if cli == "codex" and last:
            Path(last).write_text(
                step.get("text", "FAKE-REPLY: hello from the fake model server."), encoding="utf-8"
            )
    emit(lines, stderr, step, cli, mode)
    if cli == "claude" and "--no-session-persistence" not in opts.flags:
        kept = session or printed_session(lines)
        if kept:
            keep_turn(kept, opts.positional[0])
    time.sleep(float(step.get("sleep_after", 0)))
    # When the call ended, for tests that check how many ran at once (see intervals()).
    with locked(state), open(state / f"{cli}.ends.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"call": CALL, "end": time.time()}) + "\n")
    return code
