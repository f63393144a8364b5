"""What every host's installer has: render options, rendered files, the token listing,
the sandbox a hub runs in, and ``Host``, the base each host's class fills in (in its
CLI's module, ``maestro.clis``); ``hosts`` lists the registered ones.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from maestro import __version__, roster
from maestro.errors import InstallError
from maestro.install import text
from maestro.install.sources import (
    RECON_AGENT,
    VERBS,
    CommandSource,
    SkillSource,
    load_agent,
    load_commands,
)
from maestro.pids import ancestors, has_proc

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


def yaml_scalar(value: str) -> str:
    import yaml  # 10 ms to import; every command imports this module (the CLIs' hosts)

    dumped: str = yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=1 << 20)
    return dumped.removesuffix("\n...\n").rstrip("\n")


def toml_string(value: str, *, multiline: bool = False) -> str:
    if multiline and "'''" not in value:
        return "'''\n" + value + "'''"  # literal: no escapes; the first newline is dropped
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string


def json_file(path: str, data: dict[str, Any]) -> RenderedFile:
    return RenderedFile(path, json.dumps(data, indent=2) + "\n")


@dataclass(frozen=True)
class Sandbox:
    """What a host's shell tool takes away from a command it runs (HOSTS.md section 5)."""

    host: str  # the host's title
    network: bool  # a spoke started from here can reach its provider
    keeps_detached: bool  # a process left behind outlives the command
    fix: str  # the host's flag or setting that gives Maestro what it needs


class Host:
    name = ""
    instruction_file = ""
    project_prefix = ""  # where the host's files live inside a project
    verb_template = "/maestro:{verb}"
    arguments = "$ARGUMENTS"
    strips_comments = False  # does the model see HTML comments of the instruction file?
    # Does its shell tool set PATH afresh (a login shell), so a `maestro run` it starts
    # may lack the user's folders of spoke CLIs (maestro.spokes.clipaths)?
    resets_path = False
    root_vars = "HOME"  # the variables that choose ``user_root``
    # A project folder whose skills it lists to its model, whichever host put them there.
    lists_skills_in = ""

    @property
    def title(self) -> str:
        return roster.CLIS[self.name].display

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

    bundle_folders: tuple[str, ...] = ()  # folders of the root only its bundle writes

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

    def shell_silence_s(self, env: Mapping[str, str], project: Path) -> float | None:
        """How long this host's shell tool lets a command stay silent before it stops it
        (None: as long as it likes): a `maestro wait` there says a line well before."""
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


def has_ancestor(comm: str) -> bool:
    """Is a process named ``comm`` among this one's ancestors (as this PID namespace
    sees them)? Without /proc: assume so."""
    return not has_proc() or comm in ancestors()


def hosts() -> dict[str, Host]:
    """The host of each registered CLI that is one, by name."""
    return {name: roster.CLIS[name].host for name in roster.HOSTS}


def get_host(name: str) -> Host:
    found = hosts()
    if name not in found:
        raise InstallError(f"unknown host {name!r}.", f"use one of: {', '.join(found)}, all.")
    return found[name]


def hub_sandbox(env: Mapping[str, str]) -> Sandbox | None:
    """The sandbox of the host whose shell tool runs this process, if any."""
    return next((box for h in hosts().values() if (box := h.sandbox(env)) is not None), None)
