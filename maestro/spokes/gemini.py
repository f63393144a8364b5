"""Gemini CLI as a spoke: ``gemini -p <prompt> -o json --skip-trust`` (HOSTS.md).

Tiers: headless Gemini without yolo offers the model only read-only tools. Write tiers
need an approval mode that enables the write tools, and a Policy Engine file (TOML
``[[rule]]`` entries, loaded with ``--policy``) denies what the tier forbids. Denied
global rules remove the tool from the model's tool list altogether.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from maestro import roster
from maestro.fsutil import atomic_write
from maestro.paths import user_home
from maestro.process import ProcessOutcome
from maestro.spokes.base import SignIn, Spoke, inline_system, read_json, safe_positional, tilde
from maestro.spokes.contract import DispatchRequest, SpokeResult, UsageTally, fail
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
from maestro.state.model import Usage

READ = ("read_file", "read_many_files", "list_directory", "glob", "grep_search")
# The shell tool and the two that follow the commands it started in the background.
SHELL = ("run_shell_command", "list_background_processes", "read_background_output")
WRITE = ("write_file", "replace")
WEB_SEARCH = ("google_web_search",)
# Every other built-in tool of Gemini CLI 0.61 (its *_TOOL_NAME constants, plus
# save_memory, which appends to ~/.gemini/GEMINI.md: outside the project). Headless it
# offers some of them in every tier (invoke_agent starts subagents, web_fetch reaches
# the network, enter_plan_mode, activate_skill, write_todos, update_topic): none is a
# task's job, so the policy takes them all away.
OTHERS = (
    "save_memory",
    "web_fetch",
    "invoke_agent",
    "activate_skill",
    "ask_user",
    "complete_task",
    "enter_plan_mode",
    "exit_plan_mode",
    "get_internal_docs",
    "list_mcp_resources",
    "read_mcp_resource",
    "take_snapshot",
    "update_topic",
    "write_todos",
    "tracker_add_dependency",
    "tracker_create_task",
    "tracker_get_task",
    "tracker_list_tasks",
    "tracker_update_task",
    "tracker_visualize",
)
TIER_TOOLS: dict[str, tuple[str, ...]] = {
    "read-only": READ,
    "read+shell": READ + SHELL,
    "read+write": READ + WRITE,
    "full": READ + WRITE + SHELL,
}
# approval mode (None: the CLI's default, which offers read-only tools only headless)
TIER_MODE: dict[str, str | None] = {
    "read-only": None,
    "read+shell": "yolo",
    "read+write": "auto_edit",
    "full": "yolo",
}

# Gemini retries a failed model call itself (general.maxAttempts, 10 by default, with
# backoff): a 429 or 5xx reaches Maestro as a timeout minutes later. The setting lives in
# settings files only (the system ones must be root-owned), so the spoke stops gemini at
# its first retry notice on stderr and reports that failure; Maestro's ladder decides.
#   "Attempt 1 failed with status 429. Retrying with backoff... _ApiError: {...}"
#   "Attempt 1 failed: Resource has been exhausted (e.g. check quota)." (a quota error
#   with a suggested delay; "Retrying after 5392ms..." follows on the next line)
#   "Attempt 1 failed. Retrying with backoff... Error: exception TypeError: fetch failed"
# With model "auto" the first call is the router's (a flash-lite model), retried the
# same way: its notice stops the spoke too, as the main call would meet the same API.
RETRY_NOTICE = re.compile(
    r"^Attempt \d+ failed(?: with status (?P<status>\d{3}))?(?P<rest>[.:].*)$"
)

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


# Gemini CLI 0.61's sign-in: ``security.auth.selectedType`` in its settings, else the first
# of these variables that is set (to that value, if one is named): its getAuthTypeFromEnv.
AUTH_FROM_ENV = (
    ("GOOGLE_GENAI_USE_GCA", "true", "oauth-personal"),
    ("GOOGLE_GENAI_USE_VERTEXAI", "true", "vertex-ai"),
    ("GOOGLE_GEMINI_BASE_URL", None, "gateway"),
    ("GEMINI_API_KEY", None, "gemini-api-key"),
)
# HOSTS.md section 5 (google-gemini/gemini-cli discussion #28017).
PERSONAL_ACCOUNTS = (
    "Gemini CLI stopped serving individual Google accounts (Google AI Pro/Ultra, free tier) on "
    "2026-06-18: API-key, Vertex AI and Gemini Code Assist (enterprise) users keep it, and "
    "individuals were moved to the Antigravity CLI (agy)"
)


def gemini_dir(env: Mapping[str, str]) -> Path:
    """Gemini CLI's own folder: ``~/.gemini`` (GEMINI_CLI_HOME replaces the home)."""
    return Path(env.get("GEMINI_CLI_HOME") or user_home(env)) / ".gemini"


