"""The fake CLIs reproduce the genuine host samples, refusals included."""

from __future__ import annotations

import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from maestro.process import run_process
from tests.fakes.samples import read_sample

# Samples whose argv the fakes can replay to the byte: outputs and refusals.
REPLAYED = [
    "claude_json",
    "claude_stream",
    "claude_bad_flag",
    "claude_stream_no_verbose",
    "claude_flags",
    "claude_text",
    "claude_resume_missing",
    "claude_stream_resume_missing",
    "gemini_json",
    "gemini_stream",
    "gemini_bad_flag",
    "gemini_no_trust_env",
    "gemini_flags",
    "codex_json",
    "codex_full_auto",
    "codex_ask_for_approval_flag",
    "codex_no_git",
]


@pytest.mark.parametrize("name", REPLAYED)
def test_fake_replays_the_genuine_sample(fake_clis, tmp_path, name):
    sample = read_sample(name)
    if name not in ("codex_no_git", "gemini_no_trust_env"):
        fake_clis.script(sample.cli, [{"sample": name}])
    # The probes ran in a git repository with the workspace trusted by environment,
    # except the two cases about exactly that.
    env = dict(os.environ, GEMINI_CLI_TRUST_WORKSPACE="true")
    if name == "gemini_no_trust_env":
        del env["GEMINI_CLI_TRUST_WORKSPACE"]
    if name != "codex_no_git":
        subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    argv = [
        a.replace("{proj}", str(tmp_path)).replace("{work}", str(tmp_path)) for a in sample.argv
    ]
    out = run_process(argv, cwd=tmp_path, env=env, timeout_s=30)
    assert out.exit_code == sample.exit_code
    assert out.stdout == sample.stdout
    assert out.stderr == sample.stderr


def test_claude_bypass_as_root_is_refused_like_the_real_one(fake_clis, tmp_path):
    if os.getuid() != 0:
        pytest.skip("the refusal applies to root only")
    env = {k: v for k, v in os.environ.items() if k != "IS_SANDBOX"}
    out = run_process(
        ["claude", "-p", "x", "--output-format", "json", "--permission-mode", "bypassPermissions"],
        cwd=tmp_path,
        env=env,
        timeout_s=30,
    )
    assert (out.exit_code, out.stderr) == (1, read_sample("claude_bypass_as_root").stderr)


def test_unknown_flags_are_refused_per_cli(fake_clis, tmp_path):
    claude = run_process(["claude", "-p", "x", "--frobnicate"], cwd=tmp_path, timeout_s=30)
    assert (claude.exit_code, claude.stderr) == (1, "error: unknown option '--frobnicate'\n")
    gemini = run_process(["gemini", "-p", "x", "--frobnicate"], cwd=tmp_path, timeout_s=30)
    assert gemini.exit_code == 1 and gemini.stderr.startswith(
        "Unknown argument: frobnicate\nUsage: gemini"
    )
    codex = run_process(["codex", "exec", "--frobnicate", "x"], cwd=tmp_path, timeout_s=30)
    assert codex.exit_code == 2 and codex.stderr.startswith(
        "error: unexpected argument '--frobnicate' found"
    )
    assert [c["rejected"] for c in fake_clis.calls("codex")] == [
        "error: unexpected argument '--frobnicate' found"
    ]


def test_steps_are_consumed_once_each_under_parallel_calls(fake_clis, tmp_path):
    fake_clis.script("claude", [{"text": f"answer {i}"} for i in range(8)])
    fake_clis.default("claude", {"text": "beyond the script"})

    def call(_):
        return run_process(
            ["claude", "-p", "x", "--output-format", "json"], cwd=tmp_path, timeout_s=30
        ).stdout

    with ThreadPoolExecutor(8) as pool:
        outputs = list(pool.map(call, range(9)))
    texts = sorted(__import__("json").loads(o)["result"] for o in outputs)
    assert texts == sorted([f"answer {i}" for i in range(8)] + ["beyond the script"])
    assert sorted(c["step"] for c in fake_clis.runs("claude")) == list(range(9))


def test_calls_record_argv_cwd_and_stdin(fake_clis, project):
    run_process(["gemini", "-p", "hi", "-o", "json", "--skip-trust"], cwd=project, timeout_s=30)
    (call,) = fake_clis.calls("gemini")
    assert call["argv"] == ["-p", "hi", "-o", "json", "--skip-trust"]
    assert (
        call["cwd"] == str(project)
        and call["stdin_devnull"] is True
        and call["pid"] == call["pgid"]
    )


def test_an_open_stdin_pipe_hangs_fake_codex_like_the_real_one(fake_clis, project):
    proc = subprocess.Popen(
        ["codex", "exec", "--json", "--skip-git-repo-check", "hi"],
        cwd=project,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    with pytest.raises(subprocess.TimeoutExpired):
        proc.wait(timeout=1.0)
    proc.kill()
    proc.communicate()


def test_a_fake_left_hanging_is_stopped_at_teardown(fake_clis, tmp_path):
    from tests.fakes.plugin import stop_leftovers

    fake_clis.script("codex", [{"hang": True}])
    hung = subprocess.Popen(
        ["codex", "exec", "--json", "--skip-git-repo-check", "hi"],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 10
    while not fake_clis.runs("codex") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert hung.poll() is None  # hanging, as scripted
    stop_leftovers(fake_clis)
    assert hung.wait(timeout=5) == -9
