"""What the board shows, read from what the engine records: the plan (the same data as
`maestro status --json`), the latest run's folder and events, the office's sessions and
mail, and one task's evidence (its receipt's diff, reviews, withheld patch, transcripts).

Every path read here is built from the project's state folders and a task id or attempt
number checked first, and is resolved inside the state folder before it is opened.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from pathlib import Path
from typing import Any

from maestro import graph
from maestro.board import transcript
from maestro.bus.mailbox import Mailbox
from maestro.bus.messages import Message
from maestro.bus.sessions import USER, SessionStore
from maestro.bus.workers import run_session_id
from maestro.cli.context import Context
from maestro.cli.status import load_plan, status_data
from maestro.engine import keptstreams
from maestro.engine.needs import waiting
from maestro.engine.rundir import RunLock, find_run, latest_run, read_events
from maestro.engine.worktree import worktrees_dir
from maestro.errors import MaestroError, NotFound, SpokeError
from maestro.git import run_git, unfiltered
from maestro.paths import ID_PATTERN, ProjectPaths
from maestro.spokes.registry import detect_available
from maestro.state.model import Plan, Task

TASK_ID = re.compile(r"\d+(?:\.\d+)*")
SESSIONS_SHOWN = 60  # the office lists the sessions written last (`maestro session list`: all)
DIFF_LIMIT = 256 * 1024  # a diff bigger than this is cut, with the command that shows it all
MAIL_SHOWN = 4000  # a mail's body is cut beyond this many characters (a worker's can be megabytes)
SAFE_ID = re.compile(ID_PATTERN)


def inside(paths: ProjectPaths, path: Path) -> Path:
    """``path`` resolved, refused unless it lies inside the project's state folder."""
    resolved = path.resolve()
    if not resolved.is_relative_to(paths.state_dir.resolve()):
        raise MaestroError(f"{path} is outside the project's state.", "ask for a task's own files.")
    return resolved


def run_info(paths: ProjectPaths) -> dict[str, Any] | None:
    """The latest run: id, whether its engine is alive, its state and times."""
    try:
        run = latest_run(paths)
        meta = run.read_meta()
    except MaestroError:
        return None
    return {
        "id": run.run_id,
        "alive": RunLock(paths).alive(run.run_id),
        "state": meta.get("state"),
        "status": meta.get("status"),
        "started": meta.get("started") or meta.get("created"),
        "finished": meta.get("finished"),
    }


def layout(tasks: list[Task]) -> dict[str, list[int]]:
    """Each task's [column, row]: its column its wave (one past its deepest dependency,
    a subtask's parent counted as one), rows in plan order. Subtasks sit right after
    their parent's column, so a coordinated group reads as one block."""
    linked = [
        Task(id=t.id, title=t.title, depends=[*t.depends, *([t.parent] if t.parent else [])])
        for t in tasks
    ]
    column = {tid: n for n, wave in enumerate(graph.waves(linked)) for tid in wave}
    rows: dict[int, int] = {}
    places = {}
    for task in tasks:
        col = column[task.id]
        places[task.id] = [col, rows.get(col, 0)]
        rows[col] = rows.get(col, 0) + 1
    return places


def task_extra(task: Task) -> dict[str, Any]:
    return {
        "parent": task.parent,
        "mode": task.mode,
        "started": task.started,
        "finished": task.finished,
        "session": task.session,
        "run_id": task.run_id,
    }


def state(ctx: Context) -> dict[str, Any]:
    """The page's state: `maestro status --json`'s data, each task's times and place,
    the run, the CLIs installed, and what waits for the person (engine/needs.py)."""
    try:
        plan = load_plan(ctx)
    except MaestroError as error:
        return {
            "plan": None,
            "problem": error.message,
            "run": run_info(ctx.paths),
            "needs": [n.to_dict() for n in waiting(ctx.paths, None)],
        }
    data = status_data(plan, ctx)
    places = layout(plan.tasks)
    for row, task in zip(data["tasks"], plan.tasks, strict=True):
        row.update(task_extra(task), place=places[task.id])
    data["challenges"] = len(plan.challenges)
    return {
        "plan": data,
        "project": ctx.paths.root.name,
        "run": run_info(ctx.paths),
        "clis": list(detect_available(ctx.env)),  # installed, and sim: what Reassign offers
        "needs": [n.to_dict() for n in waiting(ctx.paths, plan)],  # what waits for the person
    }


def check_task(task_id: str) -> str:
    if not TASK_ID.fullmatch(task_id):
        raise MaestroError(f"{task_id!r} is not a task id.", "give one as the plan numbers it.")
    return task_id


