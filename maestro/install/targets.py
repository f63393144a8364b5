"""Where one install goes: host, form (files, plugin, extension), scope, root folder,
the files rendered for it and the instruction file that gets the stub block."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from maestro.errors import InstallError
from maestro.formatting import shown_path
from maestro.install.hosts import HOSTS, Host, RenderedFile, RenderOptions, get_host
from maestro.paths import user_home, user_state_dir

MANIFEST_NAME = "install-manifest.json"


@dataclass(frozen=True)
class Target:
    host: Host
    form: str
    scope: str
    root: Path
    root_record: str  # what the manifest stores: "." for the project root
    files: tuple[RenderedFile, ...]
    stub_file: str | None  # instruction file relative to root (files form only)
    stub_body: str

    @property
    def label(self) -> str:
        return (
            f"{self.host.name} ({self.scope}"
            + ("" if self.form == "files" else f", {self.form}")
            + ")"
        )


def default_scope(form: str) -> str:
    return "project" if form == "files" else "user"


def check_form(host: str, form: str, scope: str) -> None:
    if form not in get_host(host).forms:
        offers = "; ".join(f"{h.name}: {', '.join(h.forms)}" for h in HOSTS.values())
        raise InstallError(
            f"--as {form} is not a form {host} has.", f"use a form the host offers ({offers})."
        )
    if form != "files" and scope != "user":
        raise InstallError(
            f"a {form} is installed for the user, not into a project.", "drop --scope project."
        )


def root_for(host: Host, form: str, scope: str, project_root: Path, env: dict[str, str]) -> Path:
    if form == "plugin":
        return user_state_dir(env) / "claude-plugin"
    if form == "extension":
        return user_home(env) / ".gemini" / "extensions" / "maestro"
    return project_root if scope == "project" else host.user_root(env)


def manifest_path(scope: str, project_manifest: Path, env: dict[str, str]) -> Path:
    return project_manifest if scope == "project" else user_state_dir(env) / MANIFEST_NAME


def build(
    host_name: str,
    form: str,
    scope: str,
    *,
    project_root: Path,
    env: dict[str, str],
    opts: RenderOptions,
) -> Target:
    check_form(host_name, form, scope)
    host = get_host(host_name)
    root = root_for(host, form, scope, project_root, env)
    files = host.form_files(form, scope, opts)
    stub_file = host.instruction_file if form == "files" else None
    record = "." if scope == "project" else str(root)
    return Target(host, form, scope, root, record, tuple(files), stub_file, host.stub(opts))


def shown(path: Path, project_root: Path, env: dict[str, str]) -> str:
    """A path as printed: relative to the project, or with ~ for the home folder."""
    return shown_path(path, project_root, home=user_home(env))