def auth_type(env: Mapping[str, str]) -> str | None:
    """How Gemini CLI signs in, as its user settings and ``env`` choose."""
    security = read_json(gemini_dir(env) / "settings.json").get("security")
    auth = security.get("auth") if isinstance(security, dict) else None
    chosen = auth.get("selectedType") if isinstance(auth, dict) else None
    if isinstance(chosen, str) and chosen:
        return chosen
    for key, value, kind in AUTH_FROM_ENV:
        if env.get(key) and value in (None, env[key]):
            return kind
    return None


def denied_tools(tier: str, web_search: bool = False) -> tuple[str, ...]:
    """Gemini's built-in tools that ``tier`` (with web search or not) does not grant."""
    granted = set(TIER_TOOLS[tier]) | (set(WEB_SEARCH) if web_search else set())
    return tuple(t for t in READ + SHELL + WRITE + WEB_SEARCH + OTHERS if t not in granted)


def policy_toml(tier: str, web_search: bool = False) -> str:
    """The Policy Engine rules that take away the tools ``tier`` does not grant."""
    import tomli_w

    rule = {
        "toolName": list(denied_tools(tier, web_search)),
        "decision": "deny",
        "priority": 999,
        "denyMessage": f"Maestro dispatched this task with tool tier {tier}: this tool is not allowed.",
    }
    return (
        f"# Maestro spoke policy for tool tier {tier}. Written for one dispatch, loaded with --policy.\n"
        + tomli_w.dumps({"rule": [rule]})
    )


def _tokens_usage(tokens: dict[str, Any]) -> Usage:
    cached = as_int(tokens.get("cached"))
    fresh = (
        as_int(tokens["input"])
        if "input" in tokens
        else max(0, as_int(tokens.get("prompt")) - cached)
    )
    return Usage(
        input=fresh,
        output=as_int(tokens.get("candidates")) + as_int(tokens.get("thoughts")),
        cached=cached,
    )


def _stream_usage(stats: dict[str, Any]) -> Usage:
    cached = as_int(stats.get("cached"))
    fresh = (
        as_int(stats["input"])
        if "input" in stats
        else max(0, as_int(stats.get("input_tokens")) - cached)
    )
    return Usage(input=fresh, output=as_int(stats.get("output_tokens")), cached=cached)


