"""One class per host CLI: where its files go and how each canonical source looks there.

HOSTS.md section 3 is the source of these facts (verified against the real CLIs):

- Claude Code: ``.claude/commands/maestro/<verb>.md`` is ``/maestro:<verb>``; CLAUDE.md;
  HTML comments in CLAUDE.md are not shown to the model; a command's description is
  listed to the model every session unless ``disable-model-invocation`` is set.
- Gemini CLI: ``.gemini/commands/maestro/<verb>.toml`` is ``/maestro:<verb>``; GEMINI.md;
  command descriptions are not listed to the model; ``.agents/skills`` are, and so are
  the subagents of ``~/.gemini/agents`` (a project's ``.gemini/agents`` once the user
  acknowledged them).
- Codex CLI: no custom commands; ``$maestro <verb>`` injects the ``maestro`` skill from
  ``.agents/skills`` or ``$CODEX_HOME/skills``; AGENTS.md; subagent roles in
  ``$CODEX_HOME/agents`` (a trusted project's ``.codex/agents``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from maestro import __version__, roster
from maestro.errors import InstallError
from maestro.install import text
from maestro.install.sources import (
    RECON_AGENT,
    ROUTER_SKILL,
    VERBS,
    CommandSource,
    SkillSource,
    load_agent,
    load_commands,
    load_skill,
)
from maestro.paths import codex_home, user_home
from maestro.pids import has_proc, proc_stat

SCOPES = ("project", "user")
PLUGIN_NAME = "maestro"  # the plugin, the extension, and the marketplace that lists them
DESCRIPTION = "Hub-and-spoke orchestration of Claude Code, Gemini CLI and Codex CLI."


@dataclass(frozen=True)
class RenderOptions:
    invocation: str  # shell words that run this Maestro (see invocation.resolve)
    state_dir: str = ".ai"
    version: str = __version__


@dataclass(frozen=True)
class RenderedFile:
    path: str  # POSIX path relative to the install root
    content: str
    executable: bool = False


@dataclass(frozen=True)
class Listed:
    """Something a host lists to its model in every session."""

    kind: str  # commands | skills | agents
    name: str
    text: str  # what the model reads, e.g. "- maestro:plan: Plan a goal ..."


def _yaml_scalar(value: str) -> str:
    import yaml

    dumped: str = yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=1 << 20)
    return dumped.removesuffix("\n...\n").rstrip("\n")


def _toml_string(value: str, *, multiline: bool = False) -> str:
    if multiline and "'''" not in value:
        return "'''\n" + value + "'''"  # literal: no escapes; the first newline is dropped
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string


def _json_file(path: str, data: dict[str, Any]) -> RenderedFile:
    return RenderedFile(path, json.dumps(data, indent=2) + "\n")


@dataclass(frozen=True)
class Sandbox:
    """What a host's shell tool takes away from a command it runs (HOSTS.md section 5)."""

    host: str  # the host's title
    read_only: bool  # the project cannot be written
    network: bool  # a spoke started from here can reach its provider
    keeps_detached: bool  # a process left behind outlives the command
    fix: str  # the host's flag or setting that gives Maestro what it needs


