"""`maestro install` and `maestro uninstall` over one or more hosts: build the targets,
plan every file under the manifest's lock, refuse before writing anything if a plan
cannot be made, then apply (unless it is a dry run) and save the manifest."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from maestro.fsutil import file_lock, remove_empty_folder
from maestro.install import installer
from maestro.install import manifest as manifests
from maestro.install.host import RenderOptions
from maestro.install.installer import InstallPlan
from maestro.install.targets import build, manifest_path, shown


@dataclass
class Request:
    hosts: list[str]
    scope: str = "project"
    dry_run: bool = False


@dataclass
class Where:
    """The places an operation needs, from the CLI context."""

    project_root: Path
    project_manifest: Path
    env: dict[str, str]
    state_dir: str = ".ai"


@dataclass
class InstallReport:
    operation: str  # install | uninstall
    request: Request
    plans: list[InstallPlan]
    manifest: Path
    where: Where

    @property
    def exit_code(self) -> int:
        return 1 if any(p.conflicts for p in self.plans) else 0

    def shown(self, plan: InstallPlan, rel: str) -> str:
        return shown(plan.target.root / rel, self.where.project_root, self.where.env)

    def to_data(self) -> dict[str, Any]:
        return {
            "operation": self.operation,
            "dry_run": self.request.dry_run,
            "scope": self.request.scope,
            "manifest": str(self.manifest),
            "installs": [
                {
                    "host": p.target.host.name,
                    "root": str(p.target.root),
                    "actions": [
                        {
                            "verb": a.verb,
                            "path": self.shown(p, a.rel),
                            "kind": a.kind,
                            "note": a.note,
                        }
                        for a in p.actions
                    ],
                }
                for p in self.plans
            ],
            "conflicts": sum(len(p.conflicts) for p in self.plans),
            "modified": [self.shown(p, a.rel) for p in self.plans for a in p.skipped],
        }


@contextlib.contextmanager
def _locked(path: Path, dry_run: bool) -> Iterator[None]:
    if dry_run:  # a dry run writes nothing, not even a lock file
        yield
        return
    with file_lock(path.with_name(path.name + ".lock")):
        yield


def _operate(operation: str, request: Request, where: Where, invocation: str) -> InstallReport:
    opts = RenderOptions(invocation=invocation, state_dir=where.state_dir)
    path = manifest_path(request.scope, where.project_manifest, where.env)
    with _locked(path, request.dry_run):
        manifest = manifests.load(path)
        plans = []
        pending: installer.Pending = {}  # hosts may share an instruction file (a symlink)
        for host in request.hosts:
            target = build(
                host, request.scope, project_root=where.project_root, env=where.env, opts=opts
            )
            rel = target.stub_file
            shown_paths = {rel: shown(target.root / rel, where.project_root, where.env)}
            if operation == "install":
                plans.append(
                    installer.plan_install(
                        target, manifest, invocation=invocation, shown=shown_paths, pending=pending
                    )
                )
            else:
                plans.append(
                    installer.plan_uninstall(target, manifest, shown=shown_paths, pending=pending)
                )
        if not request.dry_run:  # every plan was made before anything is written
            for plan in plans:
                installer.apply(plan, manifest)
            manifest.save()
    if operation == "uninstall" and not request.dry_run and not manifest.installs:
        _tidy(path, where)
    return InstallReport(operation, request, plans, path, where)


def install(request: Request, where: Where, invocation: str) -> InstallReport:
    return _operate("install", request, where, invocation)


def uninstall(request: Request, where: Where, invocation: str) -> InstallReport:
    return _operate("uninstall", request, where, invocation)


def _tidy(path: Path, where: Where) -> None:
    """With nothing left installed, take the lock file and empty state folders away too."""
    path.with_name(path.name + ".lock").unlink(missing_ok=True)
    folder = path.parent
    stop = where.project_root if folder.is_relative_to(where.project_root) else folder.parent
    while folder != stop and folder.is_relative_to(stop) and remove_empty_folder(folder):
        folder = folder.parent


def _next_step(plan: InstallPlan) -> str:
    host = plan.target.host
    return f"In {host.title}: {host.invoke('plan')} <goal>, then {host.invoke('status')}."


def to_text(report: InstallReport) -> str:
    lines: list[str] = []
    width = max((len(a.verb) for p in report.plans for a in p.actions), default=6)
    for plan in report.plans:
        lines.append(f"{plan.target.label}:")
        if not plan.actions:
            lines.append("  nothing installed here")
        for action in plan.actions:
            where = report.shown(plan, action.rel)
            extra = "  [Maestro block]" if action.kind == "block" else ""
            note = f"  ({action.note})" if action.note else ""
            lines.append(f"  {action.verb:<{width}}  {where}{extra}{note}")
    conflicts = sum(len(p.conflicts) for p in report.plans)
    skipped = [report.shown(p, a.rel) for p in report.plans for a in p.skipped]
    if skipped:
        lines.append(
            f"Kept {len(skipped)} file(s) changed since Maestro wrote them: {', '.join(skipped)}."
        )
    if conflicts:
        lines.append(
            f"{conflicts} file(s) not written by Maestro are in the way and were left alone. "
            "Fix: move them away (or merge them by hand), then run this again."
        )
    if report.request.dry_run:
        lines.append("Dry run: nothing was written.")
    elif report.operation == "install" and not conflicts:
        lines += [_next_step(plan) for plan in report.plans]
    return "\n".join(lines)
