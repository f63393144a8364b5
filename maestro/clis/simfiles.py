"""Plausible file contents for the sim spoke, by file type.

Every text parses as its format (Python compiles, JSON/YAML/TOML load) and every test it
writes passes, so a simulated run goes through the same gates as a real one. Each file
says it was written by the simulated spoke.
"""

from __future__ import annotations

import html
import json
import os
import re
from pathlib import Path

import tomli_w

MARK = "Simulated by Maestro's sim spoke"


def slug(text: str) -> str:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return "_".join(words[:6]) or "task"


def _is_test(path: Path) -> bool:
    return path.suffix == ".py" and (path.name.startswith("test_") or path.stem.endswith("_test"))


def python_module(title: str, task: str) -> str:
    return (
        f'"""{title}.\n\n{MARK} for task {task}: a stand-in, not the real work.\n"""\n\n'
        "from __future__ import annotations\n\n"
        f"TASK = {json.dumps(title)}\n\n\n"
        "def summarize(items: list[str]) -> str:\n"
        f'    """Join the non-blank ``items`` into one line for task {task}; none gives ""."""\n'
        '    return ", ".join(item.strip() for item in items if item.strip())\n'
    )


def python_test(title: str, task: str, path: Path, module: Path | None) -> str:
    name = slug(title)
    head = f'"""Tests for {title}. {MARK} for task {task}."""\n\n'
    if module is None:
        return head + (
            f"def summarize(items):\n"
            '    return ", ".join(item.strip() for item in items if item.strip())\n\n\n'
            f"def test_{name}_joins_items():\n"
            '    assert summarize(["a", " b ", ""]) == "a, b"\n'
        )
    relative = os.path.relpath(module, path.parent)
    return head + (
        "import importlib.util\n"
        "from pathlib import Path\n\n"
        f"MODULE = Path(__file__).parent / {json.dumps(relative)}\n\n\n"
        "def _load():\n"
        '    spec = importlib.util.spec_from_file_location("sim_module", MODULE)\n'
        "    module = importlib.util.module_from_spec(spec)\n"
        "    spec.loader.exec_module(module)\n"
        "    return module\n\n\n"
        f"def test_{name}_joins_items():\n"
        '    assert _load().summarize(["a", " b ", ""]) == "a, b"\n\n\n'
        f"def test_{name}_empty():\n"
        '    assert _load().summarize([]) == ""\n'
    )


def content_for(path: Path, title: str, task: str, siblings: list[Path]) -> tuple[str, str]:
    """(content, one-line purpose) of a new file at ``path``."""
    suffix = path.suffix.lower()
    if _is_test(path):
        modules = [p for p in siblings if p.suffix == ".py" and not _is_test(p)]
        return python_test(
            title, task, path, modules[0] if modules else None
        ), "pytest tests that pass"
    if suffix == ".py":
        return python_module(title, task), "Python module with summarize(items)"
    if suffix in (".md", ".markdown"):
        return (
            f"# {title}\n\n> {MARK} for task {task}.\n\n## Overview\n\nThis page describes {title.lower()}.\n",
            "Markdown page",
        )
    if suffix == ".rst":
        line = "=" * len(title)
        return f"{title}\n{line}\n\n{MARK} for task {task}.\n", "reStructuredText page"
    if suffix == ".json":
        return json.dumps(
            {"task": task, "title": title, "simulated": True}, indent=2
        ) + "\n", "JSON document"
    if suffix in (".yaml", ".yml"):
        return (
            f"# {MARK}.\ntask: {json.dumps(task)}\ntitle: {json.dumps(title)}\nsimulated: true\n",
            "YAML document",
        )
    if suffix == ".toml":
        return f"# {MARK}.\n" + tomli_w.dumps(
            {"task": {"id": task, "title": title, "simulated": True}}
        ), "TOML document"
    if suffix in (".js", ".mjs", ".cjs", ".ts"):
        return (
            f"// {title}. {MARK} for task {task}.\n"
            "export function summarize(items) {\n"
            '  return items.map((item) => item.trim()).filter(Boolean).join(", ");\n'
            "}\n"
        ), "JavaScript module with summarize(items)"
    if suffix == ".sh":
        return (
            f"#!/bin/sh\n# {title}. {MARK} for task {task}.\nset -eu\necho {json.dumps(title)}\n",
            "shell script",
        )
    if suffix in (".html", ".htm"):
        safe = html.escape(title)
        return (
            f"<!doctype html>\n<title>{safe}</title>\n<!-- {MARK} for task {task}. -->\n<p>{safe}</p>\n",
            "HTML page",
        )
    if suffix == ".css":
        return f"/* {title}. {MARK} for task {task}. */\n.sim {{ display: block; }}\n", "stylesheet"
    return f"{title}\n{MARK} for task {task}.\n", "text file"


def appended_note(path: Path, title: str, task: str) -> str | None:
    """A note to add to an existing file that keeps it valid; None where the format has
    no comments (JSON): such a file is left as it was."""
    note = f"{MARK} for task {task}: {title}."
    suffix = path.suffix.lower()
    if suffix in (".py", ".sh", ".yaml", ".yml", ".toml", ".cfg", ".ini", ".txt", ""):
        return f"\n# {note}\n"
    if suffix in (".md", ".markdown", ".html", ".htm"):
        return f"\n<!-- {note} -->\n"
    if suffix in (".js", ".mjs", ".cjs", ".ts", ".css"):
        return f"\n/* {note} */\n"
    return None