class Host:
    name = ""
    title = ""
    instruction_file = ""
    project_prefix = ""  # where the host's files live inside a project
    verb_template = "/maestro:{verb}"
    arguments = "$ARGUMENTS"
    strips_comments = False  # does the model see HTML comments of the instruction file?
    # Does its shell tool set PATH afresh (a login shell), so a `maestro run` it starts
    # may lack the user's folders of spoke CLIs (maestro.spokes.clipaths)?
    resets_path = False

    def user_root(self, env: dict[str, str]) -> Path:
        raise NotImplementedError

    def prefix(self, scope: str) -> str:
        return self.project_prefix if scope == "project" else ""

    def invoke(self, verb: str) -> str:
        return self.verb_template.format(verb=verb)

    def body(self, source: CommandSource, opts: RenderOptions, verbs: str = "") -> str:
        """``verbs``: how the body names another verb, if not the host's way (``invoke``)."""
        return text.render_body(
            source.body,
            host=self.name,
            verb_template=verbs or self.verb_template,
            arguments=self.arguments,
            invocation=opts.invocation,
            state=opts.state_dir,
        )

    def stub(self, opts: RenderOptions) -> str:
        """What the stub block says: the host's own syntax and the two state files."""
        verbs = self.verb_template.format(verb="|".join(VERBS))
        state = opts.state_dir.rstrip("/")
        return f"{verbs}. State {state}/MAESTRO.md, log {state}/MAESTRO-LOG.md\n"

    command_suffix = ".md"

    def command_file(self, source: CommandSource, opts: RenderOptions) -> str:
        raise NotImplementedError

    def commands(self, folder: str, opts: RenderOptions) -> list[RenderedFile]:
        """One command file per verb in ``folder`` (a prefix ending in '/')."""
        return [
            RenderedFile(f"{folder}{c.verb}{self.command_suffix}", self.command_file(c, opts))
            for c in load_commands()
        ]

    def files(self, scope: str, opts: RenderOptions) -> list[RenderedFile]:
        return self.commands(self.prefix(scope) + "commands/maestro/", opts)

    def bundle(self, opts: RenderOptions) -> list[RenderedFile]:
        """The host's own install unit (a plugin with its marketplace, an extension), as
        files relative to the repository root (``maestro.install.bundle``)."""
        raise NotImplementedError

    agent_suffix = ".md"

    def agent_file(self, source: SkillSource) -> str | None:
        """The host's own definition of a Maestro subagent; None: the host uses its own
        (Claude Code's Explore)."""
        return None

    def agents(self, folder: str) -> list[RenderedFile]:
        """The recon subagent `plan` explores through, in ``folder`` (a prefix ending in '/')."""
        content = self.agent_file(load_agent(RECON_AGENT))
        if content is None:
            return []
        return [RenderedFile(f"{folder}{RECON_AGENT}{self.agent_suffix}", content)]

    def expanded(self, verb: str, opts: RenderOptions) -> str:
        """What the model receives when the user invokes ``verb``."""
        return self.body(next(c for c in load_commands() if c.verb == verb), opts)

    def listed(self, opts: RenderOptions) -> list[Listed]:
        return []

    def sandbox(self, env: Mapping[str, str]) -> Sandbox | None:
        """The limits of this host's command sandbox when ``env`` shows Maestro runs in
        it; None when it does not (or the host confines nothing Maestro needs)."""
        return None

    def hub_mode(self, env: Mapping[str, str], project: Path, run_file: str | None) -> HubMode:
        """Whether ``/maestro:run`` can drive a run to its end from this host as
        configured, and the line to use or to fix it (docs/hosts.md, "Each host as the
        hub"). ``run_file``: the installed run command, as it is on disk now."""
        raise NotImplementedError


@dataclass(frozen=True)
class HubMode:
    ready: bool
    detail: str  # the mode that works and the line to use
    fix: str | None = None


def _json_or_empty(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


class ClaudeHost(Host):
    name = "claude"
    title = "Claude Code"
    instruction_file = "CLAUDE.md"
    project_prefix = ".claude/"
    # The model never sees HTML comments in CLAUDE.md (verified with 2.1.197), so the
    # block's markers cost nothing there.
    strips_comments = True

    def user_root(self, env: dict[str, str]) -> Path:
        return user_home(env) / ".claude"

    def command_file(self, source: CommandSource, opts: RenderOptions) -> str:
        lines = ["---", f"description: {_yaml_scalar(source.description)}"]
        if source.argument_hint:
            lines.append(f"argument-hint: {_yaml_scalar(source.argument_hint)}")
        # Pre-approve Maestro's own CLI so a run's wait loop does not ask every time: as
        # the file names it, and as a model may type it anyway (a bare `maestro`).
        rules = dict.fromkeys([f"Bash({opts.invocation}:*)", "Bash(maestro:*)"])
        lines.append(f"allowed-tools: {_yaml_scalar(', '.join(rules))}")
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
            'default mode, headless (`claude -p "/maestro:run"`) and interactive: the command '
            "files pre-approve Maestro's path and a bare `maestro`; no prompt.",
        )

    PLUGIN = "plugins/claude/"
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
            _json_file(".claude-plugin/marketplace.json", marketplace),
            _json_file(self.PLUGIN + ".claude-plugin/plugin.json", plugin),
            *self.commands(self.PLUGIN + "commands/", opts),
            RenderedFile(self.PLUGIN + "bin/maestro", self.BIN, executable=True),
        ]


