"""Hierarchy: a coordinating task (``Mode: coordinate``) splits itself into subtasks.

Its spoke, a coordinated coordinator of the run, types ``maestro task spawn ...`` in its
shell. ``spawn`` checks that the session may spawn and asks the engine that runs the
parent, through the office (engine/requests.py: while a run is live, only its engine
writes what others ask of the plan). The engine, on its next idle tick,
``add_subtask``: checks the subtask like any plan task (AAVSR, the dependency graph,
file ownership: within the parent's files and clear of running tasks), gives it the
next id under its parent (``4.1``, ``4.2``), writes it into the plan right after the
parent's subtree in one ``PlanStore.edit()`` (which keeps every byte of a person's
text), schedules it and answers with the new task. It is dispatched as a coordinated
worker of the parent's session (its reports and questions go to the parent's ``mail wait``). The
parent's task finishes only when its subtasks have (``unfinished``): done when they are
all done, else blocked, naming them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from dataclasses import fields as dataclass_fields
from typing import Any

from maestro import graph, planning
from maestro.agents.catalog import load_catalog
from maestro.bus.sessions import USER, SessionStore, current_id
from maestro.engine.ownership import normalize, overlapping, owns
from maestro.engine.requests import ask
from maestro.engine.rundir import RunLock
from maestro.errors import MaestroError
from maestro.paths import ProjectPaths
from maestro.planning.loading import refuse_controls
from maestro.planning.planschema import check, fields_shape
from maestro.state.model import Plan, Task, task_sort_key

SPAWN = "task spawn"  # the request's subject at the run's desk


@dataclass
class SpawnRequest:
    """What ``maestro task spawn`` was given."""

    title: str
    files: list[str] = field(default_factory=list)
    criteria: list[str] = field(default_factory=list)
    depends: list[str] = field(default_factory=list)
    validation: str | None = None
    specialist: str | None = None
    agent: str | None = None
    tool: str | None = None
    mode: str | None = None  # coordinate: the subtask splits itself again (depth allowing)


# What the desk takes for a spawn: each field with plan input's own schema and bounds.
REQUEST_SHAPE = fields_shape([f.name for f in dataclass_fields(SpawnRequest)], ["title"])


@dataclass
class Spawned:
    task: Task
    parent: Task
    warnings: list[str] = field(default_factory=list)


# -- the tree ---------------------------------------------------------------------------


def children(plan: Plan, task_id: str) -> list[Task]:
    return [t for t in plan.tasks if t.parent == task_id]


def lineage(plan: Plan, task: Task) -> list[str]:
    """The task's parent, its parent's parent, ... (the file reader refuses loops)."""
    chain: list[str] = []
    parent = task.parent
    while parent is not None and parent not in chain:
        chain.append(parent)
        above = plan.find(parent)
        parent = above.parent if above is not None else None
    return chain


def depth(plan: Plan, task: Task) -> int:
    """0 for a task of the plan as written, 1 for a subtask, 2 for a subtask's subtask."""
    return len(lineage(plan, task))


def within(entry: str, parent_files: list[str]) -> bool:
    """Does a subtask's ``Files`` entry lie inside one of its parent's entries?"""
    bare = normalize(entry).rstrip("/")
    return bool(bare) and any(owns(owner, bare) for owner in parent_files)


def unfinished(plan: Plan, task_id: str) -> list[Task]:
    """The task's subtasks that may still change: running ones, and pending ones that can
    still run (none of the tasks they wait for has failed or is blocked)."""
    stuck: set[str] = {t.id for t in plan.tasks if t.status in ("failed", "blocked")}
    changed = True
    while changed:  # pending tasks waiting on a stuck one are stuck too
        changed = False
        for t in plan.tasks:
            if t.status == "pending" and t.id not in stuck and stuck.intersection(t.depends):
                stuck.add(t.id)
                changed = True
    return [
        t
        for t in children(plan, task_id)
        if t.status == "running" or (t.status == "pending" and t.id not in stuck)
    ]


def subtask_summary(plan: Plan, task_id: str) -> str:
    """``4.1 done, 4.2 failed``: the subtasks and their state, for results and prompts."""
    return ", ".join(f"{t.id} {t.status}" for t in children(plan, task_id))


def next_id(plan: Plan, parent: Task) -> str:
    prefix = parent.id + "."
    taken = {t.id for t in plan.tasks}
    numbers = [
        int(t.id[len(prefix) :])
        for t in plan.tasks
        if t.id.startswith(prefix) and t.id[len(prefix) :].isdigit()
    ]
    number = max(numbers, default=0) + 1
    while f"{prefix}{number}" in taken:
        number += 1
    return f"{prefix}{number}"


