"""The roster's rules over its facts: what a hub's shell tool added, which tiers a CLI
enforces, and routing (the routing table itself: tests/engine/test_runs_routing.py)."""

from __future__ import annotations

from maestro import roster


def test_user_env_drops_what_a_hubs_shell_tool_injected():
    base = {"PATH": "/bin", "HOME": "/home/u", "PAGER": "less", "GIT_PAGER": "cat"}
    # Not under a hub's shell tool: the user's own PAGER and GIT_PAGER stay.
    assert roster.user_env(base) == base
    under_gemini = {**base, "GEMINI_CLI": "1", "TERM": "xterm-256color", "DISPLAY": ""}
    assert roster.user_env(under_gemini) == {"PATH": "/bin", "HOME": "/home/u"}
    under_codex = {**base, "CODEX_CI": "1", "CODEX_THREAD_ID": "t1"}
    assert roster.user_env(under_codex) == {"PATH": "/bin", "HOME": "/home/u", "PAGER": "less"}
    # A marker with another value is not that tool's.
    assert roster.user_env({**base, "CODEX_CI": "0"}) == {**base, "CODEX_CI": "0"}


def test_enforces_reads_each_clis_gaps():
    assert not roster.enforces("codex", "read+write") and roster.enforces("codex", "read+shell")
    assert not roster.enforces("claude", "read+shell") and roster.enforces("claude", "read+write")
    assert roster.enforces("sim", "full")