class GeminiHost(Host):
    name = "gemini"
    title = "Gemini CLI"
    instruction_file = "GEMINI.md"
    project_prefix = ".gemini/"
    arguments = "{{args}}"
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
            f"description = {_toml_string(source.description)}\n"
            f"prompt = {_toml_string(prompt, multiline=True)}\n"
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
            f"---\nname: {source.name}\ndescription: {_yaml_scalar(source.description)}\n"
            f"{self.AGENT_SETTINGS}---\n{source.body}"
        )

    def listed(self, opts: RenderOptions) -> list[Listed]:
        source = load_agent(RECON_AGENT)  # in the system prompt's list of sub-agents
        return [Listed("agents", source.name, f"- {source.name} -> {source.description}")]

    def files(self, scope: str, opts: RenderOptions) -> list[RenderedFile]:
        files = super().files(scope, opts) + self.agents(self.prefix(scope) + "agents/")
        if scope == "user":
            files.append(RenderedFile(self.POLICY, self.policy(opts)))
        return files

    # Headless Gemini offers the model no shell tool unless a policy allows it: a user
    # policy file does (verified with 0.61; a project's .gemini/policies is not read
    # before the folder's policies are acknowledged), so the user-scope install writes one.
    POLICY = "policies/maestro.toml"

    def policy(self, opts: RenderOptions) -> str:
        prefixes = list(dict.fromkeys([opts.invocation, "maestro"]))
        return (
            "# Written by `maestro install --host gemini --scope user`: Gemini CLI may run Maestro's own\n"
            "# commands (a run is followed with many calls), headless too. Nothing else is allowed.\n"
            "[[rule]]\n"
            'toolName = "run_shell_command"\n'
            f"commandPrefix = [{', '.join(_toml_string(p) for p in prefixes)}]\n"
            'decision = "allow"\n'
            "priority = 500\n"
        )

    def hub_mode(self, env: Mapping[str, str], project: Path, run_file: str | None) -> HubMode:
        for path in (
            user_home(env) / ".gemini" / "settings.json",
            project / ".gemini" / "settings.json",
        ):
            data = _json_or_empty(path)
            for keys in self.EXCLUDES:
                value: Any = data
                for key in keys:
                    value = value.get(key, {}) if isinstance(value, dict) else {}
                if isinstance(value, list) and any(
                    str(v).startswith("run_shell_command") for v in value
                ):
                    return HubMode(
                        False,
                        f"{path} excludes run_shell_command: the model cannot run `maestro`.",
                        f"remove run_shell_command from {'.'.join(keys)} in {path}.",
                    )
        from maestro.install.invocation import resolve

        if (user_home(env) / ".gemini" / self.POLICY).is_file():
            return HubMode(
                True,
                'interactive and headless (`gemini -p "/maestro:run"`): the user policy '
                f"~/.gemini/{self.POLICY} allows Maestro's commands.",
            )
        return HubMode(
            True,
            'interactive: one "Allow for this session" approval; headless: '
            f'`gemini -p "/maestro:run" --allowed-tools "run_shell_command({resolve()})"` '
            "(or `-y`), or `maestro install --host gemini --scope user`, whose policy allows "
            "Maestro's commands: headless default offers the model no shell tool.",
        )

    # Not GEMINI.md: a Gemini session in Maestro's own repository would read that too.
    CONTEXT = "gemini-extension.md"

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
            _json_file("gemini-extension.json", manifest),
            # The extension's own context file: wholly Maestro's, so no markers.
            RenderedFile(self.CONTEXT, self.stub(opts)),
            *self.commands("commands/maestro/", opts),
            *self.agents("agents/"),  # an extension's agents load without acknowledgement
        ]


