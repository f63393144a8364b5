"""The roster of CLIs: the registry every layer asks about the CLIs Maestro knows.

It sits at the bottom of the package (it imports only ``errors``) so that every layer
can ask it: the plan format (``state``) needs the names, the log (``logfile``) the
display names, the engine the budgets and second-opinion order, the plan checks and the
engine the routing rule (``route``, here), the spokes the tool
tiers each CLI's flags cannot enforce and the variables a hub's shell tool injects, the
installer and ``doctor`` each CLI's host and checks.

Each CLI's module (``maestro.clis``) fills one ``Cli`` entry, its facts and its parts,
and gives it to ``register`` when it is imported; the roster is empty until
``maestro.clis.load`` has run. Nothing outside those modules branches on a CLI's name.

``NAMES`` (and ``REAL``, ``HOSTS``) is one list, changed in place by ``register``: schemas,
argparse choices and the plan format hold that same list, so a CLI registered later is
accepted everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass, field
from typing import Any

from maestro.errors import SpokeError


@dataclass(frozen=True)
class Cli:
    """One CLI. ``real`` is False for the offline sim spoke: it is never routed to, never
    asked for a second opinion, and never priced."""

    name: str  # the name in plans, settings and argv ("gemini")
    display: str  # how the log's Totals table names it ("Gemini CLI")
    short: str  # how a log row's Target names it ("Gemini")
    executable: str | None = None  # None: built in (sim)
    install_hint: str = ""  # the command that installs it
    real: bool = True
    # Token thresholds for one dispatch: (budget, yellow, abort).
    budget: tuple[int, int, int] = (55_000, 65_000, 80_000)
    # It reports each dispatch's cost itself (taken at its word); else Maestro estimates
    # it from its tokens and the price table (maestro/data/prices.toml).
    reports_cost: bool = False
    # Model names whose vendor is plain from the name (an override naming one is meant
    # for this CLI only).
    model_prefixes: tuple[str, ...] = ()
    # Routing rank per specialist (lower is preferred); a specialist missing here ranks
    # after every CLI that names it.
    route_rank: Mapping[str, int] = field(default_factory=dict)
    # Rank as a second opinion (challenger, reviewer): lower is asked first.
    opinion_rank: int = 100
    # The persona frontmatter's own `model` is this CLI's (the notes' names are Gemini's);
    # every other CLI reads `models.<name>`.
    reads_persona_model: bool = False
    # What each ability is called on this CLI, for the protocol texts; None: the persona's
    # own (Gemini-style) tool names.
    vocabulary: Mapping[str, str] | None = None
    # Tool tiers its flags cannot fully enforce -> why, in words for the user (`maestro
    # agents permissions`, `maestro doctor`, routing, the delegation prompt's choice).
    unenforced_tiers: Mapping[str, str] = field(default_factory=dict)
    # What its shell tool adds to the environment of every command it runs, as a hub:
    # the variable that shows it did (name, value) and the variables it sets that the
    # user's own environment did not have (or had otherwise). Spokes get them removed.
    shell_marker: tuple[str, str] | None = None
    shell_injects: tuple[str, ...] = ()
    # Variables it reads to decide it runs inside another session of itself: a spoke
    # that inherits them refuses to start or hangs, so every spoke goes without them.
    nested_vars: tuple[str, ...] = ()
    # Variables its shell sets when it runs a command in its own sandbox (any one of
    # them set: the host's sandbox facts apply; none: this CLI confines nothing here).
    sandbox_markers: tuple[str, ...] = ()
    # Besides trusting a folder in the CLI itself: how to trust it without asking (the
    # fix of a dispatch it refused in an untrusted folder).
    trust_hint: str = ""
    # As a hub: the longest one `maestro wait` may block in its shell tool and still
    # answer within the same call, the way the installed run command asks for it (None:
    # no limit, a wait returns only when the hub must act; a tool that stops a silent
    # command is kept waiting: ``host.shell_silence_s``).
    hub_wait_s: float | None = None
    # Its parts beyond the facts, from its module: the spoke adapter (a subclass of
    # maestro.spokes.base.Spoke), its host installer (a maestro.install.host.Host; None:
    # it is no hub) and its doctor checks (maestro.install.checks: Situation -> Check | None).
    spoke: Any = None
    host: Any = None
    checks: tuple[Callable[[Any], Any], ...] = ()

    @property
    def persona_model_key(self) -> str:
        """Where a persona names this CLI's model."""
        return "model" if self.reads_persona_model else f"models.{self.name}"


