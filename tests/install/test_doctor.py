"""`maestro doctor`: hosts, installs and pitfalls, each finding with its fix."""

import json
import os
import stat
from pathlib import Path

import pytest

from maestro.install import doctor
from maestro.paths import ProjectPaths
from maestro.spokes.registry import Availability

PINNED = {"claude": "2.1.197", "gemini": "0.61.0", "codex": "0.169.0"}


def situation(tmp_path, env=None, available=None, euid=1000):
    root = tmp_path / "proj"
    root.mkdir(exist_ok=True)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {"HOME": str(home), "XDG_STATE_HOME": str(home / ".local/state"), **(env or {})}
    if available is None:
        available = {n: Availability(n, f"/usr/bin/{n}", v) for n, v in PINNED.items()}
    manifest = home / ".local/state/maestro/projects/proj-0/install-manifest.json"
    return doctor.Situation(root, manifest, root / ".ai/maestro", env, available, euid)


def pitfalls(s):
    return {c.name: c for c in doctor.examine(s) if c.area == "pitfalls" and c.level != "ok"}


def trust(s, rules):
    path = Path(s.env["HOME"]) / ".gemini/trustedFolders.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rules))


def test_clean_machine_has_no_pitfalls(tmp_path):
    s = situation(tmp_path, env={"GEMINI_CLI_TRUST_WORKSPACE": "true"})
    assert pitfalls(s) == {}


def test_hosts_are_listed_with_versions_or_install_hints(tmp_path):
    s = situation(tmp_path, available={"claude": Availability("claude", "/x/claude", "2.1.197")})
    hosts = {c.name: c for c in doctor.examine(s) if c.area == "hosts"}
    assert hosts["claude"].level == "ok" and "2.1.197" in hosts["claude"].detail
    assert (
        hosts["codex"].level == "info"
        and hosts["codex"].fix == "to use it as hub or spoke: npm install -g @openai/codex"
    )


def test_root_with_bypass_permissions(tmp_path):
    s = situation(tmp_path, euid=0, env={"GEMINI_CLI_TRUST_WORKSPACE": "true"})
    settings = Path(s.env["HOME"]) / ".claude/settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"permissions": {"defaultMode": "bypassPermissions"}}))
    found = pitfalls(s)["claude as root"]
    assert found.level == "fail" and "acceptEdits" in found.fix and "IS_SANDBOX=1" in found.fix
    assert "claude as root" not in pitfalls(situation(tmp_path, euid=1000))
    assert "claude as root" not in pitfalls(situation(tmp_path, euid=0, env={"IS_SANDBOX": "1"}))


@pytest.mark.parametrize(
    "rules, env, trusted",
    [
        (None, {}, False),
        (None, {"GEMINI_CLI_TRUST_WORKSPACE": "true"}, True),
        ({"{root}": "TRUST_FOLDER"}, {}, True),
        ({"{root}/child": "TRUST_PARENT"}, {}, True),
        ({"{parent}": "TRUST_FOLDER", "{root}": "DO_NOT_TRUST"}, {}, False),
        ({"{root}": "TRUST_FOLDER"}, {"GEMINI_CLI_TRUST_WORKSPACE": "false"}, False),
    ],
)
def test_gemini_folder_trust(tmp_path, rules, env, trusted):
    s = situation(tmp_path, env=env)
    if rules:
        trust(
            s,
            {
                k.format(root=s.project_root, parent=s.project_root.parent): v
                for k, v in rules.items()
            },
        )
    found = pitfalls(s).get("gemini folder trust")
    assert (found is None) == trusted
    if found:
        assert "exits 55" in found.detail and "GEMINI_CLI_TRUST_WORKSPACE=true" in found.fix


def test_folder_trust_switched_off_in_settings(tmp_path):
    s = situation(tmp_path)
    settings = Path(s.env["HOME"]) / ".gemini/settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"security": {"folderTrust": {"enabled": False}}}))
    assert "gemini folder trust" not in pitfalls(s)


def test_no_gemini_no_trust_warning(tmp_path):
    s = situation(tmp_path, available={})
    assert "gemini folder trust" not in pitfalls(s)


@pytest.mark.parametrize(
    "version, old",
    [
        ("0.110.0", True),
        ("codex-cli 0.116.9", True),
        ("0.117.0", False),
        ("0.169.0", False),
        (None, False),
    ],
)
def test_old_codex(tmp_path, version, old):
    s = situation(
        tmp_path,
        env={"GEMINI_CLI_TRUST_WORKSPACE": "true"},
        available={"codex": Availability("codex", "/x/codex", version)},
    )
    found = pitfalls(s).get("old codex")
    assert (found is not None) == old
    if found:
        assert "--full-auto" in found.detail and "@openai/codex@latest" in found.fix


