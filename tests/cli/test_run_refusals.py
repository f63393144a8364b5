"""What cannot work is refused up front, in one line naming the host's fix, before
anything is written: a read-only project, a detached engine inside Codex's command
sandbox (it dies with the command), spokes without network."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from maestro.install.host import hub_sandbox
from tests.engine.runkit import plan, task, write_plan

REPO = Path(__file__).resolve().parents[2]
# What Codex 0.169 puts in a sandboxed command's environment (HOSTS.md section 5).
CODEX_WORKSPACE_WRITE = {
    "CODEX_CI": "1",
    "CODEX_THREAD_ID": "t-1",
    "CODEX_SANDBOX_NETWORK_DISABLED": "1",
}
CODEX_READ_ONLY = {**CODEX_WORKSPACE_WRITE, "CODEX_PERMISSION_PROFILE": ":read-only"}
FULL_ACCESS = "--sandbox danger-full-access"


def state_files(project: Path) -> list[str]:
    machine = project / ".ai" / "maestro"
    return (
        sorted(str(p.relative_to(machine)) for p in machine.rglob("*")) if machine.exists() else []
    )


@pytest.fixture
def sim_plan(cli, project, runenv):
    write_plan(cli, project, [task(1, tool="sim")])
    return project


def test_detach_inside_codexs_sandbox_is_refused_and_starts_nothing(cli, sim_plan, monkeypatch):
    before = state_files(sim_plan)
    for key, value in CODEX_WORKSPACE_WRITE.items():
        monkeypatch.setenv(key, value)
    res = cli("run", "--detach")
    assert res.code == 1 and res.err.count("\n") == 1, res.err
    assert (
        "Codex CLI's command sandbox" in res.err and "detached engine would be stopped" in res.err
    )
    assert FULL_ACCESS in res.err
    assert state_files(sim_plan) == before and not (sim_plan / ".ai" / "maestro" / "runs").exists()


def test_real_spokes_without_network_are_refused(cli, project, runenv, monkeypatch):
    write_plan(cli, project, [task(1)])  # routed to a real CLI
    for key, value in CODEX_WORKSPACE_WRITE.items():
        monkeypatch.setenv(key, value)
    res = cli("run")
    assert res.code == 1 and "no network" in res.err and FULL_ACCESS in res.err
    assert plan(project).task("1").status == "pending" and not runenv.runs("codex")
    challenge = cli("challenge")
    assert challenge.code == 1 and "no network" in challenge.err


def test_a_simulated_run_in_the_foreground_works_in_the_sandbox(cli, sim_plan, monkeypatch):
    for key, value in CODEX_WORKSPACE_WRITE.items():
        monkeypatch.setenv(key, value)
    res = cli("run")
    assert res.code == 0, res.err
    assert plan(sim_plan).task("1").status == "done"


def test_which_codex_commands_are_sandboxed():
    assert hub_sandbox({}) is None and hub_sandbox({"CODEX_CI": "1"}) is None
    # Inside Codex with network allowed, no marker: no `codex` among our ancestors means
    # a PID namespace of the command's own (the case of this test process).
    networked = hub_sandbox({"CODEX_THREAD_ID": "t-1"})
    assert networked is not None and networked.network and not networked.keeps_detached
    box = hub_sandbox(CODEX_READ_ONLY)
    assert box is not None and not box.network and not box.keeps_detached


def _read_only_mount() -> list[str]:
    """A prefix that runs a command with the project mounted read-only, or a skip."""
    probe = (
        subprocess.run(["unshare", "-rm", "true"], capture_output=True, check=False)
        if _has("unshare")
        else None
    )
    if probe is None or probe.returncode != 0:
        pytest.skip("this system does not allow a private mount namespace (unshare -rm)")
    return [
        "unshare",
        "-rm",
        "sh",
        "-c",
        'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && shift && exec "$@"',
    ]


def _has(name: str) -> bool:
    from shutil import which

    return which(name) is not None


@pytest.mark.parametrize("env", [{}, CODEX_READ_ONLY], ids=["plain", "codex-read-only"])
def test_a_read_only_project_is_refused_in_one_line_never_an_internal_error(cli, sim_plan, env):
    prefix = _read_only_mount()
    before = state_files(sim_plan)
    full_env = {**os.environ, **env, "PYTHONPATH": str(REPO)}

    def maestro(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*prefix, str(sim_plan), "-", sys.executable, "-m", "maestro", *args],
            cwd=sim_plan,
            env=full_env,
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )

    for args in (["run", "--detach"], ["run"]):
        out = maestro(*args)
        assert out.returncode == 1 and out.stderr.count("\n") == 1, out.stderr
        assert "cannot be written" in out.stderr and "internal error" not in out.stderr
        assert (FULL_ACCESS in out.stderr) == bool(env)
    rewrite = maestro("plan", "--from", str(sim_plan.parent / "plan-input.yaml"), "--yes")
    assert (
        rewrite.returncode == 1
        and "read-only" in rewrite.stderr
        and "internal error" not in rewrite.stderr
    )
    assert maestro("status").returncode == 0
    assert state_files(sim_plan) == before


def test_a_home_that_cannot_hold_maestros_state_is_refused_and_starts_nothing(
    cli, sim_plan, monkeypatch
):
    before = state_files(sim_plan)
    monkeypatch.setenv("HOME", "/proc/nohome")  # no such folder, and none can be made there
    monkeypatch.delenv("XDG_STATE_HOME")
    res = cli("run")
    assert res.code == 1 and res.err.count("\n") == 1, res.err
    assert "state folder /proc/nohome/.local/state/maestro cannot be made" in res.err
    assert "Fix: set HOME to your home folder, or MAESTRO_HOME" in res.err
    assert state_files(sim_plan) == before and plan(sim_plan).task("1").status == "pending"


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "soon"])
def test_a_bad_sim_delay_is_one_line_before_any_dispatch_finding_18(
    cli, sim_plan, monkeypatch, value
):
    monkeypatch.setenv("MAESTRO_SIM_DELAY", value)
    res = cli("run")
    assert res.code == 1 and res.err.count("\n") == 1, res.out + res.err
    assert f"MAESTRO_SIM_DELAY={value!r}" in res.err and "Fix:" in res.err
    monkeypatch.delenv("MAESTRO_SIM_DELAY")
    assert "decision" not in res.out and plan(sim_plan).task("1").status == "pending"
    assert not (sim_plan / "src").exists()


@pytest.mark.parametrize("price", ["nan", "inf", '"cheap"'])
def test_a_bad_price_table_is_one_line_before_any_dispatch_finding_18(cli, project, runenv, price):
    write_plan(cli, project, [task(1, tool="claude")])
    (project / ".ai" / "maestro.toml").write_text(
        f'[prices."claude-*"]\ninput = {price}\noutput = 1\n'
    )
    res = cli("run")
    assert res.code == 1 and res.err.count("\n") == 1, res.out + res.err
    assert "is not a price" in res.err and runenv.runs("claude") == []
