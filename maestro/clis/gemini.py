"""Gemini CLI: everything Maestro knows about it (HOSTS.md), in one module (what it reads
from its own files is in ``geminifiles``).

As a spoke: ``gemini -p <prompt> -o json --skip-trust`` (``GeminiSpoke``). Tiers: headless Gemini without yolo offers the model only read-only tools. Write tiers
need an approval mode that enables the write tools, and a Policy Engine file (TOML
``[[rule]]`` entries, loaded with ``--policy``) denies what the tier forbids. Denied
global rules remove the tool from the model's tool list altogether.

As a host (``GeminiHost``): ``.gemini/commands/maestro/<verb>.toml`` is ``/maestro:<verb>``;
GEMINI.md; command descriptions are not listed to the model; ``.agents/skills`` are, and
so are the subagents of ``~/.gemini/agents`` (a project's ``.gemini/agents`` once the user
acknowledged them). Doctor: a project Gemini does not trust.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from maestro import roster
from maestro.clis import geminifiles
from maestro.errors import InstallError
from maestro.fsutil import atomic_write
from maestro.install.checks import Check, Situation
from maestro.install.host import (
    DESCRIPTION,
    PLUGIN_NAME,
    Host,
    HubMode,
    Listed,
    RenderedFile,
    RenderOptions,
    json_file,
    toml_string,
    yaml_scalar,
)
from maestro.install.invocation import resolve
from maestro.install.sources import RECON_AGENT, CommandSource, SkillSource, load_agent
from maestro.paths import user_home
from maestro.process import ProcessOutcome
from maestro.spokes.base import (
    SignIn,
    Spoke,
    google_credentials,
    inline_system,
    read_json,
    safe_positional,
)
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
    config_names = (
        "settings.json",
        "GEMINI.md",
        "commands/",
        "extensions/",
        "policies/",
        "agents/",
        "skills/",
    )
    # The Gemini API, Code Assist (a Google login) and its token refresh, Vertex AI's
    # global endpoint (a regional one goes in sandbox_hosts).
    api_hosts = (
        "generativelanguage.googleapis.com",
        "cloudcode-pa.googleapis.com",
        "oauth2.googleapis.com",
        "aiplatform.googleapis.com",
    )
    endpoint_vars = ("GOOGLE_GEMINI_BASE_URL", "GOOGLE_VERTEX_BASE_URL", "CODE_ASSIST_ENDPOINT")
    # Its sign-in (a Gemini API key, Vertex AI, Code Assist), base URLs and settings.
    env_names = (
        "GEMINI_*",
        "GOOGLE_API_KEY",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GOOGLE_CLOUD_*",
        "GOOGLE_GENAI_*",
        "GOOGLE_GEMINI_*",
        "GOOGLE_VERTEX_*",
        "CODE_ASSIST_ENDPOINT",
        "OTLP_GOOGLE_CLOUD_PROJECT",
        "CLOUDSDK_CONFIG",
    )

    def state_dirs(self, env: Mapping[str, str]) -> list[Path]:
        return [user_home(env) / ".gemini"]

    def state_files(self, env: Mapping[str, str]) -> list[Path]:
        # Vertex AI's credentials (in ~/.config/gcloud by default, which sandbox_hide hides).
        if env.get("GOOGLE_APPLICATION_CREDENTIALS") or env.get(
            "GOOGLE_GENAI_USE_VERTEXAI", ""
        ).lower() in ("true", "1"):
            return google_credentials(env)
        return []

    def policy_path(self, req: DispatchRequest) -> Path:
        folder = req.scratch_dir or Path(tempfile.gettempdir())
        web = "-web" if req.web_search else ""
        return folder / f"gemini-policy-{req.tier.replace('+', '-')}{web}.toml"

    def prepare(self, req: DispatchRequest) -> None:
        # Read by the spoke that starts next; nothing to keep after a crash: no fsync.
        atomic_write(
            self.policy_path(req), geminifiles.policy_toml(req.tier, req.web_search), durable=False
        )

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
            "stream-json" if req.abort_tokens or req.stream else "json",
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
        return geminifiles.sign_in(env)

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
            self.price(result, by_model)
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


class GeminiHost(Host):
    name = "gemini"
    instruction_file = "GEMINI.md"
    project_prefix = ".gemini/"
    arguments = "{{args}}"
    lists_skills_in = ".agents/skills/"
    command_suffix = ".toml"

    def user_root(self, env: dict[str, str]) -> Path:
        return user_home(env) / ".gemini"

    def command_file(self, source: CommandSource, opts: RenderOptions) -> str:
        prompt = self.body(source, opts)
        for injection in ("!{", "@{"):
            if injection in prompt:
                # Gemini would run or inline these; a command must never do so unasked.
                raise InstallError(
                    f"commands/{source.verb}.md contains {injection!r}, which Gemini CLI treats as an injection.",
                    "reword the command source.",
                )
        return (
            f"description = {toml_string(source.description)}\n"
            f"prompt = {toml_string(prompt, multiline=True)}\n"
        )

    # Settings that take the shell tool away from the model altogether.
    EXCLUDES = (("tools", "exclude"), ("excludeTools",))

    # Headless default approval allows `invoke_agent` and these read tools (verified with
    # 0.61); `flash` is the host's alias for its cheaper model.
    AGENT_SETTINGS = (
        "kind: local\n"
        "tools: [read_file, list_directory, glob, grep_search]\n"
        "model: flash\n"
        "max_turns: 15\n"
        "timeout_mins: 5\n"
    )

    def agent_file(self, source: SkillSource) -> str:
        return (
            f"---\nname: {source.name}\ndescription: {yaml_scalar(source.description)}\n"
            f"{self.AGENT_SETTINGS}---\n{source.body}"
        )

    def listed(self, opts: RenderOptions) -> list[Listed]:
        source = load_agent(RECON_AGENT)  # in the system prompt's list of sub-agents
        return [Listed("agents", source.name, f"- {source.name} -> {source.description}")]

    def files(self, scope: str, opts: RenderOptions) -> list[RenderedFile]:
        files = super().files(scope, opts) + self.agents(self.prefix(scope) + "agents/")
        if scope == "user":
            files.append(
                RenderedFile(geminifiles.HUB_POLICY, geminifiles.hub_policy(opts.invocation))
            )
        return files

    def hub_mode(self, env: Mapping[str, str], project: Path, run_file: str | None) -> HubMode:
        for path in _settings_files(env, project):
            data = read_json(path)
            for keys in self.EXCLUDES:
                value = _setting(data, keys)
                if isinstance(value, list) and any(
                    str(v).startswith("run_shell_command") for v in value
                ):
                    return HubMode(
                        False,
                        f"{path} excludes run_shell_command: the model cannot run `maestro`.",
                        f"remove run_shell_command from {'.'.join(keys)} in {path}.",
                    )
        if (user_home(env) / ".gemini" / geminifiles.HUB_POLICY).is_file():
            return HubMode(
                True,
                'interactive and headless (`gemini -p "/maestro:run"`): the user policy '
                f"~/.gemini/{geminifiles.HUB_POLICY} allows Maestro's commands.",
            )
        return HubMode(
            True,
            'interactive: one "Allow for this session" approval; headless: '
            f'`gemini -p "/maestro:run" --allowed-tools "run_shell_command({resolve()})"` '
            "(or `-y`), or `maestro install --host gemini --scope user`, whose policy allows "
            "Maestro's commands: headless default offers the model no shell tool.",
        )

    # Gemini CLI 0.61's shell tool stops a command silent for tools.shell.inactivityTimeout
    # seconds (0: never), 300 unless set.
    SILENCE_S = 300.0

    def shell_silence_s(self, env: Mapping[str, str], project: Path) -> float | None:
        limit: Any = self.SILENCE_S
        for path in _settings_files(env, project):  # the project's setting wins
            value = _setting(read_json(path), ("tools", "shell", "inactivityTimeout"))
            if isinstance(value, int | float) and not isinstance(value, bool):
                limit = float(value)
        return limit if limit > 0 else None

    # Not GEMINI.md: a Gemini session in Maestro's own repository would read that too.
    CONTEXT = "gemini-extension.md"
    bundle_folders = ("commands", "agents")

    def bundle(self, opts: RenderOptions) -> list[RenderedFile]:
        """The repository root is the extension: `gemini extensions install <repository>`.
        Gemini also loads an extension's skills/, agents/, policies/ and hooks/ folders,
        so the root has none."""
        manifest = {
            "name": PLUGIN_NAME,
            "version": opts.version,
            "description": DESCRIPTION,
            "contextFileName": self.CONTEXT,
        }
        return [
            json_file("gemini-extension.json", manifest),
            # The extension's own context file: wholly Maestro's, so no markers.
            RenderedFile(self.CONTEXT, self.stub(opts)),
            *self.commands("commands/maestro/", opts),
            *self.agents("agents/"),  # an extension's agents load without acknowledgement
        ]


def _settings_files(env: Mapping[str, str], project: Path) -> tuple[Path, Path]:
    """Gemini CLI's user settings and the project's, which override them."""
    return user_home(env) / ".gemini" / "settings.json", project / ".gemini" / "settings.json"


def _setting(data: Any, keys: tuple[str, ...]) -> Any:
    """The value at ``keys`` in a settings object ({} where a level is missing)."""
    for key in keys:
        data = data.get(key, {}) if isinstance(data, dict) else {}
    return data


def _untrusted(s: Situation) -> Check | None:
    if "gemini" not in s.available or geminifiles.trusted(s.project_root, s.env):
        return None
    return Check(
        "pitfalls",
        "gemini folder trust",
        "warn",
        f"Gemini CLI does not trust {s.project_root}: headless `gemini -p` exits 55 here and an "
        "interactive session asks first (Maestro's gemini spokes pass --skip-trust).",
        "run `gemini` in this folder once and trust it, add it to ~/.gemini/trustedFolders.json as "
        "TRUST_FOLDER, or export GEMINI_CLI_TRUST_WORKSPACE=true.",
    )


VOCABULARY = {
    "read": "read_file, glob and grep_search",
    "write": "write_file and replace",
    "shell": "run_shell_command",
    "web": "google_web_search",
    "no_shell": "run shell commands (run_shell_command)",
}

CLI = roster.Cli(
    "gemini",
    "Gemini CLI",
    "Gemini",
    executable="gemini",
    install_hint="npm install -g @google/gemini-cli",
    budget=(30_000, 35_000, 50_000),
    model_prefixes=("gemini",),
    route_rank={"code": 2, "test": 2, "review": 0, "research": 0},
    opinion_rank=0,
    reads_persona_model=True,
    vocabulary=VOCABULARY,
    # read+shell needs the shell, and a shell command can write files.
    unenforced_tiers={
        "read+shell": "writes cannot be forbidden: a run_shell_command call can write files; only the prompt asks it not to",
    },
    # Gemini CLI 0.61's shell execution service (besides its git configuration, which
    # maestro.git drops for every caller).
    trust_hint="or set GEMINI_CLI_TRUST_WORKSPACE=true",
    shell_marker=("GEMINI_CLI", "1"),
    # Its shell tool stops a command silent for a while (GeminiHost.shell_silence_s) and
    # has no other limit: a wait that says a line now and then may block for as long as
    # the run goes without needing the hub.
    shell_injects=(
        "GEMINI_CLI",
        "PAGER",
        "GIT_PAGER",
        "TERM",
        "GIT_TERMINAL_PROMPT",
        "GIT_ASKPASS",
        "SSH_ASKPASS",
        "GH_PROMPT_DISABLED",
        "GCM_INTERACTIVE",
        "DISPLAY",
        "DBUS_SESSION_BUS_ADDRESS",
    ),
    spoke=GeminiSpoke,
    host=GeminiHost(),
    checks=(_untrusted,),
)
roster.register(CLI)
