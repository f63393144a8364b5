import random
import time

import pytest

from maestro import graph
from maestro.errors import NotFound, PlanError
from maestro.state.model import Task


def plan(*specs, **status):
    """plan("1", "2:1", "3:1,2") -> tasks; "id:deps" with comma-separated deps."""
    tasks = []
    for spec in specs:
        tid, _, deps = spec.partition(":")
        tasks.append(Task(tid, f"task {tid}", depends=[d for d in deps.split(",") if d]))
    for tid, value in status.items():
        next(t for t in tasks if t.id == tid.lstrip("t")).status = value
    return tasks


def test_valid_plan_passes():
    graph.validate(plan("1", "2:1", "3:1,2"))


def test_cycle_names_its_path():
    tasks = plan("1:3", "2:1", "3:2")
    assert graph.find_cycle(tasks) == ["1", "3", "2", "1"]
    with pytest.raises(PlanError) as err:
        graph.validate(tasks)
    assert "1 -> 3 -> 2 -> 1" in str(err.value)
    assert "\n" not in str(err.value) and "Fix:" in str(err.value)


def test_cycle_not_through_first_task_starts_at_its_earliest_member():
    tasks = plan("1", "2:4", "3:2", "4:3", "5:1")
    assert graph.find_cycle(tasks) == ["2", "4", "3", "2"]


def test_two_task_cycle():
    assert graph.find_cycle(plan("1:2", "2:1")) == ["1", "2", "1"]


def test_no_cycle():
    assert graph.find_cycle(plan("1", "2:1", "3:1", "4:2,3")) is None


def test_self_dependency():
    with pytest.raises(PlanError, match="Task 2 depends on itself"):
        graph.validate(plan("1", "2:2"))


def test_unknown_dependency_names_it_and_the_known_ids():
    with pytest.raises(PlanError) as err:
        graph.validate(plan("1", "2:9"))
    text = str(err.value)
    assert "Task 2 depends on 9" in text and "existing ids: 1, 2" in text


def test_duplicate_id():
    with pytest.raises(PlanError, match="Task 1 appears twice"):
        graph.validate(plan("1", "1"))


def test_ready_needs_every_dependency_done():
    tasks = plan("1", "2", "3:1,2", "4:3", t1="done")
    assert [t.id for t in graph.ready(tasks)] == ["2"]
    tasks[1].status = "done"
    assert [t.id for t in graph.ready(tasks)] == ["3"]
    tasks[1].status = "failed"
    assert graph.ready(tasks) == []


def test_ready_skips_non_pending():
    tasks = plan("1", "2", t1="running", t2="blocked")
    assert graph.ready(tasks) == []


def test_waves():
    tasks = plan("1", "2", "3:1", "4:1,2", "5:3,4", "6")
    assert graph.waves(tasks) == [["1", "2", "6"], ["3", "4"], ["5"]]


def test_waves_raise_on_cycle():
    with pytest.raises(PlanError, match="cycle"):
        graph.waves(plan("1:2", "2:1"))


def test_topological_order_puts_dependencies_first():
    tasks = plan("3:2", "2:1", "1")
    assert [t.id for t in graph.topological_order(tasks)] == ["1", "2", "3"]


def test_critical_path_follows_the_longest_chain():
    tasks = plan("1", "2", "3:1", "4:2", "5:3,4")
    total, path = graph.critical_path(tasks, {"1": 5, "2": 1, "3": 2, "4": 10, "5": 1})
    assert (total, path) == (12.0, ["2", "4", "5"])


def test_critical_path_missing_durations_count_zero_and_empty_plan():
    assert graph.critical_path(plan("1", "2:1"), {"2": 3}) == (3.0, ["1", "2"])
    assert graph.critical_path([], {}) == (0.0, [])


def test_file_conflicts_between_independent_tasks():
    tasks = plan("1", "2", "3:1")
    tasks[0].files = ["src/app.py", "src/util.py"]
    tasks[1].files = ["./src/app.py"]
    tasks[2].files = ["src/util.py"]  # depends on 1: never at the same time
    assert graph.file_conflicts(tasks) == [("1", "2", "src/app.py")]


def test_file_conflicts_transitive_dependency_is_not_a_conflict():
    tasks = plan("1", "2:1", "3:2")
    for task in tasks:
        task.files = ["README.md"]
    assert graph.file_conflicts(tasks) == []


def test_file_conflicts_folder_owns_its_files():
    tasks = plan("1", "2")
    tasks[0].files = ["src/"]
    tasks[1].files = ["src/auth/login.py"]
    assert graph.file_conflicts(tasks) == [("1", "2", "src/auth/login.py")]


def test_ancestors_and_descendants():
    tasks = plan("1", "2:1", "3:2", "4", "5:3,4")
    assert graph.ancestors(tasks, "5") == ["1", "2", "3", "4"]
    assert graph.ancestors(tasks, "1") == []
    assert graph.descendants(tasks, "1") == ["2", "3", "5"]
    assert graph.descendants(tasks, "5") == []
    with pytest.raises(NotFound, match="no Task 9"):
        graph.ancestors(tasks, "9")


def test_deep_chain_does_not_hit_recursion_limit():
    tasks = [Task(str(i), "t", depends=[str(i - 1)] if i > 1 else []) for i in range(1, 5001)]
    graph.validate(tasks)
    assert graph.critical_path(tasks, {t.id: 1 for t in tasks})[0] == 5000


def _random_dag(n, seed=7):
    rng = random.Random(seed)
    tasks = []
    for i in range(1, n + 1):
        deps = sorted(
            {str(rng.randint(1, i - 1)) for _ in range(rng.randint(0, 3))} if i > 1 else set()
        )
        tasks.append(
            Task(str(i), f"task {i}", depends=deps, files=[f"src/m{rng.randint(1, n // 4)}.py"])
        )
    return tasks


def test_2000_tasks_are_fast():
    tasks = _random_dag(2000)
    begin = time.perf_counter()
    graph.validate(tasks)
    graph.waves(tasks)
    graph.critical_path(tasks, {t.id: 1.0 for t in tasks})
    graph.file_conflicts(tasks)
    graph.descendants(tasks, "1")
    # Generous bound: this guards against quadratic-in-Python regressions, not speed.
    assert time.perf_counter() - begin < 2.0


def test_random_dags_agree_with_brute_force():
    tasks = _random_dag(60, seed=3)
    deps = {t.id: set(t.depends) for t in tasks}

    def reach(tid):
        out, todo = set(), list(deps[tid])
        while todo:
            d = todo.pop()
            if d not in out:
                out.add(d)
                todo.extend(deps[d])
        return out

    for t in tasks:
        assert set(graph.ancestors(tasks, t.id)) == reach(t.id)
    order = {tid: n for n, wave in enumerate(graph.waves(tasks)) for tid in wave}
    for t in tasks:
        assert all(order[d] < order[t.id] for d in t.depends)
    for a, b, _ in graph.file_conflicts(tasks):
        assert a not in reach(b) and b not in reach(a)


def test_descendants_of_and_ancestors_of_any():
    tasks = plan("1", "2:1", "3:2", "4", "5:3,4")
    assert graph.descendants_of(tasks, ["1", "4"]) == {"1": ["2", "3", "5"], "4": ["5"]}
    assert graph.ancestors_of_any(tasks, ["3", "4"]) == {"1", "2"}
    assert graph.ancestors_of_any(tasks, []) == set()
