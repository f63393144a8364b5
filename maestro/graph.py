"""The plan's dependency graph: pure functions on ``list[Task]``.

Everything here is linear or close to it in the number of tasks and dependencies, so a
2000-task plan validates in milliseconds; transitive questions (ancestors, file
conflicts) use one bitset per task, built once in topological order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, TypeVar

from maestro.errors import NotFound, PlanError
from maestro.filespec import is_glob, normalize_file, overlap
from maestro.state.model import Task


class Node(Protocol):
    """What the ordering functions need of a task: the scheduler's jobs have it too."""

    @property
    def id(self) -> str: ...

    @property
    def depends(self) -> Sequence[str]: ...


N = TypeVar("N", bound=Node)


def _ids(tasks: Sequence[Node]) -> dict[str, int]:
    return {task.id: index for index, task in enumerate(tasks)}


def validate(tasks: Sequence[Node]) -> None:
    """Raise ``PlanError`` for a duplicate id, an unknown or self dependency, or a cycle."""
    seen: set[str] = set()
    for task in tasks:
        if task.id in seen:
            raise PlanError(
                f"Task {task.id} appears twice.",
                "give one of them another id; ids must be unique.",
            )
        seen.add(task.id)
    for task in tasks:
        for dep in task.depends:
            if dep not in seen:
                known = ", ".join(t.id for t in tasks)
                raise PlanError(
                    f"Task {task.id} depends on {dep}, which is not in the plan.",
                    f"remove {dep} from Task {task.id}'s depends, or add a Task {dep} "
                    f"(existing ids: {known}).",
                )
    loop = dependency_loop(tasks)
    if loop:
        raise PlanError(*loop[1:])


def dependency_loop(tasks: Sequence[Node]) -> tuple[str, str, str] | None:
    """A task that depends on itself, or else the first cycle, as (the id of the task to
    blame, message, fix); None when the tasks can be ordered."""
    for task in tasks:
        if task.id in task.depends:
            return (
                task.id,
                f"Task {task.id} depends on itself.",
                f"remove {task.id} from Task {task.id}'s depends.",
            )
    cycle = find_cycle(tasks)
    if cycle is None:
        return None
    path = " -> ".join(cycle)
    return (
        cycle[0],
        f"the tasks depend on each other in a cycle: {path} (each depends on the next).",
        f"remove one of these dependencies so the work can start ({path}).",
    )


def find_cycle(tasks: Sequence[Node]) -> list[str] | None:
    """The first cycle found, as ids with the start repeated at the end, or None.

    Each id depends on the next: ``["1", "3", "2", "1"]`` means Task 1 depends on 3,
    3 on 2 and 2 on 1.
    Dependencies on unknown ids are ignored here (``validate`` reports them).
    Iterative depth-first search, so deep chains cannot hit the recursion limit.
    """
    index = _ids(tasks)
    deps = [[index[d] for d in task.depends if d in index] for task in tasks]
    state = [0] * len(tasks)  # 0 unvisited, 1 on the current path, 2 finished
    for start in range(len(tasks)):
        if state[start]:
            continue
        path: list[int] = [start]
        cursors: list[int] = [0]
        state[start] = 1
        while path:
            node = path[-1]
            if cursors[-1] < len(deps[node]):
                nxt = deps[node][cursors[-1]]
                cursors[-1] += 1
                if state[nxt] == 1:
                    loop = path[path.index(nxt) :]
                    # Start at the task that comes first in the plan, so the same
                    # cycle is always named the same way.
                    first = loop.index(min(loop))
                    loop = loop[first:] + loop[:first]
                    return [tasks[i].id for i in loop + loop[:1]]
                if state[nxt] == 0:
                    state[nxt] = 1
                    path.append(nxt)
                    cursors.append(0)
            else:
                state[node] = 2
                path.pop()
                cursors.pop()
    return None


def topological_order(tasks: Sequence[N]) -> list[N]:
    """Tasks with every dependency before its dependents, stable with the plan's order."""
    return [tasks[i] for level in _levels(tasks) for i in level]


def _levels(tasks: Sequence[Node]) -> list[list[int]]:
    index = _ids(tasks)
    dependents: list[list[int]] = [[] for _ in tasks]
    missing = [0] * len(tasks)
    for i, task in enumerate(tasks):
        for dep in dict.fromkeys(task.depends):
            if dep in index:
                dependents[index[dep]].append(i)
                missing[i] += 1
    level = [i for i in range(len(tasks)) if missing[i] == 0]
    levels: list[list[int]] = []
    placed = 0
    while level:
        levels.append(level)
        placed += len(level)
        following: list[int] = []
        for i in level:
            for j in dependents[i]:
                missing[j] -= 1
                if missing[j] == 0:
                    following.append(j)
        level = sorted(following)
    if placed != len(tasks):
        validate(tasks)  # raises with the cycle's path
    return levels


def waves(tasks: Sequence[Task]) -> list[list[str]]:
    """Groups of task ids that can run together: wave n needs only waves before it."""
    return [[tasks[i].id for i in level] for level in _levels(tasks)]


def ready(tasks: Sequence[Task]) -> list[Task]:
    """Pending tasks whose dependencies are all done, in plan order."""
    status = {task.id: task.status for task in tasks}
    return [
        task
        for task in tasks
        if task.status == "pending" and all(status.get(dep) == "done" for dep in task.depends)
    ]


