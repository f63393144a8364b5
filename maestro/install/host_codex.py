"""Codex CLI as a host: where its files go and how each canonical source looks there
(the facts in hosts.py's docstring)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from maestro import roster
from maestro.install import text
from maestro.install.host import (
    DESCRIPTION,
    PLUGIN_NAME,
    Host,
    HubMode,
    Listed,
    RenderedFile,
    RenderOptions,
    Sandbox,
    _json_file,
    _toml_string,
    _yaml_scalar,
    has_ancestor,
)
from maestro.install.sources import (
    ROUTER_SKILL,
    SkillSource,
    load_commands,
    load_skill,
)
from maestro.paths import codex_home


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
        if not no_network and not profile and has_ancestor("codex"):
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
