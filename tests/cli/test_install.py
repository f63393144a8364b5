"""`maestro install` / `maestro uninstall` end to end, on real temp folders."""

import json
import os
from pathlib import Path

import pytest

from maestro.install import invocation
from maestro.install.sources import VERBS
from maestro.paths import ProjectPaths
from tests.install.trees import dirs, tree

VERBS_PRINTED = {"create", "identical", "update", "skip", "conflict", "remove", "missing"}
INSTRUCTION_FILES = ("CLAUDE.md", "GEMINI.md", "AGENTS.md")


def actions(res):
    data = json.loads(res.out)["data"] if res.out.lstrip().startswith("{") else None
    return {a["path"]: a["verb"] for i in data["installs"] for a in i["actions"]}


def test_install_all_hosts_into_the_project(cli, project):
    res = cli("install", "--host", "all")
    assert res.code == 0, res.err
    for verb in VERBS:
        assert (project / f".claude/commands/maestro/{verb}.md").is_file()
        assert (project / f".gemini/commands/maestro/{verb}.toml").is_file()
        assert (project / f".agents/skills/maestro/verbs/{verb}.md").is_file()
    assert (project / ".agents/skills/maestro/SKILL.md").is_file()
    assert "<!-- Maestro claude v1 -->\n/maestro:plan|" in (project / "CLAUDE.md").read_text()
    assert "<!-- Maestro codex v1 -->\n$maestro plan|" in (project / "AGENTS.md").read_text()
    manifest = json.loads(ProjectPaths(project).install_manifest.read_text())
    assert sorted(i["host"] for i in manifest["installs"]) == ["claude", "codex", "gemini"]
    assert "In Codex CLI: $maestro plan <goal>" in res.out


def test_one_verb_per_file(cli, project):
    res = cli("install", "--host", "claude")
    lines = [line.split() for line in res.out.splitlines() if line.startswith("  ")]
    assert len(lines) == len(VERBS) + 1
    assert {words[0] for words in lines} <= VERBS_PRINTED


def test_install_twice_gives_identical_bytes(cli, project):
    (project / "CLAUDE.md").write_bytes(b"# Mine\r\nkeep\r\n")
    assert cli("install", "--host", "all").code == 0
    first = tree(project)
    res = cli("install", "--host", "all", "--json")
    assert res.code == 0
    assert set(actions(res).values()) == {"identical"}
    assert tree(project) == first


@pytest.mark.parametrize(
    "original",
    [
        None,
        b"",
        b"crlf\r\nlines\r\n",
        b"no trailing newline",
        b"bytes \xe9\xff not utf-8\n",
        b"\xef\xbb\xbfBOM\n\n\n",
    ],
)
def test_uninstall_restores_every_original_byte_for_byte(cli, project, original):
    for name in INSTRUCTION_FILES:
        if original is not None:
            (project / name).write_bytes(original)
    before, before_dirs = tree(project), dirs(project)
    assert cli("install", "--host", "all").code == 0
    assert tree(project) != before
    res = cli("uninstall", "--host", "all")
    assert res.code == 0, res.err
    assert tree(project) == before
    assert dirs(project) == before_dirs  # folders Maestro created are gone too


def test_dry_run_writes_nothing(cli, project):
    (project / "AGENTS.md").write_text("mine\n")
    before, before_dirs = tree(project), dirs(project)
    res = cli("install", "--host", "all", "--dry-run")
    assert res.code == 0 and "Dry run: nothing was written." in res.out
    assert "create" in res.out and "update" in res.out
    assert tree(project) == before and dirs(project) == before_dirs
    assert cli("install", "--host", "all").code == 0
    after = tree(project)
    assert cli("uninstall", "--host", "all", "--dry-run").code == 0
    assert tree(project) == after


def test_files_changed_by_hand_are_kept_and_listed(cli, project):
    assert cli("install", "--host", "claude").code == 0
    mine = project / ".claude/commands/maestro/run.md"
    mine.write_text("my own run command\n")
    res = cli("uninstall", "--host", "claude", "--json")
    assert res.code == 0
    data = json.loads(res.out)["data"]
    assert data["modified"] == [".claude/commands/maestro/run.md"]
    assert mine.read_text() == "my own run command\n"
    assert not (project / ".claude/commands/maestro/plan.md").exists()


