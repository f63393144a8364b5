"""A task field the plan sets is one place: the model (state/model.py) and its Markdown
codec (state/markdown/kinds.py). Plan input, the schema, the plan file and a re-plan all
follow from them."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from maestro.planning import planschema, replan
from maestro.state.markdown.kinds import KINDS
from maestro.state.model import plan_fields

ROOT = Path(__file__).resolve().parents[1]


def test_every_field_the_plan_sets_is_in_the_schema_the_codec_and_a_replan():
    names = [name for name, _, _ in plan_fields()]
    assert names[:2] == ["id", "title"]
    assert list(planschema.SHAPE["properties"]["tasks"]["items"]["properties"]) == names
    assert all(name in planschema.EXAMPLES for name in names)
    assert list(replan.PLAN_FIELDS) == names[1:]
    codec = {spec.name for spec in KINDS["tasks"].specs}
    assert set(names) - {"id", "title"} <= codec  # (the heading holds id and title)


# A new field, added as a person adding one would: the model and its codec, nothing else.
# Run in a process of its own: the field exists before the rest of maestro is imported.
SCRIPT = textwrap.dedent(
    """
    import dataclasses

    from maestro.state import model
    from maestro.state.codecs import fields as f
    from maestro.state.markdown import kinds

    owner = model.planned(
        {"type": "string", "pattern": model.ONE_LINE, "description": "Who answers for it."},
        "owner: ana",
        default=None,
    )
    model.Task = dataclasses.make_dataclass(
        "Task", [("owner", "str | None", owner)], bases=(model.Task,)
    )
    kinds.KINDS["tasks"] = dataclasses.replace(
        kinds.TASK, specs=(*kinds.TASK.specs, kinds._attr("owner", "Owner", f.Line()))
    )

    from maestro.planning.loading import load
    from maestro.planning.replan import replan
    from maestro.planning.planschema import check
    from maestro.state import planfile

    first = load(
        "goal: g\\ntasks:\\n- {id: 1, title: T, specialist: research, criteria: [c],"
        " owner: ana}\\n"
    )
    text = planfile.render(first)
    assert "**Owner:** ana" in text, text
    again = planfile.parse(text)
    assert again.tasks[0].owner == "ana"
    second = load(
        "goal: g\\ntasks:\\n- {id: 1, title: T, specialist: research, criteria: [c],"
        " owner: bo}\\n"
    )
    done = replan(second, again).plan
    assert planfile.parse(planfile.render(done)).tasks[0].owner == "bo"
    try:
        check({"goal": "g", "tasks": [{"id": 1, "title": "T", "owner": 3}]})
    except Exception as exc:
        assert "owner" in str(exc), exc
    else:
        raise AssertionError("a wrong owner passed the schema")
    print("ok")
    """
)


def test_a_new_field_in_the_model_and_its_codec_survives_a_replan():
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
