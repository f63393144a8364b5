"""The confinement of a process Maestro starts (maestro/sandbox.py), with the real bwrap and
a hostile script: what it may not write or read stays out of its reach."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from dataclasses import replace
from pathlib import Path

import pytest

from maestro import sandbox
from maestro.clis.claude import ClaudeSpoke
from maestro.config import load_settings
from maestro.errors import MaestroError
from maestro.process import run_process
from maestro.spokes.contract import DispatchRequest


def confined(script: str, policy: sandbox.Policy, rules: sandbox.Rules) -> str:
    argv, env = sandbox.wrap(["/bin/sh", "-c", script], policy, rules)
    out = run_process(argv, cwd=policy.cwd, env=env, timeout_s=60)
    return out.stdout + out.stderr


@pytest.fixture
def rules() -> sandbox.Rules:
    probed, why = sandbox.probe(os.environ)
    assert probed is not None, why
    return replace(probed, hide=sandbox.expand(sandbox.SECRETS, os.environ))


def test_a_hostile_script_writes_only_its_folder(temp_home, tmp_path, rules):
    work = tmp_path / "work"
    project = tmp_path / "project"
    other = temp_home / "other-repo"
    for folder in (work, project, other, temp_home / ".ssh"):
        folder.mkdir()
    (temp_home / ".bashrc").write_text("# mine\n")
    (temp_home / ".ssh" / "id_rsa").write_text("SECRET KEY\n")
    (project / "main.py").write_text("print('mine')\n")
    host_tmp = Path("/tmp") / f"maestro-escape-{uuid.uuid4().hex}"
    script = f"""
        echo pwned >> {temp_home}/.bashrc && echo WROTE-BASHRC
        echo pwned > {other}/x && echo WROTE-OTHER
        echo pwned >> {project}/main.py && echo WROTE-PROJECT
        echo pwned > {host_tmp} && echo WROTE-TMP-INSIDE
        cat {temp_home}/.ssh/id_rsa
        mount -o remount,rw / && echo REMOUNTED
        touch /usr/maestro-escape && echo WROTE-USR
        echo ok > {work}/done && echo WROTE-WORK
        echo "tmp=$TMPDIR"
    """
    policy = sandbox.Policy(cwd=work, env=dict(os.environ), writable=[work], visible=[project])
    said = confined(script, policy, rules)
    assert "WROTE-WORK" in said and (work / "done").read_text() == "ok\n"
    for escape in ("WROTE-BASHRC", "WROTE-OTHER", "WROTE-PROJECT", "REMOUNTED", "WROTE-USR"):
        assert escape not in said
    assert "SECRET KEY" not in said
    assert "WROTE-TMP-INSIDE" in said and not host_tmp.exists()  # its own /tmp, gone with it
    assert "tmp=/tmp" in said
    assert (temp_home / ".bashrc").read_text() == "# mine\n"
    assert (project / "main.py").read_text() == "print('mine')\n"
    assert not (other / "x").exists() and not Path("/usr/maestro-escape").exists()


def test_read_only_files_inside_a_writable_folder_stay_so(tmp_path, rules):
    state = tmp_path / "state"
    made = sandbox.pre_create(state, ["settings.json", "hooks/", "CLAUDE.md"])
    assert (state / "settings.json").read_text() == "{}\n" and (state / "hooks").is_dir()
    policy = sandbox.Policy(cwd=state, env=dict(os.environ), writable=[state], read_only=made)
    said = confined(
        "echo x > session.json && echo WROTE-STATE; "
        "echo '{\"hooks\": 1}' > settings.json && echo WROTE-SETTINGS; "
        "echo x > hooks/run.sh && echo WROTE-HOOK",
        policy,
        rules,
    )
    assert "WROTE-STATE" in said and "WROTE-SETTINGS" not in said and "WROTE-HOOK" not in said
    assert (state / "settings.json").read_text() == "{}\n"


def test_a_process_sees_its_own_door_and_no_other(tmp_path, rules):
    """A door (a folder under the machine's /tmp) is bound at sandbox.OFFICE for its own
    process; another's, beside it on the machine, is not there."""
    mine, theirs = (Path(tempfile.mkdtemp(prefix="maestro-office-", dir="/tmp")) for _ in "ab")
    try:
        (mine / "socket").write_text("mine\n")
        (theirs / "socket").write_text("theirs\n")
        work = tmp_path / "work"
        work.mkdir()
        policy = sandbox.Policy(cwd=work, env=dict(os.environ), writable=[work], door=mine)
        said = confined(
            f"cat {sandbox.OFFICE}/socket; cat {theirs}/socket; "
            f"echo x > {sandbox.OFFICE}/socket && echo WROTE-DOOR",
            policy,
            rules,
        )
        assert "mine" in said and "theirs" not in said and "WROTE-DOOR" not in said
        assert (mine / "socket").read_text() == "mine\n"
    finally:
        shutil.rmtree(mine)
        shutil.rmtree(theirs)


def test_a_worktree_commits_privately_and_leaves_the_repository_alone(tmp_path, rules):
    repo, wt = tmp_path / "repo", tmp_path / "wt"
    git = ["git", "-c", "user.name=T", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "a.txt").write_text("a\n")
    subprocess.run([*git, "-C", str(repo), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-qm", "one"], check=True)
    subprocess.run(
        [*git, "-C", str(repo), "worktree", "add", "-q", "--detach", str(wt)], check=True
    )
    head = (repo / ".git" / "refs" / "heads" / "main").read_text()
    layout = sandbox.git_layout(wt, tmp_path / "spoke-git")
    assert layout is not None
    env = {**os.environ, "GIT_AUTHOR_NAME": "S", "GIT_AUTHOR_EMAIL": "s@example.invalid"}
    env.update({"GIT_COMMITTER_NAME": "S", "GIT_COMMITTER_EMAIL": "s@example.invalid"})
    policy = sandbox.Policy(
        cwd=wt,
        env=env,
        writable=[wt, *layout.writable],
        read_only=layout.read_only,
        extra_env=layout.env,
    )
    said = confined(
        "echo b > b.txt && git add -A && git commit -qm two && echo COMMITTED; "
        "echo 'gitdir: /elsewhere' > .git && echo WROTE-POINTER; "
        f"echo x > {repo}/.git/hooks/pre-commit && echo WROTE-HOOK; "
        f"git config core.fsmonitor 'touch {tmp_path}/PWNED' && echo WROTE-CONFIG; "
        "git update-ref refs/heads/main HEAD && echo MOVED-MAIN",
        policy,
        rules,
    )
    assert "COMMITTED" in said, said
    for escape in ("WROTE-POINTER", "WROTE-HOOK", "WROTE-CONFIG", "MOVED-MAIN"):
        assert escape not in said
    assert (repo / ".git" / "refs" / "heads" / "main").read_text() == head
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=wt, capture_output=True, text=True, check=True
    ).stdout
    assert "?? b.txt" in status  # Maestro's git sees the work as the working tree's
    assert not (tmp_path / "PWNED").exists()


def test_a_run_refuses_when_bwrap_cannot_start(project, monkeypatch):
    monkeypatch.setenv("PATH", str(project))  # no bwrap on it
    monkeypatch.setattr(shutil, "which", lambda *a, **k: None)
    with pytest.raises(MaestroError) as caught:
        sandbox.rules(load_settings(project), os.environ)
    assert "bubblewrap (bwrap) is not installed" in caught.value.message
    assert "--no-sandbox" in caught.value.fix
    monkeypatch.setenv("MAESTRO_SANDBOX", "0")
    assert sandbox.rules(load_settings(project), os.environ) is None


def test_a_claude_config_dir_keeps_its_claude_json_read_only(tmp_path, temp_home):
    folder = tmp_path / "claude-config"
    env = {"HOME": str(temp_home), "CLAUDE_CONFIG_DIR": str(folder), "PATH": os.defpath}
    request = DispatchRequest(prompt="x", cwd=tmp_path, scratch_dir=tmp_path / "scratch")
    policy = ClaudeSpoke().confinement(request, env)
    assert folder in policy.writable and folder / ".claude.json" in policy.read_only
    assert (folder / ".claude.json").read_text() == "{}\n"
    assert folder / "settings.json" in policy.read_only and (folder / "hooks").is_dir()


@pytest.mark.parametrize(
    ("file", "text"),
    [
        (".ai/maestro.toml", "sandbox = false\n"),
        (".ai/maestro.toml", 'sandbox_write = ["~"]\n'),
        (".env", "MAESTRO_SANDBOX_HIDE=\n"),
        (".ai/maestro.toml", 'sandbox_hosts = ["attacker.example"]\n'),
        (".ai/maestro.toml", 'sandbox_env = ["*"]\n'),
        (".ai/maestro.toml", "sandbox_processes = 4000000\n"),
        (".env", "MAESTRO_SANDBOX_TMP_MB=1000000\n"),
    ],
)
def test_a_projects_own_files_cannot_loosen_the_sandbox(project, monkeypatch, file, text):
    """A repository brings its .env and config file along: neither may switch the sandbox
    off, widen what it writes or unhide a secret; the person's environment may."""
    (project / file).parent.mkdir(exist_ok=True)
    (project / file).write_text(text)
    with pytest.raises(MaestroError) as caught:
        load_settings(project)
    assert "cannot be set in" in caught.value.message and "environment" in caught.value.fix
    monkeypatch.setenv("MAESTRO_SANDBOX", "0")
    monkeypatch.setenv("MAESTRO_SANDBOX_WRITE", "~/.cache/pip")
    monkeypatch.setenv("MAESTRO_SANDBOX_HIDE", "~/.ssh")
    monkeypatch.setenv("MAESTRO_SANDBOX_HOSTS", "pypi.org")
    monkeypatch.setenv("MAESTRO_SANDBOX_ENV", "DATABASE_URL")
    monkeypatch.setenv("MAESTRO_SANDBOX_PROCESSES", "100")
    monkeypatch.setenv("MAESTRO_SANDBOX_TMP_MB", "10")
    settings = load_settings(project)
    assert settings.sandbox is False and settings.sandbox_write == ("~/.cache/pip",)
    assert settings.sandbox_env == ("DATABASE_URL",)
    assert (settings.sandbox_processes, settings.sandbox_tmp_mb) == (100, 10)


def test_without_a_cgroup_a_person_s_confined_process_gets_rlimit_nproc(
    tmp_path, rules, monkeypatch
):
    """Where Maestro can make no cgroup, a person's confined process is bounded by
    RLIMIT_NPROC, set by the sh it starts with (``ulimit -u`` in bash, ``-p`` in dash)
    and lowered for good (its hard limit too). Root is exempt from it: none is set."""
    limited = replace(rules, processes=64, cgroups=None)
    policy = sandbox.Policy(cwd=tmp_path, env=dict(os.environ))
    script = "grep 'Max processes' /proc/self/limits"
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert confined(script, policy, limited).split()[2:4] == ["64", "64"]
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    argv, _ = sandbox.wrap(["/bin/true"], policy, limited)
    assert argv[0] == rules.program
    assert "processes unbounded (root" in sandbox.bounds(limited)


def test_a_bwrap_that_cannot_size_a_tmpfs_still_confines_and_says_so(tmp_path, monkeypatch):
    """bubblewrap before 0.7 (Ubuntu 22.04 has 0.6) or setuid refuses --size: the probe
    tries again without, and the rules say /tmp is unbounded."""
    real = shutil.which("bwrap")
    (tmp_path / "bwrap").write_text(
        "#!/bin/sh\n"
        'for a; do [ "$a" = --size ] && { echo "bwrap: Unknown option --size" >&2; exit 1; }; done\n'
        f'exec {real} "$@"\n'
    )
    (tmp_path / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    probed, why = sandbox.probe(os.environ)
    assert probed is not None and probed.program == str(tmp_path / "bwrap"), why
    assert probed.tmp_mb is None and "unbounded (bubblewrap 0.7" in sandbox.bounds(probed)
    said = confined("echo started", sandbox.Policy(cwd=tmp_path, env=dict(os.environ)), probed)
    assert said == "started\n"


def test_an_engine_killed_leaves_no_cgroup_for_long(rules):
    """The cgroup of a dispatch whose engine was killed is empty (its processes died with
    it) and removed the next time Maestro looks for where to make them."""
    folder = sandbox.cgroups()
    if folder is None:
        pytest.skip("no cgroup Maestro can write here")
    left = folder / "maestro-999999999-left"  # (above any pid_max: no such engine)
    left.mkdir()
    assert sandbox.cgroups() == folder and not left.exists()
