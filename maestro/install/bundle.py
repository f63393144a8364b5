"""The repository as each host's own bundle, rendered by the renderers `maestro install`
uses, from the same sources, and committed:

- Claude Code: the marketplace ``.claude-plugin/marketplace.json`` and its plugin in
  ``plugins/claude`` (commands, and ``bin/maestro``, which Claude puts on its Bash tool's
  PATH);
- Gemini CLI: the root is the extension (``gemini-extension.json``, its context file,
  ``commands/maestro/<verb>.toml``);
- Codex CLI: the marketplace ``.agents/plugins/marketplace.json`` and its plugin in
  ``plugins/codex`` (one explicit-only skill per verb, ``$maestro:<verb>``).

A bundle cannot name this machine's Maestro executable, so its files call a bare
``maestro``. ``tests/install/test_bundle.py`` fails when a committed file differs from a
fresh render; ``python -m maestro.install.bundle`` (from the repository root) renders
them again.
"""

from __future__ import annotations

import sys
from pathlib import Path

from maestro import clis
from maestro.fsutil import atomic_write
from maestro.install.host import RenderedFile, RenderOptions, hosts

OPTIONS = RenderOptions(invocation="maestro")
# What the bundles own at the root besides each host's ``bundle_folders``: a file there
# that no host renders is stale.
OWNED = ("plugins",)


def render() -> list[RenderedFile]:
    return [item for host in hosts().values() for item in host.bundle(OPTIONS)]


def stale(root: Path) -> list[str]:
    """Files in the bundle's folders that no host renders any more."""
    rendered = {item.path for item in render()}
    owned = [*OWNED, *(folder for host in hosts().values() for folder in host.bundle_folders)]
    found = (p for folder in owned for p in (root / folder).rglob("*") if p.is_file())
    return sorted(
        rel for rel in (p.relative_to(root).as_posix() for p in found) if rel not in rendered
    )


def sync(root: Path) -> list[str]:
    """Write every bundle file that differs, remove stale ones; the paths changed."""
    changed = []
    for item in render():
        path = root / item.path
        mode = 0o755 if item.executable else 0o644
        data = item.content.encode("utf-8")
        if path.is_file() and path.read_bytes() == data and path.stat().st_mode & 0o777 == mode:
            continue
        atomic_write(path, data, mode=mode)
        changed.append(item.path)
    for rel in stale(root):
        (root / rel).unlink()
        changed.append(rel)
    return changed


def main() -> int:
    root = Path.cwd()
    if not (root / "maestro" / "install" / "bundle.py").is_file():
        print(
            "bundle: run this from the root of Maestro's repository (python -m maestro.install.bundle).",
            file=sys.stderr,
        )
        return 1
    clis.load({})
    changed = sync(root)
    print("\n".join(f"wrote {rel}" for rel in changed) or "the bundles are up to date.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
