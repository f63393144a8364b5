"""The spoke of each CLI in the roster, and which of them are installed. Commands and the
engine ask here and never branch on a CLI's name."""

from __future__ import annotations

import difflib
import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from maestro import roster
from maestro.errors import MaestroError, NotFound
from maestro.process import run_process
from maestro.spokes import clipaths
from maestro.spokes.base import SPOKE_MARKER, Spoke

VERSION_TIMEOUT_S = 10.0
_VERSION = re.compile(r"\d+\.\d+(?:\.\d+)?(?:[-+.][0-9A-Za-z.]+)?")


@dataclass(frozen=True)
class Availability:
    name: str
    path: str | None  # None for the built-in sim spoke
    version: str | None  # None when `--version` failed or printed no version


def get_spoke(name: str, settings: Any = None) -> Spoke:
    """The adapter for ``name``; ``settings`` supply price overrides."""
    cli = roster.get(name)
    if cli is None:
        close = difflib.get_close_matches(name, roster.NAMES, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise NotFound(
            f"unknown spoke CLI {name!r}{hint}.", f"use one of: {', '.join(roster.NAMES)}."
        )
    spoke: Spoke = cli.spoke(settings)
    return spoke


def resumption(task: Any, settings: Any, env: Mapping[str, str]) -> tuple[str | None, str]:
    """The session a revision of ``task`` (a review's findings, a failing check, a
    comment) resumes (None: a fresh one), and how to say so."""
    try:
        spoke = get_spoke(task.tool or "", settings)
    except MaestroError as error:
        return None, f"in a fresh session: {error.message}"
    session = task.session
    why = spoke.cannot_resume(session, env) if session else "its session was not recorded"
    if why is not None:
        return None, f"in a fresh session: {why}"
    return session, "resuming its session"


def _version(path: str, env: dict[str, str]) -> str | None:
    try:
        outcome = run_process(
            [path, "--version"],
            cwd=tempfile.gettempdir(),
            env=env,
            timeout_s=VERSION_TIMEOUT_S,
            grace_s=1.0,
        )
    except MaestroError:
        return None
    if outcome.timed_out or outcome.exit_code != 0:
        return None
    match = _VERSION.search(outcome.stdout) or _VERSION.search(outcome.stderr)
    return match.group(0) if match else None


def detect_available(
    env: dict[str, str] | None = None, *, versions: bool = False
) -> dict[str, Availability]:
    """The spoke CLIs installed (sim always): on PATH, else where an earlier lookup from
    the user's shell recorded them (a hub's shell may have another PATH: ``clipaths``).
    What it finds on PATH it records. A lookup takes about 0.25 ms: it is not cached.

    Which CLIs are there is all that routing, AAVSR and a run need. ``versions`` also
    asks each one ``<cli> --version`` (for ``doctor``), all at once through the process
    runner: a real CLI takes a few hundred milliseconds to say it, time a run's first
    dispatch would otherwise wait for."""
    env = dict(os.environ if env is None else env)
    search = env.get("PATH", os.defpath)
    executables = [cli.executable for cli in roster.CLIS.values() if cli.executable]
    on_path = {exe: path for exe in executables if (path := shutil.which(exe, path=search))}
    # A spoke's PATH is no evidence (spokes are untrusted). A new record can change what
    # a lookup on another PATH finds.
    if env.get(SPOKE_MARKER) != "1":
        clipaths.remember(on_path, env)
    found: dict[str, Availability] = {}
    for name, cli in roster.CLIS.items():
        exe = cli.executable
        path = None if exe is None else shutil.which(exe, path=clipaths.search_path(exe, env))
        if exe is None or path is not None:
            found[name] = Availability(name, path, None)
    if versions:
        found = _with_versions(found, env)
    return found


def _with_versions(found: dict[str, Availability], env: dict[str, str]) -> dict[str, Availability]:
    # 6 ms to import, for doctor alone; every command imports this module.
    from concurrent.futures import ThreadPoolExecutor

    def version(item: Availability) -> Availability:
        if not item.path:
            return item
        # A CLI found through the record runs with its folder on PATH (`#!/usr/bin/env node`).
        search = clipaths.search_path(os.path.basename(item.path), env)
        return replace(item, version=_version(item.path, {**env, "PATH": search}))

    with ThreadPoolExecutor(max_workers=max(1, len(found))) as pool:
        return dict(zip(found, pool.map(version, found.values()), strict=True))
