"""Install and uninstall as a plan of per-file actions, then its application.

Planning reads only; applying writes. ``--dry-run`` prints the plan and stops. A plan
says one verb per file:

- create: the file is new;             identical: already exactly this;
- update: Maestro's unmodified file (hash as recorded), or the user's instruction file
  getting its block;
- skip: Maestro wrote it but the user changed it since: kept as it is, listed;
- conflict: a file Maestro did not write is in the way: left alone, exit 1;
- remove: uninstall (or upgrade) deletes Maestro's unmodified file or block;
- missing: uninstall finds it already gone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from maestro import __version__
from maestro.errors import UPGRADE, InstallError
from maestro.fsutil import atomic_write
from maestro.install import block
from maestro.install.manifest import FileRecord, Install, Manifest, sha256
from maestro.install.safepath import inside
from maestro.install.targets import FORM, Target

ENCODING = ("utf-8", "surrogateescape")  # any bytes survive a read-modify-write


@dataclass
class Action:
    verb: str
    rel: str  # relative to the target's root
    real: Path
    kind: str = "file"  # file | block
    data: bytes | None = None  # what to write; None with delete or nothing to do
    delete: bool = False
    note: str = ""

    @property
    def writes(self) -> bool:
        return self.data is not None or self.delete


@dataclass
class InstallPlan:
    target: Target
    actions: list[Action]
    record: Install | None  # the manifest entry once applied (None: drop it)
    prune: list[str] = field(default_factory=list)  # folders to remove if empty, deepest first

    @property
    def conflicts(self) -> list[Action]:
        return [a for a in self.actions if a.verb == "conflict"]

    @property
    def skipped(self) -> list[Action]:
        return [a for a in self.actions if a.verb == "skip"]


def read_text(path: Path) -> str:
    return path.read_bytes().decode(*ENCODING)


def block_hash(found: block.Block) -> str:
    return sha256(found.text.replace("\r\n", "\n"))


def _edited_by_hand(found: block.Block, record: FileRecord | None, stub_body: str) -> bool:
    """A block that is not this stub and not what Maestro recorded writing (or with no
    record at all: uninstall keeps such a block and forgets it) is the user's text."""
    return found.body != stub_body and (record is None or record.sha256 != block_hash(found))


def _newer(found: block.Block, shown: str) -> InstallError:
    return InstallError(
        f"{shown} holds a Maestro {found.host} block v{found.version}, written by a newer Maestro "
        f"(this one, {__version__}, writes v{block.FORMAT}); refusing to change it.",
        f"{UPGRADE} and run this again, or delete the block by hand.",
    )


def _missing_dirs(root: Path, rel: str) -> list[str]:
    parts = rel.split("/")[:-1]
    missing = []
    for depth in range(1, len(parts) + 1):
        folder = "/".join(parts[:depth])
        if not (root / folder).exists():
            missing.append(folder)
    return missing


def _file_action(target: Target, rel: str, content: str, previous: Install | None) -> Action:
    real = inside(target.root, rel)
    data = content.encode("utf-8")
    if real.is_dir():
        return Action("conflict", rel, real, note="a folder is in the way")
    if not real.exists():
        return Action("create", rel, real, data=data)
    current = real.read_bytes()
    if current == data:
        return Action("identical", rel, real)
    record = previous.file(rel) if previous else None
    if record is None:
        return Action("conflict", rel, real, note="not written by Maestro; move it away to install")
    if record.sha256 != sha256(current):
        return Action("skip", rel, real, note="changed since Maestro wrote it; kept yours")
    return Action("update", rel, real, data=data)


# An instruction file's text as the plans made so far leave it (None: deleted), by real
# path: hosts sharing one file through a symlink (AGENTS.md -> CLAUDE.md) each splice
# their block into what the host before them left, not into the file as it was.
Pending = dict[Path, str | None]


def _text(real: Path, pending: Pending) -> str | None:
    if real in pending:
        return pending[real]
    return read_text(real) if real.exists() else None


def _block_action(
    target: Target, rel: str, previous: Install | None, shown: str, pending: Pending
) -> Action:
    real = inside(target.root, rel)
    exists = real.exists()  # before this operation: "created" means the user had no file
    original = _text(real, pending) or ""
    found = block.find(original, target.host.name, where=shown)
    if found is not None and found.version > block.FORMAT:
        raise _newer(found, shown)
    new = block.splice(original, target.host.name, target.stub_body, where=shown)
    if new == original:
        return Action("identical", rel, real, kind="block")
    record = previous.block(rel) if previous else None
    if found is not None and _edited_by_hand(found, record, target.stub_body):
        return Action(
            "skip", rel, real, kind="block", note="Maestro block edited by hand; kept yours"
        )
    pending[real] = new
    return Action(
        "create" if not exists else "update", rel, real, kind="block", data=new.encode(*ENCODING)
    )


def _previous(target: Target, manifest: Manifest) -> Install | None:
    """The recorded install of this host, refused if it lives elsewhere now (a changed
    home folder would otherwise orphan its files)."""
    previous = manifest.get(target.host.name, FORM)
    if previous is not None and previous.root != target.root_record:
        raise InstallError(
            f"Maestro's {target.host.name} files were installed in {previous.root}, but this "
            f"environment puts them in {target.root_record}.",
            f"run this with the environment of that install ({target.host.root_vars} pointing at {previous.root}), "
            "or uninstall from there first.",
        )
    return previous


