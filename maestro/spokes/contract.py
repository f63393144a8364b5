"""The spoke contract: the types every adapter speaks, on one screen.

The engine builds a ``DispatchRequest``, asks the registry for a ``Spoke`` (its base class
is ``maestro.spokes.base``) and calls ``dispatch``; it gets back one ``SpokeResult``
whatever the CLI printed.

Token counts mean the same thing for every CLI:

- ``usage.input``: prompt tokens the model processed fresh (Claude's cache writes count
  here: they are new input, billed above the input price);
- ``usage.cached``: prompt tokens served from the provider's prompt cache;
- ``usage.output``: generated tokens, thinking/reasoning included.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from maestro.agents.tiers import TIERS
from maestro.errors import SpokeError
from maestro.sandbox import Rules
from maestro.state.model import Usage

# A SpokeResult's error_kind: auth, rate_limit, turn_limit, timeout, bad_flag,
# untrusted_folder, server, network, over_budget, sandbox (``maestro.sandbox.fault``) or
# other. These are retried at once:
TRANSIENT_KINDS = frozenset({"rate_limit", "server", "network", "timeout"})


@dataclass
class DispatchRequest:
    """One task for one spoke. ``files`` are the task's deliverables as absolute paths
    (the sim spoke writes them; real CLIs learn them from the prompt)."""

    prompt: str
    system_prompt: str | None = None
    model: str | None = None
    max_turns: int | None = None
    tier: str = "full"
    # The agent's frontmatter grants web search (read-only research agents only): the
    # spoke offers its CLI's web search tool on top of the tier's tools.
    web_search: bool = False
    cwd: Path = field(default_factory=Path.cwd)
    timeout_s: float = 600.0
    resume_session: str | None = None
    # Keep the CLI's session on disk so a later dispatch can resume it (a task whose
    # review may send findings back). Challengers and reviewers leave none behind.
    keep_session: bool = False
    task_id: str | None = None
    files: list[Path] = field(default_factory=list)
    abort_tokens: int | None = None
    # Print events as they come (claude's and gemini's stream-json; codex always does):
    # a dispatch whose lines are kept (a review's, a challenge's) or whose usage is
    # watched (``abort_tokens``) streams; the final result reads the same either way.
    stream: bool = False
    env_extra: dict[str, str] = field(default_factory=dict)
    # Folders outside ``cwd`` the spoke's own shell must write, unconfined: the office's
    # state (``.ai/maestro``), where ``maestro mail`` and ``task report`` record what it
    # says. A CLI whose sandbox confines writes to the workdir is told to allow them.
    shared_dirs: list[Path] = field(default_factory=list)
    # Confined: folders its process must not even read (the office's store), and the
    # folder of its session's door to the office (maestro.bus.door), bound at
    # sandbox.OFFICE in its sandbox.
    hidden_dirs: list[Path] = field(default_factory=list)
    door: Path | None = None
    # The task's title and success criteria, for the sim spoke's answer (real CLIs read
    # them in the prompt).
    title: str | None = None
    criteria: list[str] = field(default_factory=list)
    # A folder for files the CLI needs for this dispatch (Gemini's policy file). The
    # engine passes the run's folder; without one, dispatch() makes a temporary folder.
    scratch_dir: Path | None = None
    # Seconds the sim spoke waits before answering (else env MAESTRO_SIM_DELAY).
    sim_delay_s: float | None = None
    # Where a line goes while the CLI gives no answer (every ``process.QUIET_S`` of
    # silence): what it last said on stderr. None: nobody is waiting at a terminal.
    progress: Callable[[str], None] | None = None
    # How its process is confined (maestro.sandbox); None: it runs with the person's
    # full rights (MAESTRO_SANDBOX=0, `run --no-sandbox`).
    sandbox: Rules | None = None

    def __post_init__(self) -> None:
        if self.tier not in TIERS:
            raise SpokeError(
                f"unknown tool tier {self.tier!r} for a dispatch.",
                f"use one of: {', '.join(TIERS)}.",
            )
        self.cwd = Path(self.cwd)
        self.files = [Path(f) for f in self.files]
        if self.scratch_dir is not None:
            self.scratch_dir = Path(self.scratch_dir)


@dataclass
class SpokeResult:
    tool: str
    text: str = ""
    success: bool = False
    error_kind: str | None = None
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    cost: float | None = None
    cost_estimated: bool = False
    duration_s: float = 0.0
    session_id: str | None = None
    exit_code: int | None = None
    timed_out: bool = False
    simulated: bool = False
    argv: list[str] = field(default_factory=list)
    stdout: str = ""
    stderr: str = ""
    aborted_over_budget: bool = False
    # The model(s) the CLI reported using, comma-separated (router models included).
    model: str | None = None
    # A model the price table lacks: the cost is unknown, and this names why.
    unpriced: str | None = None
    # Why the session the request asked to resume was not: the dispatch started afresh.
    not_resumed: str | None = None
    # Its process ran confined by Maestro's sandbox (False: with the person's full rights).
    confined: bool = False
    # What its sandbox refused it (``sandbox.refusals``: "network: refused ...",
    # "processes: ... refused at the limit ..."), or "".
    refused: str = ""

    @property
    def transient(self) -> bool:
        """Worth an immediate retry: the same request may well succeed next time."""
        return not self.success and self.error_kind in TRANSIENT_KINDS


def fail(tool: str, kind: str, message: str, **fields: Any) -> SpokeResult:
    return SpokeResult(tool=tool, success=False, error_kind=kind, error=message, **fields)


class UsageTally:
    """Running token count of a streaming dispatch. Events that repeat a message's usage
    replace that message's entry (``set``); a final total replaces everything (``final``)."""

    def __init__(self) -> None:
        self.parts: dict[str, Usage] = {}

    def set(self, key: str, usage: Usage) -> None:
        self.parts[key] = usage

    def add(self, usage: Usage) -> None:
        self.parts[f"#{len(self.parts)}"] = usage

    def final(self, usage: Usage) -> None:
        self.parts = {"final": usage}

    @property
    def usage(self) -> Usage:
        total = Usage()
        for part in self.parts.values():
            total = total + part
        return total
