"""The roster of CLIs: every fact about each CLI Maestro can dispatch to, in one place.

It sits at the bottom of the package (it imports only ``errors``) so that every layer
can ask it: the plan format (``state``) needs the names, the log (``logfile``) the
display names, the engine the budgets and second-opinion order, the plan checks and the
engine the routing rule (``route``, here), pricing the price table, the spokes the tool
tiers each CLI's flags cannot enforce and the variables a hub's shell tool injects. The spoke adapters in ``maestro.spokes`` read their facts from here; how a
CLI is called and how its output is read stays in its adapter.

Nothing outside this module and the adapters branches on a CLI's name: a new CLI is one
``Cli`` entry plus one adapter, given to ``maestro.spokes.registry.register``.

``NAMES`` is one list, changed in place by ``register``: schemas, argparse choices and
the plan format hold that same list, so a CLI registered later is accepted everywhere.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from dataclasses import dataclass, field

from maestro.errors import SpokeError

# A tool's dollars per million tokens: fresh input, output, cached input.
PriceRow = tuple[float, float, float]


@dataclass(frozen=True)
class Cli:
    """One CLI. ``real`` is False for the offline sim spoke: it is never routed to, never
    asked for a second opinion, and never priced."""

    name: str  # the name in plans, settings and argv ("gemini")
    display: str  # how the log's Totals table names it ("Gemini CLI")
    short: str  # how a log row's Target names it ("Gemini")
    vendor: str = ""  # the company whose models it runs (cross-vendor opinions)
    executable: str | None = None  # None: built in (sim)
    install_hint: str = ""  # the command that installs it
    real: bool = True
    # Token thresholds for one dispatch: (budget, yellow, abort).
    budget: tuple[int, int, int] = (55_000, 65_000, 80_000)
    # (model pattern, input, output, cached input), list prices per million tokens.
    prices: tuple[tuple[str, float, float, float], ...] = ()
    # The price of a model found in no table: the CLI's mid-range default family.
    fallback_price: PriceRow | None = None
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
    # Variables its shell sets when it runs a command in its own sandbox (any one of
    # them set: the host's sandbox facts apply; none: this CLI confines nothing here).
    sandbox_markers: tuple[str, ...] = ()
    # Besides trusting a folder in the CLI itself: how to trust it without asking (the
    # fix of a dispatch it refused in an untrusted folder).
    trust_hint: str = ""
    # As a hub: the longest one `maestro wait` may block in its shell tool and still
    # answer within the same call, the way the installed run command asks for it.
    hub_wait_s: float | None = None

    @property
    def persona_model_key(self) -> str:
        """Where a persona names this CLI's model."""
        return "model" if self.reads_persona_model else f"models.{self.name}"


_CLAUDE_VOCABULARY = {
    "read": "Read, Glob and Grep",
    "write": "Write and Edit",
    "shell": "Bash",
    "web": "WebSearch",
    "no_shell": "run shell commands (Bash)",
}
_GEMINI_VOCABULARY = {
    "read": "read_file, glob and grep_search",
    "write": "write_file and replace",
    "shell": "run_shell_command",
    "web": "google_web_search",
    "no_shell": "run shell commands (run_shell_command)",
}
# Codex reads files through shell commands, so on codex "no shell" means "no shell
# command that changes anything".
_CODEX_VOCABULARY = {
    "read": "read-only shell commands such as cat, ls, rg and git show",
    "write": "apply_patch",
    "shell": "shell commands",
    "web": "web_search",
    "no_shell": "run shell commands that change anything or start programs (builds, tests, installs); "
    "read-only commands for reading files are allowed",
}

