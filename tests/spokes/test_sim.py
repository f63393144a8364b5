"""The offline sim spoke: plausible files, a valid handoff, measured tokens, delays."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import tomllib

import pytest
import yaml

from maestro.errors import ConfigError
from maestro.prompts.results import parse_result
from maestro.spokes.contract import DispatchRequest
from maestro.spokes.registry import get_spoke
from maestro.tokens import count_tokens

PROMPT = """## Task
Add a greeting helper

## Success Criteria
- [ ] greet() returns a greeting
- [ ] the tests pass
"""


def run(project, files, **kw):
    kw.setdefault("tier", "full")
    req = DispatchRequest(
        prompt=PROMPT, cwd=project, files=[project / f for f in files], task_id="4", **kw
    )
    return get_spoke("sim").dispatch(req)


def test_writes_plausible_files_by_type(project):
    files = [
        "src/greet.py",
        "tests/test_greet.py",
        "docs/greet.md",
        "conf/a.json",
        "conf/b.yaml",
        "conf/c.toml",
        "web/x.js",
    ]
    result = run(project, files)
    assert result.success and result.simulated
    module = (project / "src/greet.py").read_text()
    compile(module, "greet.py", "exec")
    assert "def summarize(items: list[str]) -> str:" in module and "Add a greeting helper" in module
    assert json.loads((project / "conf/a.json").read_text())["simulated"] is True
    assert yaml.safe_load((project / "conf/b.yaml").read_text())["title"] == "Add a greeting helper"
    assert tomllib.loads((project / "conf/c.toml").read_text())["task"]["id"] == "4"
    assert (project / "docs/greet.md").read_text().startswith("# Add a greeting helper\n")
    assert "export function summarize" in (project / "web/x.js").read_text()
    # The generated test imports the generated module and passes.
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_greet.py"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "2 passed" in tests.stdout


def test_answer_is_a_valid_result_submission_and_handoff(project):
    result = run(project, ["src/greet.py"])
    parsed = parse_result(result.text)
    assert parsed.problems == []
    assert parsed.submission.status == "success"
    assert parsed.submission.changes == [
        "Created src/greet.py: Python module with summarize(items)"
    ]
    assert [text for _, text in parsed.submission.verification] == [
        "greet() returns a greeting - simulated: not checked by a model",
        "the tests pass - simulated: not checked by a model",
    ]
    assert all(checked for checked, _ in parsed.submission.verification)
    assert (
        parsed.handoff.task_report["Files Created"]
        == f"{project / 'src/greet.py'} (Python module with summarize(items))"
    )
    assert "Simulated" in parsed.submission.summary


def test_tokens_are_measured_and_cost_is_zero(project):
    result = run(project, ["a.md"], system_prompt="SYSTEM")
    assert result.usage.input == count_tokens("SYSTEM\n\n" + PROMPT)
    assert result.usage.output == count_tokens(result.text)
    assert (result.cost, result.cost_estimated, result.simulated) == (0.0, False, True)
    assert result.argv == ["sim", "--tier", "full", str(project / "a.md")]


def test_deterministic(tmp_path):
    texts = []
    for name in ("one", "two"):
        root = tmp_path / name / "proj"
        root.mkdir(parents=True)
        result = run(root, ["src/m.py", "README.md"])
        texts.append(
            (
                result.text.replace(str(root), "<root>"),
                result.session_id,
                (root / "src/m.py").read_text(),
            )
        )
    assert texts[0] == texts[1]


def test_read_only_tier_writes_nothing(project):
    result = run(project, ["src/m.py"], tier="read-only")
    assert not (project / "src/m.py").exists()
    assert parse_result(result.text).submission.changes == [
        "None (tool tier read-only: no files written)"
    ]


def test_existing_files_keep_their_content(project):
    (project / "notes.md").write_text("# Mine\n\nkeep me\n")
    (project / "data.json").write_text('{"mine": 1}\n')
    result = run(project, ["notes.md", "data.json"])
    assert (project / "notes.md").read_text().startswith("# Mine\n\nkeep me\n\n<!-- Simulated")
    assert (project / "data.json").read_text() == '{"mine": 1}\n'
    parsed = parse_result(result.text)
    assert parsed.submission.status == "partial"
    assert (
        "data.json exists and its format has no comments; left unchanged"
        in parsed.submission.issues
    )


def test_files_outside_the_project_are_refused(project, tmp_path):
    outside = tmp_path / "outside.py"
    result = get_spoke("sim").dispatch(DispatchRequest(prompt=PROMPT, cwd=project, files=[outside]))
    assert not outside.exists()
    assert "outside the project folder" in parse_result(result.text).submission.issues


def test_delay_from_the_environment(project, monkeypatch):
    monkeypatch.setenv("MAESTRO_SIM_DELAY", "0.3")
    started = time.monotonic()
    result = run(project, [])
    assert time.monotonic() - started >= 0.3 and result.duration_s >= 0.3


def test_delay_per_request_wins(project, monkeypatch):
    monkeypatch.setenv("MAESTRO_SIM_DELAY", "30")
    assert run(project, [], sim_delay_s=0).duration_s < 5


def test_bad_delay_is_a_config_error(project, monkeypatch):
    monkeypatch.setenv("MAESTRO_SIM_DELAY", "soon")
    with pytest.raises(ConfigError, match="MAESTRO_SIM_DELAY='soon' .* is not valid"):
        run(project, [])


def test_delay_past_the_timeout_is_a_timeout(project):
    result = run(project, ["x.py"], sim_delay_s=5, timeout_s=0.2)
    assert (result.success, result.error_kind, result.timed_out, result.transient) == (
        False,
        "timeout",
        True,
        True,
    )
    assert not (project / "x.py").exists()


def test_abort_threshold(project):
    result = run(project, ["x.py"], abort_tokens=10)
    assert (result.success, result.error_kind, result.aborted_over_budget) == (
        False,
        "over_budget",
        True,
    )


def test_on_start_gets_this_process(project):
    seen = []
    get_spoke("sim").dispatch(DispatchRequest(prompt="x", cwd=project), on_start=seen.append)
    import os

    assert seen == [os.getpid()]


def test_verification_covers_the_task_criteria_only(project):
    from maestro.clis.sim import criteria

    prompt = (
        "## Task\nTask 1: x\n\n## Success Criteria\n- [ ] slugify lowercases\n- [ ] tests pass\n\n"
        "## Output Format\n## Verification\n- [x] [criterion]: [how you checked it]\n"
        "- [ ] [criterion]: [why it is not met]\n"
    )
    assert criteria(prompt) == ["slugify lowercases", "tests pass"]
    req = DispatchRequest(prompt=prompt, cwd=project, criteria=["given as data"])
    result = get_spoke("sim").dispatch(req)
    verification = parse_result(result.text).submission.verification
    assert [text.split(" - ")[0] for _, text in verification] == ["given as data"]


def test_a_toml_file_holds_any_title_as_toml():
    """A JSON string is not a TOML string: an emoji is a surrogate pair TOML refuses."""
    from pathlib import Path

    from maestro.clis.simfiles import content_for

    title = 'Ship it 🚀: "quotes", back\\slash, tab\tand é'
    text, _ = content_for(Path("conf/c.toml"), title, "4", [])
    assert tomllib.loads(text)["task"] == {"id": "4", "title": title, "simulated": True}


def test_it_prints_its_work_as_a_streaming_cli_does(project):
    """What the sim prints reads as a transcript: each file it wrote as a Write call with
    the lines it wrote, its answer, and the tokens its result counts."""
    from maestro.board import transcript

    result = run(project, ["pkg/util.py"])
    shown = [e for line in result.stdout.splitlines() for e in transcript.entries(line)]
    kinds = [e["kind"] for e in shown]
    assert kinds == ["status", "tool", "result", "message", "status"]
    write = shown[1]
    assert (write["name"], write["text"]) == ("Write", "pkg/util.py")
    assert "+def summarize(items: list[str]) -> str:" in write["diff"].splitlines()
    assert shown[3]["text"] == result.text
    assert shown[-1]["text"] == f"done: success, {result.usage.total:,} tokens"
