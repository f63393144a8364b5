"""The board's graph and list in a real browser (chromium through Playwright): a plan of
40 tasks run by sim spokes and one of 200 fit the page, zoom, light a task's chain, mark
the tasks a failure holds, list the tasks by status, and work at 800 px; the steering
offers only what the command would do."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path
from typing import Any

import pytest

from maestro.bus.mailbox import Mailbox
from maestro.cli.context import Context
from maestro.config import load_settings
from maestro.state.store import PlanStore
from tests.board.conftest import shots_dir
from tests.board.test_page import open_board, start_run
from tests.engine.runkit import task, write_plan

pytestmark = pytest.mark.slow


def layered(count: int, width: int, failing: tuple[int, ...] = ()) -> list[dict[str, Any]]:
    """``count`` sim tasks in layers of ``width``, each after one to three of the layer
    before, some after one two layers back; those in ``failing`` fail their validation."""
    rng = random.Random(3)
    tasks: list[dict[str, Any]] = []
    layers: list[list[int]] = []
    for start in range(1, count + 1, width):
        layer = list(range(start, min(count, start + width - 1) + 1))
        for tid in layer:
            depends = (
                rng.sample(layers[-1], k=min(len(layers[-1]), rng.randint(1, 3))) if layers else []
            )
            if len(layers) > 1 and tid % 4 == 0:
                depends.append(rng.choice(layers[-2]))
            tasks.append(
                {
                    "id": tid,
                    "title": f"Write part {tid} of the parser's {('lexer', 'grammar', 'tests')[tid % 3]}",
                    "specialist": "code",
                    "tool": "sim",
                    "files": [f"src/p{tid}.py"],
                    "criteria": ["the part exists"],
                    "validation": "false" if tid in failing else f"test -f src/p{tid}.py",
                    "depends": sorted(set(depends)),
                }
            )
        layers.append(layer)
    return tasks


def committed(project: Path) -> None:
    (project / "README.md").write_text("project\n")
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=project, check=True)


def at_width(page: Any, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    page.wait_for_timeout(200)  # the graph refits on the resize


def shoot(page: Any, name: str, whole: bool = False) -> None:
    page.screenshot(path=str(shots_dir() / name), full_page=whole)


def test_a_40_task_run_fits_the_page_at_1400_and_800_px(cli, project, board_of, page, monkeypatch):
    committed(project)
    monkeypatch.setenv("MAESTRO_SIM_DELAY", "1.0")
    monkeypatch.setenv("MAESTRO_STAGGER_DELAY", "0")
    monkeypatch.setenv("MAESTRO_MAX_CONCURRENT", "4")
    monkeypatch.setenv("MAESTRO_MAX_RETRIES", "0")
    write_plan(cli, project, layered(40, 6, failing=(3,)), goal="Write the parser in 40 parts")
    board = board_of(project)
    open_board(page, board)
    run = start_run(project)
    page.wait_for_selector('.node[data-task="3"][data-status=blocked]', timeout=60000)
    page.wait_for_selector(".node.held", timeout=10000)
    page.wait_for_selector(".node[data-status=running]", timeout=30000)
    shoot(page, "graph-40-mid-run-1400.png")
    at_width(page, 800)
    shoot(page, "graph-40-mid-run-800.png")
    run.wait(timeout=120)
    page.wait_for_selector("#run:has-text('incomplete')", timeout=10000)
    at_width(page, 1400)
    page.locator('.node[data-task="3"]').click()
    page.wait_for_selector("#panel-title:has-text('Task 3')")
    shoot(page, "graph-40-ended-1400.png")
    at_width(page, 800)
    shoot(page, "graph-40-ended-800.png")


def plan_of_200(cli: Any, project: Path) -> None:
    """200 tasks, 20 a layer, as a run left them: the first 90 done, four running, one
    failed and one blocked (the tasks after them held), the rest pending."""
    write_plan(cli, project, layered(200, 20), goal="Write the parser in 200 parts")
    store = PlanStore(load_settings(project).paths)
    marks = {str(i): "done" for i in range(1, 91)}
    marks.update({"91": "running", "92": "running", "95": "running", "99": "running"})
    marks.update({"93": "failed", "97": "blocked"})
    for tid, status in marks.items():
        with store.edit_task(tid) as edited:
            edited.status, edited.tool, edited.attempts = status, "sim", 1
            edited.result = (
                f"Task {tid}: the validation failed." if status in ("failed", "blocked") else None
            )


def test_a_200_task_plan_fits_as_a_graph_and_lists_by_status(cli, project, board_of, page):
    plan_of_200(cli, project)
    board = board_of(project)
    page.goto(board.url)
    page.wait_for_function("() => document.querySelectorAll('#graph .node').length === 200")
    shoot(page, "graph-200-1400.png")
    page.get_by_role("button", name="List", exact=True).click()
    page.wait_for_selector("#tasklist .item")
    shoot(page, "list-200-1400.png")
    at_width(page, 800)
    shoot(page, "list-200-800.png")
    page.get_by_role("button", name="Graph", exact=True).click()
    page.wait_for_function("() => document.querySelectorAll('#graph .node').length === 200")
    shoot(page, "graph-200-800.png")


def plan_of_40(cli: Any, project: Path) -> None:
    """40 tasks, 6 a layer, some after a task two layers back; Task 3 failed, the first
    two done, so the tasks after 3 are held by its failure."""
    write_plan(cli, project, layered(40, 6), goal="Write the parser in 40 parts")
    store = PlanStore(load_settings(project).paths)
    for tid, status in (("1", "done"), ("2", "done"), ("3", "failed")):
        with store.edit_task(tid) as edited:
            edited.status, edited.tool, edited.attempts = status, "sim", 1


# Each node's box on the screen, by task id.
BOXES = """() => Object.fromEntries([...document.querySelectorAll('#graph .node')].map(n => {
  const r = n.querySelector('rect').getBoundingClientRect();
  return [n.dataset.task, [r.left, r.top, r.right, r.bottom]];
}))"""


def test_the_graph_fits_the_page_at_1400_and_800_px(cli, project, board_of, page):
    """Every node of a 40-task plan is inside the graph's box and the window, with no
    scrolling of the graph or sideways of the page (at 800 px, in the smaller form that
    shows each task's id alone)."""
    plan_of_40(cli, project)
    open_board(page, board_of(project))
    for width in (1400, 800):
        at_width(page, width)
        box = page.locator("#graph").bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width
        boxes = page.evaluate(BOXES)
        assert len(boxes) == 40
        outside = {
            t: b
            for t, b in boxes.items()
            if b[0] < box["x"] - 1
            or b[2] > box["x"] + box["width"] + 1
            or b[1] < box["y"] - 1
            or b[3] > box["y"] + box["height"] + 1
        }
        assert outside == {}, (width, box, outside)
        assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert "far" in page.get_attribute("#graph", "class")  # at 800 px: ids alone


def test_the_graph_zooms_with_its_buttons_the_keyboard_and_ctrl_wheel(cli, project, board_of, page):
    plan_of_40(cli, project)
    open_board(page, board_of(project))
    width = lambda: page.evaluate(BOXES)["8"][2] - page.evaluate(BOXES)["8"][0]
    fit = width()
    page.get_by_role("button", name="Zoom in (+)").click()
    assert width() == pytest.approx(fit * 1.25, rel=0.02)
    page.get_by_role("button", name="Zoom out (-)").click()
    assert width() == pytest.approx(fit, rel=0.02)
    page.locator('.node[data-task="8"]').focus()
    page.keyboard.press("+")
    page.keyboard.press("+")
    assert width() == pytest.approx(fit * 1.25**2, rel=0.02)
    page.keyboard.press("0")  # fit again
    assert width() == pytest.approx(fit, rel=0.02)
    # Ctrl and the wheel (a pinch) zoom around the pointer: the node under it stays there.
    left, top, right, bottom = page.evaluate(BOXES)["8"]
    page.mouse.move((left + right) / 2, (top + bottom) / 2)
    page.keyboard.down("Control")
    page.mouse.wheel(0, -200)
    page.keyboard.up("Control")
    page.wait_for_timeout(100)
    after = page.evaluate(BOXES)["8"]
    assert after[2] - after[0] > (right - left) * 1.3
    assert (after[0] + after[2]) / 2 == pytest.approx((left + right) / 2, abs=2)
    assert page.text_content("#zoom-level") != "100%"
    # A drag pans, and is no click on the node it began on.
    page.mouse.move((after[0] + after[2]) / 2, (after[1] + after[3]) / 2)
    page.mouse.down()
    page.mouse.move((after[0] + after[2]) / 2 - 120, (after[1] + after[3]) / 2, steps=6)
    page.mouse.up()
    assert page.evaluate(BOXES)["8"][0] == pytest.approx(after[0] - 120, abs=2)
    assert page.locator("#panel").is_hidden()


# Points along each edge (every 3 units) that lie inside a node's box, its own two ends'
# last few units aside: an edge drawn under a node.
UNDER = """() => {
  const boxes = [...document.querySelectorAll('#graph .node')].map(n => {
    const [x, y] = n.getAttribute('transform').match(/[\\d.]+/g).map(Number);
    return [n.dataset.task, x, y, x + 210, y + 58];
  });
  const under = [];
  for (const e of document.querySelectorAll('#graph .edge')) {
    const length = e.getTotalLength();
    for (let at = 4; at < length - 4; at += 3) {
      const p = e.getPointAtLength(at);
      for (const [id, x0, y0, x1, y1] of boxes)
        if (p.x > x0 + 1 && p.x < x1 - 1 && p.y > y0 + 1 && p.y < y1 - 1) under.push(`${e.dataset.from}->${e.dataset.to} under ${id}`);
    }
  }
  return [...new Set(under)];
}"""


def test_no_edge_runs_under_a_node(cli, project, board_of, page):
    plan_of_40(cli, project)
    open_board(page, board_of(project))
    assert page.locator("#graph .edge").count() > 60
    assert page.evaluate(UNDER) == []


def test_a_tasks_chain_is_lit_on_hover_and_on_focus(cli, project, board_of, page):
    plan_of_40(cli, project)
    open_board(page, board_of(project))
    tasks = {t["id"]: t for t in page.evaluate("state.plan.tasks")}

    def chain(tid: str, step: Any) -> set[str]:
        seen, todo = set(), [tid]
        while todo:
            for nxt in step(todo.pop()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    up = lambda tid: chain(tid, lambda t: tasks[t]["depends"])
    down = lambda tid: chain(tid, lambda t: [d for d in tasks if t in tasks[d]["depends"]])
    lit = """() => ({up: [...document.querySelectorAll('#graph .node.up')].map(n => n.dataset.task),
      down: [...document.querySelectorAll('#graph .node.down')].map(n => n.dataset.task),
      edges: document.querySelectorAll('#graph .edge.up, #graph .edge.down').length})"""
    page.locator('.node[data-task="20"]').hover()
    shown = page.evaluate(lit)
    assert set(shown["up"]) == up("20") and set(shown["down"]) == down("20")
    assert shown["edges"] >= len(up("20")) + len(down("20"))
    assert "Task 20 waits on" in page.text_content("#trace")
    page.mouse.move(5, 5)  # off the graph: nothing lit
    assert page.evaluate(lit) == {"up": [], "down": [], "edges": 0}
    page.locator('.node[data-task="14"]').focus()
    shown = page.evaluate(lit)
    assert set(shown["up"]) == up("14") and set(shown["down"]) == down("14")
    page.locator('.node[data-task="14"]').screenshot(path=str(shots_dir() / "graph-lit.png"))
    shoot(page, "graph-40-lit-1400.png")


def test_the_tasks_a_failure_holds_are_marked_as_the_status_command_lists_them(
    cli, project, board_of, page
):
    plan_of_200(cli, project)
    board = board_of(project)
    page.goto(board.url)
    page.wait_for_function("() => document.querySelectorAll('#graph .node').length === 200")
    waiting = {t for b in page.evaluate("state.plan.blockers") for t in b["waiting"]}
    assert len(waiting) > 20
    marked = page.evaluate(
        "[...document.querySelectorAll('#graph .node.held')].map(n => n.dataset.task)"
    )
    assert set(marked) == waiting
    node = page.locator('.node[data-task="101"]')
    assert node.get_attribute("data-status") == "pending"
    assert "held by 97 blocked" in node.text_content()
    assert "held by the failure of Task 97" in node.get_attribute("aria-label")
    page.get_by_role("button", name="List", exact=True).click()
    page.wait_for_selector("#tasklist .item")
    listed = page.evaluate(
        "[...document.querySelectorAll('#tasklist .item.held')].map(r => r.dataset.task)"
    )
    assert set(listed) == waiting
    assert "held by 97 blocked" in page.locator('#tasklist .item[data-task="101"]').text_content()


def test_the_list_sorts_the_tasks_by_status_and_the_choice_is_kept(cli, project, board_of, page):
    plan_of_200(cli, project)
    board = board_of(project)
    page.goto(board.url)
    page.wait_for_selector(".node")
    assert page.get_attribute("#as-graph", "aria-pressed") == "true"
    page.get_by_role("button", name="List", exact=True).click()
    page.wait_for_selector("#tasklist .item")
    assert page.locator("#graph .node").count() == 0  # one view drawn at a time
    order = page.evaluate(
        """() => [...document.querySelectorAll('#tasklist .item')].map(r =>
             r.classList.contains('held') ? 'held' : r.dataset.status)"""
    )
    ranks = ["failed", "blocked", "held", "running", "pending", "done"]
    assert len(order) == 200 and order == sorted(order, key=ranks.index)
    assert order[0] == "failed" and order[-1] == "done"
    page.locator('#tasklist .item[data-task="93"]').focus()
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.dataset.task") == "97"
    page.keyboard.press("Enter")
    page.wait_for_selector("#panel-title:has-text('Task 97')")
    page.get_by_role("button", name="Close the panel (Esc)").click()
    page.reload()  # the tab keeps the choice
    page.wait_for_selector("#tasklist .item")
    assert page.locator("#graph .node").count() == 0
    page.get_by_role("button", name="Graph", exact=True).click()
    page.wait_for_function("() => document.querySelectorAll('#graph .node').length === 200")
    assert page.locator("#tasklist .item").count() == 0


def test_the_drawer_opens_and_closes_at_800_px_and_the_page_scrolls_as_one(
    cli, project, board_of, page
):
    plan_of_40(cli, project)
    open_board(page, board_of(project))
    # One scroll: the page's; no section scrolls on its own.
    scrollers = page.evaluate(
        """() => ['dag', 'tasks', 'office', 'log', 'lower'].filter(id => {
             const style = getComputedStyle(document.getElementById(id));
             return ['auto', 'scroll'].includes(style.overflowY);
           })"""
    )
    assert scrollers == []
    at_width(page, 800)
    assert page.locator("#panel").is_hidden()
    page.locator('.node[data-task="3"]').focus()
    page.keyboard.press("Enter")
    page.wait_for_selector("#panel-title:has-text('Task 3')")
    box = page.locator("#panel").bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 800 and box["width"] >= 320
    assert page.evaluate("document.activeElement.id") == "panel"
    shoot(page, "drawer-800.png")
    page.keyboard.press("Escape")
    assert page.locator("#panel").is_hidden()
    assert page.evaluate("document.activeElement.dataset.task") == "3"
    page.locator('.node[data-task="8"]').click()  # the focus stays on the graph
    page.wait_for_selector("#panel-title:has-text('Task 8')")
    page.keyboard.press("Escape")
    assert page.locator("#panel").is_hidden()
    assert page.evaluate("document.documentElement.scrollWidth") <= 800


def test_the_office_shows_at_once_when_the_page_opens(cli, project, board_of, page):
    write_plan(cli, project, [task(1, tool="sim")])
    Mailbox(Context(cwd=project).paths).send(
        "t1-abcdef", ["user"], type="query", priority="normal", subject="Which port?", body="8080?"
    )
    page.goto(board_of(project).url)
    page.wait_for_selector(".node")
    page.wait_for_selector("#questions li:has-text('Which port?')", timeout=1500)
