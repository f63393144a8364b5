"""Claude Code: everything Maestro knows about it (HOSTS.md), in one module.

- As a spoke: ``claude -p <prompt> --output-format json`` (``ClaudeSpoke``); a session to
  resume has its transcript moved where claude looks (``claudestore``).
- As a host: ``.claude/commands/maestro/<verb>.md`` is ``/maestro:<verb>``; CLAUDE.md;
  HTML comments in CLAUDE.md are not shown to the model; a command's description is
  listed to the model every session unless ``disable-model-invocation`` is set
  (``ClaudeHost``).
- Doctor: bypassPermissions as root, and a shell inside Claude Code.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from maestro import roster
from maestro.clis import claudestore
from maestro.install.checks import Check, Situation
from maestro.install.host import (
    DESCRIPTION,
    PLUGIN_NAME,
    Host,
    HubMode,
    RenderedFile,
    RenderOptions,
    json_file,
    yaml_scalar,
)
from maestro.install.invocation import resolve
from maestro.install.sources import CommandSource
from maestro.paths import user_home
from maestro.process import ProcessOutcome
from maestro.spokes.base import (
    Runner,
    SignIn,
    Spoke,
    google_credentials,
    read_json,
    safe_positional,
    tilde,
)
from maestro.spokes.contract import DispatchRequest, SpokeResult, UsageTally, fail
from maestro.spokes.jsonout import (
    as_int,
    first_line,
    garbled,
    http_kind,
    json_events,
    last_line,
    load_json_object,
    message_kind,
)
from maestro.state.model import Usage

READ = ("Read", "Grep", "Glob")
SHELL = ("Bash",)
WRITE = ("Edit", "Write", "NotebookEdit")
WEB_SEARCH = ("WebSearch",)

# allowed, disallowed, accept edits. Never bypassPermissions: it exits 1 as root.
# ``--tools`` offers the model exactly the allowed ones: without it Claude Code 2.1
# also offers Agent, WebFetch, WebSearch, Skill, SendMessage, EnterWorktree, Cron* and
# Task* in every tier (--allowedTools only pre-approves, --disallowedTools only names).
CLAUDE_TIERS: dict[str, tuple[tuple[str, ...], tuple[str, ...], bool]] = {
    "read-only": (READ, SHELL + WRITE, False),
    "read+shell": (READ + SHELL, WRITE, False),
    "read+write": (READ + WRITE, SHELL, True),
    "full": (READ + WRITE + SHELL, (), True),
}
# Claude Code retries a 429 or 5xx itself, 10 times with backoff by default: minutes
# before Maestro hears of it. A spoke gets no retries of its own; Maestro's ladder decides.
SPOKE_ENV = {"CLAUDE_CODE_MAX_RETRIES": "0"}

# Claude Code 2.1 signs in with a key or token in the environment, a cloud provider, or
# a login kept in .credentials.json (the Keychain on macOS).
SIGN_IN_KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
CLOUDS = {
    "CLAUDE_CODE_USE_BEDROCK": "Amazon Bedrock",
    "CLAUDE_CODE_USE_VERTEX": "Google Vertex AI",
    "CLAUDE_CODE_USE_FOUNDRY": "Microsoft Foundry",
}
# What each cloud's sign-in reads besides ANTHROPIC_* and CLAUDE_*.
CLOUD_ENV = {
    "CLAUDE_CODE_USE_BEDROCK": ("AWS_*",),
    "CLAUDE_CODE_USE_VERTEX": (
        "CLOUD_ML_REGION",
        "VERTEX_REGION_*",
        "GOOGLE_*",
        "GCLOUD_*",
        "CLOUDSDK_CONFIG",
    ),
    "CLAUDE_CODE_USE_FOUNDRY": ("AZURE_*",),
}

_BAD_FLAG = (
    "error: option",
    "unknown option",
    "error: unknown",
    "requires --verbose",
    "cannot be used with root",
    "error: missing required argument",
    "is invalid. allowed choices",
)


def claude_usage(usage: dict[str, Any] | None) -> Usage:
    usage = usage or {}
    return Usage(
        input=as_int(usage.get("input_tokens")) + as_int(usage.get("cache_creation_input_tokens")),
        output=as_int(usage.get("output_tokens")),
        cached=as_int(usage.get("cache_read_input_tokens")),
    )


class ClaudeSpoke(Spoke):
    name = "claude"
    supports_resume = True
    config_names = (
        "settings.json",
        "settings.local.json",
        "CLAUDE.md",
        "commands/",
        "agents/",
        "skills/",
        "hooks/",
        "plugins/",
    )
    # The API, and where a login's token is refreshed. Bedrock, Vertex and Foundry are
    # reached at their base URL when one is set, else listed in sandbox_hosts.
    api_hosts = ("api.anthropic.com", "console.anthropic.com", "platform.claude.com")
    endpoint_vars = (
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_BEDROCK_BASE_URL",
        "ANTHROPIC_VERTEX_BASE_URL",
        "ANTHROPIC_FOUNDRY_BASE_URL",
    )
    # Its sign-in, base URLs and settings (its documented environment variables).
    env_names = (
        "ANTHROPIC_*",
        "CLAUDE_*",
        "DISABLE_*",
        "IS_SANDBOX",
        "MAX_THINKING_TOKENS",
        "MAX_MCP_OUTPUT_TOKENS",
        "MCP_TIMEOUT",
        "MCP_TOOL_TIMEOUT",
        "BASH_DEFAULT_TIMEOUT_MS",
        "BASH_MAX_TIMEOUT_MS",
        "BASH_MAX_OUTPUT_LENGTH",
        "USE_BUILTIN_RIPGREP",
    )

    def own_env(self, env: Mapping[str, str]) -> tuple[str, ...]:
        # Signed in through a cloud, it reads that cloud's credentials and region.
        return self.env_names + tuple(
            name for switch, names in CLOUD_ENV.items() if env.get(switch) for name in names
        )

    def state_dirs(self, env: Mapping[str, str]) -> list[Path]:
        mine = env.get("CLAUDE_CONFIG_DIR")
        return [Path(mine) if mine else user_home(env) / ".claude"]

    def state_files(self, env: Mapping[str, str]) -> list[Path]:
        # Its MCP servers and per-project settings: a spoke's writes to it fail, silently.
        files = [] if env.get("CLAUDE_CONFIG_DIR") else [user_home(env) / ".claude.json"]
        # Signed in through a cloud: that cloud's login (which sandbox_hide hides).
        if env.get("CLAUDE_CODE_USE_VERTEX"):
            files += google_credentials(env)
        if env.get("CLAUDE_CODE_USE_BEDROCK"):
            aws = user_home(env) / ".aws"
            files += [
                Path(env.get("AWS_SHARED_CREDENTIALS_FILE") or aws / "credentials"),
                Path(env.get("AWS_CONFIG_FILE") or aws / "config"),
                aws / "sso" / "cache",
            ]
        return files

    def config(self, env: Mapping[str, str]) -> tuple[str, ...]:
        # CLAUDE_CONFIG_DIR moves .claude.json into the (writable) folder: read-only there.
        return (
            (*self.config_names, ".claude.json")
            if env.get("CLAUDE_CONFIG_DIR")
            else self.config_names
        )

    def build_argv(self, req: DispatchRequest) -> list[str]:
        argv = [self.executable or self.name, "-p", safe_positional(req.prompt)]
        # stream-json lets Maestro read usage while the session runs (budget abort) and
        # keep its lines as they come (the board's transcripts).
        argv += (
            ["--output-format", "stream-json", "--verbose"]
            if req.abort_tokens or req.stream
            else ["--output-format", "json"]
        )
        if req.model:
            argv += ["--model", req.model]
        if req.max_turns:
            argv += ["--max-turns", str(req.max_turns)]
        if req.system_prompt:
            argv += ["--append-system-prompt", req.system_prompt]
        if req.resume_session:
            argv += ["--resume", req.resume_session]
        elif not req.keep_session:
            argv += ["--no-session-persistence"]
        allowed, disallowed, accept_edits = CLAUDE_TIERS[req.tier]
        if req.web_search:
            allowed += WEB_SEARCH
        argv += ["--tools", ",".join(allowed), "--allowedTools", ",".join(allowed)]
        if disallowed:
            argv += ["--disallowedTools", ",".join(disallowed)]
        if accept_edits:
            argv += ["--permission-mode", "acceptEdits"]
        return argv

    def cannot_resume(self, session: str, env: Mapping[str, str]) -> str | None:
        return claudestore.reach(env, session)

    def sign_in(self, env: Mapping[str, str]) -> SignIn:
        for key in SIGN_IN_KEYS:
            if env.get(key):
                return SignIn(True, f"{key} is set")
        for key, cloud in CLOUDS.items():
            if env.get(key, "0").lower() not in ("", "0", "false"):
                return SignIn(None, f"it uses {cloud} ({key}), whose credentials only a call shows")
        mine = env.get("CLAUDE_CONFIG_DIR")
        folder = Path(mine) if mine else user_home(env) / ".claude"
        login = folder / ".credentials.json"
        if login.is_file():
            return SignIn(True, f"{tilde(login, env)} holds its login")
        if read_json(folder / "settings.json").get("apiKeyHelper"):
            return SignIn(True, f"{tilde(folder / 'settings.json', env)} names an apiKeyHelper")
        config = folder / ".claude.json" if mine else user_home(env) / ".claude.json"
        if read_json(config).get("primaryApiKey"):
            return SignIn(True, f"{tilde(config, env)} holds an API key")
        if sys.platform == "darwin":
            return SignIn(
                None, "on macOS its login is kept in the Keychain", "`claude auth status` tells"
            )
        return SignIn(
            False,
            f"no ANTHROPIC_API_KEY and no {tilde(login, env)}",
            "run `claude` and sign in with /login, or set ANTHROPIC_API_KEY",
        )

    def execute(
        self,
        req: DispatchRequest,
        env: dict[str, str],
        runner: Runner,
        on_start: Callable[[int], None] | None,
    ) -> SpokeResult:
        """A session to resume has its transcript put where claude looks from ``req.cwd``
        first (see ``claudestore``). One that cannot be, or that claude still does not
        find (it answers before any model call), is not resumed: the dispatch starts
        afresh, and its result says why."""
        session = req.resume_session
        if not session:
            return super().execute(req, env, runner, on_start)
        why = claudestore.reach(env, session, req.cwd)
        if why is None:
            result = super().execute(req, env, runner, on_start)
            if result.success or claudestore.NOT_FOUND not in result.stderr:
                return result
            why = f"claude found no conversation {session} from {req.cwd}"
        result = super().execute(replace(req, resume_session=None), env, runner, on_start)
        result.not_resumed = why
        return result

    def spoke_env(
        self, req: DispatchRequest, base_env: dict[str, str] | None = None
    ) -> dict[str, str]:
        env = super().spoke_env(req, base_env)
        env.update({k: v for k, v in SPOKE_ENV.items() if k not in req.env_extra})
        return env

    def watch(self, event: dict[str, Any], tally: UsageTally) -> None:
        if event.get("type") == "assistant":
            message = event.get("message") or {}
            # One API message arrives as several events, each repeating its usage so far.
            tally.set(
                str(message.get("id") or len(tally.parts)), claude_usage(message.get("usage"))
            )
        elif event.get("type") == "result":
            tally.final(claude_usage(event.get("usage")))

    def _result_object(self, stdout: str) -> dict[str, Any] | None:
        whole = load_json_object(stdout)
        if whole is not None and whole.get("type") == "result":
            return whole
        for event in reversed(json_events(stdout)):
            if event.get("type") == "result":
                return dict(event)
        return None

    def read_result(
        self, outcome: ProcessOutcome, req: DispatchRequest | None
    ) -> SpokeResult | None:
        data = self._result_object(outcome.stdout)
        if data is None:
            return None
        raw = data.get("result")
        text = raw if isinstance(raw, str) else ""
        usage = claude_usage(data.get("usage"))
        models = [m for m in (data.get("modelUsage") or {}) if isinstance(m, str)]
        cost = data.get("total_cost_usd")
        result = SpokeResult(
            tool=self.name,
            text=text,
            usage=usage,
            cost=float(cost)
            if isinstance(cost, (int, float)) and not isinstance(cost, bool)
            else None,
            session_id=data.get("session_id"),
            model=",".join(models) or None,
        )
        turns = as_int(data.get("num_turns"))
        if not isinstance(data.get("is_error"), bool):
            # Without is_error a result cannot be told from an error: say so, rather than
            # guess a diagnosis from the text.
            found = (
                "no is_error field"
                if "is_error" not in data
                else f"is_error={data.get('is_error')!r}"
            )
            result.error_kind = "other"
            result.error = (
                f"claude's JSON result could not be read: {found} (keys: {', '.join(sorted(data)[:12])}); "
                "this claude may print a format Maestro does not know: check its version with `maestro doctor`."
            )
            return result
        if data.get("is_error") is False and turns > 0:
            result.success = True
            return result
        result.error_kind, result.error = self._classify(data, text, turns)
        return result

    def _classify(self, data: dict[str, Any], text: str, turns: int) -> tuple[str, str]:
        subtype = str(data.get("subtype") or "")
        errors = "; ".join(str(e) for e in data.get("errors") or [])
        if subtype == "error_max_turns" or data.get("terminal_reason") == "max_turns":
            return (
                "turn_limit",
                f"claude stopped at its turn limit after {turns} turns: {errors or 'no result'}.",
            )
        status = data.get("api_error_status")
        detail = first_line(text) or errors or subtype
        if isinstance(status, int):
            kind = http_kind(status) or "other"
            return kind, f"claude's API call failed with HTTP {status}: {detail}"
        if data.get("is_error") is False and turns == 0:
            # An unknown slash command ends at once, exit 0, with no turn taken.
            return "other", f"claude ran no turn: {detail or 'empty result'}"
        return message_kind(
            f"{text} {errors}"
        ) or "other", f"claude reported an error ({subtype or 'is_error'}): {detail}"

    def diagnose(self, outcome: ProcessOutcome, req: DispatchRequest | None) -> SpokeResult:
        stderr = outcome.stderr
        lowered = stderr.lower()
        if any(marker in lowered for marker in _BAD_FLAG):
            return fail(
                self.name, "bad_flag", f"claude rejected its command line: {first_line(stderr)}"
            )
        kind = message_kind(last_line(stderr)) if stderr.strip() else None
        if kind in ("auth", "network", "rate_limit", "server"):
            return fail(self.name, kind, f"claude failed before answering: {last_line(stderr)}")
        return fail(
            self.name, "other", garbled(self.name, outcome.stdout, outcome.exit_code, stderr)
        )


class ClaudeHost(Host):
    name = "claude"
    instruction_file = "CLAUDE.md"
    project_prefix = ".claude/"
    # The model never sees HTML comments in CLAUDE.md (verified with 2.1.197), so the
    # block's markers cost nothing there.
    strips_comments = True

    def user_root(self, env: dict[str, str]) -> Path:
        return user_home(env) / ".claude"

    def command_file(self, source: CommandSource, opts: RenderOptions) -> str:
        lines = ["---", f"description: {yaml_scalar(source.description)}"]
        if source.argument_hint:
            lines.append(f"argument-hint: {yaml_scalar(source.argument_hint)}")
        # Pre-approve Maestro's own CLI so a run's wait loop does not ask every time: as
        # the file names it, and as a model may type it anyway (a bare `maestro`).
        rules = dict.fromkeys([f"Bash({opts.invocation}:*)", "Bash(maestro:*)"])
        lines.append(f"allowed-tools: {yaml_scalar(', '.join(rules))}")
        # Not listed to the model every session (it would cost each description's
        # tokens); the user invokes the command, the stub tells the model it exists.
        lines.append("disable-model-invocation: true")
        return "\n".join([*lines, "---", ""]) + self.body(source, opts)

    def hub_mode(self, env: Mapping[str, str], project: Path, run_file: str | None) -> HubMode:
        if run_file is not None and "Bash(maestro:*)" not in run_file:
            return HubMode(
                False,
                "the installed commands pre-approve only the path they name: a model typing a bare "
                "`maestro` is denied headless and asked interactive.",
                "run `maestro install --host claude` again (same scope) to pre-approve both.",
            )
        return HubMode(
            True,
            "default mode, interactive and headless: the command files pre-approve Maestro's "
            "path and a bare `maestro` until the hub's turn ends; once a run wakes it from the "
            "background (a decision, a worker's question) headless refuses Maestro's calls, so "
            f'headless use `claude -p "/maestro:run" --allowedTools "Bash({resolve()}:*)"`.',
        )

    PLUGIN = "plugins/claude/"
    bundle_folders = (".claude-plugin",)
    # Claude Code puts a plugin's bin/ on its Bash tool's PATH, so the commands' bare
    # `maestro` runs this, which runs the Maestro installed for the user. It skips any
    # `maestro` holding its marker (itself, another copy of the plugin).
    BIN = """\
