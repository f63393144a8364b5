"""Showing a run as it goes: one plain line per event, or a live table on a terminal.

Both views read the same events the engine appends to ``events.jsonl``; `describe` is
also what `maestro wait` prints.
"""

from __future__ import annotations

import shutil
import threading
import time
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TextIO

from maestro.formatting import (
    Frame,
    colour_wanted,
    elapsed_text,
    inert,
    money_text,
    painted,
    tokens_text,
)

# Events that end a `maestro wait`: the hub following the run must act on them.
ACT_KINDS = ("decision", "run_ended")


Event = dict[str, Any]


def describe(event: Event) -> str:
    """One line for one event; an event of a kind not in ``_LINES`` shows its fields."""
    kind = event.get("kind", "?")
    line = _LINES.get(kind)
    if line is not None:
        return line(event)
    details = {k: v for k, v in event.items() if k not in ("v", "seq", "time", "kind")}
    return f"{kind}: {details}"


# What a digest leaves out: the engine's steps towards a result, not results.
_STEPS = ("run_started", "task_started", "task_retry", "spend")


def digest(events: list[Event]) -> tuple[list[Event], list[str]]:
    """The events a wait shows and their lines: the steps towards results left out, the
    tasks done on one line."""
    kept = [e for e in events if e.get("kind") not in _STEPS]
    done = [e for e in kept if e.get("kind") == "task_done"]
    lines = [describe(e) for e in kept if e.get("kind") != "task_done"]
    if done:
        ids = ", ".join(str(e.get("task")) for e in done)
        spent = _spent(
            {
                "tokens": sum(int(e.get("tokens") or 0) for e in done),
                "cost": sum(float(e.get("cost") or 0) for e in done) or None,
                "cost_estimated": any(e.get("cost_estimated") for e in done),
            }
        )
        noun = "task" if len(done) == 1 else "tasks"
        line = f"{noun} {ids} done" + (f" ({spent})" if spent else "")
        warned = [e for e in done if e.get("warnings")]
        line += "".join(
            f"; task {e.get('task')} warnings: {'; '.join(e['warnings'])}" for e in warned
        )
        ended = next((i for i, e in enumerate(kept) if e.get("kind") == "run_ended"), None)
        lines.insert(len(lines) if ended is None else len(lines) - 1, line)
    return kept, lines


def _spent(event: Event) -> str:
    """'1,200 tokens, $0.01, 8s': what an event says was spent, the parts it knows."""
    parts = (
        tokens_text(int(event.get("tokens") or 0)),
        money_text(event.get("cost"), bool(event.get("cost_estimated")), unknown=""),
        elapsed_text(event.get("duration_s")),
    )
    return ", ".join(p for p in parts if p)


def _run_started(event: Event) -> str:
    only = event.get("only")
    scope = f"task {only}" if only else f"{event.get('pending', 0)} pending tasks"
    budget, dollars = event.get("budget_tokens"), event.get("budget_usd")
    return (
        f"run {event.get('run_id')} started: {scope}, up to {event.get('max_concurrent')} at once"
        + (f", budget {budget:,} tokens" if budget else "")
        + (f", budget ${dollars:,.2f}" if dollars else "")
        + (f"; {event['workspace_line']}" if event.get("workspace_line") else "")
        + (f"; {event['sandbox']}" if event.get("sandbox") else "")
    )


def _task_started(event: Event) -> str:
    return (
        f"task {event.get('task')} started: {event.get('tool')} ({event.get('agent')}), "
        f"attempt {event.get('attempt')}"
        + (" [simulated]" if event.get("simulated") else "")
        + (" [unconfined]" if event.get("unconfined") else "")
    )


def _task_retry(event: Event) -> str:
    how = (
        "with more context"
        if event.get("action") == "retry_with_context"
        else f"in {elapsed_text(event.get('delay_s'))}"
    )
    return f"task {event.get('task')} retry {how}: {event.get('reason')}"


def _task_done(event: Event) -> str:
    done = ", ".join(p for p in (str(event.get("tool")), _spent(event)) if p)
    warn = event.get("warnings") or []
    return f"task {event.get('task')} done: {done}" + (
        f" (warnings: {'; '.join(warn)})" if warn else ""
    )


def _task_failed(event: Event) -> str:
    fix = event.get("fix")
    return f"task {event.get('task')} failed: {event.get('reason')}" + (
        f" Fix: {fix}" if fix else ""
    )


def _decision(event: Event) -> str:
    options = "; ".join(
        f"{o['option']}) {o['label'].lower()}: {o['command']}" for o in event.get("options", [])
    )
    if event.get("task") is None:  # a budget cap at 80% (engine/caps.py)
        return f"decision needed on the run: {event.get('reason')} Options: {options}"
    return f"decision needed on task {event.get('task')} ({event.get('status')}): {options}"