def test_upgrade_replaces_only_unmodified_files(cli, project, monkeypatch):
    assert cli("install", "--host", "gemini").code == 0
    edited = project / ".gemini/commands/maestro/status.toml"
    edited.write_text(edited.read_text() + "# my note\n")
    kept = edited.read_bytes()
    monkeypatch.setattr(invocation, "resolve", lambda: "/new/venv/bin/maestro")  # a newer install
    res = cli("install", "--host", "gemini", "--json")
    assert res.code == 0
    verbs = actions(res)
    assert verbs[".gemini/commands/maestro/status.toml"] == "skip"
    assert verbs[".gemini/commands/maestro/plan.toml"] == "update"
    assert edited.read_bytes() == kept
    assert (
        "/new/venv/bin/maestro plan --schema"
        in (project / ".gemini/commands/maestro/plan.toml").read_text()
    )
    assert "changed since Maestro wrote it" in cli("install", "--host", "gemini").out


def test_a_file_maestro_did_not_write_is_a_conflict(cli, project):
    theirs = project / ".claude/commands/maestro/plan.md"
    theirs.parent.mkdir(parents=True)
    theirs.write_text("someone else's plan command\n")
    res = cli("install", "--host", "claude")
    assert res.code == 1
    assert "conflict" in res.out and "move them away" in res.out
    assert theirs.read_text() == "someone else's plan command\n"
    assert (project / ".claude/commands/maestro/run.md").is_file()
    assert cli("uninstall", "--host", "claude").code == 0
    assert theirs.read_text() == "someone else's plan command\n"


def test_foreign_blocks_are_left_alone(cli, project):
    text = (
        "# Project\n\n<!-- SPECKIT START -->\nspec-kit\n<!-- SPECKIT END -->\n\n"
        "<!-- Maestro codex v1 -->\nanother host's block\n<!-- /Maestro -->\n"
    )
    (project / "CLAUDE.md").write_text(text)
    assert cli("install", "--host", "claude").code == 0
    installed = (project / "CLAUDE.md").read_text()
    assert installed.startswith(text) and installed.count("<!-- Maestro ") == 2
    assert cli("uninstall", "--host", "claude").code == 0
    assert (project / "CLAUDE.md").read_text() == text


def test_a_block_from_a_newer_maestro_is_refused(cli, project):
    text = "mine\n\n<!-- Maestro claude v9 -->\nfrom the future\n<!-- /Maestro -->\n"
    (project / "CLAUDE.md").write_text(text)
    res = cli("install", "--host", "claude")
    assert res.code == 1
    assert "newer Maestro" in res.err and "upgrade Maestro" in res.err and res.err.count("\n") == 1
    assert (project / "CLAUDE.md").read_text() == text
    assert not (project / ".claude").exists()  # refused before writing anything
    assert cli("uninstall", "--host", "claude").code == 1


def test_a_block_edited_by_hand_is_kept(cli, project):
    assert cli("install", "--host", "codex").code == 0
    agents = project / "AGENTS.md"
    agents.write_text(agents.read_text().replace("$maestro plan", "$maestro plan (my words)"))
    res = cli("uninstall", "--host", "codex")
    assert res.code == 0 and "Maestro block edited by hand" in res.out
    assert "(my words)" in agents.read_text()


def test_a_begin_marker_edited_by_hand_is_named_not_doubled_or_missing(cli, project):
    (project / "CLAUDE.md").write_text("# Mine\n")
    assert cli("install", "--host", "claude").code == 0
    claude = project / "CLAUDE.md"
    edited = claude.read_text().replace("<!-- Maestro claude v1 -->", "<!-- maestro claude v1-->")
    claude.write_text(edited)
    for verb in ("install", "uninstall"):
        res = cli(verb, "--host", "claude")
        assert res.code == 1, res.out
        assert (
            res.err.startswith(
                "maestro: error: CLAUDE.md:3: the Maestro marker '<!-- maestro claude v1-->' "
                "was edited by hand"
            )
            and res.err.count("\n") == 1
        ), res.err
        assert "'<!-- Maestro claude v1 -->'" in res.err
        assert claude.read_text() == edited  # no second block, nothing removed
    claude.write_text(edited.replace("<!-- maestro claude v1-->", "<!-- Maestro claude v1 -->"))
    assert cli("uninstall", "--host", "claude").code == 0
    assert claude.read_text() == "# Mine\n"


