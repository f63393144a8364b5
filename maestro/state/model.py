"""The plan held in `.ai/MAESTRO.md`, as plain data.

Equality compares content only: the ``layout`` each object carries (where its text came
from, pieces of a person's text the model does not hold, field order, line endings) is
excluded, so ``parse(render(plan)) == plan`` is a statement about content.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from typing import Any

from maestro import roster
from maestro.errors import NotFound

FORMAT_VERSION = 1
STATUSES = ("pending", "running", "done", "failed", "blocked")
SPECIALISTS = ("code", "review", "test", "research")
# The roster's live list of CLIs (maestro.roster): a CLI registered later is a known Tool.
TOOLS = roster.NAMES
RISKS = ("low", "medium", "high")
# How a task's spoke works: does it itself (execute, the default) or splits it into
# subtasks that the run dispatches under it (coordinate: `maestro task spawn`).
TASK_MODES = ("execute", "coordinate")
REVIEW_STATES = ("approved", "changes-requested", "flagged", "needs-human")
VERDICTS = ("approve", "request-changes", "flag")
SEVERITIES = ("critical", "major", "minor", "note")
CHALLENGE_CATEGORIES = (
    ("assumptions", "Assumption issues"),
    ("missing_dependencies", "Missing dependencies"),
    ("scope", "Scope concerns"),
    ("alternatives", "Alternative approaches"),
)
TASK_ID = re.compile(r"^[0-9]+(?:\.[0-9]+)*$")


# A task field the hub's plan sets is declared once, here: its JSON Schema (what `maestro
# plan --schema` prints and `plan --from` checks), the example a schema error shows, and
# so its place in a re-plan (planning/replan.py) and in plan input (planning/loading.py)
# all follow from the field; the Markdown codec (state/markdown/kinds.py) reads and
# writes it.
ONE_LINE = r"^[^\r\n]*\S[^\r\n]*$"
# The most one task's field holds, in plan input and in a subtask a spoke spawns alike
# (one schema bounds both): far past a real task (the plan check warns past 8 files or 6
# criteria), and small enough that one task cannot swell the plan file, every later read
# of it, and each prompt that quotes the task.
TITLE_MAX = 200
TEXT_MAX = 1_000  # a criterion, the validation command, an entry of files
ITEMS_MAX = 100  # files, criteria, depends
ID_MAX = 64
ID_SCHEMA = {
    "type": ["string", "integer"],
    "pattern": TASK_ID.pattern,
    "maxLength": ID_MAX,
    "minimum": 0,
    "description": "Task id: a number, or a dotted number for a sub-task (1, 2, 2.1).",
}


def planned(schema: dict[str, Any], example: str, **kw: Any) -> Any:
    """A field the hub's plan sets: its schema and the example of its right shape."""
    return field(metadata={"plan": schema, "example": example}, **kw)


def plan_fields() -> list[tuple[str, dict[str, Any], str]]:
    """(name, schema, example) of each task field the hub's plan sets, in order."""
    return [
        (f.name, f.metadata["plan"], f.metadata["example"])
        for f in fields(Task)
        if "plan" in f.metadata
    ]


def task_sort_key(task_id: str) -> tuple[int, ...]:
    return tuple(int(part) for part in task_id.split("."))


@dataclass
class Usage:
    """Tokens one or more dispatches used, as the CLI reported them."""

    input: int = 0
    output: int = 0
    cached: int = 0

    @property
    def total(self) -> int:
        return self.input + self.output

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input + other.input, self.output + other.output, self.cached + other.cached
        )

    def is_zero(self) -> bool:
        return not (self.input or self.output or self.cached)


@dataclass
class Receipt:
    """Evidence of what a task really did, taken by the engine after the spoke returned."""

    diff_stat: str = ""  # e.g. "2 files changed, 30 insertions(+), 2 deletions(-)"
    files_changed: list[str] = field(default_factory=list)
    validation: str | None = None
    validation_exit: int | None = None
    commit: str | None = None  # HEAD of the working tree when the task finished
    diff_sha: str | None = None  # sha256 of the task's diff text (review: unchanged-diff check)
    change: str | None = None  # the task's change as a commit; its parent is where it started