# Routing (``route`` below): code and test go to codex first (its workspace-write
# sandbox is the strongest enforcement for writing work), review and research to gemini
# (read-only by default headless, a large context for reading a codebase), claude second.
# Second opinions (maestro.challenge.vendors): gemini, then codex, then claude.
BUILTIN: tuple[Cli, ...] = (
    Cli(
        "claude",
        "Claude Code",
        "Claude",
        vendor="Anthropic",
        executable="claude",
        install_hint="npm install -g @anthropic-ai/claude-code",
        budget=(55_000, 65_000, 80_000),
        prices=(
            ("claude-opus-4-1*", 15.0, 75.0, 1.50),
            ("claude-opus-4-2025*", 15.0, 75.0, 1.50),
            ("claude-opus-*", 5.0, 25.0, 0.50),
            ("opus", 5.0, 25.0, 0.50),
            ("claude-sonnet-*", 3.0, 15.0, 0.30),
            ("sonnet", 3.0, 15.0, 0.30),
            ("claude-3-5-haiku*", 0.80, 4.0, 0.08),
            ("claude-haiku-*", 1.0, 5.0, 0.10),
            ("haiku", 1.0, 5.0, 0.10),
        ),
        fallback_price=(3.0, 15.0, 0.30),  # Sonnet
        model_prefixes=("claude", "sonnet", "opus", "haiku"),
        route_rank={"code": 1, "test": 1, "review": 1, "research": 1},
        opinion_rank=2,
        vocabulary=_CLAUDE_VOCABULARY,
        # read+shell allows Bash, and Bash can write files: the flags cannot stop that.
        unenforced_tiers={
            "read+shell": "writes cannot be forbidden: a Bash command can write files; only the prompt asks it not to",
        },
        shell_marker=("CLAUDECODE", "1"),
        # Its Bash tool's `timeout` goes up to 600000 ms (the run command asks for it).
        hub_wait_s=590,
    ),
    Cli(
        "gemini",
        "Gemini CLI",
        "Gemini",
        vendor="Google",
        executable="gemini",
        install_hint="npm install -g @google/gemini-cli",
        budget=(30_000, 35_000, 50_000),
        prices=(
            ("gemini-2.5-pro*", 1.25, 10.0, 0.125),
            ("gemini-*-pro*", 2.0, 12.0, 0.20),
            ("gemini-*-flash-lite*", 0.10, 0.40, 0.025),
            ("gemini-2.0-flash*", 0.10, 0.40, 0.025),
            ("gemini-2.5-flash*", 0.30, 2.50, 0.03),
            ("gemini-*-flash*", 0.50, 3.0, 0.05),
        ),
        fallback_price=(0.30, 2.50, 0.03),  # 2.5 Flash
        model_prefixes=("gemini",),
        route_rank={"code": 2, "test": 2, "review": 0, "research": 0},
        opinion_rank=0,
        reads_persona_model=True,
        vocabulary=_GEMINI_VOCABULARY,
        # read+shell needs the shell, and a shell command can write files.
        unenforced_tiers={
            "read+shell": "writes cannot be forbidden: a run_shell_command call can write files; only the prompt asks it not to",
        },
        # Gemini CLI 0.61's shell execution service (besides its git configuration, which
        # maestro.git drops for every caller).
        trust_hint="or set GEMINI_CLI_TRUST_WORKSPACE=true",
        shell_marker=("GEMINI_CLI", "1"),
        # Its shell tool kills a command silent for tools.shell.inactivityTimeout (300 s).
        hub_wait_s=285,
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
    ),
    Cli(
        "codex",
        "Codex CLI",
        "Codex",
        vendor="OpenAI",
        executable="codex",
        install_hint="npm install -g @openai/codex",
        budget=(40_000, 45_000, 60_000),
        prices=(
            ("gpt-5*-nano*", 0.05, 0.40, 0.005),
            ("gpt-5*-mini*", 0.25, 2.0, 0.025),
            ("gpt-5*", 1.25, 10.0, 0.125),
            ("gpt-4.1-mini*", 0.40, 1.60, 0.10),
            ("gpt-4.1*", 2.0, 8.0, 0.50),
            ("o4-mini*", 1.10, 4.40, 0.275),
            ("o3*", 2.0, 8.0, 0.50),
            ("codex-mini*", 1.50, 6.0, 0.375),
        ),
        fallback_price=(1.25, 10.0, 0.125),  # GPT-5
        model_prefixes=("gpt", "o1", "o3", "o4", "codex"),
        route_rank={"code": 0, "test": 0, "review": 2, "research": 2},
        opinion_rank=1,
        vocabulary=_CODEX_VOCABULARY,
        # workspace-write grants the shell along with writes: read+write cannot exclude it
        # (codex offers exec_command in every sandbox; a real read+write spoke ran `touch`).
        unenforced_tiers={
            "read+write": "the shell cannot be forbidden: its workspace-write sandbox runs any command "
            "(writes confined to the workdir and /tmp); only the prompt asks it not to",
        },
        # Codex CLI 0.169, every mode (HOSTS.md section 5), and its sandbox's own markers.
        shell_marker=("CODEX_CI", "1"),
        # exec_command hands a command back after yield_time_ms (at most 30 s) and each
        # empty write_stdin poll waits up to 300 s: a long wait costs one turn per poll,
        # never more than a shorter one would.
        hub_wait_s=1800,
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
    ),
    Cli(
        "sim",
        "Simulated",
        "Sim",
        real=False,
        budget=(55_000, 65_000, 80_000),
        install_hint="nothing to install: the sim spoke is built into Maestro",
    ),
)

CLIS: dict[str, Cli] = {}
NAMES: list[str] = []  # every registered CLI, in registration order (sim included)
REAL: list[str] = []  # the vendors' CLIs: routed to, asked for second opinions


def register(cli: Cli) -> None:
    """Add ``cli`` (or replace the entry of that name) everywhere the roster is read."""
    CLIS[cli.name] = cli
    if cli.name not in NAMES:
        NAMES.append(cli.name)
    if cli.real and cli.name not in REAL:
        REAL.append(cli.name)
    elif not cli.real and cli.name in REAL:
        REAL.remove(cli.name)


def unregister(name: str) -> None:
    """Remove a CLI registered with ``register`` (tests that add one take it away)."""
    CLIS.pop(name, None)
    for names in (NAMES, REAL):
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


for _cli in BUILTIN:
    register(_cli)
