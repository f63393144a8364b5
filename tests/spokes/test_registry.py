"""The spoke registry and the detection of installed CLIs."""

from __future__ import annotations

import pytest

from maestro import roster
from maestro.errors import NotFound
from maestro.spokes.base import Spoke
from maestro.spokes.registry import detect_available, get_spoke


def test_names_and_adapters():
    assert roster.NAMES == ["claude", "gemini", "codex", "sim"]
    for name in roster.NAMES:
        spoke = get_spoke(name)
        assert isinstance(spoke, Spoke) and spoke.name == name
        assert spoke.install_hint


def test_unknown_name_suggests_the_closest():
    with pytest.raises(
        NotFound, match=r"unknown spoke CLI 'gemni' \(did you mean 'gemini'\?\)"
    ) as caught:
        get_spoke("gemni")
    assert "claude, gemini, codex, sim" in caught.value.fix


def test_detects_installed_clis_and_versions(fake_clis):
    fake_clis.version("codex", "codex-cli 0.170.2")
    found = detect_available(versions=True)
    assert {n: a.version for n, a in found.items()} == {
        "claude": "2.1.197",
        "gemini": "0.61.0",
        "codex": "0.170.2",
        "sim": None,
    }
    assert found["claude"].path == str(fake_clis.path("claude"))
    assert found["sim"].path is None
    # `--version` ran through the runner with stdin at /dev/null.
    assert [c["stdin_devnull"] for c in fake_clis.calls("claude")] == [True]


def test_missing_cli_is_absent_and_sim_always_there(fake_clis):
    fake_clis.uninstall("codex")
    fake_clis.uninstall("gemini")
    assert sorted(detect_available()) == ["claude", "sim"]


def test_without_versions_no_cli_is_started(fake_clis):
    found = detect_available()
    assert sorted(found) == ["claude", "codex", "gemini", "sim"]
    assert found["gemini"].version is None
    assert all(fake_clis.calls(name) == [] for name in ("claude", "gemini", "codex"))


def test_detection_sees_the_path_of_now(fake_clis):
    detect_available(versions=True)
    detect_available()  # no versions asked: no CLI starts
    assert len(fake_clis.calls("gemini")) == 1
    fake_clis.uninstall("gemini")
    assert "gemini" not in detect_available()


def test_broken_version_output_still_counts_as_installed(fake_clis):
    fake_clis.version("gemini", "no version here")
    assert detect_available(versions=True)["gemini"].version is None
