"""Codex CLI as a spoke: ``codex exec --json --skip-git-repo-check --sandbox ...`` (HOSTS.md).

Never ``--full-auto`` (removed, exit 2) and never ``-a`` (``codex exec`` rejects it): the
sandbox is the enforcement, and approval stays ``never`` in exec mode.

Project instructions: the spoke keeps loading AGENTS.md (no ``-c project_doc_max_bytes=0``),
as the Claude and Gemini spokes load CLAUDE.md and GEMINI.md. It carries the project's
conventions and build/test commands a worker needs; Maestro's own stub block in it cannot
make the spoke re-dispatch, because ``maestro run`` refuses to start under MAESTRO_SPOKE=1.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from maestro import roster
from maestro.paths import codex_home
from maestro.process import ProcessOutcome
from maestro.spokes.base import SignIn, Spoke, inline_system, safe_positional, tilde
from maestro.spokes.contract import DispatchRequest, SpokeResult, UsageTally, fail
from maestro.spokes.jsonout import (
    as_int,
    first_line,
    garbled,
    inner_message,
    json_events,
    last_line,
    load_json_object,
    message_kind,
)
from maestro.state.model import Usage

SANDBOX = {
    "read-only": "read-only",  # shell commands may read, nothing may write
    "read+shell": "read-only",
    "read+write": "workspace-write",  # writes in the workdir and tmp; the shell comes with it
    "full": "workspace-write",
}


def codex_usage(usage: dict[str, Any] | None) -> Usage:
    usage = usage or {}
    cached = as_int(usage.get("cached_input_tokens"))
    # OpenAI counts cached tokens inside input_tokens, reasoning inside output_tokens.
    return Usage(
        input=max(0, as_int(usage.get("input_tokens")) - cached),
        output=as_int(usage.get("output_tokens")),
        cached=cached,
    )


def config(env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """$CODEX_HOME/config.toml, or {} when it is missing or unreadable."""
    try:
        with (codex_home(env if env is not None else dict(os.environ)) / "config.toml").open(
            "rb"
        ) as handle:
            return tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}


def configured_model(env: Mapping[str, str] | None = None) -> str | None:
    """The model codex uses when none is passed: ``model`` in $CODEX_HOME/config.toml."""
    model = config(env).get("model")
    return model if isinstance(model, str) else None


# With no provider in reach codex says this for good (every 10 s or so, after its quick
# reconnects), as an `error` event of `exec --json` (verified with 0.169, no network).
WAITING = "Reconnecting... waiting for network"


@dataclass
class _Turns:
    """What the events of ``codex exec --json`` said of its turns."""

    usage: Usage = field(default_factory=Usage)
    messages: list[str] = field(default_factory=list)  # the agent's, in order
    errors: list[str] = field(default_factory=list)
    completed: bool = False  # a turn.completed came
    failed: bool = False  # a turn.failed came


def _read_turns(events: list[dict[str, Any]]) -> _Turns:
    turns = _Turns()
    for event in events:
        kind = event.get("type")
        raw = event.get("item")
        item = raw if isinstance(raw, dict) else {}
        if kind == "item.completed" and item.get("type") == "agent_message":
            turns.messages.append(str(item.get("text") or ""))
        elif kind == "turn.completed":
            turns.completed = True
            turns.usage = turns.usage + codex_usage(event.get("usage"))
        elif kind == "turn.failed":
            turns.failed = True
            turns.errors.append(str((event.get("error") or {}).get("message") or "turn failed"))
        elif kind == "error":
            turns.errors.append(str(event.get("message") or "error"))
    return turns


class CodexSpoke(Spoke):
    name = "codex"
    executable = roster.CLIS[name].executable
    install_hint = roster.CLIS[name].install_hint

    def retry_notice(self, line: str) -> bool:
        if WAITING not in line:
            return False
        event = load_json_object(line)
        return (
            event is not None
            and event.get("type") == "error"
            and str(event.get("message")).startswith(WAITING)
        )

    def sign_in(self, env: Mapping[str, str]) -> SignIn:
        """`codex exec` (0.169) sends CODEX_API_KEY or the login `codex login` keeps in
        $CODEX_HOME/auth.json, not OPENAI_API_KEY (verified: no Authorization header);
        a provider of the user's own config sends its ``env_key``."""
        settings = config(env)
        name = settings.get("model_provider", "openai")
        provider = (settings.get("model_providers") or {}).get(name)
        if isinstance(provider, dict) and not provider.get("requires_openai_auth"):
            key = provider.get("env_key")
            if not key:
                return SignIn(None, f"its provider {name!r} names no key (env_key)")
            if env.get(key):
                return SignIn(True, f"its provider {name!r} reads {key}, which is set")
            return SignIn(
                False, f"its provider {name!r} reads {key}, which is not set", f"set {key}"
            )
        if env.get("CODEX_API_KEY"):
            return SignIn(True, "CODEX_API_KEY is set")
        login = codex_home(env) / "auth.json"
        if login.is_file():
            return SignIn(True, f"{tilde(login, env)} holds its login")
        if settings.get("cli_auth_credentials_store") in ("keyring", "auto"):
            return SignIn(
                None, "its login is kept in the system keyring", "`codex login status` tells"
            )
        detail = f"no {tilde(login, env)} and no CODEX_API_KEY"
        if env.get("OPENAI_API_KEY"):
            detail += " (OPENAI_API_KEY is set, but codex exec does not read it)"
        return SignIn(
            False,
            detail,
            "run `codex login` (or `printenv OPENAI_API_KEY | codex login --with-api-key`), or set CODEX_API_KEY",
        )

    def reaches_office(self, tier: str) -> bool:
        # A read-only sandbox fails every write with EROFS, --add-dir or not.
        return SANDBOX[tier] == "workspace-write"

    def build_argv(self, req: DispatchRequest) -> list[str]:
        self.refuse_resume(req)
        argv = [
            self.executable or self.name,
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--sandbox",
            SANDBOX[req.tier],
        ]
        if not req.web_search:
            # codex offers its web_search tool in every sandbox unless switched off.
            argv += ["-c", 'web_search="disabled"']
        # Its shell tool runs `bash -lc` by default: a login shell, whose profile (Debian's
        # /etc/profile) sets PATH afresh, losing the one the spoke was given, and with it
        # the `maestro` its prompt names (verified with codex 0.169). Plain `bash -c`
        # keeps the environment Maestro passed, as claude's and gemini's shells do.
        argv += ["-c", "allow_login_shell=false"]
        if req.model:
            argv += ["-m", req.model]
        # --ephemeral: no session files, as claude's --no-session-persistence. No flag
        # limits turns or appends a system prompt, so the system part leads the prompt.
        if SANDBOX[req.tier] == "workspace-write":
            # Its sandbox writes only the workdir and /tmp: the mailbox needs --add-dir.
            # (read-only writes nowhere: such a spoke reports in its answer alone.)
            for folder in req.shared_dirs:
                argv += ["--add-dir", str(folder)]
        argv += ["-C", str(req.cwd), "--ephemeral", safe_positional(inline_system(req))]
        return argv

    def watch(self, event: dict[str, Any], tally: UsageTally) -> None:
        if event.get("type") == "turn.completed":
            tally.add(codex_usage(event.get("usage")))

    def read_result(
        self, outcome: ProcessOutcome, req: DispatchRequest | None
    ) -> SpokeResult | None:
        events = json_events(outcome.stdout)
        session = next(
            (e.get("thread_id") for e in events if e.get("type") == "thread.started"), None
        )
        turn = _read_turns(events)
        model = (req.model if req else None) or configured_model()
        if turn.failed or (turn.errors and not turn.completed):
            message = turn.errors[-1] if turn.errors else "turn failed"
            kind = message_kind(message) or "other"
            return fail(
                self.name,
                kind,
                f"codex turn failed: {first_line(inner_message(message))}",
                session_id=session,
                usage=turn.usage,
                model=model,
            )
        if not turn.completed:
            return None
        result = SpokeResult(tool=self.name, usage=turn.usage, session_id=session, model=model)
        if not turn.messages:
            result.error_kind, result.error = (
                "other",
                "codex finished its turn without a final message.",
            )
            return result
        result.text, result.success = turn.messages[-1], True
        return result

    def diagnose(self, outcome: ProcessOutcome, req: DispatchRequest | None) -> SpokeResult:
        stderr = outcome.stderr
        if outcome.exit_code == 2:
            # clap's usage error: "error: unexpected argument '--full-auto' found".
            line = next(
                (ln.strip() for ln in stderr.splitlines() if ln.strip().startswith("error:")),
                first_line(stderr),
            )
            return fail(self.name, "bad_flag", f"codex rejected its command line: {line}")
        if "Not inside a trusted directory" in stderr:
            return fail(
                self.name, "untrusted_folder", f"codex refused the folder: {last_line(stderr)}"
            )
        kind = message_kind(last_line(stderr)) if stderr.strip() else None
        if kind in ("auth", "network", "rate_limit", "server"):
            return fail(self.name, kind, f"codex failed before answering: {last_line(stderr)}")
        return fail(
            self.name, "other", garbled(self.name, outcome.stdout, outcome.exit_code, stderr)
        )
