"""Fuzzing the plan file: mangled files either parse or raise PlanError, and a failed
edit never writes. A file that does parse renders back byte for byte, and an edit of it
reads back as edited."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maestro.errors import MaestroError, PlanError
from maestro.paths import ProjectPaths
from maestro.state.planfile import parse_bytes, render
from maestro.state.store import PlanStore

from .strategies import plans

GARBAGE = st.one_of(
    st.binary(min_size=1, max_size=6),
    st.sampled_from(
        [
            b"\xff",
            b"\xc3",
            b"\xe2\x82",
            b"\x00",
            b"\r",
            b"\r\n",
            b"\t",
            b"\xef\xbb\xbf",
            b"## Tasks\n",
            b"### Task 1: again\n",
            b"- **Status:** doing\n",
            b"- **Depends:** 99\n",
            b"```\n",
            b"<!--\n",
            b"- **Tokens:** many\n",
            b"|",
            b"\n\n",
            b"    ",
            b"* ",
            b"**",
        ]
    ),
)


@st.composite
def mangled(draw):  # type: ignore[no-untyped-def]  # @st.composite supplies draw
    plan = draw(plans(max_tasks=4))
    try:
        text = render(plan)
    except PlanError:  # a generated goal the format cannot hold
        plan.goal = "Goal."
        text = render(plan)
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    lines = text.encode().splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 4))):
        if not lines:
            break
        op = draw(st.sampled_from(["delete", "swap", "duplicate", "garbage", "byte", "truncate"]))
        i = draw(st.integers(0, len(lines) - 1))
        j = draw(st.integers(0, len(lines) - 1))
        if op == "delete":
            del lines[i]
        elif op == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "duplicate":
            lines.insert(j, lines[i])
        elif op == "garbage":
            at = draw(st.integers(0, len(lines[i])))
            lines[i] = lines[i][:at] + draw(GARBAGE) + lines[i][at:]
        elif op == "byte" and lines[i]:
            at = draw(st.integers(0, len(lines[i]) - 1))
            lines[i] = lines[i][:at] + bytes([draw(st.integers(0, 255))]) + lines[i][at + 1 :]
        else:
            lines = lines[: i + 1]
            lines[-1] = lines[-1][: draw(st.integers(0, len(lines[-1])))]
    return b"".join(lines)


def has_marker(plan: object) -> bool:
    return any(chunk.slot == "marker" for chunk in plan.layout.chunks)  # type: ignore[attr-defined]  # a parsed plan has a PlanLayout


def consistent_endings(data: bytes) -> bool:
    crlf = data.count(b"\r\n")
    return crlf == 0 or crlf == data.count(b"\n")


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(mangled(), st.data())
def test_mangled_files_parse_or_raise_plan_error_and_failed_edits_never_write(data, draws):
    try:
        plan = parse_bytes(data)
    except PlanError as exc:
        assert str(exc).startswith(".ai/MAESTRO.md")
        assert "Fix: " in str(exc)
        plan = None
    # A file without its marker (above the first section) is format 0 and gains one; mixed
    # line endings are written back in the first line's style. All else comes back as it was.
    if plan is not None and consistent_endings(data) and has_marker(plan):
        assert render(plan).encode() == data
    with tempfile.TemporaryDirectory() as tmp:
        store = PlanStore(ProjectPaths(Path(tmp)))
        store.path.parent.mkdir(parents=True)
        store.path.write_bytes(data)
        status = draws.draw(st.sampled_from(["done", "failed", "running"]))
        try:
            with store.edit() as edited:
                if edited.tasks:
                    edited.tasks[0].status = status
                    edited.tasks[-1].result = "fuzzed"
        except MaestroError:
            assert store.path.read_bytes() == data  # nothing written
            return
        assert plan is not None
        after = parse_bytes(store.path.read_bytes())
        assert after == edited
