"""Every setting Maestro has: its key (``MAESTRO_<KEY>`` in the environment), kind,
default, help and bounds; config.py resolves them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from maestro import roster
from maestro.paths import DEFAULT_STATE_DIR
from maestro.sandbox import PROCESSES, SECRETS, TMP_MB


@dataclass(frozen=True)
class Setting:
    key: str
    kind: str  # int | float | str | enum | bool | list | url
    default: Any
    help: str
    choices: Sequence[str] = ()
    minimum: float | None = None
    maximum: float | None = None

    @property
    def env(self) -> str:
        return "MAESTRO_" + self.key.upper()

    def allowed(self) -> str:
        if self.kind == "enum":
            return "one of " + ", ".join(self.choices)
        if self.kind == "bool":
            return "true or false (also 1/0, yes/no, on/off)"
        if self.kind == "list":
            return "a comma-separated list of names"
        if self.kind == "url":
            return "an http:// or https:// URL"
        if self.kind in ("int", "float"):
            noun = "an integer" if self.kind == "int" else "a number"
            if self.minimum is not None and self.maximum is not None:
                return f"{noun} from {self.minimum:g} to {self.maximum:g}"
            if self.minimum is not None:
                return f"{noun} of at least {self.minimum:g}"
            return noun
        return "any text"


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "state_dir",
        "str",
        DEFAULT_STATE_DIR,
        "Folder (relative to the project) holding MAESTRO.md and the log; outside the project only as an absolute path with state_dir_outside.",
    ),
    Setting(
        "state_dir_outside",
        "bool",
        False,
        "Allow an absolute state_dir outside the project (state kept elsewhere on purpose).",
    ),
    Setting("max_concurrent", "int", 3, "Most spokes running at once.", minimum=1, maximum=64),
    Setting(
        "stagger_delay",
        "float",
        1.0,
        "Seconds a spoke waits after another of its CLI started, while that one runs.",
        minimum=0,
        maximum=600,
    ),
    Setting(
        "agent_timeout",
        "float",
        None,
        "Wall-clock minutes per dispatch for every agent (overrides timeout_mins).",
        minimum=0.01,
        maximum=1440,
    ),
    Setting(
        "max_retries", "int", 2, "Retries per task after its first attempt.", minimum=0, maximum=10
    ),
    Setting(
        "max_depth",
        "int",
        2,
        "How deep coordinating tasks may nest subtasks (`maestro task spawn`): 2 allows 4.1 and 4.1.1.",
        minimum=1,
        maximum=5,
    ),
    Setting(
        "retry_backoff",
        "float",
        2.0,
        "Seconds before retrying a transient failure (rate limit, 5xx, network); doubles each retry.",
        minimum=0,
        maximum=600,
    ),
    Setting(
        "default_model",
        "str",
        None,
        "Model for every agent (overrides the agent's own); a name of one vendor's (gemini-*, claude-*, gpt-*) goes only to that vendor's CLI.",
    ),
    Setting(
        "writer_model",
        "str",
        None,
        "Model for technical-writer (wins over default_model; same vendor rule).",
    ),
    Setting(
        "default_temperature", "float", None, "Temperature for every agent.", minimum=0, maximum=1
    ),
    Setting("max_turns", "int", None, "Turn limit for every agent.", minimum=1, maximum=500),
    Setting("disabled_agents", "list", (), "Agents that may not be planned or dispatched."),
    *(
        Setting(
            f"budget_{unit}_{scope}",
            kind,
            None,
            f"Pause the run once {whose} has spent this many {noun} (asks you at 80%; {extra}).",
            minimum=0,
        )
        for unit, kind, noun, extra in (
            ("usd", "float", "dollars", "estimated figures count as they are shown, ~$"),
            ("tokens", "int", "tokens", "for a subscription: no per-token bill"),
        )
        for scope, whose in (
            ("run", "a `maestro run`"),
            ("task", "a task (all its attempts, in every run)"),
            ("day", "the project today (every run since local midnight)"),
        )
    ),
    Setting(
        "budget_hard",
        "bool",
        False,
        "At a budget cap, stop running spokes at once (their tasks go back to pending) instead of letting them finish.",
    ),
    Setting(
        "price_table",
        "str",
        None,
        "A price table to use instead of the one Maestro ships (maestro/data/prices.toml): a copy of it you keep current; relative to the project.",
    ),
    Setting(
        "validation_strictness",
        "enum",
        "normal",
        "strict: any unmet gate fails; normal: out-of-scope edits fail, unverified criteria warn; lenient: both warn.",
        choices=("strict", "normal", "lenient"),
    ),
    Setting(
        "log",
        "enum",
        "summary",
        "Execution log verbosity in MAESTRO-LOG.md.",
        choices=("off", "summary", "detailed"),
    ),
    Setting(
        "review_rounds",
        "int",
        3,
        "Most review rounds per task before it needs a human.",
        minimum=1,
        maximum=20,
    ),
    Setting(
        "commit",
        "bool",
        False,
        "Commit each landed task on the current branch (a message naming the task and the run).",
    ),
    Setting(
        "pr",
        "bool",
        False,
        "Deliver each run as a pull request (maestro run --pr): the work on a branch of its own, each task a commit, pushed and opened with the forge's CLI (gh); your tree and branch stay as they are.",
    ),
    Setting(
        "pr_remote",
        "str",
        None,
        "The remote a pull request's branch is pushed to (default: origin).",
    ),
    Setting(
        "pr_ci_rounds",
        "int",
        2,
        "Rounds of CI failures sent back to their tasks before the run asks you to decide (0: never sent).",
        minimum=0,
        maximum=10,
    ),
    Setting(
        "pr_ci_timeout",
        "float",
        3600.0,
        "Seconds a run waits for its pull request's checks to finish each round.",
        minimum=0,
    ),
    Setting(
        "pr_poll",
        "float",
        30.0,
        "Seconds between two looks at a pull request's checks.",
        minimum=1,
    ),
    Setting(
        "pr_merge",
        "enum",
        "never",
        "Merge the pull request when every check is green and its required reviews are met (when-green), or leave merging to you (never).",
        choices=("never", "when-green"),
    ),
    Setting(
        "in_place",
        "bool",
        False,
        "Spokes work in the shared working tree instead of a git worktree each (the only mode outside git).",
    ),
    Setting(
        "keep_worktrees",
        "bool",
        False,
        "Keep a failed or blocked attempt's worktree (its path is listed) instead of removing it.",
    ),
    Setting(
        "sandbox",
        "bool",
        True,
        "Confine every process started for the plan (spokes, validation commands) with bubblewrap: it writes only its worktree and its CLI's state, reaches the office only as its own session and the network only through Maestro's allow-listing proxy; false (or `run --no-sandbox`) runs them with your full rights. Environment only, like the six below.",
    ),
    Setting(
        "sandbox_hide",
        "list",
        SECRETS,
        "Files and folders no confined process can read (~ is your home).",
    ),
    Setting(
        "sandbox_write",
        "list",
        (),
        "Folders every confined process may also write, e.g. a build cache (~ is your home).",
    ),
    Setting(
        "sandbox_hosts",
        "list",
        (),
        "Hosts every confined process may also reach through Maestro's proxy (host, host:port, *.domain, an IP address), e.g. a package registry validation needs; a spoke reaches its CLI's model hosts besides.",
    ),
    Setting(
        "sandbox_env",
        "list",
        (),
        "Variables of your environment every spoke and validation command also gets (a name ending in * passes every name it begins); the rest of yours they never see.",
    ),
    Setting(
        "sandbox_tmp_mb",
        "int",
        TMP_MB,
        "Size in MB of a confined process's private /tmp, and of its /dev/shm: memory, freed when it ends; a write past it fails (No space left on device).",
        minimum=1,
    ),
    Setting(
        "sandbox_processes",
        "int",
        PROCESSES,
        "Most processes (threads count) a confined process and all it starts may have at once: by a cgroup of its own where Maestro can make one, else by RLIMIT_NPROC, which counts all of yours. A dispatch refused a fork past it fails.",
        minimum=16,
    ),
    Setting(
        "workspace_links",
        "list",
        ("node_modules", ".venv", "venv", "env", "target", "vendor", ".gradle", "bower_components"),
        "Ignored folders of the project linked into every worktree (dependencies validation needs).",
    ),
    Setting(
        "workspace_copy",
        "list",
        (".env", ".env.*", ".envrc"),
        "Ignored files copied into every worktree (gitignore patterns from the project root; also a .worktreeinclude file).",
    ),
    Setting(
        "notify_desktop",
        "bool",
        False,
        "A desktop notification (notify-send on Linux, osascript on macOS) when something waits for you during a run: a worker's question or blocker, a decision, a failed task, a budget cap at 80% or reached.",
    ),
    Setting(
        "notify_webhook",
        "url",
        None,
        "A URL the run POSTs the same moments to as JSON that Slack's, Discord's and ntfy's webhooks take. Environment only, like sandbox: it sends the project's questions away.",
    ),
    Setting(
        "hub",
        "enum",
        None,
        "The CLI acting as hub (recorded as the plan's source).",
        choices=roster.NAMES,
    ),
    Setting(
        "sim_delay",
        "float",
        0.0,
        "Seconds the offline sim spoke waits before it answers (to watch a run).",
        minimum=0,
    ),
)

SETTINGS_BY_KEY = {s.key: s for s in SETTINGS}
TABLES = ("agents", "prices", "budgets")
# Settings Maestro had and why they are gone: a config file that still sets one is told so.
RETIRED = {
    "wake_interval": "a hub following a run is woken only when it must act, never for "
    "progress (the board and notifications show it)",
}
