"""Every git call Maestro makes gives the same answer whatever the calling environment
injects: Gemini CLI's shell tool (GIT_CONFIG_COUNT with an empty diff.external,
GIT_CONFIG_GLOBAL=/dev/null, a pager), an external diff, textconv, color.ui=always."""

import ast
import subprocess
from pathlib import Path

import pytest

from maestro.engine.receipts import Observer
from maestro.git import clean_env
from maestro.repo import Repo
from maestro.review.diff import task_diff
from maestro.state.model import Task
from tests.engine.runkit import plan, step, task, write_plan

# What Gemini CLI 0.61's shell tool puts in front of every command (its getSafeGitEnv and
# shell execution service), as HOSTS.md section 5 records.
GEMINI_GIT_ENV = {
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_SYSTEM": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_COUNT": "8",
    "GIT_CONFIG_KEY_0": "credential.helper",
    "GIT_CONFIG_VALUE_0": "",
    "GIT_CONFIG_KEY_1": "core.fsmonitor",
    "GIT_CONFIG_VALUE_1": "",
    "GIT_CONFIG_KEY_2": "core.hooksPath",
    "GIT_CONFIG_VALUE_2": "",
    "GIT_CONFIG_KEY_3": "core.sshCommand",
    "GIT_CONFIG_VALUE_3": "",
    "GIT_CONFIG_KEY_4": "core.pager",
    "GIT_CONFIG_VALUE_4": "cat",
    "GIT_CONFIG_KEY_5": "core.editor",
    "GIT_CONFIG_VALUE_5": "",
    "GIT_CONFIG_KEY_6": "sequence.editor",
    "GIT_CONFIG_VALUE_6": "",
    "GIT_CONFIG_KEY_7": "diff.external",
    "GIT_CONFIG_VALUE_7": "",
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "GEMINI_CLI": "1",
}
# Worse than Gemini: colour forced on, an external diff, a textconv for Python files.
HOSTILE_GIT_ENV = {
    "GIT_CONFIG_COUNT": "3",
    "GIT_CONFIG_KEY_0": "color.ui",
    "GIT_CONFIG_VALUE_0": "always",
    "GIT_CONFIG_KEY_1": "diff.py.textconv",
    "GIT_CONFIG_VALUE_1": "tr a-z A-Z <",
    "GIT_CONFIG_KEY_2": "diff.noprefix",
    "GIT_CONFIG_VALUE_2": "true",
    "GIT_EXTERNAL_DIFF": "false",
    "GIT_PAGER": "less -R",
    "GIT_CONFIG_PARAMETERS": "'color.diff'='always'",
}


def git(root, *args):
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def repo(project):
    (project / ".gitattributes").write_text("*.py diff=py\n")
    (project / "a.py").write_text("a = 1\n")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "init")
    return project


def measured(repo):
    tree = Repo.find(repo)
    index = repo / ".git" / "measured.index"
    index.unlink(missing_ok=True)
    before = tree.snapshot(repo, index, exclude=[".ai/**"])
    (repo / "a.py").write_text("a = 2\n")
    after = tree.snapshot(repo, index, exclude=[".ai/**"])
    changed = [c.path for c in tree.tree_changes(before, after)]
    return changed, tree.patch(before, after, changed), tree.shortstat(before, after)


@pytest.mark.parametrize("injected", [GEMINI_GIT_ENV, HOSTILE_GIT_ENV], ids=["gemini", "hostile"])
def test_receipts_diff_is_the_same_under_an_injected_git_environment(repo, monkeypatch, injected):
    plain = measured(repo)
    (repo / "a.py").write_text("a = 1\n")
    for key, value in injected.items():
        monkeypatch.setenv(key, value)
    assert measured(repo) == plain
    assert (
        "\x1b[" not in plain[1] and "-a = 1\n+a = 2\n" in plain[1] and "a/a.py b/a.py" in plain[1]
    )


