"""Reading a hub's plan (YAML or JSON) into a ``Plan``: syntax, schema, then graph."""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from maestro import clock, graph
from maestro.errors import PlanError
from maestro.formatting import key_path
from maestro.planning.planschema import check
from maestro.state.model import Plan, Source, Task, plan_fields

_SHAPE_FIX = "see the expected shape with `maestro plan --schema`"
MAX_DEPTH = 20  # a plan's deepest value, tasks[0].criteria[0], is four down
MAX_REPEATED = 10_000  # values YAML aliases may repeat, in all
# Control characters, and halves of surrogate pairs (a JSON escape can give one; no file
# can hold it, UTF-8 cannot encode it).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def parse_text(text: str, name: str = "plan input") -> Any:
    """YAML or JSON text -> data. JSON is tried first when the text looks like JSON, for
    its clearer messages; YAML (safe loader) otherwise."""
    text = text.lstrip("\ufeff")
    if not text.strip():
        raise PlanError(f"{name} is empty.", f"give a plan in YAML or JSON; {_SHAPE_FIX}.")
    nul = text.find("\x00")
    if nul >= 0:
        raise PlanError(
            "the plan holds a NUL character.",
            "remove it; a plan is text.",
            file=name,
            line=text.count("\n", 0, nul) + 1,
        )
    if text.lstrip()[:1] in "{[":
        try:
            return json.loads(text)
        except RecursionError:
            raise _too_deep(name, None) from None
        except json.JSONDecodeError as exc:
            raise PlanError(
                f"not valid JSON: {exc.msg} (column {exc.colno}).",
                "correct the JSON syntax at that line, or write the plan as YAML.",
                file=name,
                line=exc.lineno,
            ) from None

    try:
        return _load_yaml(text, name)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or exc.context or "syntax error"
        if "nesting depth" in problem:  # libyaml's own limit, met while it reads ahead
            raise _too_deep(name, line) from None
        raise PlanError(
            f"not valid YAML: {problem}.",
            "correct the YAML at that line (indent with spaces; quote text holding ': ' or '#').",
            file=name,
            line=line,
        ) from None
    except yaml.YAMLError as exc:
        raise PlanError(
            f"{name} is not valid YAML: {exc}.", f"correct the YAML; {_SHAPE_FIX}."
        ) from None


def _too_deep(name: str, line: int | None) -> PlanError:
    return PlanError(
        f"the plan is nested deeper than {MAX_DEPTH} levels (a plan's values are four down).",
        f"flatten it; {_SHAPE_FIX}.",
        file=name,
        line=line,
    )


def _load_yaml(text: str, name: str) -> Any:
    """YAML through libyaml where PyYAML has it (5-7x faster than the pure-Python loader
    at 2,000 tasks), bounded: one pass over the parser's events (flat, no recursion)
    checks the nesting depth and the values aliases repeat before anything is composed,
    so a "billion laughs" file (aliases of aliases) or a 100,000-deep one stops at its
    first value past the limit, in milliseconds, instead of building gigabytes."""

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    sizes: dict[str, int] = {}  # anchor -> the values its node holds
    open_: list[list[Any]] = []  # per open collection: [values so far, its anchor]
    repeated = 0
    for event in yaml.parse(text, Loader=loader):
        line = event.start_mark.line + 1 if event.start_mark else None
        if isinstance(event, yaml.CollectionStartEvent):
            if len(open_) >= MAX_DEPTH:
                raise _too_deep(name, line)
            open_.append([1, event.anchor])
        elif isinstance(event, yaml.CollectionEndEvent):
            values, anchor = open_.pop()
            if anchor:
                sizes[anchor] = values
            if open_:
                open_[-1][0] += values
        elif isinstance(event, yaml.ScalarEvent | yaml.AliasEvent):
            values = 1
            if isinstance(event, yaml.AliasEvent):
                values = sizes.get(event.anchor or "", 1)
                repeated += values
                if repeated > MAX_REPEATED:
                    raise PlanError(
                        f"the plan's aliases repeat more than {MAX_REPEATED:,} values.",
                        "write the values out, or alias fewer of them.",
                        file=name,
                        line=line,
                    )
            elif event.anchor:
                sizes[event.anchor] = 1
            if open_:
                open_[-1][0] += values
    return yaml.load(text, Loader=loader)


def refuse_controls(data: Any, name: str) -> None:
    """A control character (a NUL, an escape; tab and newline aside) or half a surrogate
    pair in any value is refused here, naming where it is: the plan file cannot hold one,
    and a NUL cannot reach a spoke's command line. So is a JSON plan nested deeper than
    ``MAX_DEPTH``."""
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), data)]
    while stack:
        where, value = stack.pop()
        if len(where) >= MAX_DEPTH:
            raise _too_deep(name, None)
        if isinstance(value, dict):
            stack += [((*where, str(k)), v) for k, v in reversed(value.items())]
            stack += [(where, k) for k in value]
        elif isinstance(value, list):
            stack += [((*where, i), v) for i, v in reversed(list(enumerate(value)))]
        elif isinstance(value, str) and (found := _CONTROL.search(value)):
            char = found.group()
            what = (
                "half a surrogate pair" if "\ud800" <= char <= "\udfff" else "a control character"
            )
            raise PlanError(
                f"{name}: {key_path(where, 'the plan')}: holds {what} ({char!r}).",
                "remove it; a plan's text is printable (tabs and newlines aside).",
            )


def _text(value: Any) -> str:
    return str(value).strip()


def _value(schema: dict[str, Any], value: Any) -> Any:
    """A schema-valid value as the task holds it: a list's items and text stripped (an
    empty text is no value), a choice as given."""
    if schema.get("type") == "array":
        return [_text(v) for v in value]
    if "enum" in schema:
        return value
    return _text(value) or None


def to_plan(data: dict[str, Any]) -> Plan:
    """Schema-valid data -> Plan: each task field the plan sets (state.model.plan_fields),
    text stripped; ids given as numbers become text ("1"), an empty text is no value."""
    tasks = [
        Task(
            **{
                name: _value(schema, item[name])
                for name, schema, _ in plan_fields()
                if item.get(name) is not None
            }
        )
        for item in data["tasks"]
    ]
    hub = data.get("hub")
    source = Source(hub, clock.stamp()) if hub else None
    return Plan(goal=data["goal"].strip(), tasks=tasks, source=source)


def load(text: str, *, name: str = "plan input") -> Plan:
    """Parse, check against the schema and the dependency graph, and convert.

    Every problem is a one-line ``PlanError``. The returned plan's ``source`` is the
    input's ``hub`` stamped now, or None when the input names no hub.
    """
    data = parse_text(text, name)
    refuse_controls(data, name)
    check(data, name)
    plan = to_plan(data)
    try:
        graph.validate(plan.tasks)
    except PlanError as exc:
        raise PlanError(f"{name}: {exc.message}", exc.fix) from None
    return plan
