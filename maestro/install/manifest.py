"""The install manifest: which files Maestro wrote where, with their sha256.

One manifest per scope, both in the user state folder: ``install-manifest.json`` in the
project's private folder (``ProjectPaths.private_dir``) for a project's install, and at
the top for user-scope installs, plugins and extensions. Upgrade and uninstall touch a
file only while its hash still matches what was written; everything else is the user's.
So the manifest is never under the project's ``.ai/maestro/``, which a spoke may write:
a forged entry with the hash of a file of the person's would have it deleted. The format
is versioned: an older one is upgraded on read, a newer one refused.

    {"format": 1, "installs": [{"host": "claude", "form": "files", "scope": "project",
      "root": ".", "maestro": "0.1.0", "invocation": "/venv/bin/maestro",
      "files": [{"path": ".claude/commands/maestro/plan.md", "sha256": "..."}],
      "blocks": [{"path": "CLAUDE.md", "sha256": "...", "created": false}],
      "dirs": [".claude/commands/maestro"]}]}
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import jsonschema

from maestro import roster
from maestro.errors import UPGRADE, InstallError
from maestro.fsutil import atomic_write, private_folder

FORMAT = 1

_ENTRY = {
    "type": "object",
    "required": ["path", "sha256"],
    "properties": {
        "path": {"type": "string"},
        "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        "created": {"type": "boolean"},
    },
}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["format", "installs"],
    "properties": {
        "format": {"type": "integer", "minimum": 1},
        "installs": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["host", "form", "scope", "root", "maestro", "files", "blocks", "dirs"],
                "properties": {
                    "host": {"enum": roster.HOSTS},
                    "form": {"enum": ["files", "plugin", "extension"]},
                    "scope": {"enum": ["project", "user"]},
                    "root": {"type": "string", "minLength": 1},
                    "maestro": {"type": "string"},
                    "invocation": {"type": "string"},
                    "files": {"type": "array", "items": _ENTRY},
                    "blocks": {"type": "array", "items": _ENTRY},
                    "dirs": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
    },
}


def sha256(data: bytes | str) -> str:
    return hashlib.sha256(
        data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
    ).hexdigest()


@dataclass
class FileRecord:
    path: str
    sha256: str
    created: bool = False  # blocks: the instruction file did not exist before


@dataclass
class Install:
    host: str
    form: str
    scope: str
    root: str  # "." for the project root, else an absolute folder
    maestro: str
    invocation: str = ""
    files: list[FileRecord] = field(default_factory=list)
    blocks: list[FileRecord] = field(default_factory=list)
    dirs: list[str] = field(default_factory=list)  # folders it created, removed when empty

    @property
    def key(self) -> tuple[str, str]:
        return (self.host, self.form)

    def file(self, path: str) -> FileRecord | None:
        return next((f for f in self.files if f.path == path), None)

    def block(self, path: str) -> FileRecord | None:
        return next((b for b in self.blocks if b.path == path), None)


@dataclass
class Manifest:
    path: Path
    installs: list[Install] = field(default_factory=list)

    def get(self, host: str, form: str) -> Install | None:
        return next((i for i in self.installs if i.key == (host, form)), None)

    def put(self, install: Install) -> None:
        self.installs = [i for i in self.installs if i.key != install.key] + [install]

    def drop(self, host: str, form: str) -> None:
        self.installs = [i for i in self.installs if i.key != (host, form)]

    def render(self) -> str:
        installs = []
        for item in sorted(self.installs, key=lambda i: i.key):
            data = asdict(item)
            data["files"] = sorted(
                ({"path": f.path, "sha256": f.sha256} for f in item.files), key=lambda f: f["path"]
            )
            data["blocks"] = sorted(data["blocks"], key=lambda b: b["path"])
            data["dirs"] = sorted(set(item.dirs))
            installs.append(data)
        return (
            json.dumps({"format": FORMAT, "installs": installs}, indent=2, ensure_ascii=False)
            + "\n"
        )

    def save(self) -> None:
        if not self.installs:
            self.path.unlink(missing_ok=True)
            return
        content = self.render()
        try:
            if self.path.read_text(encoding="utf-8") == content:
                return  # install twice: not even the manifest's mtime changes
        except FileNotFoundError:
            pass
        private_folder(self.path.parent, create=True)
        atomic_write(self.path, content)


def parse(text: str, path: Path) -> Manifest:
    fix = (
        "restore it from a backup, or delete it (Maestro then leaves the files it wrote in place)."
    )
    try:
        data = json.loads(text)
    except ValueError as error:
        raise InstallError(
            f"the install manifest is not valid JSON ({error}).", fix, file=path
        ) from None
    if isinstance(data, dict) and isinstance(data.get("format"), int) and data["format"] > FORMAT:
        raise InstallError(
            f"the install manifest has format {data['format']}, newer than this Maestro knows ({FORMAT}).",
            f"{UPGRADE}.",
            file=path,
        )
    try:
        jsonschema.validate(data, SCHEMA)
    except jsonschema.ValidationError as error:
        where = "/".join(str(p) for p in error.absolute_path) or "top level"
        raise InstallError(
            f"the install manifest is malformed at {where}: {error.message}.", fix, file=path
        ) from None
    installs = []
    for item in data["installs"]:
        installs.append(
            Install(
                host=item["host"],
                form=item["form"],
                scope=item["scope"],
                root=item["root"],
                maestro=item["maestro"],
                invocation=item.get("invocation", ""),
                files=[FileRecord(f["path"], f["sha256"]) for f in item["files"]],
                blocks=[
                    FileRecord(b["path"], b["sha256"], bool(b.get("created", False)))
                    for b in item["blocks"]
                ],
                dirs=list(item["dirs"]),
            )
        )
    return Manifest(path, installs)


def load(path: Path) -> Manifest:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Manifest(path)
    return parse(text, path)
