"""`maestro doctor`: the host CLIs, Maestro's installs in them, and known pitfalls.

Every finding says what was seen and, when something is wrong, the fix. Levels: ok,
info, warn (works, but watch out), fail (something will not work; exit 1).
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from maestro import __version__, roster
from maestro.errors import InstallError
from maestro.install import block, invocation
from maestro.install import manifest as manifests
from maestro.install.host import Host
from maestro.install.hosts import HOSTS
from maestro.install.installer import block_hash, read_text
from maestro.install.manifest import sha256
from maestro.install.safepath import inside
from maestro.install.targets import MANIFEST_NAME
from maestro.paths import ProjectPaths, user_home, user_state_dir
from maestro.spokes import clipaths

CODEX_SKILLS_SINCE = (0, 117)  # older codex: custom prompts, --full-auto, no `$skill`
# A sign-in as each CLI's files show it (Spoke.sign_in): not signed in is a warning, as
# the CLI may be one this user never dispatches to.
SIGNED = {
    True: ("ok", "signed in"),
    False: ("warn", "not signed in"),
    None: ("info", "sign-in unknown"),
}


@dataclass
class Check:
    area: str  # hosts | installs | hubs | pitfalls
    name: str
    level: str
    detail: str
    fix: str | None = None


@dataclass
class Situation:
    """What doctor looks at; tests build one by hand."""

    project_root: Path
    project_manifest: Path
    machine_dir: Path  # the project's .ai/maestro
    env: dict[str, str]
    available: dict[str, Any]  # name -> Availability(name, path, version)
    euid: int


def version_tuple(text: str | None) -> tuple[int, ...] | None:
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text or "")
    return tuple(int(g) for g in match.groups() if g is not None) if match else None


def host_checks(s: Situation) -> list[Check]:
    from maestro.spokes.registry import get_spoke

    checks = []
    # Every vendor's CLI in the roster: the hosts, and spokes that are no host.
    for name in roster.REAL:
        host = HOSTS.get(name)
        title = host.title if host else roster.CLIS[name].display
        use = "hub or spoke" if host else "spoke"
        found = s.available.get(name)
        if found is None or not found.path:
            checks.append(
                Check(
                    "hosts",
                    name,
                    "info",
                    f"{title} ({name}) is not on PATH.",
                    f"to use it as {use}: {get_spoke(name).install_hint}",
                )
            )
        else:
            version = found.version or "version unknown"
            checks.append(Check("hosts", name, "ok", f"{title} {version} at {found.path}"))
            signed = get_spoke(name).sign_in(s.env)
            level, said = SIGNED[signed.state]
            checks.append(
                Check("hosts", f"{name} sign-in", level, f"{said}: {signed.detail}.", signed.fix)
            )
            # What its flags cannot enforce as a spoke (codex: the shell in read+write).
            for tier, why in get_spoke(name).unenforced_tiers.items():
                others = " or ".join(
                    o for o in roster.REAL if o != name and get_spoke(o).enforces(tier)
                )
                checks.append(
                    Check(
                        "hosts",
                        f"{name} {tier}",
                        "info",
                        f"as a spoke in tool tier {tier}, {why}.",
                        f"`maestro run` routes {tier} tasks without a Tool to {others} when installed; "
                        f"a plan that names {name} for such a task gets the restriction from the prompt only.",
                    )
                )
    return checks


def _install_checks(scope: str, path: Path, s: Situation) -> list[Check]:
    """The checks of one manifest (the project's or the user's): each install in it."""
    try:
        manifest = manifests.load(path)
    except InstallError as error:
        return [Check("installs", f"{scope} manifest", "fail", error.message, error.fix)]
    return [check for item in manifest.installs for check in _one_install(item, s)]


def _one_install(item: manifests.Install, s: Situation) -> list[Check]:
    """One install: its files as recorded, and whether the Maestro that wrote them is the
    one that runs now."""
    # Where the files really went (doctor only reads, so the recorded root is fine).
    root = s.project_root if item.root == "." else Path(item.root)
    label = f"{item.host} ({item.scope})"
    missing, modified, broken = _compare_files(item, root)
    checks = [Check("installs", label, "fail", error.message, error.fix) for error in broken]
    where = f"{len(item.files)} files in {root}"
    reinstall = f"maestro install --host {item.host} --scope {item.scope}"
    if missing:
        checks.append(
            Check(
                "installs",
                label,
                "warn",
                f"{where}; missing: {', '.join(missing)}.",
                f"run `{reinstall}` to put them back.",
            )
        )
    if modified:
        checks.append(
            Check(
                "installs",
                label,
                "warn",
                f"{where}; changed by hand: {', '.join(modified)}.",
                "install and uninstall keep these; delete them and reinstall to get Maestro's version.",
            )
        )
    if item.invocation and not invocation.runs(shlex.split(item.invocation)):
        checks.append(
            Check(
                "installs",
                label,
                "fail",
                f"its commands run `{item.invocation}`, which no longer runs this Maestro.",
                f"run `{reinstall}` with the Maestro you use now.",
            )
        )
    elif item.maestro != __version__:
        checks.append(
            Check(
                "installs",
                label,
                "warn",
                f"written by Maestro {item.maestro}; this is {__version__}.",
                f"run `{reinstall}` to update the files.",
            )
        )
    elif not missing and not modified:
        checks.append(Check("installs", label, "ok", f"{where}, as installed."))
    return checks


def _compare_files(
    item: manifests.Install, root: Path
) -> tuple[list[str], list[str], list[InstallError]]:
    """(missing, changed by hand, unreadable) among an install's files and blocks, each
    named as the user sees it."""
    missing: list[str] = []
    modified: list[str] = []
    broken: list[InstallError] = []
    records = [(r, False) for r in item.files] + [(r, True) for r in item.blocks]
    for record, is_block in records:
        name = f"{record.path} (Maestro block)" if is_block else record.path
        try:
            current = _current_hash(root, record.path, item.host, name, is_block)
        except InstallError as error:  # an escaping path, a block without its end marker
            broken.append(error)
            continue
        if current is None:
            missing.append(name)
        elif current != record.sha256:
            modified.append(name)
    return missing, modified, broken


def _current_hash(root: Path, rel: str, host: str, name: str, is_block: bool) -> str | None:
    """The hash of an installed file (or of Maestro's block in it) as it is now; None when
    the file or the block is gone."""
    real = inside(root, rel)
    if not real.is_file():
        return None
    if not is_block:
        return sha256(real.read_bytes())
    found = block.find(read_text(real), host, where=name)
    return block_hash(found) if found else None


def install_checks(s: Situation) -> list[Check]:
    checks = _install_checks("project", s.project_manifest, s)
    checks += _install_checks("user", user_state_dir(s.env) / MANIFEST_NAME, s)
    if not checks:
        checks.append(
            Check(
                "installs",
                "maestro",
                "info",
                "Maestro is not installed into any host here.",
                "maestro install --host claude|gemini|codex|all [--scope user]",
            )
        )
    return checks


def hub_checks(s: Situation) -> list[Check]:
    """Per installed host: can `/maestro:run` (Codex: `$maestro run`) drive a run to its
    end from it as configured, and the line to use or to fix it."""
    run_files: dict[str, str | None] = {}
    for path in (s.project_manifest, user_state_dir(s.env) / MANIFEST_NAME):
        try:
            installs = manifests.load(path).installs
        except InstallError:
            continue  # install_checks reports a broken manifest
        for item in installs:
            root = s.project_root if item.root == "." else Path(item.root)
            found = next(
                (
                    r.path
                    for r in item.files
                    if Path(r.path).stem == "run" and "skills" not in r.path
                ),
                None,
            )
            try:
                text = read_text(inside(root, found)) if found else None
            except (InstallError, OSError):
                text = None
            if text is not None or item.host not in run_files:
                run_files[item.host] = text
    checks = []
    for name, run_file in run_files.items():
        host = HOSTS[name]
        mode = host.hub_mode(s.env, s.project_root, run_file)
        checks.append(
            Check(
                "hubs",
                name,
                "ok" if mode.ready else "warn",
                f"{host.title}: {mode.detail}",
                mode.fix,
            )
        )
        checks.append(_reach(host, s))
    return checks


def _reach(host: Host, s: Situation) -> Check:
    """Which spoke CLIs a `maestro run` started from ``host`` finds, and the line that
    fixes each one it does not. A shell that resets PATH (Codex's login shell) finds
    those Maestro recorded from the user's shell (maestro.spokes.clipaths)."""
    record = clipaths.record_file(s.env)
    reached: list[str] = []
    missed: dict[str, str] = {}  # name -> its fix
    for cli in roster.real():
        if cli.name not in s.available:
            missed[cli.name] = (
                f"{cli.name}: {cli.install_hint} (installed already: run `maestro doctor` "
                "once from a shell whose PATH has it)"
            )
        elif host.resets_path and not clipaths.recorded_path(cli.executable or "", s.env):
            missed[cli.name] = (
                f"{cli.name} is on this PATH but not recorded: let Maestro write {record} "
                "(yours, in a folder only you can write), then run `maestro doctor` again"
            )
        else:
            reached.append(cli.name)
    detail = (
        f"a run started from {host.title} starts these spoke CLIs: {', '.join(reached) or 'none'}"
    )
    detail += f"; not {', '.join(missed)}." if missed else "."
    if host.resets_path:
        detail += (
            " Its shell's login profile sets PATH afresh: Maestro starts the spoke CLIs "
            f"where it found them before, recorded in {record}."
        )
    lost = any(name in s.available for name in missed)
    level = "warn" if lost or not reached else "info" if missed else "ok"
    fix = "; ".join(missed.values()) + "." if missed else None
    return Check("hubs", f"{host.name} spokes", level, detail, fix)


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


def examine(s: Situation) -> list[Check]:
    checks = host_checks(s) + install_checks(s) + hub_checks(s)
    found = [c for c in (p(s) for p in PITFALLS) if c is not None]
    return checks + (
        found or [Check("pitfalls", "pitfalls", "ok", "none of the known pitfalls found.")]
    )


def situation(paths: ProjectPaths, env: dict[str, str]) -> Situation:
    from maestro.spokes.registry import detect_available

    available = {k: v for k, v in detect_available(env, versions=True).items() if k in roster.REAL}
    return Situation(
        paths.root, paths.install_manifest, paths.machine_dir, env, available, os.geteuid()
    )


def to_data(checks: list[Check]) -> dict[str, Any]:
    return {
        "checks": [asdict(c) for c in checks],
        "failed": sum(c.level == "fail" for c in checks),
        "warnings": sum(c.level == "warn" for c in checks),
    }


def to_text(checks: list[Check]) -> str:
    lines = []
    for area in ("hosts", "installs", "hubs", "pitfalls"):
        lines.append(f"{area}:")
        for check in (c for c in checks if c.area == area):
            lines.append(f"  [{check.level}] {check.name}: {check.detail}")
            if check.fix and check.level != "ok":
                lines.append(f"         fix: {check.fix}")
    failed = sum(c.level == "fail" for c in checks)
    warned = sum(c.level == "warn" for c in checks)
    lines.append(f"{failed} problem(s), {warned} warning(s).")
    return "\n".join(lines)