def test_codex_read_write_gap_is_reported_when_codex_is_installed(tmp_path):
    hosts = {c.name: c for c in doctor.examine(situation(tmp_path)) if c.area == "hosts"}
    gap = hosts["codex read+write"]
    assert gap.level == "info" and "the shell cannot be forbidden" in gap.detail
    assert "routes read+write tasks without a Tool to claude or gemini" in gap.fix
    assert hosts["claude read+shell"].fix.startswith(
        "`maestro run` routes read+shell tasks without a Tool to codex"
    )
    without = situation(
        tmp_path, available={"claude": Availability("claude", "/x/claude", "2.1.197")}
    )
    assert "codex read+write" not in {c.name for c in doctor.examine(without)}


def test_claudecode_set(tmp_path):
    found = pitfalls(situation(tmp_path, env={"CLAUDECODE": "1"}))["CLAUDECODE set"]
    assert "env -u CLAUDECODE" in found.fix


def fake_bin(tmp_path, versions):
    folder = tmp_path / "bin"
    folder.mkdir()
    for name, version in versions.items():
        exe = folder / name
        exe.write_text(f"#!/bin/sh\necho '{version}'\n")
        exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return folder


def test_doctor_command_reports_installs_and_exit_code(cli, project, tmp_path, monkeypatch):
    folder = fake_bin(
        tmp_path,
        {"claude": "2.1.197 (Claude Code)", "gemini": "0.61.0", "codex": "codex-cli 0.110.0"},
    )
    monkeypatch.setenv("PATH", f"{folder}:/usr/bin:/bin")
    monkeypatch.setenv("GEMINI_CLI_TRUST_WORKSPACE", "true")
    assert cli("install", "--host", "claude").code == 0
    (project / ".claude/commands/maestro/run.md").write_text("edited\n")
    res = cli("doctor", "--json")
    data = json.loads(res.out)["data"]
    checks = {(c["area"], c["name"], c["level"]) for c in data["checks"]}
    assert ("hosts", "claude", "ok") in checks and ("pitfalls", "old codex", "fail") in checks
    installs = [c for c in data["checks"] if c["area"] == "installs"]
    assert any(c["level"] == "warn" and "run.md" in c["detail"] for c in installs)
    assert res.code == 1  # the old codex is a problem
    text = cli("doctor").out
    assert (
        "claude (project)" in text and "fix: upgrade: npm install -g @openai/codex@latest" in text
    )