def critical_path(tasks: Sequence[Task], durations: dict[str, float]) -> tuple[float, list[str]]:
    """The longest chain of dependent work: (total duration, ids from first to last).

    A task missing from ``durations`` counts as 0. Ties go to the chain met first in plan
    order, so the answer is deterministic.
    """
    if not tasks:
        return 0.0, []
    index = _ids(tasks)
    finish = [0.0] * len(tasks)
    via: list[int | None] = [None] * len(tasks)
    for i in (i for level in _levels(tasks) for i in level):
        best: int | None = None
        for dep in tasks[i].depends:
            j = index.get(dep)
            if j is not None and (best is None or finish[j] > finish[best]):
                best = j
        start = finish[best] if best is not None else 0.0
        finish[i] = start + float(durations.get(tasks[i].id, 0.0))
        via[i] = best
    end = max(range(len(tasks)), key=lambda i: (finish[i], -i))
    chain: list[str] = []
    node: int | None = end
    while node is not None:
        chain.append(tasks[node].id)
        node = via[node]
    return finish[end], chain[::-1]


def _ancestor_bits(tasks: Sequence[Task]) -> list[int]:
    """Bit j of entry i is set when task j is a (transitive) dependency of task i."""
    index = _ids(tasks)
    bits = [0] * len(tasks)
    for i in (i for level in _levels(tasks) for i in level):
        mask = 0
        for dep in tasks[i].depends:
            j = index.get(dep)
            if j is not None:
                mask |= bits[j] | (1 << j)
        bits[i] = mask
    return bits


def _position(tasks: Sequence[Task], task_id: str) -> int:
    for i, task in enumerate(tasks):
        if task.id == task_id:
            return i
    known = ", ".join(t.id for t in tasks) or "none"
    raise NotFound(f"no Task {task_id} in the plan.", f"use one of the task ids: {known}.")


def ancestors(tasks: Sequence[Task], task_id: str) -> list[str]:
    """Ids of every task ``task_id`` waits for, directly or not, in plan order."""
    mask = _ancestor_bits(tasks)[_position(tasks, task_id)]
    return [task.id for j, task in enumerate(tasks) if mask >> j & 1]


def ancestors_of_any(tasks: Sequence[Task], task_ids: Iterable[str]) -> set[str]:
    """Ids of every task that any of ``task_ids`` waits for, directly or not."""
    index = _ids(tasks)
    wanted = [index[t] for t in task_ids if t in index]
    if not wanted:
        return set()
    bits = _ancestor_bits(tasks)
    mask = 0
    for i in wanted:
        mask |= bits[i]
    return {task.id for j, task in enumerate(tasks) if mask >> j & 1}


def descendants_of(tasks: Sequence[Task], task_ids: Iterable[str]) -> dict[str, list[str]]:
    """For each of ``task_ids``: the ids that wait for it, in plan order (one pass)."""
    bits = _ancestor_bits(tasks)
    out: dict[str, list[str]] = {}
    for task_id in task_ids:
        target = _position(tasks, task_id)
        out[task_id] = [task.id for j, task in enumerate(tasks) if bits[j] >> target & 1]
    return out


def descendants(tasks: Sequence[Task], task_id: str) -> list[str]:
    """Ids of every task that waits for ``task_id``, directly or not, in plan order."""
    target = _position(tasks, task_id)
    bits = _ancestor_bits(tasks)
    return [task.id for j, task in enumerate(tasks) if bits[j] >> target & 1]


def _owners(tasks: Sequence[Task]) -> tuple[dict[str, list[int]], list[tuple[int, str]]]:
    """Plain paths -> the tasks that own them, and the globs with their task."""
    owners: dict[str, list[int]] = {}
    globs: list[tuple[int, str]] = []
    for i, task in enumerate(tasks):
        for raw in task.files:
            path = normalize_file(raw)
            if path and is_glob(path):
                globs.append((i, path))
            elif path:
                entry = owners.setdefault(path.rstrip("/") or "/", [])
                if not entry or entry[-1] != i:
                    entry.append(i)
    return owners, globs


def _parents(path: str) -> Iterable[str]:
    while "/" in path.strip("/"):
        path = path.rsplit("/", 1)[0]
        yield path


def file_conflicts(tasks: Sequence[Task]) -> list[tuple[str, str, str]]:
    """(task a, task b, file) for two tasks that own the same file (or one owns a folder
    holding the other's file) and could run at the same time, i.e. neither depends on the
    other, even transitively. Task a comes first in plan order; sorted by plan order."""
    owners, globs = _owners(tasks)
    bits = _ancestor_bits(tasks)
    found: dict[tuple[int, int], str] = {}
    index = {t.id: i for i, t in enumerate(tasks)}
    # A subtask works within its coordinating task's files, while it waits: not a conflict.
    lineage: set[tuple[int, int]] = set()
    for i, task in enumerate(tasks):
        parent = getattr(task, "parent", None)
        while parent is not None and parent in index and (i, index[parent]) not in lineage:
            lineage.add((i, index[parent]))
            parent = getattr(tasks[index[parent]], "parent", None)

    def check(a: int, b: int, path: str) -> None:
        if a == b:
            return
        a, b = min(a, b), max(a, b)
        if bits[a] >> b & 1 or bits[b] >> a & 1:
            return
        if (a, b) in lineage or (b, a) in lineage:
            return
        found.setdefault((a, b), path)

    for path, owning in owners.items():
        for x in range(len(owning)):
            for y in range(x + 1, len(owning)):
                check(owning[x], owning[y], path)
        for parent in _parents(path):
            for a in owners.get(parent, ()):
                for b in owning:
                    check(a, b, path)
    # A glob against every other entry (filespec's one rule): globs are few.
    for a, glob in globs:
        for path, owning in owners.items():
            if overlap(glob, path):
                for b in owning:
                    check(a, b, path)
        for b, other in globs:
            if b != a and overlap(glob, other):
                check(a, b, min(glob, other))
    return [(tasks[a].id, tasks[b].id, path) for (a, b), path in sorted(found.items())]
