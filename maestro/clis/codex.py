"""Codex CLI: everything Maestro knows about it (HOSTS.md), in one module.

As a spoke: ``codex exec --json --skip-git-repo-check --sandbox ...`` (``CodexSpoke``).

Never ``--full-auto`` (removed, exit 2) and never ``-a`` (``codex exec`` rejects it): the
sandbox is the enforcement, and approval stays ``never`` in exec mode.

Project instructions: the spoke keeps loading AGENTS.md (no ``-c project_doc_max_bytes=0``),
as the Claude and Gemini spokes load CLAUDE.md and GEMINI.md. It carries the project's
conventions and build/test commands a worker needs; Maestro's own stub block in it cannot
make the spoke re-dispatch, because ``maestro run`` refuses to start under MAESTRO_SPOKE=1.

As a host (``CodexHost``): no custom commands; ``$maestro <verb>`` injects the ``maestro``
skill from ``.agents/skills`` or ``$CODEX_HOME/skills``; AGENTS.md; subagent roles in
``$CODEX_HOME/agents`` (a trusted project's ``.codex/agents``). Its command sandbox, and
the doctor check of a codex too old for skills.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from maestro import roster
from maestro.install import text
from maestro.install.checks import Check, Situation, version_tuple
from maestro.install.host import (
    DESCRIPTION,
    PLUGIN_NAME,
    Host,
    HubMode,
    Listed,
    RenderedFile,
    RenderOptions,
    Sandbox,
    has_ancestor,
    json_file,
    toml_string,
    yaml_scalar,
)
from maestro.install.sources import ROUTER_SKILL, SkillSource, load_commands, load_skill
from maestro.paths import user_home
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


def codex_home(env: Mapping[str, str]) -> Path:
    return Path(env.get("CODEX_HOME") or user_home(env) / ".codex").expanduser()


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
    # The API, ChatGPT's (a ChatGPT login), and where that login is refreshed.
    api_hosts = ("api.openai.com", "chatgpt.com", "auth.openai.com")
    endpoint_vars = ("OPENAI_BASE_URL",)
    env_names = ("OPENAI_*", "CODEX_*")

    # Its --json output names no model: a dispatch without one is priced at this, if any.
    names_its_model = False

    def configured_model(self, env: Mapping[str, str]) -> str | None:
        return configured_model(env)

    def endpoints(self, env: Mapping[str, str]) -> list[str]:
        """Besides OPENAI_BASE_URL, the base_url of the provider config.toml chooses."""
        settings = config(env)
        providers = settings.get("model_providers") or {}
        provider = (
            providers.get(settings.get("model_provider", "openai"))
            if isinstance(providers, dict)
            else None
        )
        url = provider.get("base_url") if isinstance(provider, dict) else None
        return [*super().endpoints(env), *([url] if isinstance(url, str) else [])]

    def own_env(self, env: Mapping[str, str]) -> tuple[str, ...]:
        # A model provider of its config.toml names the variable holding its key
        # (env_key) and those holding its headers (env_http_headers).
        names = []
        for provider in (config(env).get("model_providers") or {}).values():
            if isinstance(provider, dict):
                names.append(provider.get("env_key"))
                headers = provider.get("env_http_headers")
                names += list(headers.values()) if isinstance(headers, dict) else []
        return self.env_names + tuple(n for n in names if isinstance(n, str))

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

    config_names = ("config.toml", "AGENTS.md", "rules/")

    def state_dirs(self, env: Mapping[str, str]) -> list[Path]:
        return [codex_home(env)]

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
        ]
        # Inside Maestro's sandbox its own cannot start (no nested namespaces), and it
        # would make the worktree's git read-only: bypassed, its documented use for an
        # environment confined from outside; the tier's writes are Maestro's to allow.
        confined = req.sandbox is not None
        argv += (
            ["--dangerously-bypass-approvals-and-sandbox"]
            if confined
            else ["--sandbox", SANDBOX[req.tier]]
        )
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
        if SANDBOX[req.tier] == "workspace-write" and not confined:
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


class CodexHost(Host):
    name = "codex"
    instruction_file = "AGENTS.md"
    project_prefix = ".agents/"
    verb_template = "$maestro {verb}"
    arguments = "<arguments>"
    resets_path = True  # `exec_command` runs `bash -lc`: the login profile sets PATH (0.169)
    root_vars = "HOME or CODEX_HOME"

    def user_root(self, env: dict[str, str]) -> Path:
        return codex_home(env)

    def router(self, opts: RenderOptions) -> str:
        source = load_skill(ROUTER_SKILL)
        header = f"---\nname: {source.name}\ndescription: {yaml_scalar(source.description)}\n---\n"
        return header + text.pin_invocation(source.body, opts.invocation)

    def files(self, scope: str, opts: RenderOptions) -> list[RenderedFile]:
        folder = self.prefix(scope) + f"skills/{ROUTER_SKILL}/"
        files = [RenderedFile(folder + "SKILL.md", self.router(opts))]
        files += [
            RenderedFile(f"{folder}verbs/{c.verb}.md", self.body(c, opts)) for c in load_commands()
        ]
        return files + self.agents(".codex/agents/" if scope == "project" else "agents/")

    agent_suffix = ".toml"

    def agent_file(self, source: SkillSource) -> str:
        """A role for `spawn_agent` (`agent_type`). Codex 0.169 honours its `low` effort
        but runs it in the hub's own sandbox whatever it asks (docs/hosts.md)."""
        return (
            f"name = {toml_string(source.name)}\n"
            f"description = {toml_string(source.description)}\n"
            'sandbox_mode = "read-only"\n'
            'model_reasoning_effort = "low"\n'
            f"developer_instructions = {toml_string(source.body, multiline=True)}\n"
        )

    def expanded(self, verb: str, opts: RenderOptions) -> str:
        # `$maestro <verb>` injects the router; the model then reads the verb's file.
        return self.router(opts) + super().expanded(verb, opts)

    PLUGIN = "plugins/codex/"
    bundle_folders = (".agents/plugins",)
    # A plugin's skills are `<plugin>:<skill>`: one skill per verb reads `$maestro:plan`,
    # as in the other hosts. Explicit only: Codex lists none of them to its model.
    PLUGIN_VERBS = "$maestro:{verb}"
    EXPLICIT_ONLY = "policy:\n  allow_implicit_invocation: false\n"

    def bundle(self, opts: RenderOptions) -> list[RenderedFile]:
        """A marketplace at the root listing the plugin in plugins/codex:
        `codex plugin marketplace add <repository>`, then `codex plugin add maestro@maestro`."""
        marketplace = {
            "name": PLUGIN_NAME,
            "interface": {"displayName": "Maestro"},
            "plugins": [
                {
                    "name": PLUGIN_NAME,
                    "source": {"source": "local", "path": "./" + self.PLUGIN[:-1]},
                    "category": "Coding",
                }
            ],
        }
        plugin = {
            "name": PLUGIN_NAME,
            "version": opts.version,
            "description": DESCRIPTION,
            "skills": "./skills/",
        }
        files = [
            json_file(".agents/plugins/marketplace.json", marketplace),
            json_file(self.PLUGIN + ".codex-plugin/plugin.json", plugin),
        ]
        for source in load_commands():
            folder = f"{self.PLUGIN}skills/{source.verb}/"
            header = (
                f"---\nname: {source.verb}\ndescription: {yaml_scalar(source.description)}\n---\n"
            )
            body = self.body(source, opts, self.PLUGIN_VERBS)
            files.append(RenderedFile(folder + "SKILL.md", header + body))
            files.append(RenderedFile(folder + "agents/openai.yaml", self.EXPLICIT_ONLY))
        return files

    # `codex exec -s danger-full-access` (interactive: `codex --sandbox danger-full-access`)
    # runs commands in the machine's own namespaces, with network (HOSTS.md section 5).
    FULL_ACCESS = (
        "start Codex with `--sandbox danger-full-access` (`codex exec -s danger-full-access ...`, "
        'or `sandbox_mode = "danger-full-access"` in config.toml), then run `$maestro run` again.'
    )

    def sandbox(self, env: Mapping[str, str]) -> Sandbox | None:
        """Codex 0.169 runs each command of its default (read-only) and workspace-write
        modes in its own PID and network namespaces: a detached child dies with the
        command, and there is no network unless the config allows it. It marks them with
        CODEX_SANDBOX_NETWORK_DISABLED=1 (and CODEX_PERMISSION_PROFILE=:read-only); with
        network allowed only the missing `codex` process among our ancestors tells."""
        if not any(env.get(k) for k in CLI.sandbox_markers):
            return None
        profile = env.get("CODEX_PERMISSION_PROFILE", "")
        no_network = env.get("CODEX_SANDBOX_NETWORK_DISABLED") == "1"
        if not no_network and not profile and has_ancestor("codex"):
            return None  # danger-full-access: the machine's own namespaces
        return Sandbox(
            self.title,
            network=not no_network,
            keeps_detached=False,
            fix=self.FULL_ACCESS,
        )

    # An empty write_stdin poll returns within background_terminal_max_timeout (ms), or
    # when the command ends (Codex CLI 0.171): each poll is one turn of the hub's model.
    POLL_MS, HOUR_MS = 300_000, 3_600_000

    def hub_mode(self, env: Mapping[str, str], project: Path, run_file: str | None) -> HubMode:
        path = codex_home(env) / "config.toml"
        settings = config(env)
        mode = settings.get("sandbox_mode")
        if mode == "danger-full-access":
            works = f'{path} sets sandbox_mode = "danger-full-access": `$maestro run` works'
            poll_ms = settings.get("background_terminal_max_timeout")
            if not isinstance(poll_ms, int) or poll_ms <= 0:
                poll_ms = self.POLL_MS
            if poll_ms >= self.HOUR_MS:
                return HubMode(True, works + ".")
            return HubMode(
                True,
                f"{works}; a quiet run wakes its hub at each write_stdin poll, every "
                f"{poll_ms // 1000} s (background_terminal_max_timeout).",
                f"for one poll an hour: background_terminal_max_timeout = {self.HOUR_MS} in {path}.",
            )
        return HubMode(
            False,
            f"Codex's {mode or 'default (read-only)'} sandbox cannot run `$maestro run` (no writes "
            "or no network, and a detached engine dies with its command): Maestro refuses it.",
            'use `codex --sandbox danger-full-access` (`codex exec -s danger-full-access "$maestro run"`), '
            f'or set sandbox_mode = "danger-full-access" in {path}.',
        )

    def listed(self, opts: RenderOptions) -> list[Listed]:
        source = load_skill(ROUTER_SKILL)
        return [
            Listed(
                "skills",
                source.name,
                f"- {source.name}: {source.description} (file: r1/{source.name}/SKILL.md)",
            )
        ]