def test_doctor_finds_a_stale_invocation(cli, project, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{fake_bin(tmp_path, {})}:/usr/bin:/bin")
    assert cli("install", "--host", "codex").code == 0
    path = ProjectPaths(project).install_manifest
    data = json.loads(path.read_text())
    data["installs"][0]["invocation"] = "/gone/venv/bin/maestro"
    path.write_text(json.dumps(data))
    res = cli("doctor", "--json")
    stale = [c for c in json.loads(res.out)["data"]["checks"] if "no longer runs" in c["detail"]]
    assert (
        stale
        and stale[0]["fix"]
        == "run `maestro install --host codex --scope project` with the Maestro you use now."
    )
    assert res.code == 1


def test_doctor_with_nothing_installed(cli, project, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{fake_bin(tmp_path, {})}:/usr/bin:/bin")
    res = cli("doctor")
    assert "Maestro is not installed into any host here." in res.out


def test_doctor_reports_a_broken_block(cli, project, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{fake_bin(tmp_path, {})}:/usr/bin:/bin")
    assert cli("install", "--host", "gemini").code == 0
    gemini_md = project / "GEMINI.md"
    gemini_md.write_text(gemini_md.read_text().replace("<!-- /Maestro -->", ""))
    res = cli("doctor", "--json")
    broken = [c for c in json.loads(res.out)["data"]["checks"] if "no end marker" in c["detail"]]
    assert broken and broken[0]["level"] == "fail" and res.code == 1


def hubs(cli) -> dict[str, dict]:
    return {
        c["name"]: c
        for c in json.loads(cli("doctor", "--json").out)["data"]["checks"]
        if c["area"] == "hubs"
    }


def test_doctor_says_per_installed_host_whether_its_hub_mode_is_ready(
    cli, project, tmp_path, monkeypatch
):
    monkeypatch.setenv("PATH", f"{fake_bin(tmp_path, PINNED)}:/usr/bin:/bin")
    assert cli("install", "--host", "all").code == 0
    found = hubs(cli)
    assert set(found) == {"claude", "gemini", "codex"} | {f"{h} spokes" for h in PINNED}
    assert found["claude"]["level"] == "ok" and "headless" in found["claude"]["detail"]
    assert (
        found["gemini"]["level"] == "ok"
        and '--allowed-tools "run_shell_command(' in found["gemini"]["detail"]
    )
    codex = found["codex"]
    assert codex["level"] == "warn" and "--sandbox danger-full-access" in codex["fix"]
    config = Path(os.environ["HOME"]) / ".codex" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('sandbox_mode = "danger-full-access"\n')
    assert hubs(cli)["codex"]["level"] == "ok"


def test_doctor_says_how_to_make_a_codex_hub_poll_once_an_hour(cli, project, tmp_path, monkeypatch):
    """Each write_stdin poll of a Codex hub is a turn of its model, every 300 s unless
    background_terminal_max_timeout is raised."""
    monkeypatch.setenv("PATH", f"{fake_bin(tmp_path, PINNED)}:/usr/bin:/bin")
    assert cli("install", "--host", "codex").code == 0
    config = Path(os.environ["HOME"]) / ".codex" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('sandbox_mode = "danger-full-access"\n')
    codex = hubs(cli)["codex"]
    assert codex["level"] == "ok" and "every 300 s" in codex["detail"]
    assert codex["fix"].startswith(
        "for one poll an hour: background_terminal_max_timeout = 3600000"
    )
    config.write_text(config.read_text() + "background_terminal_max_timeout = 3600000\n")
    codex = hubs(cli)["codex"]
    assert codex["level"] == "ok" and "poll" not in codex["detail"] and not codex["fix"]


def test_doctor_names_the_fix_when_a_hub_mode_cannot_work(cli, project, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{fake_bin(tmp_path, PINNED)}:/usr/bin:/bin")
    assert (
        cli("install", "--host", "claude").code == 0
        and cli("install", "--host", "gemini").code == 0
    )
    run = project / ".claude/commands/maestro/run.md"
    run.write_text(run.read_text().replace(", Bash(maestro:*)", ""))  # as an older Maestro wrote it
    settings = project / ".gemini/settings.json"
    settings.write_text(json.dumps({"tools": {"exclude": ["run_shell_command"]}}))
    found = hubs(cli)
    assert (
        found["claude"]["level"] == "warn"
        and "maestro install --host claude" in found["claude"]["fix"]
    )
    assert found["gemini"]["level"] == "warn" and "tools.exclude" in found["gemini"]["fix"]
    assert "hubs:" in cli("doctor").out


def test_doctor_says_which_spoke_clis_each_hub_starts_and_the_fix_of_a_missing_one(
    cli, project, tmp_path, monkeypatch
):
    folder = fake_bin(tmp_path, PINNED)
    monkeypatch.setenv("PATH", f"{folder}:/usr/bin:/bin")
    assert cli("install", "--host", "all").code == 0  # the user's shell: the CLIs recorded
    (folder / "gemini").unlink()
    # Inside a Codex hub: its login shell's PATH has none of the user's folders.
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setenv("CODEX_CI", "1")
    found = hubs(cli)
    for host in PINNED:
        reach = found[f"{host} spokes"]
        assert reach["level"] == "info", reach
        assert "starts these spoke CLIs: claude, codex; not gemini." in reach["detail"]
        assert reach["fix"] == (
            "gemini: npm install -g @google/gemini-cli (installed already: run `maestro doctor` "
            "once from a shell whose PATH has it)."
        )
    record = Path(os.environ["XDG_STATE_HOME"]) / "maestro" / "cli-paths.json"
    assert f"recorded in {record}" in found["codex spokes"]["detail"]
    assert "recorded" not in found["claude spokes"]["detail"]
    assert "fix: gemini: npm install -g @google/gemini-cli" in cli("doctor").out


def test_a_cli_on_path_that_could_not_be_recorded_is_missing_from_a_codex_hub(
    cli, project, tmp_path, monkeypatch
):
    monkeypatch.setenv("PATH", f"{fake_bin(tmp_path, PINNED)}:/usr/bin:/bin")
    assert cli("install", "--host", "all").code == 0
    record = Path(os.environ["XDG_STATE_HOME"]) / "maestro" / "cli-paths.json"
    record.unlink()
    monkeypatch.setenv("MAESTRO_SPOKE", "1")  # a spoke's lookups record nothing
    found = hubs(cli)
    assert found["claude spokes"]["level"] == "ok"
    assert found["claude spokes"]["detail"].endswith(
        "starts these spoke CLIs: claude, gemini, codex."
    )
    codex = found["codex spokes"]
    assert codex["level"] == "warn" and "starts these spoke CLIs: none" in codex["detail"]
    assert f"claude is on this PATH but not recorded: let Maestro write {record}" in codex["fix"]


def test_stale_worktrees_and_prunable_entries_are_listed_with_the_fix(tmp_path):
    import subprocess

    s = situation(tmp_path, env={"GEMINI_CLI_TRUST_WORKSPACE": "true"})
    root = s.project_root
    for argv in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "init"]):
        subprocess.run(["git", *argv], cwd=root, check=True)
    assert "stale worktrees" not in pitfalls(s)
    where = root / ".ai" / "maestro" / "worktrees"
    # A run that died (its pid, 999999999, is no process) left one; another is gone from disk.
    left = where / "20261124T000000Z-aaaa-task-1-1-p999999999"
    gone = tmp_path / "gone"
    for path in (left, gone):
        subprocess.run(
            ["git", "worktree", "add", "-q", "--detach", str(path)], cwd=root, check=True
        )
    subprocess.run(["rm", "-rf", str(gone)], check=True)
    # One made by a live process (a review beside) is in use, never reported.
    alive = subprocess.Popen(["sleep", "60"])
    live = where / f"review-1-x-read-1-p{alive.pid}"
    subprocess.run(["git", "worktree", "add", "-q", "--detach", str(live)], cwd=root, check=True)
    try:
        check = pitfalls(s)["stale worktrees"]
    finally:
        alive.kill()
        alive.wait()
    assert check.level == "warn" and str(left) in check.detail and str(gone) in check.detail
    assert str(live) not in check.detail
    assert "git worktree prune" in check.fix and "`maestro run` removes" in check.fix


def test_kept_worktrees_are_not_promised_to_the_next_run(tmp_path):
    """`maestro run` leaves --keep-worktrees worktrees alone, so the fix names only the
    by-hand removal."""
    import subprocess

    from maestro.repo import KEEP_SUFFIX

    s = situation(tmp_path, env={"GEMINI_CLI_TRUST_WORKSPACE": "true"})
    root = s.project_root
    for argv in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "init"]):
        subprocess.run(["git", *argv], cwd=root, check=True)
    where = root / ".ai" / "maestro" / "worktrees"
    kept = where / "20261124T000000Z-aaaa-task-1-1-p999999999"
    subprocess.run(["git", "worktree", "add", "-q", "--detach", str(kept)], cwd=root, check=True)
    (where / f"{kept.name}{KEEP_SUFFIX}").touch()
    check = pitfalls(s)["stale worktrees"]
    assert check.level == "info" and "1 kept by --keep-worktrees" in check.detail
    assert "`maestro run` removes" not in check.fix
    assert check.fix.startswith("kept worktrees stay until you remove them; by hand: ")


