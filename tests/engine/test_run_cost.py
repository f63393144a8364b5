"""What a run costs as its plan grows: each dispatch reads the plan once and changes it
twice (running, then how it ended), and the plan file is parsed a few times a run, not a
few times a dispatch."""

from maestro.state import store as store_module
from maestro.state.store import PlanStore
from tests.engine.runkit import step, task, write_plan


def counted(monkeypatch):
    """Calls of each way to read the plan (``load``, ``view``), to change it (``edit``,
    ``edit_task``) and of the parser, counted as load, edit and parse."""
    calls = {"load": 0, "edit": 0, "parse": 0}

    def counter(name, real):
        def call(*args, **kwargs):
            calls[name] += 1
            return real(*args, **kwargs)

        return call

    ways = {"load": "load", "view": "load", "edit": "edit", "edit_task": "edit"}
    for method, name in ways.items():
        monkeypatch.setattr(PlanStore, method, counter(name, getattr(PlanStore, method)))
    monkeypatch.setattr(store_module, "parse_bytes", counter("parse", store_module.parse_bytes))
    return calls


def test_a_dispatch_reads_the_plan_once_and_the_run_parses_it_a_few_times(
    cli, project, runenv, monkeypatch
):
    monkeypatch.setenv("MAESTRO_MAX_CONCURRENT", "3")
    research = {"specialist": "research", "agent": "technical-writer", "validation": None}
    tasks = [task(i, files=[f"notes/{i}.md"], tool="codex", **research) for i in range(1, 10)]
    write_plan(cli, project, tasks)
    runenv.default("codex", step(""))
    calls = counted(monkeypatch)
    assert cli("run", "1").code == 0
    one = dict(calls)
    assert cli("run").code == 0  # the other eight
    eight = {name: calls[name] - one[name] for name in calls}
    assert eight["load"] - one["load"] == 7  # one more for each dispatch more
    assert eight["edit"] - one["edit"] == 14  # two more for each
    assert eight["parse"] == one["parse"] <= 4  # none more