SKILLS_SINCE = (0, 117)  # older codex: custom prompts, --full-auto, no `$skill`


def _old_codex(s: Situation) -> Check | None:
    found = s.available.get("codex")
    version = version_tuple(found.version if found else None)
    if found is None or version is None or version[:2] >= SKILLS_SINCE:
        return None
    return Check(
        "pitfalls",
        "old codex",
        "fail",
        f"codex {found.version} predates 0.117: it still needs --full-auto (Maestro passes --sandbox) "
        "and has no skills, so `$maestro` does not work.",
        "upgrade: npm install -g @openai/codex@latest",
    )


# Codex reads files through shell commands, so on codex "no shell" means "no shell
# command that changes anything".
VOCABULARY = {
    "read": "read-only shell commands such as cat, ls, rg and git show",
    "write": "apply_patch",
    "shell": "shell commands",
    "web": "web_search",
    "no_shell": "run shell commands that change anything or start programs (builds, tests, installs); "
    "read-only commands for reading files are allowed",
}

CLI = roster.Cli(
    "codex",
    "Codex CLI",
    "Codex",
    executable="codex",
    install_hint="npm install -g @openai/codex",
    budget=(40_000, 45_000, 60_000),
    model_prefixes=("gpt", "o1", "o3", "o4", "codex"),
    route_rank={"code": 0, "test": 0, "review": 2, "research": 2},
    opinion_rank=1,
    vocabulary=VOCABULARY,
    # workspace-write grants the shell along with writes: read+write cannot exclude it
    # (codex offers exec_command in every sandbox; a real read+write spoke ran `touch`).
    unenforced_tiers={
        "read+write": "the shell cannot be forbidden: its workspace-write sandbox runs any command "
        "(writes confined to the workdir and /tmp); only the prompt asks it not to",
    },
    # Codex CLI 0.169, every mode (HOSTS.md section 5), and its sandbox's own markers.
    shell_marker=("CODEX_CI", "1"),
    # exec_command hands a command back after yield_time_ms (at most 30 s) and each
    # empty write_stdin poll waits up to background_terminal_max_timeout (300 s unless
    # the person raised it), returning when the command ends: a wait needs no limit of
    # its own, and costs one turn per poll however long it is.
    shell_injects=(
        "CODEX_CI",
        "CODEX_SESSION_ID",
        "CODEX_THREAD_ID",
        "CODEX_TOOL_CALL_ID",
        "GIT_PAGER",
        "CODEX_SANDBOX_NETWORK_DISABLED",
        "CODEX_PERMISSION_PROFILE",
    ),
    sandbox_markers=(
        "CODEX_THREAD_ID",
        "CODEX_SANDBOX_NETWORK_DISABLED",
        "CODEX_PERMISSION_PROFILE",
    ),
    spoke=CodexSpoke,
    host=CodexHost(),
    checks=(_old_codex,),
)
roster.register(CLI)
