"""The known pitfalls `maestro doctor` looks for: each a function of the situation that
returns a finding with its fix, or None."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from maestro.install.checks import CODEX_SKILLS_SINCE, Check, Situation, version_tuple
from maestro.paths import user_home


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _bypass_as_root(s: Situation) -> Check | None:
    if s.euid != 0 or s.env.get("IS_SANDBOX") == "1":
        return None
    files = [
        user_home(s.env) / ".claude" / "settings.json",
        s.project_root / ".claude" / "settings.json",
        s.project_root / ".claude" / "settings.local.json",
    ]
    for path in files:
        data = _json(path)
        mode = data.get("permissions", {}).get("defaultMode") if isinstance(data, dict) else None
        if mode == "bypassPermissions":
            return Check(
                "pitfalls",
                "claude as root",
                "fail",
                f"running as root with permissions.defaultMode bypassPermissions ({path}): Claude Code "
                "refuses bypassPermissions as root and exits 1.",
                "set defaultMode to acceptEdits (Maestro's claude spokes use acceptEdits with "
                "--allowedTools), run as a normal user, or set IS_SANDBOX=1 in a throwaway container.",
            )
    return None


def gemini_trusted(s: Situation) -> bool | None:
    """Gemini CLI's folder-trust decision for the project (its own rules, 0.61)."""
    flag = s.env.get("GEMINI_CLI_TRUST_WORKSPACE")
    if flag in ("true", "false"):
        return flag == "true"
    settings = _json(user_home(s.env) / ".gemini" / "settings.json")
    enabled = (((settings or {}).get("security") or {}).get("folderTrust") or {}).get(
        "enabled", True
    )
    if enabled is False:
        return True
    rules_path = Path(
        s.env.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
        or user_home(s.env) / ".gemini" / "trustedFolders.json"
    )
    rules = _json(rules_path)
    where = s.project_root.resolve()
    best: tuple[int, str] | None = None
    for rule, level in (rules or {}).items() if isinstance(rules, dict) else ():
        folder = Path(rule).parent if level == "TRUST_PARENT" else Path(rule)
        folder = folder.expanduser().resolve()
        if (where == folder or folder in where.parents) and (best is None or len(rule) > best[0]):
            best = (len(rule), level)
    if best is None:
        return None
    return best[1] in ("TRUST_FOLDER", "TRUST_PARENT")


def _gemini_trust(s: Situation) -> Check | None:
    if "gemini" not in s.available or gemini_trusted(s):
        return None
    return Check(
        "pitfalls",
        "gemini folder trust",
        "warn",
        f"Gemini CLI does not trust {s.project_root}: headless `gemini -p` exits 55 here and an "
        "interactive session asks first (Maestro's gemini spokes pass --skip-trust).",
        "run `gemini` in this folder once and trust it, add it to ~/.gemini/trustedFolders.json as "
        "TRUST_FOLDER, or export GEMINI_CLI_TRUST_WORKSPACE=true.",
    )


def _old_codex(s: Situation) -> Check | None:
    found = s.available.get("codex")
    version = version_tuple(found.version if found else None)
    if found is None or version is None or version[:2] >= CODEX_SKILLS_SINCE:
        return None
    return Check(
        "pitfalls",
        "old codex",
        "fail",
        f"codex {found.version} predates 0.117: it still needs --full-auto (Maestro passes --sandbox) "
        "and has no skills, so `$maestro` does not work.",
        "upgrade: npm install -g @openai/codex@latest",
    )


def _inside_claude(s: Situation) -> Check | None:
    if not (s.env.get("CLAUDECODE") or s.env.get("CLAUDE_CODE_ENTRYPOINT")):
        return None
    return Check(
        "pitfalls",
        "CLAUDECODE set",
        "warn",
        "this shell runs inside Claude Code (CLAUDECODE / CLAUDE_CODE_ENTRYPOINT set): a `claude` "
        "started from here refuses or hangs. Maestro drops both for its spokes.",
        "for a claude you start by hand: env -u CLAUDECODE -u CLAUDE_CODE_ENTRYPOINT claude ...",
    )


def _inside_spoke(s: Situation) -> Check | None:
    if s.env.get("MAESTRO_SPOKE") != "1":
        return None
    return Check(
        "pitfalls",
        "inside a spoke",
        "info",
        "MAESTRO_SPOKE=1: this shell belongs to a task Maestro dispatched; `maestro run` refuses here.",
        "run Maestro from the hub session, not from a spoke.",
    )


def _stale_worktrees(s: Situation) -> Check | None:
    """Worktrees a killed run left (``maestro run`` removes them at its start) and entries
    ``git worktree prune`` would drop."""
    from maestro.repo import Repo

    repo = Repo.find(s.project_root)
    if repo is None:
        return None
    found = repo.stale_worktrees(s.machine_dir / "worktrees")
    if not found:
        return None
    left = [str(f.path) for f in found if not f.kept and not f.prunable]
    kept = [str(f.path) for f in found if f.kept]
    prunable = [str(f.path) for f in found if f.prunable]
    parts = []
    if left:
        parts.append(f"{len(left)} worktree(s) a stopped run left: {', '.join(left)}")
    if kept:
        parts.append(f"{len(kept)} kept by --keep-worktrees: {', '.join(kept)}")
    if prunable:
        parts.append(f"{len(prunable)} registered with git, folder gone: {', '.join(prunable)}")
    # `maestro run` clears what a stopped run left and prunes; kept ones stay until the
    # person removes them, so the fix must not promise that a run will.
    fixes = []
    if left or prunable:
        fixes.append("`maestro run` removes a stopped run's worktrees when it starts")
    if kept:
        fixes.append("kept worktrees stay until you remove them")
    fixes.append("by hand: `git worktree remove --force PATH` for each, then `git worktree prune`.")
    return Check(
        "pitfalls",
        "stale worktrees",
        "warn" if left or prunable else "info",
        "; ".join(parts) + ".",
        "; ".join(fixes),
    )


SQLITE_SINCE = (3, 35, 0)  # UPDATE ... RETURNING, which the mailbox marks mail read with


def _old_sqlite(s: Situation) -> Check | None:
    import sqlite3

    if sqlite3.sqlite_version_info >= SQLITE_SINCE:
        return None
    return Check(
        "pitfalls",
        "sqlite",
        "fail",
        f"this Python's SQLite is {sqlite3.sqlite_version}; Maestro's mailbox needs 3.35 or "
        "newer (UPDATE ... RETURNING), so runs and `maestro mail` fail.",
        "run Maestro with a Python built against SQLite 3.35+ (python.org, Homebrew, uv or "
        "a current Linux distribution's python3).",
    )


PITFALLS: tuple[Callable[[Situation], Check | None], ...] = (
    _bypass_as_root,
    _gemini_trust,
    _old_codex,
    _inside_claude,
    _inside_spoke,
    _stale_worktrees,
    _old_sqlite,
)