def test_a_block_edited_by_hand_survives_uninstall_then_install(cli, project):
    assert cli("install", "--host", "codex").code == 0
    agents = project / "AGENTS.md"
    agents.write_text(agents.read_text().replace("$maestro plan", "$maestro plan (my words)"))
    assert cli("uninstall", "--host", "codex").code == 0  # kept, and no longer recorded
    res = cli("install", "--host", "codex")
    assert res.code == 0 and "Maestro block edited by hand" in res.out
    assert "(my words)" in agents.read_text()


def test_manifest_paths_may_not_escape(cli, project, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    assert cli("install", "--host", "claude").code == 0
    path = ProjectPaths(project).install_manifest
    data = json.loads(path.read_text())
    data["installs"][0]["files"][0]["path"] = "../outside.txt"
    path.write_text(json.dumps(data))
    res = cli("uninstall", "--host", "claude")
    assert res.code == 1 and "may not use '..'" in res.err
    assert outside.read_text() == "precious\n"


def test_symlinks_may_not_lead_out(cli, project, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / ".claude").symlink_to(elsewhere)
    res = cli("install", "--host", "claude")
    assert res.code == 1 and "leads outside" in res.err
    assert list(elsewhere.iterdir()) == []


def test_instruction_file_symlink_is_edited_in_place(cli, project):
    (project / "AGENTS.md").write_text("shared instructions\n")
    (project / "CLAUDE.md").symlink_to("AGENTS.md")
    assert cli("install", "--host", "claude").code == 0
    assert cli("install", "--host", "codex").code == 0
    assert (project / "CLAUDE.md").is_symlink()
    text = (project / "AGENTS.md").read_text()
    assert "<!-- Maestro claude v1 -->" in text and "<!-- Maestro codex v1 -->" in text
    assert cli("uninstall", "--host", "claude").code == 0
    assert cli("uninstall", "--host", "codex").code == 0
    assert (project / "AGENTS.md").read_text() == "shared instructions\n"
    assert (project / "CLAUDE.md").is_symlink()


@pytest.mark.parametrize("original", [b"shared instructions\n", b"crlf\r\nno end", b"", None])
@pytest.mark.parametrize(
    "links", [("AGENTS.md",), ("GEMINI.md",), ("AGENTS.md", "GEMINI.md")], ids="+".join
)
def test_install_all_through_links_keeps_every_block(cli, project, links, original):
    """AGENTS.md -> CLAUDE.md (and GEMINI.md -> CLAUDE.md): one file, one block per host."""
    if original is not None:  # else the links dangle until install writes CLAUDE.md
        (project / "CLAUDE.md").write_bytes(original)
    for name in links:
        (project / name).symlink_to("CLAUDE.md")
    before = tree(project)
    assert cli("install", "--host", "all").code == 0
    text = (project / "CLAUDE.md").read_text()
    sharing = {"claude"} | {{"AGENTS.md": "codex", "GEMINI.md": "gemini"}[n] for n in links}
    for host in sharing:
        assert text.count(f"<!-- Maestro {host} v1 -->") == 1, (host, text)
    assert all((project / name).is_symlink() for name in links)
    again = cli("install", "--host", "all", "--json")
    assert set(actions(again).values()) == {"identical"}
    assert cli("uninstall", "--host", "all").code == 0
    assert tree(project) == before
    assert (project / "CLAUDE.md").exists() == (original is not None)
    assert all((project / name).is_symlink() for name in links)


def test_user_scope_goes_into_the_home_folder(cli, project, temp_home):
    (temp_home / ".claude").mkdir()
    (temp_home / ".claude/CLAUDE.md").write_bytes(b"my global rules")
    home_before, project_before = tree(temp_home), tree(project)
    res = cli("install", "--host", "all", "--scope", "user")
    assert res.code == 0, res.err
    for verb in VERBS:
        assert (temp_home / f".claude/commands/maestro/{verb}.md").is_file()
        assert (temp_home / f".gemini/commands/maestro/{verb}.toml").is_file()
        assert (temp_home / f".codex/skills/maestro/verbs/{verb}.md").is_file()
    assert (
        (temp_home / ".claude/CLAUDE.md")
        .read_bytes()
        .startswith(b"my global rules\n<!-- Maestro claude v1 -->")
    )
    assert (temp_home / ".gemini/GEMINI.md").is_file() and (
        temp_home / ".codex/AGENTS.md"
    ).is_file()
    assert (temp_home / ".local/state/maestro/install-manifest.json").is_file()
    assert "~/.claude/commands/maestro/plan.md" in res.out
    assert tree(project) == project_before
    assert cli("uninstall", "--host", "all", "--scope", "user").code == 0
    assert tree(temp_home) == home_before


def test_codex_user_scope_follows_codex_home(cli, project, tmp_path, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    assert cli("install", "--host", "codex", "--scope", "user").code == 0
    assert (tmp_path / "codex-home/skills/maestro/SKILL.md").is_file()


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--host", "claude", "--scope", "home"], "invalid choice"),
        (["--host", "vim"], "invalid choice"),
        ([], "required"),
    ],
)
def test_bad_options_are_one_line_errors(cli, project, capsys, argv, words):
    res = cli("install", *argv)
    err = res.err or capsys.readouterr().err  # argparse writes to the process's stderr
    assert res.code == 1 and words in err and err.count("\n") == 1