KEPT = ("stream.jsonl", "output.txt")  # per attempt: its stream; at log level detailed, before it


def attempts(paths: ProjectPaths, task: Task) -> list[dict[str, Any]]:
    """The transcripts kept for ``task``, every run of it, oldest first: each attempt's
    stream, or, for runs before streams were kept, the raw output a ``detailed`` log
    level wrote when the attempt ended."""
    found: dict[tuple[str, int], dict[str, Any]] = {}
    if not paths.runs_dir.is_dir():
        return []
    for folder in sorted(paths.runs_dir.iterdir()):
        if not folder.is_dir() or not SAFE_ID.fullmatch(folder.name):
            continue
        for kind in reversed(KEPT):  # a stream wins over the output of the same attempt
            for path in folder.glob(f"task-{task.id}-attempt-*.{kind}"):
                number = path.name.removeprefix(f"task-{task.id}-attempt-").split(".")[0]
                if number.isdigit():
                    found[(folder.name, int(number))] = {
                        "run": folder.name,
                        "attempt": int(number),
                        "kind": kind,
                    }
    return [found[key] for key in sorted(found)]


# What a task's history lists of a run's events: its attempts, and how each ended and why.
HISTORY = {"task_started", "task_retry", "task_done", "task_failed", "task_blocked", "task_pending"}


def history(paths: ProjectPaths, task: Task, dispatched: set[str]) -> list[dict[str, Any]]:
    """What each run did with ``task``, oldest first: the clarification or CLI a run was
    started with for it (its ``run.json``'s options, as `maestro run N --clarify` records
    them), each attempt's start, and how each ended, with its reason (the run's events: a
    failure, a block, a stop). The events are read of the runs that dispatched it
    (``dispatched``), were started for it, or are the latest: a task's own history, never
    every run's whole record."""
    runs: list[tuple[Any, ...]] = []
    try:
        latest = latest_run(paths).run_id
    except MaestroError:
        return []
    for folder in paths.runs_dir.iterdir():
        if not folder.is_dir() or not SAFE_ID.fullmatch(folder.name):
            continue
        options, found = _run_options(folder), []
        for_it = options.get("task_id") == task.id
        if for_it:
            asked = [f"clarified: {options['clarify']}"] if options.get("clarify") else []
            asked += [f"reassigned to {options['tool']}"] if options.get("tool") else []
            asked += [f"persona {options['agent']}"] if options.get("agent") else []
            text = "; ".join(asked) or "run on its own"
            found.append({"time": options.get("started"), "kind": "asked", "text": text})
        if not (for_it or folder.name in dispatched or folder.name == latest):
            continue
        attempt = float("inf")  # the task's first attempt in the run orders runs of a second
        for event in read_events(folder / "events.jsonl")[0]:
            kind = str(event.get("kind"))
            if event.get("task") != task.id or kind not in HISTORY:
                continue
            if kind == "task_started":
                attempt = min(attempt, int(event.get("attempt") or 0))
                text = f"attempt {event.get('attempt')} on {event.get('tool')}"
            else:
                text = ": ".join(filter(None, [kind.removeprefix("task_"), event.get("reason")]))
            found.append({"time": event.get("time"), "kind": kind, "text": text})
        if found:
            runs.append(
                (str(options.get("started") or found[0]["time"]), attempt, folder.name, found)
            )
    return [item for *_, items in sorted(runs, key=lambda run: run[:3]) for item in items]


def _run_options(folder: Path) -> dict[str, Any]:
    """The options a run was started with, and its start (``started``); {} when unread."""
    try:
        meta = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    options = meta.get("options") if isinstance(meta, dict) else None
    return {**options, "started": meta.get("started")} if isinstance(options, dict) else {}


def transcript_path(
    paths: ProjectPaths, run_id: str, task_id: str, attempt: int, kind: str = KEPT[0]
) -> Path:
    if kind not in KEPT:
        raise MaestroError(f"{kind!r} is not a transcript.", f"ask for one of {', '.join(KEPT)}.")
    run = find_run(paths, run_id)  # refuses anything but a run's folder (`latest` names one)
    return inside(paths, run.artifact(check_task(task_id), attempt, kind))


def kept(paths: ProjectPaths, kind: str, task_id: str | None = None) -> list[dict[str, Any]]:
    """The reviewers' (of ``task_id``) or challengers' dispatches whose streams are kept
    (engine/keptstreams.py), oldest first: session, CLI, start, round, and the id of the
    review or challenge recorded from it (None: answering, or it failed)."""
    folder = paths.machine_dir / kind
    found = []
    for path in folder.glob(f"review-t{check_task(task_id)}-*.json" if task_id else "*.json"):
        session = path.name.removesuffix(".json")
        try:
            about = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not SAFE_ID.fullmatch(session) or not isinstance(about, dict):
            continue
        fields = {k: about.get(k) for k in ("cli", "started", "round", "id")}
        found.append({"session": session, **{k: v for k, v in fields.items() if v is not None}})
    return sorted(found, key=lambda a: (str(a.get("started", "")), a["session"]))