def _spend(event: Event) -> str:
    """One dispatch's spend and where its dollars come from."""
    tool, model = event.get("tool"), event.get("model")
    if event.get("unpriced"):
        source = f"dollars unknown: {event['unpriced']} has no price"
    elif event.get("cost") is None:
        source = "no dollars"
    elif event.get("cost_estimated"):
        source = "estimated from the price table" + (f" for {model}" if model else "")
    else:
        source = f"as {tool} reported it"
    what = (
        f"task {event.get('task')}'s review" if event.get("review") else f"task {event.get('task')}"
    )
    return f"{what} spent {_spent(event) or 'nothing'} on {tool} ({source})"


def _budget(event: Event) -> str:
    used = tokens_text(int(event.get("tokens") or 0))
    budget, abort = int(event.get("budget") or 0), int(event.get("abort") or 0)
    return (
        f"task {event.get('task')} {event.get('level')} budget level on {event.get('tool')}: "
        f"{used} (budget {budget:,}, abort {abort:,})"
    )


def _run_stopping(event: Event) -> str:
    return (
        f"stopping ({event.get('reason')}): tasks whose spoke has started finish, the others stay "
        "pending, nothing new starts; Ctrl-C again quits now (`maestro run` recovers them later)"
    )


def _run_ended(event: Event) -> str:
    text = f"run {event.get('run_id')} {event.get('status')}"
    if "counts" in event:  # an engine that died or refused to start never counted
        counts = event.get("counts") or {}
        summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
        text += f": {summary or 'nothing to do'}; {_spent(event)}"
    return text + (f". {event['message']}" if event.get("message") else "")


# The line for each kind of event (docs/architecture.md lists the kinds).
_LINES: dict[str, Callable[[Event], str]] = {
    "run_started": _run_started,
    "task_started": _task_started,
    "task_retry": _task_retry,
    "task_done": _task_done,
    "task_failed": _task_failed,
    "task_blocked": lambda e: f"task {e.get('task')} blocked: {e.get('reason')}",
    "task_pending": lambda e: f"task {e.get('task')} left pending: {e.get('reason')}",
    "task_spawned": lambda e: (
        f"task {e.get('task')} spawned by task {e.get('parent')}: {e.get('title')}"
    ),
    # A worker's own word: its subject names the task and the kind.
    "task_report": lambda e: f"{e.get('report')} ({e.get('session')})",
    # A spoke silent for a while: what its CLI last said on stderr (a network wait).
    "spoke_quiet": lambda e: f"task {e.get('task')} {e.get('detail')}",
    "decision": _decision,
    "budget": _budget,
    "spend": _spend,
    "cap_reached": lambda e: str(e.get("reason")),
    "run_stopping": _run_stopping,
    "recovered": lambda e: (
        f"task {e.get('task')} recovered from a stopped run ({e.get('previous_run')}): "
        "back to pending"
    ),
    "review": lambda e: f"task {e.get('task')} review: {e.get('outcome')}",
    # A notification that did not go out (engine/notifier.py): the run goes on.
    "notify": lambda e: (
        f"notify: {e.get('channel')} {e.get('detail')} ({e.get('need')})"
        + (f"; fix: {e['fix']}" if e.get("fix") else "")
    ),
    "worktree_kept": lambda e: (
        f"task {e.get('task')}: its failed attempt's worktree is kept at {e.get('path')}"
    ),
    "run_ended": _run_ended,
    # --pr (engine/pullrequest.py): the request opened or updated, its checks' state.
    "pr": lambda e: f"pr: {e.get('detail')}",
    "pr_checks": lambda e: (
        f"pull request #{e.get('number')} checks {e.get('state')}"
        + (
            f": {', '.join(e.get('failed') or [])} (CI round {e.get('round')})"
            if e.get("failed")
            else f" ({e.get('checks')})"
        )
    ),
}


class View(Protocol):
    """What the engine shows a run through: each event, a tick while nothing happens
    (the live table's clock), and the end."""

    def handle(self, event: Event) -> None: ...
    def tick(self) -> None: ...
    def close(self) -> None: ...


