"""Gemini CLI as a host: where its files go and how each canonical source looks there
(the facts in hosts.py's docstring)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from maestro.errors import InstallError
from maestro.install.host import (
    DESCRIPTION,
    PLUGIN_NAME,
    Host,
    HubMode,
    Listed,
    RenderedFile,
    RenderOptions,
    _json_file,
    _json_or_empty,
    _toml_string,
    _yaml_scalar,
)
from maestro.install.sources import (
    RECON_AGENT,
    CommandSource,
    SkillSource,
    load_agent,
)
from maestro.paths import user_home


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
