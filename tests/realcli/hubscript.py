"""A scripted hub model that does exactly what the installed `/maestro:run` says, and
counts what following the run cost it (turns, input tokens).

It reads the start command and the shell tool's options from the command file as the
host showed it to the model (Claude and Gemini expand the command into the prompt; a
Codex hub first reads the skill's `verbs/run.md`), runs it and each `next:` line as
printed with those options, answers a worker's question with the `answer:` line under
it, polls a Codex command still running with `write_stdin`, and ends with a one-line
summary once an answer has no `next:`. On Claude Code the file asks for each of those in
the background: the hub ends its turn, and once the host tells it the command ended it
reads the command's output file. Used by tests/realcli/test_lean_hub.py and bench/hub.py.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from maestro.install import invocation
from maestro.tokens import count_tokens

from .fake_model import Call, ToolCall, tool_results

ROOT = Path(__file__).resolve().parents[2]  # this Maestro, for the processes a run starts
API = {"claude": "anthropic", "gemini": "gemini", "codex": "openai"}
START = re.compile(r"1\. [^`]*`([^`]*run --follow[^`]*)`")
CLAUDE_BACKGROUND = re.compile(r"Bash `run_in_background` true, `timeout` (\d+)")
CODEX_YIELDS = re.compile(
    r"`yield_time_ms` (\d+); while it runs, poll with `write_stdin` "
    r"\(empty `chars`, `yield_time_ms` (\d+)\)"
)
RUNNING = re.compile(r"Process running with session ID (\d+)")
BACKGROUND = re.compile(r"^Command running in background with ID")
NOTIFIED = re.compile(r"<task-notification>.*?<output-file>([^<]+)</output-file>", re.DOTALL)
READ_LINE = re.compile(r"^ *\d+\t", re.MULTILINE)  # Claude's Read numbers each line
# What the hub says when it ends its turn with a command still running in the background.
WAITING = "The run goes on in the background; I will be told when it needs me."
NEXT_TEXT = re.compile(r"^next: (.+)$", re.MULTILINE)
NEXT_JSON = re.compile(r'"next":\s*"((?:[^"\\]|\\.)*)"')
ANSWER_LINE = re.compile(r"^ {2}answer: (.+)$", re.MULTILINE)
REPLY_TEXT = "Use the greeting hello, office."


def texts(value: Any) -> list[str]:
    """A tool result and every string inside it, JSON-decoded as deep as it goes (Gemini
    wraps the command's output in a JSON object of its own)."""
    found = [value] if isinstance(value, str) else []
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return found
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        for item in value:
            found += texts(item)
    return found


def notified(body: Any) -> list[str]:
    """The output files of the background commands Claude Code told the model have ended,
    oldest first (it may merge its messages to the model, so they are looked for in all)."""
    messages = body.get("messages") if isinstance(body, dict) else None
    text = json.dumps(messages or []).replace("\\n", "\n")
    return NOTIFIED.findall(text)


def next_line(result: str) -> str | None:
    """The `next` command of one of Maestro's answers, text or JSON."""
    for text in texts(result):
        match = NEXT_TEXT.search(text)
        if match:
            return match.group(1).strip()
        match = NEXT_JSON.search(text)
        if match:
            return str(json.loads(f'"{match.group(1)}"'))
    return None


def answer_line(result: str) -> str | None:
    """The `maestro mail reply` line under a worker's question, filled in with the reply."""
    for text in texts(result):
        match = ANSWER_LINE.search(text)
        if match:
            return match.group(1).replace('--message "..."', f"--message {shlex.quote(REPLY_TEXT)}")
        found = re.search(r'"reply":\s*"((?:[^"\\]|\\.)*)"', text)
        if found:
            line = str(json.loads(f'"{found.group(1)}"'))
            return line.replace('--message "..."', f"--message {shlex.quote(REPLY_TEXT)}")
    return None


@dataclass
class Hub:
    host: str
    prelude: list[str] = field(default_factory=list)  # Codex: read verbs/run.md first
    start: str | None = None  # typed otherwise than the file says (a bare `maestro`)
    json_mode: bool = False  # follow with `--json` answers (for the bench's comparison)
    commands: list[str] = field(default_factory=list)
    results: list[str] = field(default_factory=list)
    # Input tokens (cl100k over the request body) of every request the host sent, and
    # which of them were the hub's own turns, from the start's answer on.
    requests: list[tuple[bool, int]] = field(default_factory=list)
    start_at: int | None = None  # index in ``commands`` of the start, `run --follow`
    final: str | None = None
    _options: dict[str, Any] = field(default_factory=dict)
    _poll_options: dict[str, Any] = field(default_factory=dict)
    _after_reply: str | None = None

    @property
    def api(self) -> str:
        return API[self.host]

    def __call__(self, api: str, body: Any) -> Any:
        results = tool_results(api, body)
        # A side request of the host (a title, a check) offers the model no tools.
        tools = not isinstance(body, dict) or api != "anthropic" or bool(body.get("tools"))
        turn = tools and len(results) == len(self.commands) and self.final is None
        if self.start_at is not None and len(results) > self.start_at:
            self.requests.append((turn, count_tokens(json.dumps(body, ensure_ascii=False))))
        if not turn:
            return "ok"  # not the hub's turn
        self.results = results
        call = self._next(body, results[-1] if results else None)
        if isinstance(call, str):
            if call is not WAITING:
                self.final = call
            return call
        if isinstance(call, Call):
            self.commands.append(f"<read {call.args['file_path']}>")
        else:
            self.commands.append(call.command if call.poll is None else f"<poll {call.poll}>")
        return call

    # -- what the command file says, step by step ---------------------------------------
    def _next(self, body: Any, result: str | None) -> ToolCall | Call | str:
        done = len(self.commands)
        if done < len(self.prelude):
            return ToolCall(self.prelude[done])
        if done == len(self.prelude):
            return self._start(body)
        assert result is not None
        unread = [f for f in notified(body) if f"<read {f}>" not in self.commands]
        if unread:  # Claude: a background command ended
            return Call("Read", {"file_path": unread[0]})
        if BACKGROUND.search(result):
            return WAITING
        if self.commands[-1].startswith("<read "):
            result = READ_LINE.sub("", result)
        running = RUNNING.search(result)
        if self.host == "codex" and running and "next:" not in result:
            return ToolCall("", dict(self._poll_options), poll=int(running.group(1)))
        reply = answer_line(result)
        if reply is not None:
            self._after_reply = next_line(result)
            return ToolCall(reply)
        if self._after_reply is not None:
            following, self._after_reply = self._after_reply, None
            return ToolCall(following, dict(self._options))
        following = next_line(result)
        if following is None:
            return "FINISHED: " + result[-300:]
        return ToolCall(following, dict(self._options))

    def _start(self, body: Any) -> ToolCall:
        text = json.dumps(body).replace("\\n", "\n").replace('\\"', '"')
        match = START.search(text)
        assert match, "the command file names no start"
        if self.host == "claude":
            background = CLAUDE_BACKGROUND.search(text)
            assert background, "the Claude command file asks for no background Bash"
            self._options = {"run_in_background": True, "timeout": int(background.group(1))}
        if self.host == "codex":
            yields = CODEX_YIELDS.search(text)
            assert yields, "the Codex skill names no yield_time_ms"
            self._options = {"yield_time_ms": int(yields.group(1))}
            self._poll_options = {"yield_time_ms": int(yields.group(2))}
        # The arguments placeholder (Codex: `<arguments>`): a run of the whole plan.
        start = self.start or match.group(1).replace("$ARGUMENTS", "").replace("<arguments>", "")
        start = start.strip()
        if self.json_mode:
            start += " --json"
        self.start_at = len(self.commands)
        return ToolCall(start, dict(self._options))

    # -- what following the run cost ----------------------------------------------------
    @property
    def turns_after_start(self) -> int:
        return sum(1 for turn, _ in self.requests if turn)

    @property
    def input_after_start(self) -> int:
        return sum(tokens for _, tokens in self.requests)


def codex_prelude(project: Path) -> list[str]:
    return [f"cat {project / '.agents/skills/maestro/verbs/run.md'}"]


# -- a whole run, from the host's command line to its last answer ------------------------

SIM_DELAY_S = "1.0"


def sim_plan(count: int, worker: str | None = None) -> str:
    """YAML of ``count`` independent tasks; with ``worker``, the first one is that real
    CLI's, and it asks the coordinator before it writes (tests/realcli/test_office.py)."""
    from .test_office import CRITERION

    lines = ["goal: Small modules", "hub: claude", "tasks:"]
    for n in range(1, count + 1):
        if worker and n == 1:
            lines.append(
                f"  - {{id: 1, title: Write the greeting the coordinator chooses, specialist: code,"
                f" tool: {worker}, files: [hello.txt], criteria: [{json.dumps(CRITERION)}],"
                ' validation: "grep -q office hello.txt"}'
            )
            continue
        lines.append(
            f"  - {{id: {n}, title: Write module {n}, specialist: code, tool: sim,"
            f" files: [src/m{n}.py], criteria: [src/m{n}.py exists],"
            f' validation: "test -f src/m{n}.py"}}'
        )
    return "\n".join(lines) + "\n"


def host_argv(host: str, exe: Path) -> list[str]:
    """Each host's documented headless hub mode (docs/hosts.md). Claude Code's allows
    Maestro's calls for the whole session: once a background command's end has woken the
    hub, the command file's own rule no longer holds."""
    if host == "claude":
        allow = f"Bash({invocation.resolve()}:*)"
        return [str(exe), "-p", "/maestro:run", "--output-format", "json", "--allowedTools", allow]
    if host == "gemini":
        return [
            str(exe),
            "-p",
            "/maestro:run",
            "-o",
            "json",
            "--skip-trust",
            "-m",
            "gemini-2.5-flash",
            "-y",
        ]
    return [
        str(exe),
        "exec",
        "--json",
        "--skip-git-repo-check",
        "--sandbox",
        "danger-full-access",
        "$maestro run",
    ]


def hub_env(home: Path, url: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    """One environment for the hub and, through it, the engine and a real worker: all
    three CLIs pointed at the loopback model."""
    from . import hostenv

    dirs = hostenv.shell_path()
    return {
        **hostenv.claude_env(home, url, dirs),
        **hostenv.gemini_env(home, url, dirs),
        **hostenv.codex_env(home, url, dirs),
        "MAESTRO_SIM_DELAY": SIM_DELAY_S,
        "MAESTRO_STAGGER_DELAY": "0",
        **(extra or {}),
    }


def tune(home: Path, *, silence_s: int | None = None, poll_ms: int | None = None) -> None:
    """Settings a person may have given the hosts, written into ``home`` after
    ``hub_env``: Gemini CLI's tools.shell.inactivityTimeout (how long its shell lets a
    command stay silent) and Codex CLI's background_terminal_max_timeout (its longest
    write_stdin poll)."""
    if silence_s is not None:
        path = home / ".gemini" / "settings.json"
        settings = json.loads(path.read_text())
        settings.setdefault("tools", {}).setdefault("shell", {})["inactivityTimeout"] = silence_s
        path.write_text(json.dumps(settings))
    if poll_ms is not None:
        path = home / ".codex" / "config.toml"
        path.write_text(f"background_terminal_max_timeout = {poll_ms}\n" + path.read_text())


@dataclass
class Followed:
    """One run followed from the host's command line to its last answer."""

    hub: Hub
    project: Path
    code: int  # the host's exit code
    stderr: str
    seconds: float  # from the host's start to its exit


def follow_run(
    host: str,
    scratch: Path,
    plan: str,
    *,
    hub: Hub | None = None,
    worker: Any = None,
    env: dict[str, str] | None = None,
    silence_s: int | None = None,
    poll_ms: int | None = None,
    timeout: float = 600,
) -> Followed:
    """A new project under ``scratch`` (its own HOME beside it), committed, planned and
    installed for ``host`` with this very Maestro, then the host's documented headless
    hub mode against the loopback model, whose hub turns ``hub`` plays (a real
    ``worker``'s turns the worker's function; ``tune``'s settings given). Independent
    of the calling process's HOME and folder, so several can run at once."""
    from . import hostenv
    from .fake_model import FakeModel

    home, project = scratch / "home", scratch / "proj"
    home.mkdir(parents=True)
    project.mkdir()
    base = {
        "HOME": str(home),
        "PATH": os.pathsep.join([*hostenv.shell_path(), os.environ["PATH"]]),
        "PYTHONPATH": str(ROOT),
        **{k: os.environ[k] for k in ("LANG", "TERM") if k in os.environ},
    }
    (project / "README.md").write_text("small modules\n")
    for argv in (
        ["git", "init", "-q"],
        ["git", "add", "-A"],
        ["git", "-c", "user.name=h", "-c", "user.email=h@h", "commit", "-qm", "init"],
        [sys.executable, "-m", "maestro", "plan", "--from", "-", "--yes"],
        [sys.executable, "-m", "maestro", "install", "--host", host],
    ):
        done = subprocess.run(
            argv, cwd=project, env=base, input=plan, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, (argv, done.stdout, done.stderr)
    hub = hub or Hub(host, codex_prelude(project) if host == "codex" else [])

    def reply(api: str, body: Any) -> Any:
        return hub(api, body) if api == hub.api or worker is None else worker(api, body)

    with FakeModel(reply=reply) as fake:
        run_env = {**hub_env(home, fake.url, env), "PYTHONPATH": str(ROOT)}
        tune(home, silence_s=silence_s, poll_ms=poll_ms)
        exe = hostenv.executable(host)
        assert exe is not None, f"{host} is not installed (MAESTRO_REALCLI_DIR)"
        started = time.monotonic()
        out = hostenv.run(host_argv(host, exe), cwd=project, env=run_env, timeout=timeout)
    return Followed(hub, project, out.code, out.stderr, time.monotonic() - started)
