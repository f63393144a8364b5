"""Where one install goes: host, scope, root folder, the files rendered for it and the
instruction file that gets the stub block."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from maestro.formatting import shown_path
from maestro.install.host import Host, RenderedFile, RenderOptions, get_host
from maestro.paths import user_home, user_state_dir

MANIFEST_NAME = "install-manifest.json"


# The manifest's one install form: the plugin and extension forms gave way to the
# repository's bundles, which the hosts install themselves (maestro/install/bundle.py).
FORM = "files"


@dataclass(frozen=True)
class Target:
    host: Host
    scope: str
    root: Path
    root_record: str  # what the manifest stores: "." for the project root
    files: tuple[RenderedFile, ...]
    stub_file: str  # instruction file relative to root
    stub_body: str

    @property
    def label(self) -> str:
        return f"{self.host.name} ({self.scope})"


def manifest_path(scope: str, project_manifest: Path, env: dict[str, str]) -> Path:
    return project_manifest if scope == "project" else user_state_dir(env) / MANIFEST_NAME


def build(
    host_name: str, scope: str, *, project_root: Path, env: dict[str, str], opts: RenderOptions
) -> Target:
    host = get_host(host_name)
    root = project_root if scope == "project" else host.user_root(env)
    files = host.files(scope, opts)
    record = "." if scope == "project" else str(root)
    return Target(host, scope, root, record, tuple(files), host.instruction_file, host.stub(opts))


def shown(path: Path, project_root: Path, env: dict[str, str]) -> str:
    """A path as printed: relative to the project, or with ~ for the home folder."""
    return shown_path(path, project_root, home=user_home(env))
