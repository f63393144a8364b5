"""What a challenger gets besides the plan: a compact file tree and the project's key files.

The challenger runs read-only in the project and may read more itself; this context
saves it the first round of exploring and makes a cheap answer possible. It is capped in
tokens so a large repository does not turn the challenge into the expensive step.
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

from maestro.errors import SpokeError
from maestro.git import run_git
from maestro.state.model import Plan
from maestro.tokens import count_tokens

KEY_FILES = (
    "README.md",
    "README.rst",
    "README",
    "pyproject.toml",
    "setup.cfg",
    "package.json",
    "Cargo.toml",
    "go.mod",
    "Makefile",
    "AGENTS.md",
    "CLAUDE.md",
    "GEMINI.md",
)
SKIP_DIRS = {
    ".git",
    ".ai",
    "node_modules",
    "__pycache__",
    ".venv",
    "venv",
    ".tox",
    "dist",
    "build",
    ".mypy_cache",
}
TREE_MAX_PATHS = 200
DIR_MAX_FILES = 12
FILE_MAX_LINES = 60
TOKEN_CAP = 6000


def list_files(root: Path) -> list[str]:
    """Project files, relative: git's view (tracked and untracked, minus ignored) in a
    repository, else a walk that skips the usual generated folders."""

    try:
        outcome = run_git(
            "ls-files", "--cached", "--others", "--exclude-standard", "-z", cwd=root, timeout_s=30
        )
    except SpokeError:  # no git: fall back to a plain walk
        outcome = None
    if outcome is not None and outcome.exit_code == 0:
        return sorted({p for p in outcome.stdout.split("\0") if p and not p.startswith(".ai/")})
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        rel = Path(folder).relative_to(root)
        found.extend(str(rel / name) if str(rel) != "." else name for name in files)
    return sorted(found)


def compact_tree(paths: list[str]) -> str:
    """One line per folder; a folder with many files shows a few names and a count."""
    by_dir: dict[str, list[str]] = defaultdict(list)
    for path in paths:
        head, _, name = path.rpartition("/")
        by_dir[head].append(name)
    lines: list[str] = []
    shown = 0
    for folder in sorted(by_dir):
        names = by_dir[folder]
        label = f"{folder}/" if folder else "./"
        if len(names) > DIR_MAX_FILES:
            lines.append(f"{label} ({len(names)} files: {', '.join(names[:DIR_MAX_FILES])}, ...)")
        else:
            lines.append(f"{label} {', '.join(names)}")
        shown += min(len(names), DIR_MAX_FILES)
        if shown >= TREE_MAX_PATHS:
            lines.append(f"... ({len(by_dir) - len(lines)} more folders)")
            break
    return "\n".join(lines)


def _head(path: Path) -> str | None:
    try:
        with path.open(encoding="utf-8") as handle:
            lines = []
            for number, line in enumerate(handle):
                if number >= FILE_MAX_LINES:
                    lines.append(f"... (cut at {FILE_MAX_LINES} lines)\n")
                    break
                lines.append(line)
        return "".join(lines)
    except (OSError, UnicodeDecodeError):
        return None


def recon(root: Path, plan: Plan) -> str:
    """The recon section of the challenge prompt, at most about ``TOKEN_CAP`` tokens."""
    paths = list_files(root)
    named = sorted({f for task in plan.tasks for f in task.files})
    missing = [f for f in named if not (root / f).exists()]
    parts = [f"Files in the project ({len(paths)}):", "```", compact_tree(paths) or "(none)", "```"]
    if missing:
        parts.append("Files the plan names that do not exist yet: " + ", ".join(missing))
    budget = TOKEN_CAP - count_tokens("\n".join(parts))
    candidates = [name for name in KEY_FILES if name in paths]
    candidates += [f for f in named if f not in candidates and (root / f).is_file()]
    skipped: list[str] = []
    for name in candidates:
        text = _head(root / name)
        if text is None:
            continue
        block = f"`{name}`:\n```\n{text.rstrip()}\n```"
        cost = count_tokens(block)
        if cost > budget:
            skipped.append(name)
            continue
        parts.append(block)
        budget -= cost
    if skipped:
        parts.append("Not shown (read them yourself if they matter): " + ", ".join(skipped))
    return "\n".join(parts)
