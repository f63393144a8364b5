"""Gemini CLI as a spoke: ``gemini -p <prompt> -o json --skip-trust`` (HOSTS.md).

Tiers: headless Gemini without yolo offers the model only read-only tools. Write tiers
need an approval mode that enables the write tools, and a Policy Engine file (TOML
``[[rule]]`` entries, loaded with ``--policy``) denies what the tier forbids. Denied
global rules remove the tool from the model's tool list altogether.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from maestro.fsutil import atomic_write
from maestro.spokes.base import (
    DispatchRequest,
    Spoke,
    SpokeResult,
    UsageTally,
    fail,
    inline_system,
    safe_positional,
)
from maestro.spokes.jsonout import (
    as_int,
    first_line,
    garbled,
    http_kind,
    inner_message,
    json_events,
    last_line,
    last_object_with,
    load_json_object,
    message_kind,
    status_in,
)
from maestro.spokes.process import ProcessOutcome
from maestro.state.model import Usage

SHELL = ("run_shell_command",)
WRITE = ("write_file", "replace")
# save_memory appends to ~/.gemini/GEMINI.md: outside the project, never a task's job.
MEMORY = ("save_memory",)

# approval mode (None: the CLI's default), tools the policy denies
TIER_POLICY: dict[str, tuple[str | None, tuple[str, ...]]] = {
    "read-only": (None, SHELL + WRITE + MEMORY),
    "read+shell": ("yolo", WRITE + MEMORY),
    "read+write": ("auto_edit", SHELL + MEMORY),
    "full": ("yolo", ()),
}

# Exit codes of gemini's fatal errors (HOSTS.md section 2).
EXIT_KINDS: dict[int, tuple[str, str]] = {
    41: ("auth", "authentication failed"),
    42: ("other", "the input was rejected"),
    44: ("other", "the sandbox failed"),
    52: ("other", "its configuration is invalid"),
    53: ("turn_limit", "it reached its session turn limit"),
    54: ("other", "a tool failed"),
    55: ("untrusted_folder", "the folder is not trusted"),
    130: ("other", "it was cancelled"),
}


def policy_toml(tier: str) -> str:
    """The Policy Engine rules that take away the tools ``tier`` does not grant."""
    denied = TIER_POLICY[tier][1]
    if not denied:
        return ""
    names = ", ".join(json.dumps(name) for name in denied)
    message = json.dumps(f"Maestro dispatched this task with tool tier {tier}: this tool is not allowed.")
    return (
        f"# Maestro spoke policy for tool tier {tier}. Written for one dispatch, loaded with --policy.\n"
        "[[rule]]\n"
        f"toolName = [{names}]\n"
        'decision = "deny"\n'
        "priority = 999\n"
        f"denyMessage = {message}\n"
    )


def _tokens_usage(tokens: dict[str, Any]) -> Usage:
    cached = as_int(tokens.get("cached"))
    fresh = as_int(tokens["input"]) if "input" in tokens else max(0, as_int(tokens.get("prompt")) - cached)
    return Usage(input=fresh, output=as_int(tokens.get("candidates")) + as_int(tokens.get("thoughts")), cached=cached)


def _stream_usage(stats: dict[str, Any]) -> Usage:
    cached = as_int(stats.get("cached"))
    fresh = as_int(stats["input"]) if "input" in stats else max(0, as_int(stats.get("input_tokens")) - cached)
    return Usage(input=fresh, output=as_int(stats.get("output_tokens")), cached=cached)


class GeminiSpoke(Spoke):
    name = "gemini"
    executable = "gemini"
    install_hint = "npm install -g @google/gemini-cli"

    # read+shell needs the shell, and a shell command can write files.
    unenforced_tiers = ("read+shell",)

    def policy_path(self, req: DispatchRequest) -> Path:
        folder = req.scratch_dir or Path(tempfile.gettempdir())
        return folder / f"gemini-policy-{req.tier.replace('+', '-')}.toml"

    def prepare(self, req: DispatchRequest) -> None:
        text = policy_toml(req.tier)
        if text:
            atomic_write(self.policy_path(req), text)

    def build_argv(self, req: DispatchRequest) -> list[str]:
        self.refuse_resume(req)
        # No flag appends to Gemini's system prompt (GEMINI_SYSTEM_MD replaces it), so
        # the system part travels in the prompt; no flag limits turns either.
        prompt = safe_positional(inline_system(req))
        argv = [self.executable or self.name, "-p", prompt, "-o", "stream-json" if req.abort_tokens else "json", "--skip-trust"]
        if req.model:
            argv += ["-m", req.model]
        mode, denied = TIER_POLICY[req.tier]
        if mode:
            argv += ["--approval-mode", mode]
        if denied:
            argv += ["--policy", str(self.policy_path(req))]
        return argv

    def watch(self, event: dict[str, Any], tally: UsageTally) -> None:
        if event.get("type") == "result" and isinstance(event.get("stats"), dict):
            tally.final(_stream_usage(event["stats"]))

    # -- reading --------------------------------------------------------------------------
    def read_result(self, outcome: ProcessOutcome, req: DispatchRequest | None) -> SpokeResult | None:
        data = load_json_object(outcome.stdout)
        if data is not None and ("response" in data or "error" in data):
            return self._from_json(data, outcome)
        events = json_events(outcome.stdout)
        final = next((e for e in reversed(events) if e.get("type") == "result"), None)
        if final is not None:
            return self._from_stream(events, final, outcome)
        error = last_object_with(outcome.stderr, "error")
        if error is not None and isinstance(error.get("error"), dict):
            return self._error(error["error"], outcome, error.get("session_id"))
        return None

    def _from_json(self, data: dict[str, Any], outcome: ProcessOutcome) -> SpokeResult:
        if isinstance(data.get("error"), dict):
            return self._error(data["error"], outcome, data.get("session_id"))
        by_model: dict[str | None, Usage] = {}
        for model, entry in ((data.get("stats") or {}).get("models") or {}).items():
            if isinstance(entry, dict) and isinstance(entry.get("tokens"), dict):
                by_model[model] = _tokens_usage(entry["tokens"])
        return self._success(str(data.get("response") or ""), data.get("session_id"), by_model, None)

    def _from_stream(self, events: list[dict[str, Any]], final: dict[str, Any], outcome: ProcessOutcome) -> SpokeResult:
        session = next((e.get("session_id") for e in events if e.get("type") == "init"), None)
        if final.get("status") != "success":
            raw = final.get("error")
            error = raw if isinstance(raw, dict) else {"message": str(final.get("status"))}
            return self._error(error, outcome, session)
        text = "".join(
            str(e.get("content") or "") for e in events if e.get("type") == "message" and e.get("role") == "assistant"
        )
        stats = final.get("stats") or {}
        by_model = {m: _stream_usage(s) for m, s in (stats.get("models") or {}).items() if isinstance(s, dict)}
        return self._success(text, session, by_model, _stream_usage(stats))

    def _success(self, text: str, session: Any, by_model: dict[str | None, Usage], total: Usage | None) -> SpokeResult:
        if total is None:
            total = Usage()
            for usage in by_model.values():
                total = total + usage
        result = SpokeResult(tool=self.name, text=text, success=True, usage=total, session_id=session)
        result.model = ",".join(m for m in by_model if m) or None
        if by_model:
            # Priced per model: with model "auto" a cheap router model answers first.
            result.cost, result.cost_estimated = self.price(by_model), True
        return result

    def _error(self, error: dict[str, Any], outcome: ProcessOutcome, session: Any) -> SpokeResult:
        message = str(error.get("message") or error.get("type") or "unknown error")
        code = error.get("code")
        status = code if isinstance(code, int) and 400 <= code <= 599 else status_in(message)
        kind: str | None = http_kind(status)
        if kind is None and isinstance(code, int) and code in EXIT_KINDS:
            kind = EXIT_KINDS[code][0]
        if kind is None:
            kind = self._exit_kind(outcome.exit_code) or message_kind(message) or "other"
        where = f"HTTP {status}" if status else f"{error.get('type') or 'error'}"
        return fail(self.name, kind, f"gemini failed ({where}): {first_line(inner_message(message))}", session_id=session)

    @staticmethod
    def _exit_kind(code: int | None) -> str | None:
        if code is None:
            return None
        if code in EXIT_KINDS:
            return EXIT_KINDS[code][0]
        # An API error exits with its HTTP status mod 256 (401 -> 145, 500 -> 244).
        if 144 <= code <= 255:
            return http_kind(code + 256)
        return None

    def diagnose(self, outcome: ProcessOutcome, req: DispatchRequest | None) -> SpokeResult:
        stderr, code = outcome.stderr, outcome.exit_code
        if code == 55 or "not running in a trusted directory" in stderr:
            return fail(self.name, "untrusted_folder", f"gemini refused an untrusted folder: {first_line(stderr)}")
        if code == 1 and ("Invalid values:" in stderr or "Unknown argument" in stderr or "Usage: gemini" in stderr):
            lines = [line.strip() for line in stderr.splitlines() if line.strip()]
            # yargs prints "Invalid values:" and the offending argument on the next line.
            shown = " ".join(lines[:2]) if lines[0].endswith(":") and len(lines) > 1 else lines[0]
            return fail(self.name, "bad_flag", f"gemini rejected its command line: {shown}")
        if code in EXIT_KINDS:
            kind, why = EXIT_KINDS[code]
            return fail(self.name, kind, f"gemini exited {code}: {why}. {last_line(stderr)}".strip())
        http = self._exit_kind(code)
        if http:
            return fail(self.name, http, f"gemini exited {code} (HTTP {code + 256 if code is not None else '?'}): {last_line(stderr)}")
        return fail(self.name, "other", garbled(self.name, outcome.stdout, code, stderr))