CLIS: dict[str, Cli] = {}
NAMES: list[str] = []  # every registered CLI, in registration order (sim included)
REAL: list[str] = []  # the vendors' CLIs: routed to, asked for second opinions
HOSTS: list[str] = []  # the CLIs Maestro installs into as a hub


def register(cli: Cli) -> None:
    """Add ``cli`` (or replace the entry of that name) everywhere the roster is read: what
    a CLI's module calls when it is imported (``maestro.clis``)."""
    if cli.spoke is None or cli.spoke.name != cli.name:
        raise ValueError(f"CLI {cli.name!r} needs a spoke adapter of that name")
    CLIS[cli.name] = cli
    for names, member in ((NAMES, True), (REAL, cli.real), (HOSTS, cli.host is not None)):
        if member and cli.name not in names:
            names.append(cli.name)
        elif not member and cli.name in names:
            names.remove(cli.name)


def unregister(name: str) -> None:
    """Remove a CLI registered with ``register`` (tests that add one take it away)."""
    CLIS.pop(name, None)
    for names in (NAMES, REAL, HOSTS):
        if name in names:
            names.remove(name)


def get(name: str | None) -> Cli | None:
    return CLIS.get(name) if name else None


def real() -> list[Cli]:
    return [CLIS[name] for name in REAL]


def persona_cli() -> str:
    """The CLI whose model a persona's own ``model`` names (the notes' names are its)."""
    return next(cli.name for cli in CLIS.values() if cli.reads_persona_model)


def enforces(name: str, tier: str) -> bool:
    """True only where CLI ``name``'s own flags fully enforce ``tier``; elsewhere the
    delegation prompt's restriction block has to carry it."""
    cli = CLIS.get(name)
    return cli is None or tier not in cli.unenforced_tiers


def user_env(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` as the user had it before a hub's shell tool ran this command: for each CLI
    whose marker is there, the variables it injects are dropped (a value it blanked
    becomes unset: the original is not known)."""
    cleaned = dict(env)
    for cli in CLIS.values():
        if cli.shell_marker and env.get(cli.shell_marker[0]) == cli.shell_marker[1]:
            for name in cli.shell_injects:
                cleaned.pop(name, None)
    return cleaned


def hub_of(env: Mapping[str, str]) -> Cli | None:
    """The host whose shell tool runs this command, from the marker it sets; None in a
    person's own shell."""
    for cli in CLIS.values():
        if cli.shell_marker and env.get(cli.shell_marker[0]) == cli.shell_marker[1]:
            return cli
    return None


# -- routing: which CLI runs a task that names none --------------------------------------


def preference(specialist: str | None) -> list[str]:
    """The vendors' CLIs in the specialist's order (each CLI's ``route_rank``; a
    specialist a CLI does not rank counts as code)."""
    key = specialist or "code"
    return [
        cli.name
        for cli in sorted(
            real(), key=lambda cli: cli.route_rank.get(key, cli.route_rank.get("code", 99))
        )
    ]


def install_hint() -> str:
    """What to do when no spoke CLI is installed."""
    hints = or_list([cli.install_hint for cli in real()])
    return f"install a spoke CLI ({hints}), or simulate the run with `maestro run --tool sim`."


def route(
    specialist: str | None, installed: Container[str], hub: str | None, tier: str | None = None
) -> str:
    """The CLI for a task without a Tool: the specialist's preferred CLI among those
    installed, a CLI that enforces ``tier`` (its agent's tool tier) before one that
    cannot, and the hub (the CLI the plan was made in) last, so the work gets a second
    vendor's eyes. The sim spoke is never chosen here."""
    candidates = [cli for cli in preference(specialist) if cli in installed]
    if not candidates:
        raise SpokeError(f"no spoke CLI is installed ({or_list(list(REAL))}).", install_hint())
    # Stable: within each group the specialist's order stands.
    ranked = sorted(
        candidates,
        key=lambda cli: (tier is not None and not enforces(cli, tier), cli == hub),
    )
    return ranked[0]


def or_list(names: list[str]) -> str:
    """'claude, gemini or codex' (for messages that name the choices)."""
    if not names:
        return "none"
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
