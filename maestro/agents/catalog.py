"""The persona catalog: bundled agents, project agents that replace or add to them, and
the overrides that decide each agent's model, temperature, turns and timeout.

Precedence for each value, most specific first:
1. an agent-specific setting (``MAESTRO_WRITER_MODEL`` for technical-writer);
2. the project config's ``[agents.NAME]`` table (``models.<cli>`` before ``model``);
3. a general setting (``MAESTRO_DEFAULT_MODEL``, ``MAESTRO_DEFAULT_TEMPERATURE``,
   ``MAESTRO_MAX_TURNS``, ``MAESTRO_AGENT_TIMEOUT``);
4. the persona's frontmatter. Its ``model`` is Gemini's (the notes' names); other CLIs
   use ``models.<cli>`` or, lacking that, their own default model (``None``).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from maestro import roster
from maestro.agents.personaschema import Violation, validate_body, validate_frontmatter
from maestro.agents.tiers import tier_of
from maestro.config import Settings, convert
from maestro.defaults import Setting
from maestro.errors import ConfigError, MaestroError, NotFound
from maestro.formatting import shown_path
from maestro.frontmatter import FrontmatterError, split
from maestro.resources import list_files

# The notes' four specialists and the agent each defaults to when a task names no agent.
SPECIALIST_DEFAULTS = {
    "code": "coder",
    "review": "code-reviewer",
    "test": "tester",
    "research": "architect",
}
DEFAULT_SPECIALIST = "code"
# Agent-specific environment settings: (setting key, agent, field).
AGENT_SETTINGS = (("writer_model", "technical-writer", "model"),)
GENERAL_SETTINGS = {
    "model": "default_model",
    "temperature": "default_temperature",
    "max_turns": "max_turns",
    "timeout_mins": "agent_timeout",
}
_TABLE_KEYS: dict[str, Setting] = {
    "model": Setting("model", "str", None, ""),
    "temperature": Setting("temperature", "float", None, "", minimum=0, maximum=1),
    "max_turns": Setting("max_turns", "int", None, "", minimum=1, maximum=500),
    "timeout_mins": Setting("timeout_mins", "float", None, "", minimum=0.01, maximum=1440),
}


@dataclass
class Agent:
    name: str
    description: str
    kind: str
    tools: list[str]
    model: str
    temperature: float
    max_turns: int
    timeout_mins: float
    body: str
    source: str  # where the persona was read from (bundled path or project file)
    models: dict[str, str] = field(default_factory=dict)
    origin: str = "bundled"  # bundled | project

    @property
    def tier(self) -> str:
        return tier_of(self.tools)

    def frontmatter_model(self, tool: str | None) -> str | None:
        cli = roster.get(tool)
        if cli is not None and cli.reads_persona_model:
            return self.model
        return self.models.get(tool) if tool else None


@dataclass
class ResolvedAgent:
    """An agent with every override applied, for one spoke CLI."""

    agent: Agent
    tool: str | None
    model: str | None
    temperature: float
    max_turns: int
    timeout_mins: float
    sources: dict[str, str]  # field -> where its value came from

    @property
    def name(self) -> str:
        return self.agent.name

    @property
    def tier(self) -> str:
        return self.agent.tier

    @property
    def tools(self) -> list[str]:
        return self.agent.tools

    @property
    def body(self) -> str:
        return self.agent.body


def closest(name: str, names: Iterable[str]) -> str | None:
    matches = difflib.get_close_matches(name, list(names), n=1, cutoff=0.5)
    return matches[0] if matches else None


def parse_agent(
    text: str, source: str, *, expected_name: str, origin: str
) -> tuple[Agent | None, list[Violation]]:
    """Read one persona file; return the agent (None when unusable) and its violations."""

    try:
        meta, content = split(text.strip())
    except FrontmatterError as exc:
        if exc.kind == "missing":
            why = "missing: the file must start with a '---' YAML block"
        elif exc.kind == "unclosed":
            why = "is not closed: end the block with a '---' line"
        else:
            why = f"is not valid YAML{f' at line {exc.line}' if exc.line else ''}: {exc.detail}"
        return None, [Violation(source, "(frontmatter)", why)]
    content = content.strip()  # the body as the person means it: no blank lines around it
    found = validate_frontmatter(meta, source)
    if (
        isinstance(meta, dict)
        and meta.get("name") != expected_name
        and "name" not in {v.key for v in found}
    ):
        found.append(
            Violation(
                source, "name", f"{meta.get('name')!r} must match the file name {expected_name!r}"
            )
        )
    found += validate_body(content, source, level="error" if origin == "bundled" else "warning")
    if any(v.level == "error" and v.key != "body" for v in found):
        return None, found
    agent = Agent(
        name=meta["name"],
        description=meta["description"],
        kind=meta["kind"],
        tools=list(meta["tools"]),
        model=meta["model"],
        temperature=float(meta["temperature"]),
        max_turns=int(meta["max_turns"]),
        timeout_mins=float(meta["timeout_mins"]),
        body=content + "\n",
        source=source,
        models=dict(meta.get("models") or {}),
        origin=origin,
    )
    return agent, found


@dataclass
class Scan:
    """Every persona found, project ones replacing bundled ones of the same name."""

    agents: dict[str, Agent]
    bundled: dict[str, Agent]
    violations: list[Violation]

    def errors(self) -> list[Violation]:
        return [v for v in self.violations if v.level == "error"]


def scan_agents(settings: Settings) -> Scan:
    violations: list[Violation] = []
    bundled: dict[str, Agent] = {}
    for item in list_files("agents", ".md"):
        agent, found = parse_agent(
            item.read_text(encoding="utf-8"),
            f"agents/{item.name}",
            expected_name=item.name[:-3],
            origin="bundled",
        )
        violations += found
        if agent is not None:
            bundled[agent.name] = agent
    agents = dict(bundled)
    folder = settings.paths.project_agents_dir
    if folder.is_dir():
        for path in sorted(folder.glob("*.md")):
            source = shown_path(path, settings.paths.root)
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                violations.append(Violation(source, "(file)", f"cannot be read: {exc}"))
                continue
            agent, found = parse_agent(text, source, expected_name=path.stem, origin="project")
            violations += found
            if agent is not None:
                agents[agent.name] = agent
    return Scan(dict(sorted(agents.items())), bundled, violations)


class Catalog:
    def __init__(
        self,
        agents: dict[str, Agent],
        settings: Settings | None = None,
    ) -> None:
        self.agents = agents
        self.settings = settings
        self.disabled = tuple(settings.disabled_agents) if settings is not None else ()
        self.overrides = _agent_tables(settings, agents) if settings is not None else {}
        for name in self.disabled:
            if name not in agents:
                hint = closest(name, agents)
                guess = f" Did you mean {hint!r}?" if hint else ""
                raise ConfigError(
                    f"MAESTRO_DISABLED_AGENTS names an unknown agent {name!r}.{guess}",
                    f"use names from: {', '.join(agents)}.",
                )

    def names(self) -> list[str]:
        """Agents that may be planned and dispatched (disabled ones left out)."""
        return [name for name in self.agents if name not in self.disabled]

    def get(self, name: str) -> Agent:
        if name not in self.agents:
            hint = closest(name, self.agents)
            guess = f" Did you mean {hint!r}?" if hint else ""
            raise NotFound(
                f"no agent named {name!r}.{guess}", f"use one of: {', '.join(self.names())}."
            )
        if name in self.disabled:
            raise MaestroError(
                f"agent {name!r} is disabled (MAESTRO_DISABLED_AGENTS, from {self.settings.source('disabled_agents')}).",  # type: ignore[union-attr]  # disabled is empty without settings
                f"remove it from MAESTRO_DISABLED_AGENTS, or use another agent: {', '.join(self.names())}.",
            )
        return self.agents[name]

    def for_task(self, task: Any) -> Agent:
        """The agent a task names, else its specialist's default agent."""
        return self.get(agent_name_for(task))

    def resolve(self, name: str, tool: str | None = None) -> ResolvedAgent:
        """The agent's effective settings for a dispatch to ``tool`` (a spoke CLI name).
        Without a tool, ``model`` is an override or None (the CLI's default), never a
        Gemini model name that another CLI would reject."""
        return self.resolve_agent(self.get(name), tool)

    def resolve_agent(self, agent: Agent, tool: str | None = None) -> ResolvedAgent:
        """As ``resolve``, for an agent already in hand (disabled ones included)."""
        values: dict[str, Any] = {}
        sources: dict[str, str] = {}
        for key in ("model", "temperature", "max_turns", "timeout_mins"):
            values[key], sources[key] = self._value(agent, key, tool)
        return ResolvedAgent(agent=agent, tool=tool, sources=sources, **values)

    def models(self, agent: Agent) -> dict[str, tuple[str | None, str]]:
        """The model (and its source) for each spoke CLI, for display."""
        return {cli: self._value(agent, "model", cli) for cli in roster.NAMES}

    def _value(self, agent: Agent, key: str, tool: str | None) -> tuple[Any, str]:
        settings = self.settings
        if settings is not None:
            for setting, who, field_name in AGENT_SETTINGS:
                value = getattr(settings, setting)
                if who == agent.name and field_name == key and _fits(value, key, tool):
                    return value, f"MAESTRO_{setting.upper()} ({settings.source(setting)})"
        table = self.overrides.get(agent.name, {})
        if key == "model" and tool and tool in table.get("models", {}):
            return table["models"][tool], f"[agents.{agent.name}] models.{tool}"
        if key in table and _fits(table[key], key, tool):
            return table[key], f"[agents.{agent.name}] {key}"
        if settings is not None:
            general = GENERAL_SETTINGS[key]
            value = getattr(settings, general)
            if _fits(value, key, tool):
                return value, f"MAESTRO_{general.upper()} ({settings.source(general)})"
        if key == "model":
            model = agent.frontmatter_model(tool)
            if model is None:
                return None, f"{tool or 'the spoke'} CLI default"
            cli = roster.get(tool)
            return model, f"{agent.source} ({cli.persona_model_key if cli else f'models.{tool}'})"
        return getattr(agent, key), agent.source