class CodexHost(Host):
    name = "codex"
    title = "Codex CLI"
    instruction_file = "AGENTS.md"
    project_prefix = ".agents/"
    verb_template = "$maestro {verb}"
    arguments = "<arguments>"
    resets_path = True  # `exec_command` runs `bash -lc`: the login profile sets PATH (0.169)

    def user_root(self, env: dict[str, str]) -> Path:
        return codex_home(env)

    def router(self, opts: RenderOptions) -> str:
        source = load_skill(ROUTER_SKILL)
        header = f"---\nname: {source.name}\ndescription: {_yaml_scalar(source.description)}\n---\n"
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
            f"name = {_toml_string(source.name)}\n"
            f"description = {_toml_string(source.description)}\n"
            'sandbox_mode = "read-only"\n'
            'model_reasoning_effort = "low"\n'
            f"developer_instructions = {_toml_string(source.body, multiline=True)}\n"
        )

    def expanded(self, verb: str, opts: RenderOptions) -> str:
        # `$maestro <verb>` injects the router; the model then reads the verb's file.
        return self.router(opts) + super().expanded(verb, opts)

    PLUGIN = "plugins/codex/"
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
            _json_file(".agents/plugins/marketplace.json", marketplace),
            _json_file(self.PLUGIN + ".codex-plugin/plugin.json", plugin),
        ]
        for source in load_commands():
            folder = f"{self.PLUGIN}skills/{source.verb}/"
            header = (
                f"---\nname: {source.verb}\ndescription: {_yaml_scalar(source.description)}\n---\n"
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
        if not any(env.get(k) for k in roster.CLIS["codex"].sandbox_markers):
            return None
        profile = env.get("CODEX_PERMISSION_PROFILE", "")
        no_network = env.get("CODEX_SANDBOX_NETWORK_DISABLED") == "1"
        if not no_network and not profile and _has_ancestor("codex"):
            return None  # danger-full-access: the machine's own namespaces
        return Sandbox(
            self.title,
            read_only=profile == ":read-only",
            network=not no_network,
            keeps_detached=False,
            fix=self.FULL_ACCESS,
        )

    def hub_mode(self, env: Mapping[str, str], project: Path, run_file: str | None) -> HubMode:
        import tomllib

        config = codex_home(env) / "config.toml"
        try:
            mode = tomllib.loads(config.read_text(encoding="utf-8")).get("sandbox_mode")
        except (OSError, ValueError):
            mode = None
        if mode == "danger-full-access":
            return HubMode(
                True, f'{config} sets sandbox_mode = "danger-full-access": `$maestro run` works.'
            )
        return HubMode(
            False,
            f"Codex's {mode or 'default (read-only)'} sandbox cannot run `$maestro run` (no writes "
            "or no network, and a detached engine dies with its command): Maestro refuses it.",
            'use `codex --sandbox danger-full-access` (`codex exec -s danger-full-access "$maestro run"`), '
            f'or set sandbox_mode = "danger-full-access" in {config}.',
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


HOSTS: dict[str, Host] = {h.name: h for h in (ClaudeHost(), GeminiHost(), CodexHost())}


def hub_sandbox(env: Mapping[str, str]) -> Sandbox | None:
    """The sandbox of the host whose shell tool runs this process, if any."""
    return next((box for box in (h.sandbox(env) for h in HOSTS.values()) if box is not None), None)


def _has_ancestor(comm: str) -> bool:
    """Is a process named ``comm`` among this one's ancestors (as this PID namespace
    sees them)? Without /proc: assume so."""
    pid = os.getppid()
    for _ in range(64):
        stat = proc_stat(pid)
        if stat is None:
            return pid <= 0 or not has_proc()
        if stat.name == comm:
            return True
        pid = stat.ppid
        if pid <= 0:
            return False
    return False


def get_host(name: str) -> Host:
    try:
        return HOSTS[name]
    except KeyError:
        raise InstallError(
            f"unknown host {name!r}.", f"use one of: {', '.join(HOSTS)}, all."
        ) from None
