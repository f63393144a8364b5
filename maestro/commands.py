"""The command registry: the one list of Maestro's commands.

The parser, ``--help``, and the prompt contract's commands section are all generated from
it, so a command added here shows up everywhere without editing those. Modules are
imported only when their command runs, which keeps start-up fast.
"""

from __future__ import annotations

from dataclasses import dataclass

from maestro import roster


@dataclass(frozen=True)
class CommandSpec:
    name: str
    module: str
    summary: str
    syntax: str  # the executable form shown to agents ({hosts}: the roster's hosts)
    group: str  # plan | run | office | setup
    # Capability a session needs to be shown this command in its system prompt
    # (None: shown to every mode that may run shell commands; "can_configure": only to
    # sessions a person started, never to a dispatched spoke).
    capability: str | None = None
    # Mode-specific forms shown to a spoke of that mode instead of ``syntax``: a
    # coordinated worker is shown how to reach its coordinator, a coordinated coordinator
    # how to direct its workers. ``syntax`` stays the full form (``--help``, other modes).
    forms: tuple[tuple[str, str], ...] = ()
    # The hub's own commands (plan, run, wait, review): never shown to a coordinated
    # session. That is a dispatched spoke, and `maestro run` refuses to start inside one;
    # a coordinating spoke adds work with `maestro task spawn` instead.
    hub_only: bool = False

    def syntax_for(self, mode: str) -> str:
        return dict(self.forms).get(mode, self.syntax).replace("{hosts}", "|".join(roster.HOSTS))


_WORKER_MAIL = (
    "maestro mail inbox [--unread] | send --to-coordinator --type query|blocked --message <text> "
    "| wait [--timeout <s>] | send --to-siblings --type query --message <text> | reply <mailId> --message <text>"
)
_COORDINATOR_MAIL = (
    "maestro mail wait [--timeout <s>] | inbox [--unread] | reply <mailId> --message <text> "
    "| send --to <id>[,<id>] --type directive [--priority critical|high] --message <text> "
    "| broadcast --scope my-workers --message <text> "
    "| send --to-coordinator --type query|blocked --message <text>"
)
_TASK_REPORT = 'maestro task report progress|blocked|complete "<message>"'
_TASK_SPAWN = (
    "maestro task spawn --title <text> --files <file>[,<file>] --criteria <text> "
    "[--criteria <text>] [--depends <subtaskId>[,<id>]] [--validation <command>]"
)

COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec(
        "plan",
        "maestro.cli.plan",
        "Validate a plan (YAML/JSON) and write .ai/MAESTRO.md.",
        "maestro plan --from <file|-> [--dry-run] [--yes]",
        "plan",
        "can_edit_tasks",
        hub_only=True,
    ),
    CommandSpec(
        "challenge",
        "maestro.cli.challenge",
        "Have other vendors' CLIs challenge the plan, read-only.",
        "maestro challenge [--tool <cli> | --all] [--json]",
        "plan",
        "can_edit_tasks",
        hub_only=True,
    ),
    CommandSpec(
        "run",
        "maestro.cli.run",
        "Dispatch ready tasks to spoke CLIs, in parallel where the graph allows.",
        "maestro run [<taskId>] [--detach] [--dry-run] [--json]",
        "run",
        "can_spawn_sessions",
        hub_only=True,
    ),
    CommandSpec(
        "wait",
        "maestro.cli.wait",
        "Block until the detached run reports something, then print it.",
        "maestro wait [--timeout <seconds>] [--json]",
        "run",
        "can_spawn_sessions",
        hub_only=True,
    ),
    CommandSpec(
        "pr",
        "maestro.cli.pr",
        "Show, follow or sync the pull request a `maestro run --pr` opened.",
        "maestro pr status|watch|sync [--json]",
        "run",
        "can_spawn_sessions",
        hub_only=True,
    ),
    CommandSpec(
        "review",
        "maestro.cli.review",
        "Have another vendor review a finished task, read-only.",
        "maestro review [<taskId>] [--tool <cli>] [--auto] [--json]",
        "run",
        "can_spawn_sessions",
        hub_only=True,
    ),
    CommandSpec(
        "status",
        "maestro.cli.status",
        "Show the goal, task table, blockers and next actions.",
        "maestro status [--json]",
        "plan",
        "can_report_session_level",
    ),
    CommandSpec(
        "board",
        "maestro.cli.board",
        "Serve the run's live board in a browser: the DAG, transcripts, office, steering.",
        "maestro board [--port <n>] [--no-open]",
        "run",
        "can_configure",
    ),
    CommandSpec(
        "report",
        "maestro.cli.report",
        "Write the walkthrough of a run: narrative, cost, timing, charts.",
        "maestro report [--output <file>] [--brief] [--json]",
        "plan",
        "can_report_session_level",
    ),
    CommandSpec(
        "prompt",
        "maestro.cli.prompt",
        "Print exactly what a task's spoke would receive, with its token count.",
        "maestro prompt <taskId> [--tool <cli>] [--json]",
        "plan",
        "can_report_task_level",
    ),
    CommandSpec(
        "agents",
        "maestro.cli.agents",
        "List, show and validate the agent personas.",
        "maestro agents list|show <name>|validate|permissions [--json]",
        "plan",
        None,
    ),
    CommandSpec(
        "archive",
        "maestro.cli.archive",
        "Move the plan and log to .ai/archive/<UTC time>/.",
        "maestro archive [--json]",
        "plan",
        "can_edit_tasks",
        hub_only=True,
    ),
    CommandSpec(
        "session",
        "maestro.cli.session",
        "List, show and stop sessions; say who you are.",
        "maestro session list [--siblings] [--mine] | show <id> | whoami | stop <id> [--reason <text>] [--json]",
        "office",
        "can_report_session_level",
        (
            ("coordinated-worker", "maestro session whoami | list --siblings | show <id>"),
            (
                "coordinated-coordinator",
                "maestro session list --mine | show <id> | stop <id> --reason <text>",
            ),
        ),
    ),
    CommandSpec(
        "mail",
        "maestro.cli.mail",
        "Send, read and wait for mail between sessions.",
        "maestro mail send --to <id>[,<id>] [--type <type>] [--priority <p>] --message <text> | reply <mailId> --message <text> | inbox [--unread] | wait [--timeout <s>] | show|thread <mailId> [--json]",
        "office",
        None,
        (
            ("coordinated-worker", _WORKER_MAIL),
            ("coordinated-coordinator", _COORDINATOR_MAIL),
        ),
    ),
    CommandSpec(
        "task",
        "maestro.cli.task",
        "Report your task's progress, a blocker or its completion.",
        f"{_TASK_REPORT} | {_TASK_SPAWN.removeprefix('maestro task ')} "
        "| stop <taskId> --reason <text> [--json]",
        "office",
        "can_report_task_level",
        (
            ("coordinated-worker", f"{_TASK_REPORT} [--json]"),
            (
                "coordinated-coordinator",
                f'{_TASK_SPAWN} | report progress|blocked|complete "<message>"',
            ),
        ),
    ),
    CommandSpec(
        "demo",
        "maestro.cli.demo",
        "Plan and run a six-task goal offline, its work simulated by the sim spoke.",
        "maestro demo [--keep] [--json]",
        "setup",
        "can_configure",
    ),
    CommandSpec(
        "config",
        "maestro.cli.config",
        "Show each effective setting and where it came from.",
        "maestro config [--json]",
        "setup",
        "can_configure",
    ),
    CommandSpec(
        "notify",
        "maestro.cli.notify",
        "Send a test notification through each channel you turned on (desktop, webhook).",
        "maestro notify test [--json]",
        "setup",
        "can_configure",
    ),
    CommandSpec(
        "install",
        "maestro.cli.install",
        "Install the slash commands (Codex: a skill) and the stub into a host.",
        "maestro install --host {hosts}|all [--scope project|user] [--dry-run]",
        "setup",
        "can_configure",
    ),
    CommandSpec(
        "uninstall",
        "maestro.cli.uninstall",
        "Remove what install wrote, restoring edited files.",
        "maestro uninstall --host {hosts}|all [--scope project|user] [--dry-run]",
        "setup",
        "can_configure",
    ),
    CommandSpec(
        "skill",
        "maestro.cli.skill",
        "Print an on-demand skill (decompose, route, validate-result, recover) for the hub.",
        "maestro skill [<name>] [--json]",
        "plan",
        "can_configure",
    ),
    CommandSpec(
        "doctor",
        "maestro.cli.doctor",
        "Check host CLIs, installs and known pitfalls, each with its fix.",
        "maestro doctor [--json]",
        "setup",
        "can_configure",
    ),
    CommandSpec(
        "completion",
        "maestro.cli.completion",
        "Print a shell completion script for bash, zsh or fish.",
        "maestro completion bash|zsh|fish",
        "setup",
        "can_configure",
    ),
    CommandSpec(
        "tokens",
        "maestro.cli.tokens",
        "Show the tokens Maestro adds to each host, against budgets.",
        "maestro tokens [--check] [--json]",
        "setup",
        "can_configure",
    ),
)

BY_NAME = {spec.name: spec for spec in COMMANDS}