#!/bin/sh
# maestro-plugin-shim: runs the Maestro installed for this user (on PATH or in
# ~/.local/bin). Generated by maestro/install/bundle.py.
set -f
IFS=:
for dir in $PATH "$HOME/.local/bin"; do
    [ -n "$dir" ] && [ -f "$dir/maestro" ] && [ -x "$dir/maestro" ] || continue
    grep -q maestro-plugin-shim "$dir/maestro" 2>/dev/null && continue
    exec "$dir/maestro" "$@"
done
echo "maestro: Maestro is not installed for this user. Fix: run installers/install.sh from its repository (README, Set-up), then try again." >&2
exit 127
"""

    def bundle(self, opts: RenderOptions) -> list[RenderedFile]:
        """A marketplace at the root listing the plugin in plugins/claude:
        `claude plugin marketplace add <repository>`, then
        `claude plugin install maestro@maestro`."""
        marketplace = {
            "name": PLUGIN_NAME,
            "owner": {"name": "Maestro"},
            "plugins": [
                {"name": PLUGIN_NAME, "source": "./" + self.PLUGIN[:-1], "description": DESCRIPTION}
            ],
        }
        plugin = {"name": PLUGIN_NAME, "version": opts.version, "description": DESCRIPTION}
        return [
            json_file(".claude-plugin/marketplace.json", marketplace),
            json_file(self.PLUGIN + ".claude-plugin/plugin.json", plugin),
            *self.commands(self.PLUGIN + "commands/", opts),
            RenderedFile(self.PLUGIN + "bin/maestro", self.BIN, executable=True),
        ]


def _bypass_as_root(s: Situation) -> Check | None:
    if s.euid != 0 or s.env.get("IS_SANDBOX") == "1":
        return None
    files = [
        user_home(s.env) / ".claude" / "settings.json",
        s.project_root / ".claude" / "settings.json",
        s.project_root / ".claude" / "settings.local.json",
    ]
    for path in files:
        mode = read_json(path).get("permissions", {}).get("defaultMode")
        if mode == "bypassPermissions":
            return Check(
                "pitfalls",
                "claude as root",
                "fail",
                f"running as root with permissions.defaultMode bypassPermissions ({path}): Claude Code "
                "refuses bypassPermissions as root and exits 1.",
                "set defaultMode to acceptEdits (Maestro's claude spokes use acceptEdits with "
                "--allowedTools), run as a normal user, or set IS_SANDBOX=1 in a throwaway container.",
            )
    return None


def _inside_claude(s: Situation) -> Check | None:
    if not any(s.env.get(key) for key in CLI.nested_vars):
        return None
    return Check(
        "pitfalls",
        "CLAUDECODE set",
        "warn",
        "this shell runs inside Claude Code (CLAUDECODE / CLAUDE_CODE_ENTRYPOINT set): a `claude` "
        "started from here refuses or hangs. Maestro drops both for its spokes.",
        "for a claude you start by hand: env -u CLAUDECODE -u CLAUDE_CODE_ENTRYPOINT claude ...",
    )


# What each ability is called here, for the protocol texts.
VOCABULARY = {
    "read": "Read, Glob and Grep",
    "write": "Write and Edit",
    "shell": "Bash",
    "web": "WebSearch",
    "no_shell": "run shell commands (Bash)",
}

CLI = roster.Cli(
    "claude",
    "Claude Code",
    "Claude",
    executable="claude",
    install_hint="npm install -g @anthropic-ai/claude-code",
    budget=(55_000, 65_000, 80_000),
    reports_cost=True,  # total_cost_usd
    model_prefixes=("claude", "sonnet", "opus", "haiku"),
    route_rank={"code": 1, "test": 1, "review": 1, "research": 1},
    opinion_rank=2,
    vocabulary=VOCABULARY,
    # read+shell allows Bash, and Bash can write files: the flags cannot stop that.
    unenforced_tiers={
        "read+shell": "writes cannot be forbidden: a Bash command can write files; only the prompt asks it not to",
    },
    shell_marker=("CLAUDECODE", "1"),
    # HOSTS.md, "Nested Claude".
    nested_vars=("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT"),
    # A Bash command run in the background (`run_in_background`) may run for its
    # `timeout`, up to 7200000 ms, and its end wakes the model (a foreground one stops
    # at 600000 ms): the run command asks for both.
    hub_wait_s=7140,
    spoke=ClaudeSpoke,
    host=ClaudeHost(),
    checks=(_bypass_as_root, _inside_claude),
)
roster.register(CLI)
