"""bench/structure.py's rules: what counts as naming a CLI, and as ``Any`` in code; and
the figures the package holds to."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.structure import any_in_engine, names_a_cli, workspace_branches


@pytest.mark.parametrize(
    "source",
    [
        "TOOLS = ('claude', 'gemini')\n",
        "class ClaudeSpoke:\n    pass\n",
        "def f(codex_home):\n    return codex_home\n",
        "x = obj.gemini_policy\n",
        "from maestro.spokes.codex import CodexSpoke\n",
        "ENV = 'CLAUDE_CODE_ENTRYPOINT'\n",
        "path = '~/.gemini/settings.json'\n",
        "def f():\n    return f'run {tool} or codex'\n",
    ],
)
def test_code_that_names_a_cli(source):
    assert names_a_cli(source)


@pytest.mark.parametrize(
    "source",
    [
        '"""Talks to claude, gemini and codex."""\n',
        'def f():\n    """For codex."""\n    return 1\n',
        "x = 1  # gemini does this too\n",
        "name = 'geminid'\n",  # another word
        "from maestro import roster\nNAMES = roster.NAMES\n",
    ],
)
def test_prose_and_other_words_do_not_count(source):
    assert not names_a_cli(source)


def test_any_counts_names_in_code_and_lines_with_the_word(tmp_path):
    engine = tmp_path / "maestro" / "engine"
    engine.mkdir(parents=True)
    (engine / "a.py").write_text(
        '"""Any text."""\nfrom typing import Any\n\n\ndef f(x: Any) -> dict[str, Any]: ...\n'
        "# Any comment\n",
        encoding="utf-8",
    )
    assert any_in_engine(tmp_path) == (3, 4)


def test_nothing_outside_the_workspace_modules_asks_which_workspace_a_dispatch_has():
    """One workspace interface (engine/runcontext.py), a worktree per dispatch or the shared
    tree behind it: the pipeline, the gates and the run hold no ``worktree is None``."""
    assert workspace_branches(Path(__file__).resolve().parents[1]) == 0