@pytest.mark.parametrize("injected", [GEMINI_GIT_ENV, HOSTILE_GIT_ENV], ids=["gemini", "hostile"])
def test_review_diff_is_the_same_under_an_injected_git_environment(repo, monkeypatch, injected):
    (repo / "a.py").write_text("a = 2\n")
    item = Task(id="1", title="t", files=["a.py"])
    plain = task_diff(repo, item)
    for key, value in injected.items():
        monkeypatch.setenv(key, value)
    assert task_diff(repo, item) == plain and "+a = 2" in plain


def test_the_users_own_repository_settings_still_apply(repo, monkeypatch):
    """A path ignored by the repository's own config stays out of a snapshot, also
    when the caller hides the global config."""
    git(repo, "config", "core.excludesFile", str(repo / "private-ignore"))
    (repo / "private-ignore").write_text("scratch.txt\n")
    for key, value in GEMINI_GIT_ENV.items():
        monkeypatch.setenv(key, value)
    observer = Observer(repo, lambda tid: [], exclude=[".ai/**"])
    observer.begin("spoke", "1")
    (repo / "scratch.txt").write_text("x\n")
    (repo / "b.py").write_text("b = 1\n")
    assert observer.end("spoke", "1").out_of_scope == {"b.py"}


def test_clean_env_drops_what_a_caller_injected_and_keeps_the_users_choice():
    env = {**GEMINI_GIT_ENV, **HOSTILE_GIT_ENV, "HOME": "/h", "GIT_AUTHOR_NAME": "Ann"}
    cleaned = clean_env(env)
    assert not [
        k for k in cleaned if k.startswith("GIT_CONFIG") or k in ("GIT_EXTERNAL_DIFF", "GIT_PAGER")
    ]
    assert cleaned["HOME"] == "/h" and cleaned["GIT_AUTHOR_NAME"] == "Ann"
    own = clean_env({"GIT_CONFIG_GLOBAL": "/home/ann/.config/git/work", "GIT_CONFIG_NOSYSTEM": "1"})
    assert own == {"GIT_CONFIG_GLOBAL": "/home/ann/.config/git/work", "GIT_CONFIG_NOSYSTEM": "1"}


def test_a_spoke_gets_the_users_git_environment_not_the_hubs(monkeypatch):
    from maestro.spokes.registry import get_spoke

    for key, value in GEMINI_GIT_ENV.items():
        monkeypatch.setenv(key, value)
    spoke = get_spoke("codex")
    env = spoke.spoke_env(_request())
    assert (
        "GIT_CONFIG_COUNT" not in env
        and "GIT_CONFIG_GLOBAL" not in env
        and env["MAESTRO_SPOKE"] == "1"
    )
    assert (
        "GEMINI_CLI" not in env and "PAGER" not in env
    )  # the rest of what Gemini's shell tool set


def test_a_spoke_started_from_codex_does_not_inherit_codexs_markers(monkeypatch):
    from maestro.spokes.registry import get_spoke

    for key, value in {
        "CODEX_CI": "1",
        "CODEX_THREAD_ID": "t",
        "GIT_PAGER": "cat",
        "CODEX_HOME": "/c",
    }.items():
        monkeypatch.setenv(key, value)
    for name in ("gemini", "codex"):
        env = get_spoke(name).spoke_env(_request())
        assert "CODEX_CI" not in env and "CODEX_THREAD_ID" not in env and "GIT_PAGER" not in env
    # The user's own setting reaches the CLI it is for (a Gemini spoke gets none of
    # Codex's variables: the environment's allow-list, maestro/passenv.py).
    assert env["CODEX_HOME"] == "/c"


def _request():
    from maestro.spokes.contract import DispatchRequest

    return DispatchRequest(prompt="p")


