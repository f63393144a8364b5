"""What a spoke and a validation command find in their environment: the allow-list of
maestro/passenv.py, their CLI's own variables and the sandbox_env setting's, nothing else
of the engine's, not even through /proc, confined by the real bwrap or not."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from maestro import sandbox
from maestro.engine.gates import run_validation
from maestro.sandbox import PROCESSES, TMP_MB
from tests.engine.runkit import plan, step, task, write_plan

SECRETS = {
    "GITHUB_TOKEN": "ghp-engine-secret",
    "AWS_SECRET_ACCESS_KEY": "aws-engine-secret",
    "NPM_TOKEN": "npm-engine-secret",
    "SECRET_THING": "made-up-engine-secret",
}
KEYS = {"claude": "ANTHROPIC_API_KEY", "gemini": "GEMINI_API_KEY", "codex": "OPENAI_API_KEY"}
# Every environment a process inside the sandbox can read: its own and its pid 1's
# (bwrap, holding the environment it was started with), and any other it sees.
GCLOUD, ADC = ".config/gcloud", "application_default_credentials.json"
PID1 = "tr '\\0' ' ' < /proc/1/cmdline"
PROC = (
    "tr '\\0' '\\n' < /proc/1/environ; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done"
)


@pytest.fixture
def engine_env(monkeypatch):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    for cli, name in KEYS.items():
        monkeypatch.setenv(name, f"{cli}-own-key")
    monkeypatch.setenv("PASSED_THING", "named-in-the-setting")
    monkeypatch.setenv("JAVA_HOME", "/opt/jdk")
    monkeypatch.setenv("HTTPS_PROXY", "http://me:proxy-secret@proxy.invalid:3128")


def test_a_confined_spoke_gets_its_own_key_and_none_of_the_engines_secrets(
    cli, project, runenv, engine_env, monkeypatch
):
    monkeypatch.setenv("MAESTRO_SANDBOX_ENV", "PASSED_*")
    tasks = [
        task(n, tool=name, files=[f"src/m{n}.py"], validation=f"test -f src/m{n}.py")
        for n, name in enumerate(KEYS, 1)
    ]
    write_plan(cli, project, tasks)
    for n, name in enumerate(KEYS, 1):
        runenv.script(name, [step(f"src/m{n}.py", shell=[{"sh": PROC}, {"sh": PID1}])])
    res = cli("run")
    assert res.code == 0, res.out + res.err
    for name, key in KEYS.items():
        (call,) = runenv.runs(name)
        env = call["environ"]
        assert call["sandboxed"]
        assert not set(SECRETS) & set(env), env
        assert env[key] == f"{name}-own-key"
        assert not {k for own, k in KEYS.items() if own != name} & set(env), env
        assert env["PASSED_THING"] == "named-in-the-setting"
        assert env["JAVA_HOME"] == "/opt/jdk" and env["MAESTRO_SPOKE"] == "1"
        seen = call["shell"][0]["stdout"]
        assert f"{key}={name}-own-key" in seen and "MAESTRO_SPOKE=1" in seen  # it read them
        assert not [v for v in SECRETS.values() if v in seen], seen
        # Its way out is Maestro's proxy: the person's, and its password, are not there.
        assert "proxy-secret" not in seen and "proxy-secret" not in str(env)
        assert "bwrap" in call["shell"][1]["stdout"]  # its pid 1 is the sandbox's
    assert plan(project).task("3").status == "done"


@pytest.mark.parametrize("confined", [True, False], ids=["confined", "unconfined"])
def test_a_validation_command_gets_no_cli_key_and_none_of_the_engines_secrets(
    tmp_path, engine_env, confined
):
    rules = sandbox.rules(_Settings(), dict(os.environ)) if confined else None
    ran = run_validation(
        f"env; echo ---; {PROC}; true",  # (a process may end while it reads)
        root=tmp_path,
        env=dict(os.environ),
        timeout_s=30,
        confined=rules,
        state=tmp_path / ".ai",
        passes=("PASSED_THING",),
    )
    own, _, proc = ran.output.partition("---")
    assert ran.passed and "PASSED_THING=named-in-the-setting" in own
    assert "JAVA_HOME=/opt/jdk" in own and f"HOME={os.environ['HOME']}" in own
    for name in (*SECRETS, *KEYS.values()):
        assert f"{name}=" not in own
    if confined:  # (unconfined, it reads the person's processes as the person can)
        assert "PASSED_THING=named-in-the-setting" in proc  # it read its pid 1's
        assert not [v for v in (*SECRETS.values(), *map("{}-own-key".format, KEYS)) if v in proc]
        assert "proxy-secret" not in ran.output


class _Settings:
    sandbox = True
    sandbox_hide: tuple[str, ...] = ()
    sandbox_write: tuple[str, ...] = ()
    sandbox_hosts: tuple[str, ...] = ()
    sandbox_tmp_mb = TMP_MB
    sandbox_processes = PROCESSES


def test_a_claude_signed_in_through_bedrock_reads_its_aws_credentials(project):
    from maestro.spokes.contract import DispatchRequest
    from maestro.spokes.registry import get_spoke

    base = {"PATH": "/usr/bin", "AWS_SECRET_ACCESS_KEY": "k", "AWS_REGION": "us-east-1"}
    req = DispatchRequest(prompt="x", cwd=project, timeout_s=30)
    assert "AWS_SECRET_ACCESS_KEY" not in get_spoke("claude").spoke_env(req, base)
    bedrock = get_spoke("claude").spoke_env(req, {**base, "CLAUDE_CODE_USE_BEDROCK": "1"})
    assert bedrock["AWS_SECRET_ACCESS_KEY"] == "k" and bedrock["AWS_REGION"] == "us-east-1"
    assert "AWS_SECRET_ACCESS_KEY" not in get_spoke("gemini").spoke_env(
        req, {**base, "CLAUDE_CODE_USE_BEDROCK": "1"}
    )


def test_a_codex_model_provider_reads_the_key_its_config_names(project, temp_home):
    from maestro.spokes.contract import DispatchRequest
    from maestro.spokes.registry import get_spoke

    home = Path(os.environ["CODEX_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        '[model_providers.mine]\nname = "Mine"\nenv_key = "MINE_KEY"\n'
        'env_http_headers = { "X-Org" = "MINE_ORG" }\n'
    )
    base = {"PATH": "/usr/bin", "CODEX_HOME": str(home), "MINE_KEY": "k", "MINE_ORG": "o"}
    req = DispatchRequest(prompt="x", cwd=project, timeout_s=30)
    env = get_spoke("codex").spoke_env(req, base)
    assert env["MINE_KEY"] == "k" and env["MINE_ORG"] == "o"
    assert "MINE_KEY" not in get_spoke("claude").spoke_env(req, base)


def said_by(cli, project, runenv, command: str, names: tuple[str, ...]) -> list[str]:
    """What ``command`` printed in the confined shell of a spoke of each CLI of ``names``."""
    tasks = [
        task(n, tool=name, files=[f"src/m{n}.py"], validation=f"test -f src/m{n}.py")
        for n, name in enumerate(names, 1)
    ]
    write_plan(cli, project, tasks)
    for n, name in enumerate(names, 1):
        runenv.script(name, [step(f"src/m{n}.py", shell=[{"sh": command}])])
    res = cli("run")
    assert res.code == 0, res.out + res.err
    return [runenv.runs(name)[0]["shell"][0]["stdout"] for name in names]


@pytest.mark.parametrize(
    ("folder", "login", "switch", "names"),
    [
        (GCLOUD, ADC, "GOOGLE_GENAI_USE_VERTEXAI", ("gemini", "claude")),
        (GCLOUD, ADC, "CLAUDE_CODE_USE_VERTEX", ("claude", "gemini")),
        (".aws", "credentials", "CLAUDE_CODE_USE_BEDROCK", ("claude", "codex")),
    ],
    ids=["gemini-vertex", "claude-vertex", "claude-bedrock"],
)
def test_a_spoke_signed_in_through_a_cloud_reads_that_login_in_a_hidden_folder(
    cli, project, runenv, temp_home, monkeypatch, folder, login, switch, names
):
    hidden = temp_home / folder
    hidden.mkdir(parents=True)
    (hidden / login).write_text("LOGIN-FILE\n")
    (hidden / "other").write_text("OTHER-FILE\n")
    monkeypatch.setenv(switch, "true")
    own, other = said_by(cli, project, runenv, f"cat {hidden}/{login} {hidden}/other", names)
    assert "LOGIN-FILE" in own and "OTHER-FILE" not in own
    assert "LOGIN-FILE" not in other and "OTHER-FILE" not in other