def plan_install(
    target: Target,
    manifest: Manifest,
    *,
    invocation: str,
    shown: dict[str, str],
    pending: Pending,
) -> InstallPlan:
    """``shown`` maps a relative path to how it is printed; ``pending`` is shared by the
    plans of one operation, applied in the order they were made."""
    previous = _previous(target, manifest)
    actions: list[Action] = []
    # A root folder Maestro created (~/.gemini before any Gemini run) goes when empty.
    new_dirs: list[str] = ["."] if not target.root.exists() else []
    rendered = {f.path for f in target.files}
    for item in target.files:
        action = _file_action(target, item.path, item.content, previous)
        actions.append(action)
        if action.verb == "create":
            new_dirs += _missing_dirs(target.root, item.path)
    for old in previous.files if previous else []:
        if old.path not in rendered:  # a file an older Maestro installed and this one does not
            actions.append(_uninstall_file(target, old))
    actions.append(
        _block_action(
            target,
            target.stub_file,
            previous,
            shown.get(target.stub_file, target.stub_file),
            pending,
        )
    )
    record = Install(
        target.host.name,
        FORM,
        target.scope,
        target.root_record,
        __version__,
        invocation,
        dirs=sorted(set(new_dirs) | set(previous.dirs if previous else [])),
    )
    for action in actions:
        _record(record, action, target, previous)
    return InstallPlan(target, actions, record)


def _record(record: Install, action: Action, target: Target, previous: Install | None) -> None:
    """What the manifest keeps of one action: the hash of what is now Maestro's."""
    if action.verb in ("conflict", "remove", "missing"):
        return
    blocks = action.kind == "block"
    before = (
        (previous.block(action.rel) if blocks else previous.file(action.rel)) if previous else None
    )
    if action.verb == "skip":
        if before is not None:  # still Maestro's to account for, with the hash it wrote
            (record.blocks if blocks else record.files).append(before)
    elif blocks:
        text = action.data.decode(*ENCODING) if action.data is not None else read_text(action.real)
        found = block.find(text, target.host.name)
        assert found is not None  # it was just spliced or found identical
        created = before.created if before else action.verb == "create"
        record.blocks.append(FileRecord(action.rel, block_hash(found), created))
    else:
        content = next(f.content for f in target.files if f.path == action.rel)
        record.files.append(FileRecord(action.rel, sha256(content)))


def _uninstall_file(target: Target, record: FileRecord) -> Action:
    real = inside(target.root, record.path)
    if not real.exists():
        return Action("missing", record.path, real)
    if real.is_dir() or sha256(real.read_bytes()) != record.sha256:
        return Action("skip", record.path, real, note="changed since Maestro wrote it; kept yours")
    return Action("remove", record.path, real, delete=True)


def _uninstall_block(
    target: Target, rel: str, record: FileRecord | None, shown: str, pending: Pending
) -> Action | None:
    real = inside(target.root, rel)
    text = _text(real, pending)
    if text is None:
        return Action("missing", rel, real, kind="block") if record else None
    found = block.find(text, target.host.name, where=shown)
    if found is None:
        return Action("missing", rel, real, kind="block") if record else None
    if found.version > block.FORMAT:
        raise _newer(found, shown)
    if _edited_by_hand(found, record, target.stub_body):
        return Action(
            "skip", rel, real, kind="block", note="Maestro block edited by hand; kept yours"
        )
    rest = block.remove(text, target.host.name)
    if rest == "" and record is not None and record.created:
        pending[real] = None
        return Action(
            "remove", rel, real, kind="block", delete=True, note="the file did not exist before"
        )
    pending[real] = rest
    return Action("remove", rel, real, kind="block", data=rest.encode(*ENCODING))


def plan_uninstall(
    target: Target, manifest: Manifest, *, shown: dict[str, str], pending: Pending
) -> InstallPlan:
    previous = _previous(target, manifest)
    actions = [_uninstall_file(target, record) for record in previous.files] if previous else []
    record = previous.block(target.stub_file) if previous else None
    action = _uninstall_block(
        target, target.stub_file, record, shown.get(target.stub_file, target.stub_file), pending
    )
    if action is not None:
        actions.append(action)
    # Deepest first, the root itself (".") last.
    prune = (
        sorted(previous.dirs, key=lambda d: -1 if d == "." else d.count("/"), reverse=True)
        if previous
        else []
    )
    return InstallPlan(target, actions, None, prune)


def apply(plan: InstallPlan, manifest: Manifest) -> None:
    for action in plan.actions:
        if action.delete:
            action.real.unlink(missing_ok=True)
        elif action.data is not None:
            atomic_write(action.real, action.data)
    for folder in plan.prune:
        try:
            inside(plan.target.root, folder).rmdir()  # only ever an empty folder Maestro created
        except (OSError, InstallError):
            pass
    if plan.record is not None and (plan.record.files or plan.record.blocks):
        manifest.put(plan.record)
    else:
        manifest.drop(plan.target.host.name, FORM)