def kept_path(paths: ProjectPaths, kind: str, session: str) -> Path:
    """A kept review's or challenge's stream, from its checked session id."""
    if kind not in keptstreams.KINDS or not SAFE_ID.fullmatch(session):
        raise MaestroError(f"{kind} {session!r} is no kept stream.", "pick one the board shows.")
    return inside(paths, paths.machine_dir / kind / f"{session}{keptstreams.SUFFIX}")


def _diff(paths: ProjectPaths, change: str) -> str:
    if not re.fullmatch(r"[0-9a-f]{7,64}", change):
        return ""
    out = run_git("diff", f"{change}^", change, cwd=paths.root)
    text = out.stdout if out.exit_code == 0 else ""
    if len(text) > DIFF_LIMIT:
        text = text[:DIFF_LIMIT] + f"\n… cut; the whole diff: git diff {change}^ {change}\n"
    return text


def _live_diff(paths: ProjectPaths, task: Task) -> str:
    """A running task's change so far: its newest worktree's diff against the commit it
    started from, and the new files in it (read only: no git lock is taken)."""
    if task.status != "running" or not task.run_id or not SAFE_ID.fullmatch(task.run_id):
        return ""
    found = [p for p in worktrees_dir(paths).glob(f"{task.run_id}-task-{task.id}-*") if p.is_dir()]
    try:  # the dispatch may end and take its worktree at any moment: no diff yet
        newest = max(found, key=lambda p: p.stat().st_mtime, default=None)
        if newest is None:
            return ""
        where = inside(paths, newest)
        # (Its .gitattributes are the spoke's: no filter driver they name runs.)
        text = run_git("diff", "HEAD", cwd=where, config=unfiltered(where)).stdout
        new = run_git("ls-files", "--others", "--exclude-standard", cwd=where).stdout.split()
    except (OSError, SpokeError):
        return ""
    text += "".join(f"new file (not yet read): {name}\n" for name in new)
    return text[:DIFF_LIMIT]


def _withheld(paths: ProjectPaths, task: Task) -> dict[str, Any] | None:
    if not task.run_id or not SAFE_ID.fullmatch(task.run_id):
        return None
    patch = paths.machine_dir / "patches" / f"{task.run_id}-task-{task.id}.patch"
    with contextlib.suppress(OSError, MaestroError):
        text = inside(paths, patch).read_text(encoding="utf-8", errors="replace")
        return {"path": str(patch.relative_to(paths.root)), "patch": text[:DIFF_LIMIT]}
    return None


def task_detail(ctx: Context, task_id: str) -> dict[str, Any]:
    """One task in full: its fields, result, receipt and diff, the gates' log rows, its
    reviews, a withheld change, and the transcripts kept of its attempts."""
    plan: Plan = load_plan(ctx)
    task = plan.find(check_task(task_id))
    if task is None:
        raise NotFound(f"no task {task_id} in the plan.", "pick one the board shows.")
    receipt = task.receipt
    transcripts = attempts(ctx.paths, task)
    return {
        "id": task.id,
        "title": task.title,
        "status": task.status,
        "tool": task.tool,
        "agent": task.agent,
        "specialist": task.specialist,
        "attempts": task.attempts,
        "tokens": task.usage.total,
        "cost": task.cost,
        "depends": task.depends,
        "files": task.files,
        "criteria": task.criteria,
        "validation": task.validation,
        "result": task.result,
        "review": task.review,
        **task_extra(task),
        "receipt": receipt.__dict__ if receipt else None,
        "diff": _diff(ctx.paths, receipt.change)
        if receipt and receipt.change and task.status != "running"
        else _live_diff(ctx.paths, task),
        "log": [
            {
                "time": e.time,
                "tool": e.tool,
                "action": e.action,
                "outcome": e.outcome,
                "tokens": e.tokens,
            }
            for e in plan.log
            if e.task == task.id
        ],
        "reviews": [
            {
                "id": r.id,
                "reviewer": r.reviewer,
                "round": r.round,
                "verdict": r.verdict,
                "outcome": r.outcome,
                "findings": [{"severity": f.severity, "text": f.text} for f in r.findings],
            }
            for r in plan.reviews
            if r.task == task.id
        ],
        "withheld": _withheld(ctx.paths, task),
        "transcripts": transcripts,
        "history": history(ctx.paths, task, {a["run"] for a in transcripts}),
        "review_streams": kept(ctx.paths, "reviews", task.id),
    }


