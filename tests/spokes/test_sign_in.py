"""What each CLI's own files and environment say of its sign-in (no model call): the
facts of Claude Code 2.1.197, Gemini CLI 0.61.0 and Codex CLI 0.169.0."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from maestro.spokes.registry import get_spoke


def sign_in(cli, home: Path, **env: str):
    return get_spoke(cli).sign_in({"HOME": str(home), **env})


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS keeps the login in the Keychain")
def test_claude(tmp_path):
    nothing = sign_in("claude", tmp_path)
    assert nothing.state is False and "/login" in (nothing.fix or "")
    assert sign_in("claude", tmp_path, ANTHROPIC_API_KEY="sk-x").state is True
    assert sign_in("claude", tmp_path, CLAUDE_CODE_USE_BEDROCK="1").state is None
    write(tmp_path / ".claude/.credentials.json", "{}")
    found = sign_in("claude", tmp_path)
    assert found.state is True and "~/.claude/.credentials.json" in found.detail
    # CLAUDE_CONFIG_DIR moves its folder.
    assert sign_in("claude", tmp_path, CLAUDE_CONFIG_DIR=str(tmp_path / "elsewhere")).state is False


def test_codex(tmp_path):
    codex = tmp_path / ".codex"
    nothing = sign_in("codex", tmp_path)
    assert nothing.state is False and "codex login" in (nothing.fix or "")
    # `codex exec` sends no Authorization header for OPENAI_API_KEY alone (0.169).
    openai_only = sign_in("codex", tmp_path, OPENAI_API_KEY="sk-x")
    assert openai_only.state is False and "does not read it" in openai_only.detail
    assert sign_in("codex", tmp_path, CODEX_API_KEY="sk-x").state is True
    write(codex / "auth.json", "{}")
    assert sign_in("codex", tmp_path).state is True
    assert sign_in("codex", tmp_path, CODEX_HOME=str(tmp_path / "other")).state is False
    write(
        codex / "config.toml",
        'model_provider = "mine"\n[model_providers.mine]\nbase_url = "http://x/v1"\nenv_key = "MINE_KEY"\n',
    )
    assert sign_in("codex", tmp_path).state is False
    assert sign_in("codex", tmp_path, MINE_KEY="k").state is True


def gemini_settings(home: Path, selected: str) -> None:
    write(
        home / ".gemini/settings.json",
        json.dumps({"security": {"auth": {"selectedType": selected}}}),
    )


def test_gemini_without_a_sign_in_exits_41_and_says_how(tmp_path):
    nothing = sign_in("gemini", tmp_path)
    assert nothing.state is False and "GEMINI_API_KEY" in (nothing.fix or "")
    assert sign_in("gemini", tmp_path, GEMINI_API_KEY="k").state is True
    assert sign_in("gemini", tmp_path, GOOGLE_GENAI_USE_VERTEXAI="true").state is False
    vertex = {
        "GOOGLE_GENAI_USE_VERTEXAI": "true",
        "GOOGLE_CLOUD_PROJECT": "p",
        "GOOGLE_CLOUD_LOCATION": "l",
    }
    assert sign_in("gemini", tmp_path, **vertex).state is True


def test_gemini_with_a_personal_google_account_is_told_of_the_account_change(tmp_path):
    gemini_settings(tmp_path, "oauth-personal")
    assert "no ~/.gemini/oauth_creds.json" in sign_in("gemini", tmp_path).detail
    write(tmp_path / ".gemini/oauth_creds.json", "{}")
    personal = sign_in("gemini", tmp_path)
    assert personal.state is False
    assert "stopped serving individual Google accounts" in personal.detail
    assert "2026-06-18" in personal.detail and "Antigravity CLI" in personal.detail
    assert "GEMINI_API_KEY" in (personal.fix or "")
    # A Code Assist licence signs in with Google too, for its Cloud project: unaffected.
    assert sign_in("gemini", tmp_path, GOOGLE_CLOUD_PROJECT="acme").state is True
    # The env's choice is GOOGLE_GENAI_USE_GCA when the settings choose nothing.
    (tmp_path / ".gemini/settings.json").unlink()
    assert "personal account" in sign_in("gemini", tmp_path, GOOGLE_GENAI_USE_GCA="true").detail
