"""`maestro doctor`: the host CLIs, Maestro's installs in them, and known pitfalls.

Every finding says what was seen and, when something is wrong, the fix. Levels: ok,
info, warn (works, but watch out), fail (something will not work; exit 1).
"""

from __future__ import annotations

import os
import shlex
from dataclasses import asdict
from pathlib import Path
from typing import Any

from maestro import __version__, clock, roster, sandbox
from maestro.errors import InstallError, MaestroError
from maestro.forge import Forge
from maestro.install import block, invocation
from maestro.install import manifest as manifests
from maestro.install.checks import SIGNED, Check, Situation
from maestro.install.host import Host, hosts
from maestro.install.installer import block_hash, read_text
from maestro.install.manifest import sha256
from maestro.install.pitfalls import PITFALLS
from maestro.install.safepath import inside
from maestro.install.targets import MANIFEST_NAME
from maestro.paths import ProjectPaths, user_state_dir
from maestro.repo import Repo
from maestro.spokes import clipaths, pricing
from maestro.spokes.registry import detect_available, get_spoke


def host_checks(s: Situation) -> list[Check]:
    checks = []
    # Every vendor's CLI in the roster: the hosts, and spokes that are no host.
    for cli in roster.real():
        name, title = cli.name, cli.display
        use = "hub or spoke" if cli.host else "spoke"
        found = s.available.get(name)
        if found is None or not found.path:
            checks.append(
                Check(
                    "hosts",
                    name,
                    "info",
                    f"{title} ({name}) is not on PATH.",
                    f"to use it as {use}: {cli.install_hint}",
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
                f"maestro install --host {'|'.join(hosts())}|all [--scope user]",
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
        host = hosts()[name]
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


def examine(s: Situation) -> list[Check]:
    checks = host_checks(s) + install_checks(s) + hub_checks(s)
    each = [check for cli in roster.CLIS.values() for check in cli.checks]
    found = [c for c in (p(s) for p in (*each, *PITFALLS)) if c is not None]
    return checks + (
        found or [Check("pitfalls", "pitfalls", "ok", "none of the known pitfalls found.")]
    )


def sandbox_check(settings: Any, env: dict[str, str]) -> Check:
    """Whether the processes a run starts are confined (maestro.sandbox)."""
    if not settings.sandbox:
        return Check(
            "hosts",
            "sandbox",
            "warn",
            "off (MAESTRO_SANDBOX=0 in the environment): spokes and validation "
            "commands run with your full rights.",
            "unset MAESTRO_SANDBOX to confine them.",
        )
    probed, why = sandbox.probe(env)
    if probed is None:
        return Check(
            "hosts",
            "sandbox",
            "fail",
            f"{why}: `maestro run` refuses to start.",
            sandbox.fix() + ".",
        )
    confined = sandbox.configured(probed, settings, env)
    return Check(
        "hosts",
        "sandbox",
        "ok",
        f"spokes and validation commands run confined by {sandbox.NAMES[probed.backend]} "
        f"({probed.program}); "
        f"{sandbox.bounds(confined)}.",
    )


def price_check(settings: Any) -> Check:
    """The price table estimated dollars come from: readable, and read recently."""
    name = pricing.table_name(settings)
    try:
        rows = pricing.price_table(settings)
    except MaestroError as exc:
        return Check("hosts", "price table", "fail", exc.message, exc.fix)
    oldest = min(price.date for _, price in rows if price.date is not None)
    age = (clock.utc_now().date() - oldest).days
    if age > pricing.STALE_DAYS:
        return Check(
            "hosts",
            "price table",
            "warn",
            f"{name}: its oldest price was read {oldest} ({age} days ago): estimated dollars "
            "and dollar caps may be off.",
            f"check the prices at their source pages and update them (date too), in {name} or "
            'as [prices."<model>"] in .ai/maestro.toml.',
        )
    return Check(
        "hosts", "price table", "ok", f"{name}: {len(rows)} prices, the oldest read {oldest}."
    )


def situation(paths: ProjectPaths, env: dict[str, str]) -> Situation:
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


def forge_check(paths: ProjectPaths, settings: Any, env: dict[str, str]) -> Check:
    """Whether `maestro run --pr` can push and open a pull request from here: a GitHub
    remote, gh installed and signed in to its host (maestro.forge)."""
    repo = Repo.find(paths.root)
    if repo is None:
        return Check(
            "hosts",
            "pull requests",
            "ok",
            "not a git repository (only `maestro run --pr` needs one)",
        )
    ok, line = Forge(repo.top, settings.pr_remote, env=env, timeout=10).status()
    if ok:
        return Check("hosts", "pull requests", "ok", f"{line}: `maestro run --pr` can open them")
    message, _, fix = line.partition(" Fix: ")
    # Only a problem for a project that delivers as pull requests by default.
    return Check(
        "hosts",
        "pull requests",
        "warn" if settings.pr else "ok",
        f"`maestro run --pr` cannot open one: {message}",
        fix or None,
    )