def read_transcript(paths: ProjectPaths, query: dict[str, str]) -> dict[str, Any]:
    """A transcript from byte ``from`` (else its end; ``behind``: there is more to read
    at once): a task attempt's (``run``,
    ``task``, ``attempt``, ``kind``), or a kept review's or challenge's (``reviews`` or
    ``challenges``: its session)."""
    where = next((kind for kind in keptstreams.KINDS if kind in query), None)
    if where is not None:
        path = kept_path(paths, where, query[where])
    else:
        attempt = query.get("attempt", "0")
        path = transcript_path(
            paths,
            query.get("run", ""),
            query.get("task", ""),
            int(attempt) if attempt.isdigit() else 0,
            query.get("kind", KEPT[0]),
        )
    offset = query.get("from")
    items, end, behind = transcript.tail(path, int(offset) if offset and offset.isdigit() else None)
    return {"entries": items, "offset": end, "behind": behind}


def challenges(ctx: Context) -> dict[str, Any]:
    """The plan's challenges with their findings, and the challengers' kept streams."""
    plan = load_plan(ctx)
    return {
        "challenges": [
            {
                "id": c.id,
                "challenger": c.challenger,
                "time": c.time,
                "parsed": c.parsed,
                "findings": {
                    category: [{"task": f.task, "text": f.text} for f in found]
                    for category, found in c.findings.items()
                },
                "raw": c.raw,
            }
            for c in plan.challenges
        ],
        "streams": kept(ctx.paths, "challenges"),
    }


def latest_sessions(paths: ProjectPaths, also: str | None) -> tuple[list[Any], int]:
    """The ``SESSIONS_SHOWN`` sessions written last (a folder's time is its manifest's last
    write), and ``also`` (the run's own), oldest first; and how many there are in all.
    Every dispatch leaves a session behind, so reading them all would make the board's
    memory and time grow with the project's age (2,000 sessions: 0.3 s and 8 MB a read)."""
    store = SessionStore(paths)
    try:
        with os.scandir(store.root) as entries:
            found = [
                (entry.stat().st_mtime, entry.name)
                for entry in entries
                if entry.is_dir() and SAFE_ID.fullmatch(entry.name)
            ]
    except FileNotFoundError:
        return [], 0
    names = [name for _, name in sorted(found)[-SESSIONS_SHOWN:]]
    if also is not None and also not in names and any(also == n for _, n in found):
        names.append(also)
    sessions = []
    for name in names:
        with contextlib.suppress(MaestroError):  # gone meanwhile, or unreadable
            sessions.append(store.get(name))
    sessions.sort(key=lambda s: (str(s.data.get("created", "")), s.id))
    return sessions, len(found)


def _mail(message: Message) -> dict[str, Any]:
    """A message as the page shows it: a body read cut says so, and how to read it whole."""
    data = message.to_dict()
    if message.whole is not None:
        data["message"] += (
            f"\n… cut: the first {MAIL_SHOWN:,} of {message.whole:,} characters;"
            f" the whole: maestro mail show {data['id']}"
        )
    return data


def office(paths: ProjectPaths) -> dict[str, Any]:
    """The latest sessions and their modes, the mail of the person and of the latest
    run's session (where its workers' questions and blockers go) by thread, and the
    questions and blockers still unread: all read without marking anything read."""
    run = run_info(paths)
    own = run_session_id(run["id"]) if run else None
    sessions, total = latest_sessions(paths, own)
    mailbox = Mailbox(paths)
    readers = [USER] + ([own] if own else [])
    messages = {
        m.id: m
        for reader in readers
        for m in mailbox.inbox(reader, mark=False, body_limit=MAIL_SHOWN)[0]
    }
    threads: dict[int, list[dict[str, Any]]] = {}
    for message in sorted(messages.values(), key=lambda m: m.created_ns):
        if message.thread not in threads:
            thread = mailbox.thread(message.id, body_limit=MAIL_SHOWN)[0]
            threads[message.thread] = [_mail(m) for m in thread]
    answered = {
        int(m["reply_to"][1:]) for thread in threads.values() for m in thread if m["reply_to"]
    }
    return {
        "sessions": [
            {"id": s.id, "mode": s.mode, "status": s.status, "tasks": s.task_ids} for s in sessions
        ],
        "sessions_total": total,
        "threads": list(threads.values()),
        "open": [
            _mail(m)
            for m in messages.values()
            if m.type in ("query", "blocked") and m.id not in answered
        ],
    }