@dataclass
class Task:
    id: str = planned(ID_SCHEMA, 'id: 1 (or "2.1", quoted, for a sub-task)')
    title: str = planned(
        {
            "type": "string",
            "pattern": ONE_LINE,
            "maxLength": TITLE_MAX,
            "description": "One atomic outcome, one line: 'Add the /login endpoint'.",
        },
        "title: Add the /login endpoint",
    )
    status: str = "pending"
    specialist: str | None = planned(
        {"enum": list(SPECIALISTS), "description": "The kind of work (or name an agent, or both)."},
        "specialist: code",
        default=None,
    )
    agent: str | None = planned(
        {
            "type": "string",
            "pattern": r"^[a-z0-9][a-z0-9-]*$",
            "maxLength": ID_MAX,
            "description": "Persona from `maestro agents list` (default: the specialist's).",
        },
        "agent: coder",
        default=None,
    )
    tool: str | None = planned(
        {"enum": TOOLS, "description": "The spoke CLI that does the task."},
        "tool: gemini",
        default=None,
    )
    depends: list[str] = planned(
        {
            "type": "array",
            "items": ID_SCHEMA,
            "uniqueItems": True,
            "maxItems": ITEMS_MAX,
            "description": "Ids of tasks that must be done first.",
        },
        "depends: [1, 2]",
        default_factory=list,
    )
    files: list[str] = planned(
        {
            "type": "array",
            "items": {"type": "string", "pattern": ONE_LINE, "maxLength": TEXT_MAX},
            "uniqueItems": True,
            "maxItems": ITEMS_MAX,
            "description": "Files the task may create or change, relative to the project root.",
        },
        "files: [src/auth.py, tests/test_auth.py]",
        default_factory=list,
    )
    criteria: list[str] = planned(
        {
            "type": "array",
            "items": {"type": "string", "pattern": ONE_LINE, "maxLength": TEXT_MAX},
            "maxItems": ITEMS_MAX,
            "description": "Testable success criteria.",
        },
        'criteria: ["pytest tests/test_auth.py passes"]',
        default_factory=list,
    )
    validation: str | None = planned(
        {
            "type": "string",
            "pattern": ONE_LINE,
            "maxLength": TEXT_MAX,
            "description": "One shell command that checks the work (exit 0 = pass).",
        },
        "validation: pytest tests/test_auth.py",
        default=None,
    )
    risk: str | None = planned(
        {"enum": list(RISKS), "description": "Impact if the task goes wrong."},
        "risk: low",
        default=None,
    )
    mode: str | None = planned(  # one of TASK_MODES; None is execute
        {
            "enum": list(TASK_MODES),
            "description": "coordinate: the spoke splits the task into subtasks with "
            "`maestro task spawn` (default execute).",
        },
        "mode: coordinate",
        default=None,
    )
    parent: str | None = None  # the coordinating task that spawned this one
    # Filled by the run:
    result: str | None = None
    attempts: int = 0
    usage: Usage = field(default_factory=Usage)
    cost: float | None = None
    cost_estimated: bool = False
    started: str | None = None  # ISO 8601 UTC, e.g. 2026-11-21T12:00:00Z
    finished: str | None = None
    session: str | None = None  # the spoke CLI's session id
    pid: int | None = None  # engine process running the task (while running)
    run_id: str | None = None
    receipt: Receipt | None = None
    review: str | None = None  # one of REVIEW_STATES
    downstream_context: str | None = None
    layout: Any = field(default=None, compare=False, repr=False)


@dataclass
class Finding:
    text: str
    task: str | None = None  # task id the finding concerns, if it names one
    severity: str | None = None  # reviews: one of SEVERITIES


@dataclass
class Challenge:
    id: str
    challenger: str  # cli name
    time: str  # ISO 8601 UTC
    parsed: bool = True
    findings: dict[str, list[Finding]] = field(default_factory=dict)  # category key -> items
    usage: Usage = field(default_factory=Usage)
    cost: float | None = None
    cost_estimated: bool = False
    raw: str | None = None  # the answer verbatim when it could not be parsed
    layout: Any = field(default=None, compare=False, repr=False)


@dataclass
class Review:
    id: str
    task: str
    reviewer: str  # cli name
    round: int
    time: str
    verdict: str | None  # one of VERDICTS, None when the answer was malformed
    findings: list[Finding] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    cost: float | None = None
    cost_estimated: bool = False
    diff_sha: str | None = None
    outcome: str | None = None  # accepted | revising | blocked | needs-human | format-failure
    layout: Any = field(default=None, compare=False, repr=False)


@dataclass
class LogEntry:
    """One row of the plan's own `## Execution Log` summary table."""

    time: str
    task: str
    tool: str
    action: str
    outcome: str
    tokens: int | None = None
    cost: str | None = None


@dataclass
class Source:
    hub: str
    time: str  # "YYYY-MM-DD HH:MM UTC"


@dataclass
class Plan:
    goal: str
    tasks: list[Task] = field(default_factory=list)
    challenges: list[Challenge] = field(default_factory=list)
    reviews: list[Review] = field(default_factory=list)
    log: list[LogEntry] = field(default_factory=list)
    source: Source | None = None
    title: str = "Maestro Orchestration"
    format_version: int = FORMAT_VERSION
    layout: Any = field(default=None, compare=False, repr=False)

    def task(self, task_id: str) -> Task:
        for task in self.tasks:
            if task.id == task_id:
                return task

        known = ", ".join(t.id for t in self.tasks) or "none"
        raise NotFound(f"no Task {task_id} in the plan.", f"use one of the task ids: {known}.")

    def find(self, task_id: str) -> Task | None:
        return next((t for t in self.tasks if t.id == task_id), None)

    def counts(self) -> dict[str, int]:
        counts = {status: 0 for status in STATUSES}
        for task in self.tasks:
            counts[task.status] = counts.get(task.status, 0) + 1
        return counts

    def copy(self) -> Plan:
        """A copy to change freely: its records, their lists and values are its own; the
        layouts (what a parse remembers of the text, never changed after it) are shared."""
        copied: Plan = copy_of(self)
        return copied


# The fields of each class that hold lists, dicts or records (found from their types, so a
# new field of that kind is copied too).
_HOLDS = re.compile(r"\b(list|dict|Usage|Receipt|Source)\b")
_OWNED: dict[type, tuple[str, ...]] = {}


def copy_of(value: Any) -> Any:
    """``value`` (a record, or a list or dict of them) with lists, dicts and records of its
    own; strings, numbers and layouts are shared."""
    cls = value.__class__
    if cls is list:
        return [v if v.__class__ is str else copy_of(v) for v in value]
    if cls is dict:
        return {k: copy_of(v) for k, v in value.items()}
    names = _OWNED.get(cls)
    if names is None:
        names = _OWNED[cls] = tuple(
            f.name for f in fields(cls) if f.name != "layout" and _HOLDS.search(str(f.type))
        )
    new = object.__new__(cls)
    held = new.__dict__
    held.update(value.__dict__)
    for name in names:
        if held[name] is not None:
            held[name] = copy_of(held[name])
    return new