def test_a_whole_run_under_geminis_injected_git_environment(cli, project, runenv, monkeypatch):
    write_plan(
        cli,
        project,
        [
            task(1),
            task(2, files=["src/b.py"], validation="test -f src/b.py", depends=[1]),
            task(3, files=["src/c.py"], validation="test -f src/c.py", depends=[2]),
        ],
    )
    runenv.script("codex", [step(), step("src/b.py"), step("src/c.py")])
    for key, value in GEMINI_GIT_ENV.items():
        monkeypatch.setenv(key, value)
    res = cli("run")
    assert res.code == 0, res.out + res.err
    done = plan(project)
    assert [t.status for t in done.tasks] == ["done", "done", "done"]
    assert all(t.receipt and t.receipt.diff_sha for t in done.tasks)


def _git_argv_sites(source: str) -> list[int]:
    """Lines of ``source`` that build an argv list or tuple starting with "git"."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.List | ast.Tuple)
        and node.elts
        and isinstance(node.elts[0], ast.Constant)
        and node.elts[0].value == "git"
    ]


def test_only_maestro_git_runs_git():
    package = Path(__file__).resolve().parents[1] / "maestro"
    others = [
        f"{path.relative_to(package)}:{line}"
        for path in sorted(package.rglob("*.py"))
        if path.name != "git.py"
        for line in _git_argv_sites(path.read_text(encoding="utf-8"))
    ]
    assert others == [], (
        "run git through maestro.git.run_git (it cleans the caller's injected git configuration)"
    )


def test_a_git_argv_elsewhere_is_seen():
    assert _git_argv_sites('import subprocess\nsubprocess.run(["git", "status"])\n') == [2]


def test_ignored_matching_leaves_a_skipped_folder_alone_to_its_depth(project):
    """Maestro's state folder is skipped: an ignored folder inside it (its worktrees,
    ignored by their own .gitignore) is neither listed nor looked into."""
    from maestro.repo import Repo

    inner = project / ".ai" / "maestro" / "worktrees" / "other-run"
    inner.mkdir(parents=True)
    (inner.parent / ".gitignore").write_text("*\n")
    (inner / ".env").write_text("SECRET=theirs\n")
    (inner / ".worktreeinclude").write_text(".env\n")
    (project / ".gitignore").write_text(".env\n")
    (project / ".env").write_text("SECRET=mine\n")
    repo = Repo.find(project)
    assert repo is not None
    found = repo.ignored_matching(
        project, ["/.env"], per_directory=".worktreeinclude", skip=[".ai/maestro"]
    )
    assert found == [".env"]


def test_unfiltered_switches_off_every_filter_driver_the_configuration_defines(repo, tmp_path):
    """A tree whose .gitattributes name the person's drivers (one named with dots, one
    long-running): git reading it with ``unfiltered``'s settings runs none of them."""
    from maestro.git import run_git, unfiltered

    ran = tmp_path / "ran"
    git(repo, "config", "filter.mark.clean", f"echo clean >> {ran}; cat")
    git(repo, "config", "filter.a.b.clean", f"echo dotted >> {ran}; cat")
    git(repo, "config", "filter.long.process", f"sh -c 'echo process >> {ran}; exit 1'")
    (repo / ".gitattributes").write_text("a.txt filter=mark\n*.md filter=a.b\n*.py filter=long\n")
    for name in ("a.txt", "b.md", "c.py"):
        (repo / name).write_text("changed\n")
    settings = unfiltered(repo)
    assert "filter.a.b.clean=" in settings and "filter.long.process=" in settings
    out = run_git(
        "add", "-A", cwd=repo, config=settings, extra_env={"GIT_INDEX_FILE": str(tmp_path / "i1")}
    )
    assert out.exit_code == 0, out.stderr
    assert not ran.exists()
    # Without them, the drivers run (so the test can fail).
    run_git("add", "-A", cwd=repo, extra_env={"GIT_INDEX_FILE": str(tmp_path / "i2")})
    assert ran.exists()