def test_each_cli_found_says_whether_it_is_signed_in(tmp_path):
    s = situation(tmp_path, env={"ANTHROPIC_API_KEY": "sk-x"})
    home = Path(s.env["HOME"])
    (home / ".gemini").mkdir()
    (home / ".gemini/settings.json").write_text(
        json.dumps({"security": {"auth": {"selectedType": "oauth-personal"}}})
    )
    (home / ".gemini/oauth_creds.json").write_text("{}")
    hosts = {c.name: c for c in doctor.examine(s) if c.area == "hosts"}
    assert hosts["claude sign-in"].level == "ok"
    assert hosts["codex sign-in"].level == "warn" and "codex login" in hosts["codex sign-in"].fix
    gemini = hosts["gemini sign-in"]
    assert gemini.level == "warn" and "Antigravity CLI" in gemini.detail


def test_doctor_warns_when_the_price_table_is_older_than_90_days(cli, project, monkeypatch):
    def price_check():
        checks = json.loads(cli("doctor", "--json").out)["data"]["checks"]
        return next(c for c in checks if c["name"] == "price table")

    monkeypatch.setenv("MAESTRO_FAKE_NOW", "2026-12-01T12:00:00+00:00")
    fresh = price_check()
    assert fresh["level"] == "ok" and "the oldest read 2026-11-22" in fresh["detail"]
    monkeypatch.setenv("MAESTRO_FAKE_NOW", "2027-02-21T12:00:00+00:00")  # 91 days on
    stale = price_check()
    assert stale["level"] == "warn" and "(91 days ago)" in stale["detail"]
    assert "maestro/data/prices.toml" in stale["detail"] and "update them" in stale["fix"]
