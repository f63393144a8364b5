"""Static AAVSR checks of the design notes: Atomic, Authority, Verifiable, Scope, Risk.

Each failed check says which task, why, and the remedy. Errors block writing a plan (and
dispatching a task: the engine re-runs these before each dispatch); warnings are shown.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from maestro import graph, roster
from maestro.agents.catalog import SPECIALIST_DEFAULTS
from maestro.errors import MaestroError
from maestro.filespec import literal_files
from maestro.paths import ProjectPaths
from maestro.repo import Repo
from maestro.state.model import Plan, Task

MAX_FILES = 8
MAX_CRITERIA = 6
WRITING_TIERS = ("read+write", "full")
SHELL_TIERS = ("read+shell", "full")
BUILDS = ("code", "test")  # specialists whose work is files and a passing check


@dataclass(frozen=True)
class AavsrFinding:
    check: str  # Atomic | Authority | Verifiable | Scope | Risk
    task: str | None  # task id, None for the plan as a whole
    why: str
    remedy: str
    level: str  # error | warning

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        where = f"Task {self.task}" if self.task else "plan"
        return f"{self.level}: {where}: {self.check}: {self.why} Remedy: {self.remedy}"


# Atomic ---------------------------------------------------------------------------------

_VERBS = (
    "add|write|implement|create|build|update|fix|refactor|test|document|remove|delete|"
    "migrate|deploy|review|rename|move|configure|set up|setup|integrate|replace|rewrite|"
    "optimi[sz]e|design|research|investigate|audit|publish|release|install|upgrade|convert|"
    "extract|wire|hook up|expose|validate|verify|benchmark|profile|clean up|split|merge"
)
_JOINED = re.compile(
    rf"(?:\b(?:and|then|plus|also)\s+(?:then\s+|also\s+)?|&\s*|;\s*)({_VERBS})\b", re.IGNORECASE
)


def _atomic(task: Task) -> list[tuple[str, str, str]]:
    found = []
    if len(task.files) > MAX_FILES:
        found.append(
            (
                f"it owns {len(task.files)} files (more than {MAX_FILES}), too much for one outcome.",
                "split it into smaller tasks, each owning a few files.",
                "warning",
            )
        )
    if len(task.criteria) > MAX_CRITERIA:
        found.append(
            (
                f"it has {len(task.criteria)} success criteria (more than {MAX_CRITERIA}).",
                "split it into smaller tasks with one clear outcome each.",
                "warning",
            )
        )
    joined = _JOINED.search(task.title)
    if joined:
        found.append(
            (
                f"its title joins two pieces of work ('... {joined.group(0).strip()} ...').",
                "split it into smaller tasks, one outcome each, the second depending on the first.",
                "warning",
            )
        )
    return found


# Authority ------------------------------------------------------------------------------


def _install_hint(tool: str) -> str:
    cli = roster.get(tool)
    return cli.install_hint if cli and cli.install_hint else f"install the {tool} CLI"


def _agents_with(catalog: Any, tiers: tuple[str, ...]) -> list[str]:
    names = []
    for name in catalog.names():
        try:
            if catalog.get(name).tier in tiers:
                names.append(name)
        except MaestroError:  # disabled: not a suggestion
            continue
    return names


Finding = tuple[str, str, str]  # (problem, fix, level)


def _authority(task: Task, catalog: Any, available: Collection[str] | None) -> list[Finding]:
    """Can the task's agent do its work (write what it owns, review without writing), and
    is there a CLI to run it?"""
    found = _agent_authority(task, catalog) if catalog is not None else []
    return found + _tool_authority(task, available)


def _agent_authority(task: Task, catalog: Any) -> list[Finding]:
    try:
        agent = catalog.get(task.agent) if task.agent else catalog.for_task(task)
    except MaestroError as exc:
        whose = (
            f"agent '{task.agent}'" if task.agent else f"the default agent for {task.specialist}"
        )
        return [(f"{whose}: {exc.message}", exc.fix or "name another agent.", "error")]
    found = []
    writes = agent.tier in WRITING_TIERS
    if task.files and not writes:
        capable = ", ".join(_agents_with(catalog, WRITING_TIERS)) or "one with write access"
        found.append(
            (
                f"agent {agent.name} is {agent.tier} and cannot write the files it owns.",
                f"give it an agent that can write ({capable}), or drop its files.",
                "error",
            )
        )
    if task.mode == "coordinate" and agent.tier not in SHELL_TIERS:
        shells = ", ".join(_agents_with(catalog, SHELL_TIERS)) or "one with a shell"
        found.append(
            (
                f"Task {task.id} coordinates (Mode: coordinate), but agent {agent.name} is {agent.tier}: it has no shell to run `maestro task spawn`.",
                f"give it an agent with a shell ({shells}), or drop its Mode.",
                "error",
            )
        )
    if task.specialist == "review" and writes:
        readers = ", ".join(_agents_with(catalog, ("read-only",))) or "a read-only agent"
        found.append(
            (
                f"a review by agent {agent.name} ({agent.tier}) could change the code it reviews.",
                f"use a read-only reviewer ({readers}).",
                "warning",
            )
        )
    return found


def _tool_authority(task: Task, available: Collection[str] | None) -> list[Finding]:
    """The named CLI is installed; a task without one could be routed to some CLI."""
    if available is None:
        return []
    builtin = (cli := roster.get(task.tool)) is not None and cli.executable is None
    if task.tool and not builtin and task.tool not in available:
        installed = ", ".join(sorted(str(name) for name in available)) or "none"
        return [
            (
                f"tool {task.tool} is not installed (not on PATH, nor where Maestro found it before).",
                (
                    f"{_install_hint(task.tool)} (installed already: run `maestro doctor` once "
                    f"from a shell whose PATH has it), or assign an installed tool ({installed})."
                ),
                "error",
            )
        ]
    if not task.tool:
        # The run routes a task without a Tool; say now if nothing could take it. A
        # warning: the CLI may be installed before the run.
        try:
            roster.route(task.specialist, available, None)
        except MaestroError as exc:
            return [(f"no tool is named and {exc.message}", exc.fix or "name a tool.", "warning")]
    return []


# Verifiable -----------------------------------------------------------------------------

_VAGUE = re.compile(
    r"\b(works?|working|good|better|properly|correctly|clean|nice|as expected|appropriate(ly)?|robust|well)\b",
    re.IGNORECASE,
)
_CONCRETE = re.compile(
    r"[0-9/`.()=<>]|\b(pass(es)?|exit|returns?|raises?|prints?|shows?|contains?|test)\b",
    re.IGNORECASE,
)


def _kind_of(task: Task, catalog: Any) -> str | None:
    """The task's specialist; for a task that names only an agent, the kind of work that
    agent does: the specialist it is the default of, else by its tier (writers build)."""
    if task.specialist or not task.agent:
        return task.specialist

    for specialist, agent in SPECIALIST_DEFAULTS.items():
        if agent == task.agent:
            return specialist
    try:
        tier = catalog.get(task.agent).tier if catalog is not None else None
    except MaestroError:
        return None  # Authority reports the unknown or disabled agent
    if tier is None:
        return None
    return "code" if tier in WRITING_TIERS else "research"


def _verifiable(task: Task, kind: str | None) -> list[tuple[str, str, str]]:
    found = []
    if not task.criteria:
        found.append(
            (
                "it has no success criteria, so nothing can say it is done.",
                'add testable criteria, e.g. criteria: ["pytest tests/test_auth.py passes"].',
                "error",
            )
        )
    vague = [c for c in task.criteria if _VAGUE.search(c) and not _CONCRETE.search(c)]
    if vague:
        found.append(
            (
                f"criterion '{vague[0]}' cannot be tested as written.",
                "say how it is checked: a command that passes, an output, a status code, a file.",
                "warning",
            )
        )
    if kind in BUILDS and not task.validation:
        found.append(
            (
                f"it is a {kind} task with no validation command.",
                "add a command that checks the work, e.g. validation: pytest tests/test_auth.py.",
                "error",
            )
        )
    return found


# Scope ----------------------------------------------------------------------------------


def path_problem(raw: str, paths: ProjectPaths | None) -> str | None:
    """Why a declared file is out of bounds, or None when it stays inside the project."""
    text = raw.strip().replace("\\", "/")
    pure = PurePosixPath(text)
    if ".." in pure.parts:
        return f"path {raw} climbs out with '..'."
    root = paths.root.resolve() if paths is not None else None
    if pure.is_absolute():
        if root is None or not Path(text).resolve().is_relative_to(root):
            return f"path {raw} is outside the project."
        rel = Path(text).resolve().relative_to(root)
    else:
        rel = Path(text)
    if root is not None:
        target = (root / rel).resolve()
        if not target.is_relative_to(root):
            return f"path {raw} leads through a symlink to {target}, outside the project."
        rel = target.relative_to(root)
    first = rel.parts[0] if rel.parts else ""
    state = paths.state_dir_name if paths is not None else ".ai"
    if first == ".git" or first == PurePosixPath(state).parts[0]:
        return f"path {raw} is inside {first}/, which only git and Maestro may change."
    return None


def _scope(task: Task, paths: ProjectPaths | None, kind: str | None) -> list[tuple[str, str, str]]:
    found = []
    if kind in BUILDS and not task.files:
        found.append(
            (
                f"it is a {kind} task that owns no files, so its scope cannot be checked.",
                "list the files it may create or change, e.g. files: [src/auth.py].",
                "error",
            )
        )
    for raw in task.files:
        problem = path_problem(raw, paths)
        if problem:
            found.append((problem, "use a path inside the project, relative to its root.", "error"))
    return found


# Risk -----------------------------------------------------------------------------------

_RISKS = (
    (
        "a migration",
        re.compile(r"\bmigrat\w*|\balembic\b|\bschema change", re.IGNORECASE),
        "write the rollback step in its criteria",
    ),
    (
        "deleting data or files",
        re.compile(r"\b(delete|drop|truncate|purge|wipe|destroy)\b|\brm -rf\b", re.IGNORECASE),
        "say exactly what is removed in its criteria",
    ),
    (
        "a deploy or release",
        re.compile(r"\b(deploy\w*|release|publish|production|prod)\b", re.IGNORECASE),
        "keep the deploy itself for a person after review",
    ),
    (
        "secrets",
        re.compile(
            r"\b(secrets?|credentials?|api[ _-]?keys?|private key)\b|(^|/)\.env\b|\.pem\b|id_rsa",
            re.IGNORECASE,
        ),
        "keep secret values out of the plan and of files a spoke writes",
    ),
)
_DESTRUCTIVE = re.compile(
    r"\brm\s+-\w*[rf]|\bgit\s+(push|reset\s+--hard|clean\s+-\w*f)|\b(drop|truncate)\s+(table|database)\b"
    r"|\bkubectl\s+(apply|delete)|\bterraform\s+(apply|destroy)|\b(npm|twine|cargo|gem)\s+publish\b"
    r"|\|\s*(ba)?sh\b",
    re.IGNORECASE,
)


def _risk(task: Task, reviewed: set[str]) -> list[tuple[str, str, str]]:
    found = []
    if task.validation:
        bad = _DESTRUCTIVE.search(task.validation)
        if bad:
            found.append(
                (
                    f"its validation command changes things ('{bad.group(0).strip()}'); the run executes it.",
                    "make validation a read-only check, such as the test suite.",
                    "error",
                )
            )
    text = " ".join([task.title, *task.criteria, *task.files])
    hits = [(what, remedy) for what, pattern, remedy in _RISKS if pattern.search(text)]
    if task.risk != "high" and not hits:
        return found
    what = f"it looks high-risk ({', '.join(h[0] for h in hits)})" if hits else "its risk is high"
    remedies = [h[1] for h in hits]
    if task.id not in reviewed:
        remedies.append(
            f"add a review task that depends on it (specialist: review) or run `maestro review {task.id}` before accepting it"
        )
        found.append(
            (f"{what} and no review task checks it.", "; ".join(remedies) + ".", "warning")
        )
    elif task.risk != "high":
        remedies.append("set risk: high so the run and the report treat it with care")
        found.append(
            (
                f"{what} but its risk is {task.risk or 'not set'}.",
                "; ".join(remedies) + ".",
                "warning",
            )
        )
    return found


# All ------------------------------------------------------------------------------------


def aavsr(
    plan: Plan,
    *,
    catalog: Any = None,
    available: Collection[str] | None = None,
    paths: ProjectPaths | None = None,
) -> list[AavsrFinding]:
    """Run the five checks on every task, in plan order.

    ``catalog`` (agents.catalog.Catalog) enables the agent checks, ``available`` (tool
    names installed, e.g. ``spokes.registry.detect_available()``) the tool check, and
    ``paths`` the checks that need the project on disk (absolute paths, symlinks).
    """
    findings: list[AavsrFinding] = []
    # A task is reviewed when some review task waits for it, directly or not.
    reviewed = graph.ancestors_of_any(
        plan.tasks, [t.id for t in plan.tasks if t.specialist == "review"]
    )
    for task in plan.tasks:
        kind = _kind_of(task, catalog)
        per_check = (
            ("Atomic", _atomic(task)),
            ("Authority", _authority(task, catalog, available)),
            ("Verifiable", _verifiable(task, kind)),
            ("Scope", _scope(task, paths, kind)),
            ("Risk", _risk(task, reviewed)),
        )
        for check, found in per_check:
            findings.extend(
                AavsrFinding(check, task.id, why, remedy, level) for why, remedy, level in found
            )
    for first, second, path in graph.file_conflicts(plan.tasks):
        findings.append(
            AavsrFinding(
                "Scope",
                first,
                f"Task {first} and Task {second} both own {path} and could run at the same time.",
                f"make one depend on the other or give {path} to one of them; "
                "until then the run never starts them together.",
                "warning",
            )
        )
    return findings


def unlandable(plan: Plan, paths: ProjectPaths) -> list[AavsrFinding]:
    """Scope warnings that ask git (`maestro plan`, `run --dry-run`; not each dispatch): a
    file a task names that git ignores, or that lies inside a nested repository, never
    lands from a worktree, and the run fails that task when its spoke writes it."""
    repo = Repo.find(paths.root)
    if repo is None:
        return []
    named = [
        (task.id, f)
        for task in plan.tasks
        if task.status != "done"
        for f in literal_files(task.files)
        if path_problem(f, paths) is None
    ]
    nested = {}
    for _, f in named:
        folders = [str(p) for p in reversed(PurePosixPath(f).parents) if str(p) != "."]
        inside = next((p for p in folders if (paths.root / p / ".git").exists()), None)
        if inside is not None:
            nested[f] = inside
    # (check-ignore refuses a path inside a submodule: those are asked nothing)
    rules = repo.ignoring([f"{repo.prefix}{f}" for _, f in named if f not in nested])
    findings = []
    for task_id, f in named:
        rule = rules.get(f"{repo.prefix}{f}")
        if f in nested:
            why = (
                f"{f} is inside {nested[f]}, a nested git repository: a task's worktree "
                "holds it empty, so work there does not land."
            )
            remedy = f"plan that work in {nested[f]} itself, or run with `maestro run --in-place`."
        elif rule is not None:
            why = f"{f} is ignored by git ({rule}): a task's worktree never lands it."
            remedy = (
                f"change .gitignore so that git does not ignore it (`git check-ignore -v {f}` "
                "shows the rule), take it out of the task's Files, or run with `--in-place`."
            )
        else:
            continue
        findings.append(AavsrFinding("Scope", task_id, why, remedy, "warning"))
    return findings


def errors(findings: list[AavsrFinding]) -> list[AavsrFinding]:
    return [f for f in findings if f.level == "error"]
