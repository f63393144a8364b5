"""How .ci/run decides to reuse its cached npm prefix of the pinned CLIs (runs without them)."""

from __future__ import annotations

import json

from . import hostenv


def fake_prefix(root, versions):
    for name, version in versions.items():
        package = root / "node_modules" / hostenv.NPM_PACKAGES[name]
        package.mkdir(parents=True)
        (package / "package.json").write_text(json.dumps({"version": version}))
        (root / "node_modules" / ".bin").mkdir(parents=True, exist_ok=True)
        (root / "node_modules" / ".bin" / name).write_text("")


def test_a_prefix_with_exactly_the_pinned_versions_is_reused(tmp_path):
    fake_prefix(tmp_path, hostenv.PINNED)
    assert hostenv.outdated(tmp_path) == []


def test_an_empty_or_other_version_prefix_names_what_to_install(tmp_path):
    assert hostenv.outdated(tmp_path / "none") == hostenv.npm_specs()
    fake_prefix(tmp_path, {**hostenv.PINNED, "gemini": "0.60.0"})
    (tmp_path / "node_modules" / ".bin" / "codex").unlink()
    assert hostenv.outdated(tmp_path) == [
        f"@google/gemini-cli@{hostenv.PINNED['gemini']}",
        f"@openai/codex@{hostenv.PINNED['codex']}",
    ]
