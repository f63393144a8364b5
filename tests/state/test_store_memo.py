"""PlanStore.edit() skips re-parsing a file it wrote itself: the bytes it writes must be
the bytes a fresh parse-edit-render would write, edit after edit, for any plan text."""

from __future__ import annotations

import shutil
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from maestro.errors import PlanError
from maestro.paths import ProjectPaths
from maestro.state.model import Receipt, Usage
from maestro.state.planfile import render
from maestro.state.store import PlanStore
from tests.state.strategies import plans

HAND_WRITTEN = """\
# Maestro Orchestration

A note a person wrote above the goal.

## Goal
Ship the greeting module

## Tasks

### Task 1: Write the module
- **Status:** pending
- **Specialist:** code
* **Files:** src/app.py
- **Criteria:**
    - greet(name) works
- **Validation:** `pytest -q`

Some words about task 1 that the model does not hold.

### Task 2: Document it
- **Depends:** 1
- **Status:** pending
- **Specialist:** research
- **Criteria:**
  - the page exists

## Source
claude | 2026-11-21 12:00 UTC
"""


def running(plan, tid, n):
    t = plan.tasks[tid % len(plan.tasks)]
    t.status, t.attempts, t.pid, t.run_id, t.tool = (
        "running",
        t.attempts + 1,
        4242 + n,
        f"R{n}",
        "codex",
    )
    t.started, t.finished = "2026-11-22T00:00:00Z", None


def done(plan, tid, n):
    t = plan.tasks[tid % len(plan.tasks)]
    t.status, t.result, t.finished, t.pid = (
        "done",
        f"Wrote it, round {n}.",
        "2026-11-22T00:01:00Z",
        None,
    )
    t.usage = t.usage + Usage(1000 * n, 200, 5)
    t.cost, t.cost_estimated, t.session = 0.01 * n, n % 2 == 0, f"s-{n}"
    t.receipt = Receipt(
        "1 file changed, 2 insertions(+)", ["src/app.py"], "pytest -q", 0, "abc", "f" * 64
    )
    t.downstream_context = f"- Key Interfaces Introduced: greet{n}(name) -> str\n- Warnings: none"


def blocked(plan, tid, n):
    t = plan.tasks[tid % len(plan.tasks)]
    t.status, t.result = (
        "blocked",
        f"needs decomposition: criteria gate: not verified: x{n}. Options: 1) ... `maestro run 1`",
    )


def pending(plan, tid, n):
    t = plan.tasks[tid % len(plan.tasks)]
    t.status, t.pid = "pending", None


OPS = [running, done, blocked, pending]


def compare(text: str, steps: list[tuple[int, int]], tmp: Path) -> None:
    one, fresh = tmp / "memo", tmp / "fresh"
    for root in (one, fresh):
        shutil.rmtree(root, ignore_errors=True)
        (root / ".ai").mkdir(parents=True)
        (root / ".ai" / "MAESTRO.md").write_text(text)
    kept = PlanStore(ProjectPaths(one))
    for n, (op, tid) in enumerate(steps, 1):
        with kept.edit() as plan:
            OPS[op](plan, tid, n)
        with PlanStore(ProjectPaths(fresh)).edit() as plan:  # a new store: always parses
            OPS[op](plan, tid, n)
        assert (one / ".ai" / "MAESTRO.md").read_bytes() == (
            fresh / ".ai" / "MAESTRO.md"
        ).read_bytes(), n


STEPS = st.lists(st.tuples(st.integers(0, len(OPS) - 1), st.integers(0, 5)), min_size=1, max_size=8)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=STEPS)
def test_hand_written_plan(tmp_path, steps):
    compare(HAND_WRITTEN, steps, tmp_path)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(plan=plans(), steps=STEPS)
def test_any_plan(tmp_path, plan, steps):
    try:
        text = render(plan)
    except PlanError:  # a value the format refuses to write (the strategy can draw one)
        assume(False)
    assume(bool(plan.tasks))
    compare(text, steps, tmp_path)


def test_a_person_editing_in_between_is_still_parsed(tmp_path):
    (tmp_path / ".ai").mkdir()
    path = tmp_path / ".ai" / "MAESTRO.md"
    path.write_text(HAND_WRITTEN)
    store = PlanStore(ProjectPaths(tmp_path))
    with store.edit() as plan:
        running(plan, 0, 1)
    path.write_text(
        path.read_text().replace("Ship the greeting module", "Ship the greeting module today")
    )
    with store.edit() as plan:
        assert plan.goal == "Ship the greeting module today"
        done(plan, 0, 2)
    assert "today" in path.read_text() and "- **Status:** done" in path.read_text()


def test_a_failed_edit_leaves_no_half_changed_plan_behind(tmp_path):
    (tmp_path / ".ai").mkdir()
    (tmp_path / ".ai" / "MAESTRO.md").write_text(HAND_WRITTEN)
    store = PlanStore(ProjectPaths(tmp_path))
    with store.edit() as plan:
        running(plan, 0, 1)
    try:
        with store.edit() as plan:
            plan.tasks[0].title = "changed, then the block fails"
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    with store.edit() as plan:
        assert plan.tasks[0].title == "Write the module"