def _insert_at(plan: Plan, parent: Task) -> int:
    """Right after the parent's subtree, so the file reads 4, 4.1, 4.2, 5."""
    subtree = {parent.id}
    at = plan.tasks.index(parent) + 1
    for index, task in enumerate(plan.tasks):
        if set(lineage(plan, task)) & subtree:
            at = max(at, index + 1)
    return at


# -- spawn ------------------------------------------------------------------------------


def spawn(paths: ProjectPaths, env: Mapping[str, str], request: SpawnRequest) -> dict[str, Any]:
    """``maestro task spawn``: check that the calling session may spawn, then ask the run
    that dispatched its task to add the subtask (engine/requests.py); raise MaestroError
    (with the fix) for a caller that may not spawn or a subtask the engine refuses."""

    me = SessionStore(paths).peek(current_id(env))
    if me.id == USER:
        raise MaestroError(
            "task spawn is for the spoke of a coordinating task, and MAESTRO_SESSION_ID is not set.",
            "as the person, add the task to the plan file, or re-plan with `maestro plan --from`.",
        )
    _check_session(me)
    run_id = str(me.data["run_id"])
    if not RunLock(paths).alive(run_id):
        raise MaestroError(
            f"run {run_id}, which dispatched Task {me.task_ids[0]}, is not running: nothing would dispatch the subtask.",
            'report it instead: `maestro task report blocked "..."`.',
        )
    _request(asdict(request))  # refused here, as the engine would, before any mail is sent
    answer = ask(paths, me.id, run_id, SPAWN, asdict(request))
    if not isinstance(answer.get("task"), dict) or not isinstance(answer.get("warnings"), list):
        raise MaestroError(
            f"run {run_id}'s answer to task spawn is not what the engine writes.",
            "`maestro status` shows whether the subtask was added.",
        )
    return answer


def spawned_data(done: Spawned) -> dict[str, Any]:
    """The engine's answer to ``task spawn``, as ``--json`` prints it."""
    task = done.task
    return {
        "task": {
            "id": task.id,
            "title": task.title,
            "parent": task.parent,
            "files": task.files,
            "criteria": task.criteria,
            "depends": task.depends,
            "validation": task.validation,
            "mode": task.mode or "execute",
        },
        "warnings": done.warnings,
    }


def _request(fields: Mapping[str, Any]) -> SpawnRequest:
    """A SpawnRequest from the JSON a spoke sent, checked as plan input is: the known
    keys, each of its type within plan input's bounds, no control character (a null is a
    value not given). Nothing past those bounds reaches the plan."""
    given = {key: value for key, value in fields.items() if value is not None}
    refuse_controls(given, SPAWN)
    check(given, SPAWN, shape=REQUEST_SHAPE, whole="the request")
    return SpawnRequest(**given)


def _check_session(me: Any) -> None:
    if me.status != "working":
        raise MaestroError(
            f"session {me.id} is {me.status}: only a working session can spawn subtasks.",
            "`maestro session show " + me.id + "` says why it ended.",
        )
    if not me.task_ids or not me.data.get("run_id"):
        raise MaestroError(
            f"session {me.id} runs no task of a run, so a subtask would have no parent.",
            "spawn from the spoke of a coordinating task that `maestro run` dispatched.",
        )


def add_subtask(
    store: Any, settings: Any, sender: str, run_id: str, fields: Mapping[str, Any]
) -> Spawned:
    """The engine's side of ``task spawn``, for the session ``sender``: check the subtask
    like any plan task (AAVSR, the graph, file ownership) and write it into the plan
    under the sender's task, which this engine runs. The request came through the
    office from a spoke: every field is checked before it is believed."""

    request = _request(fields)
    paths = store.paths
    sessions = SessionStore(paths)
    if not sessions.exists(sender):
        raise MaestroError(f"no session {sender} in this project.", "spawn from a spoke's shell.")
    me = sessions.peek(sender)
    _check_session(me)
    if str(me.data["run_id"]) != run_id:
        raise MaestroError(
            f"session {me.id} belongs to run {me.data['run_id']}, not to run {run_id}.",
            "spawn from the spoke of a task this run dispatched.",
        )
    parent_id = me.task_ids[0]
    title = " ".join(request.title.split())
    catalog = load_catalog(settings)
    with store.edit() as plan:
        parent = plan.task(parent_id)
        _check_parent(plan, parent, me.id, settings.max_depth)
        files = [normalize(f) or f for f in request.files]
        _check_files(plan, parent, files)
        depends = _check_depends(plan, parent, request.depends)
        task = Task(
            id=next_id(plan, parent),
            title=title,
            specialist=request.specialist
            or (None if request.agent else (parent.specialist or "code")),
            agent=request.agent,
            tool=request.tool,
            depends=depends,
            files=files,
            criteria=[c.strip() for c in request.criteria],
            validation=(request.validation or "").strip() or None,
            mode=request.mode if request.mode == "coordinate" else None,
            parent=parent.id,
        )
        _check_running(plan, task)
        alone = replace(plan, tasks=[task])
        findings = planning.aavsr(alone, catalog=catalog, paths=paths)
        problems = planning.errors(findings)
        if problems:
            first = problems[0]
            more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
            raise MaestroError(
                f"AAVSR {first.check}: {first.why}{more}", first.remedy + " Nothing was added."
            )
        plan.tasks.insert(_insert_at(plan, parent), task)
        graph.validate(plan.tasks)
        warnings = [f"{f.check}: {f.why}" for f in findings if f.level == "warning"]
        warnings += [
            f"Task {a} and Task {b} both own {path}: the run never starts them together"
            for a, b, path in graph.file_conflicts(plan.tasks)
            if task.id in (a, b)
        ]
        spawned = Spawned(task=replace(task), parent=replace(parent), warnings=warnings)
    return spawned