def test_a_file_an_upgrade_no_longer_renders_is_removed(cli, project):
    assert cli("install", "--host", "claude").code == 0
    old = project / ".claude/commands/maestro/old-verb.md"
    old.write_text("from an older Maestro\n")
    path = ProjectPaths(project).install_manifest
    data = json.loads(path.read_text())
    import hashlib

    data["installs"][0]["files"].append(
        {
            "path": ".claude/commands/maestro/old-verb.md",
            "sha256": hashlib.sha256(old.read_bytes()).hexdigest(),
        }
    )
    path.write_text(json.dumps(data))
    res = cli("install", "--host", "claude", "--json")
    assert actions(res)[".claude/commands/maestro/old-verb.md"] == "remove"
    assert not old.exists()


def test_uninstall_without_a_manifest_removes_only_a_pristine_block(cli, project):
    (project / "CLAUDE.md").write_text("mine\n")
    assert cli("install", "--host", "claude").code == 0
    ProjectPaths(project).install_manifest.unlink()
    res = cli("uninstall", "--host", "claude")
    assert res.code == 0
    assert (project / "CLAUDE.md").read_text() == "mine\n"
    assert (
        project / ".claude/commands/maestro/plan.md"
    ).exists()  # not provably Maestro's any more


def test_nothing_installed(cli, project):
    res = cli("uninstall", "--host", "gemini")
    assert res.code == 0 and "nothing installed here" in res.out


def test_state_dir_setting_reaches_the_stub(cli, project, monkeypatch):
    monkeypatch.setenv("MAESTRO_STATE_DIR", ".maestro-state")
    assert cli("install", "--host", "claude").code == 0
    assert "State .maestro-state/MAESTRO.md" in (project / "CLAUDE.md").read_text()
    assert ProjectPaths(project, ".maestro-state").install_manifest.is_file()
    assert os.path.exists(project / ".claude/commands/maestro/run.md")
    assert (
        ".maestro-state/MAESTRO.md" in Path(project / ".claude/commands/maestro/run.md").read_text()
    )


def test_a_moved_codex_home_is_refused_not_orphaned(cli, project, tmp_path, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "first"))
    assert cli("install", "--host", "codex", "--scope", "user").code == 0
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "second"))
    res = cli("uninstall", "--host", "codex", "--scope", "user")
    assert res.code == 1 and str(tmp_path / "first") in res.err and "CODEX_HOME" in res.err
    assert (tmp_path / "first/skills/maestro/SKILL.md").is_file()
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "first"))
    assert cli("uninstall", "--host", "codex", "--scope", "user").code == 0
    assert not (tmp_path / "first/skills").exists()