# An override naming a model whose vendor is plain from its name (each CLI's
# ``model_prefixes`` in the roster) is meant for that CLI: passed to another it would fail.
def model_vendor(model: str) -> str | None:
    """The CLI a model name belongs to, when the name says so (else None: an alias)."""
    name = model.strip().lower()
    for cli in roster.CLIS.values():
        if cli.model_prefixes and name.startswith(cli.model_prefixes):
            return cli.name
    return None


def _fits(value: Any, key: str, tool: str | None) -> bool:
    """Does an override apply to a dispatch to ``tool``? A model of another vendor does not."""
    if value is None:
        return False
    cli = roster.get(tool)
    if key != "model" or cli is None or not cli.model_prefixes:
        return True
    vendor = model_vendor(str(value))
    return vendor is None or vendor == tool


def agent_name_for(task: Any) -> str:
    if getattr(task, "agent", None):
        return str(task.agent)
    return SPECIALIST_DEFAULTS.get(
        getattr(task, "specialist", None) or DEFAULT_SPECIALIST,
        SPECIALIST_DEFAULTS[DEFAULT_SPECIALIST],
    )


def _agent_tables(settings: Settings, agents: dict[str, Agent]) -> dict[str, dict[str, Any]]:
    """Validate and convert the config's [agents.NAME] tables."""
    where = (
        shown_path(settings.config_file, settings.paths.root)
        if settings.config_file
        else "the config file"
    )
    tables: dict[str, dict[str, Any]] = {}
    for name, table in settings.table("agents").items():
        if name not in agents:
            hint = closest(name, agents)
            guess = f" Did you mean [agents.{hint}]?" if hint else ""
            raise ConfigError(
                f"[agents.{name}] in {where} names an unknown agent.{guess}",
                f"use names from: {', '.join(agents)}.",
            )
        if not isinstance(table, dict):
            raise ConfigError(
                f"agents.{name} in {where} must be a table.",
                f"write it as an [agents.{name}] section.",
            )
        converted: dict[str, Any] = {}
        for key, raw in table.items():
            if key == "models":
                converted["models"] = _models_table(name, raw, where)
            elif key in _TABLE_KEYS:
                base = _TABLE_KEYS[key]
                setting = Setting(
                    f"agents.{name}.{key}",
                    base.kind,
                    None,
                    "",
                    minimum=base.minimum,
                    maximum=base.maximum,
                )
                converted[key] = convert(setting, raw, where)
            else:
                raise ConfigError(
                    f"unknown key {key!r} in [agents.{name}] of {where}.",
                    "use model, models.<cli>, temperature, max_turns or timeout_mins.",
                )
        tables[name] = converted
    return tables


def _models_table(name: str, raw: Any, where: str) -> dict[str, str]:
    if not isinstance(raw, dict) or not all(isinstance(v, str) and v for v in raw.values()):
        raise ConfigError(
            f"[agents.{name}] models in {where} must map CLI names to model names.",
            'write e.g. models = { claude = "sonnet" }.',
        )
    unknown = [cli for cli in raw if cli not in roster.NAMES]
    if unknown:
        raise ConfigError(
            f"[agents.{name}] models in {where} names an unknown CLI {unknown[0]!r}.",
            f"use one of: {', '.join(roster.NAMES)}.",
        )
    return dict(raw)


def load_catalog(settings: Settings) -> Catalog:
    """The usable catalog. A persona file with an error stops here, naming the file."""
    scan = scan_agents(settings)
    errors = scan.errors()
    if errors:
        first = errors[0]
        more = f" ({len(errors) - 1} more)" if len(errors) > 1 else ""
        raise ConfigError(
            f"agent persona {first.key}: {first.message}{more}.",
            "run 'maestro agents validate' for every problem and correct the file.",
            file=first.file,
        )
    return Catalog(scan.agents, settings)