def _check_parent(plan: Plan, parent: Task, session_id: str, max_depth: int) -> None:
    if parent.mode != "coordinate":
        raise MaestroError(
            f"Task {parent.id} is not a coordinating task (it has no `Mode: coordinate`): its spoke does the work itself.",
            'do the work within your task, or report what is missing: `maestro task report blocked "..."`.',
        )
    if parent.status != "running" or parent.pid is None:
        raise MaestroError(
            f"Task {parent.id} is {parent.status}, not running: its subtasks would have no coordinator.",
            "spawn subtasks while your task runs.",
        )
    if parent.pid != os.getpid():
        raise MaestroError(
            f"Task {parent.id} is running in another engine (pid {parent.pid}), not in this run.",
            "spawn from the spoke of a task this run dispatched.",
        )
    level = depth(plan, parent) + 1
    if level > max_depth:
        raise MaestroError(
            f"Task {parent.id} is {level - 1} level(s) deep and subtasks are capped at depth {max_depth} (max_depth): a subtask of it would be too deep.",
            "do this part within your task yourself, or have the person raise max_depth "
            "(MAESTRO_MAX_DEPTH or max_depth in .ai/maestro.toml).",
        )


def _check_files(plan: Plan, parent: Task, files: list[str]) -> None:
    outside = [f for f in files if not within(f, parent.files)]
    if outside:
        owned = ", ".join(parent.files) or "none"
        raise MaestroError(
            f"subtask file {outside[0]} is not within Task {parent.id}'s files ({owned}).",
            "give the subtask files inside its parent's; a change elsewhere goes to your "
            'coordinator: `maestro task report blocked "..."`.',
        )


def _check_depends(plan: Plan, parent: Task, depends: list[str]) -> list[str]:
    """A subtask waits only for its siblings or for tasks already done: its parent (and
    the parent's parents) finish after it, and anything else might never run."""
    result: list[str] = []
    above = {parent.id, *lineage(plan, parent)}
    for raw in depends:
        dep = str(raw).strip()  # plan input's ids may be numbers
        if not dep or dep in result:
            continue
        other = plan.find(dep)
        if other is None:
            siblings = ", ".join(t.id for t in children(plan, parent.id)) or "none yet"
            raise MaestroError(
                f"--depends {dep}: no Task {dep} in the plan.",
                f"name a subtask spawned before it (yours so far: {siblings}), or a done task.",
            )
        if dep in above:
            raise MaestroError(
                f"--depends {dep}: Task {dep} coordinates this subtask and finishes after it.",
                f"drop {dep}: the subtask runs while Task {parent.id} does.",
            )
        if other.parent != parent.id and other.status != "done":
            raise MaestroError(
                f"--depends {dep}: Task {dep} is neither a subtask of Task {parent.id} nor done ({other.status}).",
                "depend on your own subtasks or on finished tasks only.",
            )
        result.append(dep)
    return sorted(result, key=task_sort_key)


def _check_running(plan: Plan, task: Task) -> None:
    """Its files must not be taken by a task running now, other than its coordinators
    (whose files it shares by design) and the subtasks it waits for."""
    mine = set(lineage(plan, task)) | set(task.depends)
    for other in plan.tasks:
        if other.status != "running" or other.id in mine:
            continue
        clash = overlapping(task.files, other.files)
        if clash:
            raise MaestroError(
                f"subtask file {clash[0]} is owned by Task {other.id}, which is running now.",
                f"add --depends {other.id} if it is your subtask, or give this one other files."
                if other.parent == task.parent
                else "give this subtask other files.",
            )