class GeminiSpoke(Spoke):
    name = "gemini"
    executable = roster.CLIS[name].executable
    install_hint = roster.CLIS[name].install_hint

    def policy_path(self, req: DispatchRequest) -> Path:
        folder = req.scratch_dir or Path(tempfile.gettempdir())
        web = "-web" if req.web_search else ""
        return folder / f"gemini-policy-{req.tier.replace('+', '-')}{web}.toml"

    def prepare(self, req: DispatchRequest) -> None:
        # Read by the spoke that starts next; nothing to keep after a crash: no fsync.
        atomic_write(self.policy_path(req), policy_toml(req.tier, req.web_search), durable=False)

    def build_argv(self, req: DispatchRequest) -> list[str]:
        self.refuse_resume(req)
        # No flag appends to Gemini's system prompt (GEMINI_SYSTEM_MD replaces it), so
        # the system part travels in the prompt; no flag limits turns either.
        prompt = safe_positional(inline_system(req))
        argv = [
            self.executable or self.name,
            "-p",
            prompt,
            "-o",
            "stream-json" if req.abort_tokens else "json",
            "--skip-trust",
        ]
        if req.model:
            argv += ["-m", req.model]
        mode = TIER_MODE[req.tier]
        if mode:
            argv += ["--approval-mode", mode]
        for folder in req.shared_dirs:
            # The workspace its file tools may touch: the mailbox's folder besides the workdir.
            argv += ["--include-directories", str(folder)]
        return argv + ["--policy", str(self.policy_path(req))]

    def retry_notice(self, line: str) -> bool:
        return RETRY_NOTICE.match(line.strip()) is not None

    def sign_in(self, env: Mapping[str, str]) -> SignIn:
        kind = auth_type(env)
        settings = tilde(gemini_dir(env) / "settings.json", env)
        api_key = "use an API key: set GEMINI_API_KEY (Google AI Studio) and security.auth.selectedType gemini-api-key"
        if kind is None:
            return SignIn(
                False,
                f"no sign-in chosen (security.auth.selectedType in {settings}, or GEMINI_API_KEY, "
                "GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GENAI_USE_GCA): headless gemini exits 41",
                f"{api_key}, or configure Vertex AI",
            )
        if kind == "gemini-api-key":
            if env.get("GEMINI_API_KEY"):
                return SignIn(True, "an API key (GEMINI_API_KEY is set)")
            return SignIn(
                None,
                "an API key, but GEMINI_API_KEY is not in this environment (gemini may read a .env file)",
                "export GEMINI_API_KEY",
            )
        if kind == "vertex-ai":
            if env.get("GOOGLE_API_KEY") or (
                env.get("GOOGLE_CLOUD_PROJECT") and env.get("GOOGLE_CLOUD_LOCATION")
            ):
                return SignIn(True, "Vertex AI")
            return SignIn(
                False,
                "Vertex AI, without GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION or GOOGLE_API_KEY",
                "set GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION (or GOOGLE_API_KEY)",
            )
        if kind != "oauth-personal":
            return SignIn(None, f"sign-in {kind!r}, which only a call shows")
        login = gemini_dir(env) / "oauth_creds.json"
        if not login.is_file():
            return SignIn(
                False,
                f"Login with Google, but no {tilde(login, env)}",
                f"run `gemini` and sign in, or {api_key}",
            )
        project = env.get("GOOGLE_CLOUD_PROJECT") or env.get("GOOGLE_CLOUD_PROJECT_ID")
        if project:
            return SignIn(
                True, f"Login with Google for project {project} (a Gemini Code Assist licence)"
            )
        return SignIn(
            False,
            f"Login with Google with a personal account: {PERSONAL_ACCOUNTS}",
            f"{api_key}, use Vertex AI, or a Code Assist licence (GOOGLE_CLOUD_PROJECT); "
            "meanwhile plan gemini's tasks for claude or codex",
        )

    def stopped_retrying(self, outcome: ProcessOutcome, req: DispatchRequest | None) -> SpokeResult:
        """The first failed model call, read from gemini's retry notice."""
        notice = next(
            (m for m in map(RETRY_NOTICE.match, map(str.strip, outcome.stderr.splitlines())) if m),
            None,
        )
        status = int(notice["status"]) if notice and notice["status"] else None
        rest = notice["rest"].lstrip(".: ") if notice else ""
        detail = rest.split("Retrying with backoff...", 1)[-1].strip() or rest
        detail = detail.removeprefix("_ApiError:").strip()
        kind = (
            http_kind(status)
            or message_kind(detail)
            or ("rate_limit" if "Retrying after" in outcome.stderr else "other")
        )
        where = f"HTTP {status}" if status else kind.replace("_", " ")
        return fail(
            self.name,
            kind,
            f"gemini failed ({where}): {first_line(inner_message(detail)) or 'its model call failed'} "
            "(stopped at gemini's own first retry; Maestro's retry ladder decides)",
        )

    def watch(self, event: dict[str, Any], tally: UsageTally) -> None:
        if event.get("type") == "result" and isinstance(event.get("stats"), dict):
            tally.final(_stream_usage(event["stats"]))

    # -- reading --------------------------------------------------------------------------
    def read_result(
        self, outcome: ProcessOutcome, req: DispatchRequest | None
    ) -> SpokeResult | None:
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
        return self._success(
            str(data.get("response") or ""), data.get("session_id"), by_model, None
        )

    def _from_stream(
        self, events: list[dict[str, Any]], final: dict[str, Any], outcome: ProcessOutcome
    ) -> SpokeResult:
        session = next((e.get("session_id") for e in events if e.get("type") == "init"), None)
        if final.get("status") != "success":
            raw = final.get("error")
            error = raw if isinstance(raw, dict) else {"message": str(final.get("status"))}
            return self._error(error, outcome, session)
        text = "".join(
            str(e.get("content") or "")
            for e in events
            if e.get("type") == "message" and e.get("role") == "assistant"
        )
        stats = final.get("stats") or {}
        by_model = {
            m: _stream_usage(s)
            for m, s in (stats.get("models") or {}).items()
            if isinstance(s, dict)
        }
        return self._success(text, session, by_model, _stream_usage(stats))

    def _success(
        self, text: str, session: Any, by_model: dict[str | None, Usage], total: Usage | None
    ) -> SpokeResult:
        if total is None:
            total = Usage()
            for usage in by_model.values():
                total = total + usage
        result = SpokeResult(
            tool=self.name, text=text, success=True, usage=total, session_id=session
        )
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
        return fail(
            self.name,
            kind,
            f"gemini failed ({where}): {first_line(inner_message(message))}",
            session_id=session,
        )

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
            return fail(
                self.name,
                "untrusted_folder",
                f"gemini refused an untrusted folder: {first_line(stderr)}",
            )
        if code == 1 and (
            "Invalid values:" in stderr or "Unknown argument" in stderr or "Usage: gemini" in stderr
        ):
            lines = [line.strip() for line in stderr.splitlines() if line.strip()]
            # yargs prints "Invalid values:" and the offending argument on the next line.
            shown = " ".join(lines[:2]) if lines[0].endswith(":") and len(lines) > 1 else lines[0]
            return fail(self.name, "bad_flag", f"gemini rejected its command line: {shown}")
        if code in EXIT_KINDS:
            kind, why = EXIT_KINDS[code]
            return fail(
                self.name, kind, f"gemini exited {code}: {why}. {last_line(stderr)}".strip()
            )
        http = self._exit_kind(code)
        if http:
            return fail(
                self.name,
                http,
                f"gemini exited {code} (HTTP {code + 256 if code is not None else '?'}): {last_line(stderr)}",
            )
        return fail(self.name, "other", garbled(self.name, outcome.stdout, code, stderr))