class PlainProgress:
    """One line per event, with the time: for logs, pipes and detached runs."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self._lock = threading.Lock()

    def handle(self, event: dict[str, Any]) -> None:
        if event.get("kind") == "run_ended":
            return  # the command's own result prints the summary
        stamp = str(event.get("time", ""))[11:19]
        with self._lock:
            self.out.write(f"{stamp} {inert(describe(event), one_line=True)}\n")
            self.out.flush()

    def tick(self) -> None:
        pass

    def close(self) -> None:
        pass


@dataclass
class _Row:
    id: str
    title: str
    status: str = "pending"
    tool: str = ""
    started: float | None = None
    elapsed: float = 0.0
    tokens: int = 0
    note: str = ""


def clip(line: str, width: int) -> str:
    """``line`` cut to ``width`` terminal cells: a wide (East Asian) character takes two, a
    combining mark none."""
    used = 0
    for index, char in enumerate(line):
        cells = (
            0
            if unicodedata.combining(char)
            else 2
            if unicodedata.east_asian_width(char) in "WF"
            else 1
        )
        if used + cells > width:
            return line[:index]
        used += cells
    return line


class LiveProgress:
    """A table redrawn in place (plain ANSI: cursor up, clear line) on a terminal, as wide
    as the terminal: the title takes what the other columns leave.

    Every line is clipped to the terminal's width, less one cell: the redraw moves the
    cursor up one line per line drawn, so a line that wrapped would leave its tail behind
    and shift every later redraw by one. The run's last line is the command's to print,
    once, after the table.
    """

    def __init__(
        self, out: TextIO, tasks: list[tuple[str, str]], run_id: str, *, colour: bool = False
    ) -> None:
        self.out = out
        self.run_id = run_id
        self.colour = colour
        self.rows = {tid: _Row(tid, title) for tid, title in tasks}
        self.order = [tid for tid, _ in tasks]
        self.tokens = 0
        self.started = time.monotonic()
        self._drawn = 0
        self._lock = threading.Lock()

    def handle(self, event: dict[str, Any]) -> None:
        with self._lock:
            kind = event.get("kind")
            if kind == "task_spawned" and str(event.get("task")) not in self.rows:
                self._add_subtask(event)
            row = self.rows.get(str(event.get("task")))
            if row is not None:
                self._update(row, str(kind), event)
            self._draw()

    def _add_subtask(self, event: Event) -> None:
        """A task a coordinator spawned: a new row below its parent's last row."""
        tid = str(event.get("task"))
        self.rows[tid] = _Row(tid, str(event.get("title") or ""))
        parent = str(event.get("parent"))
        below = [i for i, t in enumerate(self.order) if t == parent or t.startswith(parent + ".")]
        self.order.insert(below[-1] + 1 if below else len(self.order), tid)

    def _update(self, row: _Row, kind: str, event: Event) -> None:
        """A task's row after one of its events: its status, CLI, time, tokens and note."""
        if kind == "task_started":
            row.status, row.tool, row.started = (
                "running",
                str(event.get("tool") or ""),
                time.monotonic(),
            )
            row.note = f"attempt {event.get('attempt')}"
        elif kind == "task_retry":
            row.note = "retrying"
        elif kind == "task_report":  # the worker's latest word, while it works
            report = str(event.get("report") or "")
            row.note = (report.partition(": ")[2] or report)[:60]
        elif kind == "spoke_quiet":
            row.note = str(event.get("detail") or "").partition(": ")[2][:60]
        elif kind in ("task_done", "task_failed", "task_blocked", "task_pending"):
            row.status = kind.removeprefix("task_")
            if row.started is not None:
                row.elapsed = time.monotonic() - row.started
                row.started = None
            row.note = "" if kind == "task_done" else str(event.get("reason") or "")[:60]
        if kind == "task_done":
            row.tokens += int(event.get("tokens") or 0)
            self.tokens += int(event.get("tokens") or 0)

    def tick(self) -> None:
        with self._lock:
            self._draw()

    def close(self) -> None:
        with self._lock:
            self._draw()

    def _draw(self) -> None:
        now = time.monotonic()
        width = max(1, shutil.get_terminal_size().columns - 1)
        lines = [
            f"run {self.run_id}  {elapsed_text(now - self.started)}  {self.tokens:,} tokens",
            f"  {'task':>5}  {'status':<8} {'cli':<7} {'elapsed':>7} {'tokens':>9}  title",
        ]
        # What is left of the width after the other columns (45 cells) and a short note
        # ("attempt 2"; a longer one is clipped at the edge).
        titles = max((len(self.rows[tid].title) for tid in self.order), default=0)
        title_width = max(10, min(titles, width - 45 - 10))
        for tid in self.order:
            row = self.rows[tid]
            elapsed = now - row.started if row.started is not None else row.elapsed
            shown = elapsed_text(elapsed) if (row.started is not None or row.elapsed) else ""
            lines.append(
                f"  {row.id:>5}  {row.status:<8} {row.tool:<7} {shown:>7} {row.tokens:>9,}  "
                f"{row.title[:title_width]:<{title_width}} {row.note}".rstrip()
            )
        text = f"\x1b[{self._drawn}F" if self._drawn else ""
        for index, line in enumerate(lines):
            line = clip(inert(line, one_line=True), width)
            if self.colour and index >= 2:  # a task's row: its status at a fixed place
                row = self.rows[self.order[index - 2]]
                line = painted(line, len(inert(f"  {row.id:>5}  ", one_line=True)), row.status)
            text += f"\x1b[2K{line}\n"
        self.out.write(Frame(text))
        self.out.flush()
        self._drawn = len(lines)


class Silent:
    def handle(self, event: dict[str, Any]) -> None:
        pass

    def tick(self) -> None:
        pass

    def close(self) -> None:
        pass


def choose(
    out: TextIO, env: Mapping[str, str], *, quiet: bool, tasks: list[tuple[str, str]], run_id: str
) -> View:
    """The live table on a terminal that can move its cursor; plain lines into a pipe, a
    file or a ``TERM=dumb`` terminal; nothing under --json."""
    if quiet:
        return Silent()
    try:
        tty = out.isatty()
    except (AttributeError, ValueError):
        tty = False
    if not tty or env.get("TERM") == "dumb":
        return PlainProgress(out)
    return LiveProgress(out, tasks, run_id, colour=colour_wanted(out, env))
