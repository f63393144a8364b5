"""A hostile spoke, confined by the real bwrap (maestro/sandbox.py): each thing it tries
outside its worktree and its CLI's state is refused, the person's files and
repository stay as they were, and what it may do (write its worktree, commit there,
report to the office, as itself) still works."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from maestro import sandbox
from maestro.bus.mailbox import Mailbox, pending
from maestro.bus.sessions import SessionStore
from maestro.config import load_settings
from maestro.engine.gates import run_validation
from maestro.paths import user_state_dir
from tests.engine.runkit import left_running, plan, step, task, write_plan
from tests.test_git import git

DAEMON = "sleep 3017"  # what a spoke leaves behind, found by its command line
BOMBED = "sleep 3023"  # what a fork bomb's children run


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` with its bytes (a symlink: its target)."""
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            found[str(path)] = os.readlink(path).encode()
        elif path.is_file():
            found[str(path)] = path.read_bytes()
    return found


def daemons(command: str = DAEMON) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if (
                entry.name.isdigit()
                and (entry / "cmdline").read_bytes() == command.replace(" ", "\0").encode() + b"\0"
            ):
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


def shell_said(call: dict) -> str:
    return "".join(run.get("stdout", "") + run.get("stderr", "") for run in call["shell"])


def test_a_hostile_spoke_is_refused_everything_outside_its_worktree(
    cli, project, runenv, temp_home
):
    (project / ".gitignore").write_text(".env\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "ignore .env")
    (project / ".env").write_text("TOKEN=mine\n")
    (temp_home / ".bashrc").write_text("# mine\n")
    (temp_home / ".ssh").mkdir()
    (temp_home / ".ssh" / "id_rsa").write_text("SECRET KEY\n")
    other = temp_home / "other-repo"
    other.mkdir()
    (other / "x.txt").write_text("theirs\n")
    maestro_state = user_state_dir()
    maestro_state.mkdir(parents=True, exist_ok=True)
    (maestro_state / "cli-paths.json").write_text("{}\n")
    (temp_home / ".claude").mkdir()
    (temp_home / ".claude" / "settings.json").write_text("{}\n")
    write_plan(cli, project, [task(1)])
    head = git(project, "rev-parse", "HEAD")
    worktrees = project / ".ai" / "maestro" / "worktrees"
    hostile = [
        f"echo pwned >> {temp_home}/.bashrc && echo ESCAPED-bashrc",
        f"echo pwned > {other}/x.txt && echo ESCAPED-other-repo",
        f"echo pwned >> {project}/README.md && echo ESCAPED-tree",
        f"echo TOKEN=theirs > {project}/.env && echo ESCAPED-dotenv",
        f"echo 'touch {project}/PWNED' > {project}/.git/hooks/pre-commit && echo ESCAPED-hook",
        f"echo '[core] fsmonitor = touch {project}/PWNED' >> {project}/.git/config && echo ESCAPED-config",
        f"echo {head.strip()} > {project}/.git/refs/heads/evil && echo ESCAPED-ref",
        "echo 'gitdir: /tmp' > .git && echo ESCAPED-pointer",
        "echo x > \"$(sed 's/^gitdir: //' .git)/HEAD\" && echo ESCAPED-gitdir",
        f"mkdir -p {worktrees}/other-task && echo ESCAPED-worktrees",
        f"echo pwned > {maestro_state}/cli-paths.json && echo ESCAPED-maestro-state",
        f"for s in {maestro_state}/shims/*/maestro; do echo 'exit 0' > $s && echo ESCAPED-shim; done",
        f"cat {temp_home}/.ssh/id_rsa",
        f"echo x > /proc/self/root{project}/PWNED && echo ESCAPED-proc-root",
        f"ln -s {project} out && echo x > out/PWNED && echo ESCAPED-symlink; rm -f out",
        f"echo '{{\"hooks\": 1}}' > {temp_home}/.claude/settings.json && echo ESCAPED-claude-hook",
        f"echo 'notify = [\"touch\"]' >> {temp_home}/.codex/config.toml && echo ESCAPED-codex-config",
        f"kill -9 {os.getpid()} && echo ESCAPED-kill-engine",
        f"setsid {DAEMON} > /dev/null 2>&1 &",
        f"( ( {DAEMON} > /dev/null 2>&1 & ) & )",
        "mount -o remount,rw / && echo ESCAPED-remount",
        "echo done > src/app.py && git add -A && git commit -qm mine && echo COMMITTED",
    ]
    runenv.script("codex", [step(shell=[{"sh": c} for c in hostile])])
    files_before = tree(project)
    home_before = tree(temp_home)
    res = cli("run")
    said = shell_said(runenv.runs("codex")[0])
    assert "ESCAPED" not in said, said
    assert "SECRET KEY" not in said
    assert "COMMITTED" in said  # its own worktree and a private git dir
    assert res.code == 0, res.out + res.err
    assert plan(project).task("1").status == "done"
    # The person's files and repository are as they were but for the landed task
    # (src/app.py) and what Maestro keeps: the plan's state, its worktrees' and changes'
    # records in git.
    after = tree(project)
    own = (
        ".ai",
        ".git/objects/",
        ".git/refs/maestro/",
        ".git/worktrees",
        ".git/index",
        ".git/logs",
    )
    changed = {p for p in set(files_before) | set(after) if files_before.get(p) != after.get(p)}
    mine = {p for p in changed if not p.startswith(tuple(str(project / o) for o in own))}
    assert mine == {str(project / "src" / "app.py")}
    assert not (project / "PWNED").exists() and not (worktrees / "other-task").exists()
    assert git(project, "rev-parse", "HEAD") == head
    assert "evil" not in git(project, "branch", "--list")
    home_after = tree(temp_home)
    # (its own CLI's state is its to write; Maestro's is the engine's)
    kept = [
        p for p in home_before if not p.startswith((str(temp_home / ".codex"), str(maestro_state)))
    ]
    assert not [p for p, data in home_after.items() if b"pwned" in data]
    assert [p for p in kept if home_after.get(p) != home_before[p]] == [], kept
    time.sleep(0.2)
    assert daemons() == []  # everything it started ended with it


def test_a_confined_spokes_report_reaches_the_office(cli, project, runenv):
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [step(shell=[["task", "report", "progress", "halfway there"]])])
    assert cli("run").code == 0
    (call,) = runenv.runs("codex")
    assert call["sandboxed"] and [r["exit"] for r in call["shell"]] == [0], call["shell"]


def test_the_engine_killed_takes_its_confined_spoke_with_it(project, runenv, cli):
    """A spoke never outlives the engine that started it (it dies with its parent, and
    its pid namespace with it): nothing is left running for a later run to stop."""
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [{"hang": True}])
    engine = subprocess.Popen(
        [sys.executable, "-m", "maestro", "run"], cwd=project, stdout=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 20
    while not runenv.runs("codex") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert runenv.runs("codex")[0]["sandboxed"]
    engine.kill()
    engine.wait(timeout=10)
    assert left_running(str(runenv.path("codex")).encode()) == []


def test_a_validation_command_writes_only_its_worktree(cli, project, runenv, temp_home):
    check = f"test -f src/app.py && echo built > build.log && echo pwned > {temp_home}/x"
    write_plan(cli, project, [task(1, validation=check)])
    runenv.script("codex", [step()] * 3)
    res = cli("run")
    assert res.code == 2, res.out + res.err
    t = plan(project).task("1")
    assert t.status in ("failed", "blocked") and "Read-only file system" in t.result, t.result
    assert not (temp_home / "x").exists() and not (project / "build.log").exists()


def test_a_persons_work_in_their_tree_during_a_confined_run_is_theirs(cli, project, runenv):
    """Confined, a spoke cannot write the person's tree: an edit, a new file and a commit
    made there while it runs are the person's, kept, and blamed on no task."""
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [step(sleep=1.5)])

    def person() -> None:
        deadline = time.monotonic() + 10
        while not runenv.calls("codex") and time.monotonic() < deadline:
            time.sleep(0.05)
        (project / "README.md").write_text("project, edited by me\n")
        (project / "notes.txt").write_text("mine\n")
        git(project, "add", "README.md")
        git(project, "commit", "-qm", "my own commit")

    helper = threading.Thread(target=person)
    helper.start()
    res = cli("run")
    helper.join()
    assert res.code == 0, res.out + res.err
    assert plan(project).task("1").status == "done"
    assert (project / "README.md").read_text() == "project, edited by me\n"
    assert (project / "notes.txt").read_text() == "mine\n"
    assert "my own commit" in git(project, "log", "--format=%s")
    assert "outside" not in res.out
    assert not (project / ".ai" / "maestro" / "outside").exists()


def test_a_spoke_cannot_write_another_tasks_worktree(cli, project, runenv):
    """Two tasks at once, each trying to write into every other worktree it can list."""
    worktrees = project / ".ai" / "maestro" / "worktrees"
    write_plan(
        cli,
        project,
        [
            task(1, files=["src/m1.py"], validation="true"),
            task(2, files=["src/m2.py"], validation="true"),
        ],
    )
    # Each waits until both worktrees are there, tries, then stays a moment so that the
    # other's attempt finds its worktree too.
    others = (
        f"for i in $(seq 100); do [ $(ls -d {worktrees}/*/ | wc -l) -ge 2 ] && break; sleep 0.1; done; "
        f'for d in {worktrees}/*/; do [ "$d" = "$PWD/" ] && continue; '
        'echo x > "$d/PWNED" && echo "ESCAPED-$d"; echo "TRIED-$d"; done; sleep 1'
    )
    runenv.default("codex", step("src/m{task}.py", shell=[{"sh": others}]))
    res = cli("run")
    assert res.code == 0, res.out + res.err
    said = "".join(shell_said(call) for call in runenv.runs("codex"))
    assert "ESCAPED" not in said
    assert said.count("TRIED-") >= 2 and "Read-only file system" in said  # each saw the other
    assert not list(project.rglob("PWNED"))


def test_a_claude_spoke_writes_its_state_but_not_its_settings(cli, project, runenv, temp_home):
    """Its own state folder is writable (sessions, projects); its settings, hooks,
    instructions and ~/.claude.json (MCP servers) are not: they would run code the next
    time the person starts claude."""
    claude = temp_home / ".claude"
    claude.mkdir()
    (temp_home / ".claude.json").write_text('{"mine": true}\n')
    write_plan(cli, project, [task(1, tool="claude")])
    tries = [
        f"echo state > {claude}/projects-note && echo WROTE-STATE",
        f"echo '{{\"hooks\": 1}}' > {claude}/settings.json && echo ESCAPED-settings",
        f"echo 'touch /tmp/x' > {claude}/hooks/run.sh && echo ESCAPED-hooks",
        f"echo 'be evil' >> {claude}/CLAUDE.md && echo ESCAPED-instructions",
        f"echo '{{\"mcpServers\": 1}}' > {temp_home}/.claude.json && echo ESCAPED-claude-json",
    ]
    runenv.script("claude", [step(shell=[{"sh": c} for c in tries])])
    assert cli("run").code == 0
    said = shell_said(runenv.runs("claude")[0])
    assert "WROTE-STATE" in said and "ESCAPED" not in said, said
    assert (claude / "settings.json").read_text() == "{}\n"  # made read-only, empty
    assert (temp_home / ".claude.json").read_text() == '{"mine": true}\n'
    assert [p.name for p in (claude / "hooks").iterdir()] == []


def test_a_confined_spoke_acts_only_as_itself_in_the_office(cli, project, runenv):
    """A session is not an environment variable: a spoke that names another session, or
    none (the person), still speaks as itself, and cannot reach the office's store."""
    store = project / ".ai" / "maestro" / "mail"
    write_plan(
        cli,
        project,
        [
            task(1, files=["src/m1.py"], validation="true"),
            # (a validation command, which a spoke may write, does not see the store)
            task(2, files=["src/m2.py"], validation=f"! test -e {store}/mail.db", depends=[1]),
        ],
    )
    paths = load_settings(project).paths
    store = SessionStore(paths)
    store.create(mode="worker", session_id="victim")
    Mailbox(paths).send(
        "user", ["victim"], type="directive", priority="normal", subject="s", body="SECRET-MAIL"
    )
    office = project / ".ai" / "maestro"
    as_victim = "MAESTRO_SESSION_ID=victim maestro"
    as_person = "env -u MAESTRO_SESSION_ID -u MAESTRO_COORDINATOR_SESSION_ID maestro"
    as_run = 'MAESTRO_SESSION_ID="$MAESTRO_COORDINATOR_SESSION_ID" maestro'
    forged = (
        f"import sqlite3; c = sqlite3.connect('{office}/mail/mail.db'); "
        "c.execute(\"insert into delivery values (1, 'victim', 'x', null, null)\"); c.commit()"
    )
    hostile = [
        f"{as_victim} mail inbox",
        f"{as_victim} mail show m1",
        f'{as_victim} task report complete "victim done"',
        f"{as_person} mail send --to victim --message FROM-THE-PERSON",
        f'{as_person} task stop 2 --reason "stopped as the person"',
        f"{as_person} session stop victim",
        f'{as_run} task spawn --title Sub --files src/m1.py --criteria "it works"',
        f"cat {office}/mail/mail.db; ls {office}/sessions",
        f"echo pwned > {office}/sessions/victim/manifest.json && echo ESCAPED-manifest",
        f"echo pwned > {office}/mail/mail.db && echo ESCAPED-store",
        f'{sys.executable} -c "{forged}" && echo ESCAPED-sqlite',
    ]
    runenv.script(
        "codex", [step("src/m1.py", shell=[{"sh": c} for c in hostile]), step("src/m2.py")]
    )
    res = cli("run")
    assert res.code == 0, res.out + res.err
    runs = runenv.runs("codex")[0]["shell"]
    said = shell_said(runenv.runs("codex")[0])
    assert "SECRET-MAIL" not in said and "ESCAPED" not in said, said
    assert "no mail m1 of yours" in runs[1]["stderr"] + runs[1]["stdout"]
    assert "may not stop" in runs[4]["stdout"] + runs[4]["stderr"]
    assert "may not stop victim" in runs[5]["stdout"] + runs[5]["stderr"]
    assert "spawned" not in runs[6]["stdout"] and runs[6]["exit"] == 1
    assert runs[7]["stdout"] == "", runs[7]
    me = runs[0]["stdout"]
    assert me == "no mail\n", me
    # Nothing happened as the victim, the person or the run.
    assert store.get("victim").recorded_status == "working"
    spoke = runenv.runs("codex")[0]["env"]["MAESTRO_SESSION_ID"]
    mail, _ = Mailbox(paths).inbox("victim", mark=False)
    assert [(m.sender, m.body, m.read_at) for m in mail] == [
        ("user", "SECRET-MAIL", None),
        (spoke, "FROM-THE-PERSON", None),
    ]
    persons, _ = Mailbox(paths).inbox("user", mark=False)
    assert [m.sender for m in persons if "victim done" in m.body] == [spoke]
    tasks = plan(project).tasks
    assert [(t.id, t.status) for t in tasks] == [("1", "done"), ("2", "done")]


def test_a_confined_workers_question_reaches_the_person_and_the_answer_comes_back(
    cli, project, runenv
):
    """The round trip through the door: a question piped into `mail send`, the person's
    reply at their own shell, the worker's `mail wait` waking with it."""
    write_plan(cli, project, [task(1)])
    question = "echo 'JWT or opaque ids?' | maestro mail send --to-coordinator --type query"
    waits = {"maestro": ["mail", "wait", "--timeout", "20"], "until": "JWT, RS256"}
    runenv.script("codex", [step(shell=[{"sh": question}, waits])])
    paths = load_settings(project).paths
    asked: list = []

    def person() -> None:
        deadline = time.monotonic() + 30
        while not asked and time.monotonic() < deadline:
            asked.extend(pending(paths, "user"))
            time.sleep(0.1)
        env = {k: v for k, v in os.environ.items() if not k.startswith("MAESTRO_")}
        subprocess.run(
            [sys.executable, "-m", "maestro", "mail", "reply", f"m{asked[0].id}"],
            input="JWT, RS256",
            cwd=project,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )

    helper = threading.Thread(target=person)
    helper.start()
    res = cli("run")
    helper.join()
    assert res.code == 0, res.out + res.err
    call = runenv.runs("codex")[0]
    assert call["sandboxed"]
    (message,) = asked
    assert (message.sender, message.body) == (
        call["env"]["MAESTRO_SESSION_ID"],
        "JWT or opaque ids?",
    )
    assert call["shell"][0]["exit"] == 0, call["shell"]
    assert "answer from user" in call["shell"][-1]["stdout"], call["shell"]
    assert "JWT, RS256" in call["shell"][-1]["stdout"]


# What one session may know of another (docs/office.md, "What a session sees").
SEEN_OF_OTHERS = {"id", "mode", "status", "coordinator_session_id", "parent_session_id", "task_ids"}


def test_a_confined_spoke_sees_nothing_of_other_sessions_records(cli, project, runenv):
    """Through its door a spoke reads its own records whole, and of the others only what
    addressing mail needs: never their process, directive, reason, CLI or mail."""
    write_plan(cli, project, [task(1)])
    paths = load_settings(project).paths
    store = SessionStore(paths)
    directive = {"subject": "s", "message": "SECRET-DIRECTIVE", "from": "user"}
    store.create(
        mode="worker", session_id="victim", cli="gemini", agent="secret-agent", directive=directive
    )
    store.attach_process("victim", os.getpid())
    store.update("victim", reason="SECRET-REASON")
    Mailbox(paths).send(
        "user", ["victim"], type="query", priority="normal", subject="SECRET-SUBJECT", body="b"
    )
    run = '"$MAESTRO_COORDINATOR_SESSION_ID"'
    tries = [
        ["session", "list", "--json"],
        ["session", "show", "victim", "--json"],
        {"sh": f"maestro session show {run} --json"},
        ["session", "list"],
        ["session", "show", "victim"],
        ["session", "whoami", "--json"],
        ["mail", "reply", "m1", "--message", "x", "--json"],
        ["mail", "thread", "m1", "--json"],
        ["mail", "send", "--to", "user", "--thread", "m1", "--message", "x"],
    ]
    runenv.script("codex", [step(shell=tries)])
    assert cli("run").code == 0
    (call,) = runenv.runs("codex")
    runs, me = call["shell"], call["env"]["MAESTRO_SESSION_ID"]
    said = shell_said(call)
    for secret in ("SECRET", "secret-agent", "gemini", f" {os.getpid()}"):
        assert secret not in said, (secret, said)
    listed = json.loads(runs[0]["stdout"])["data"]["sessions"]
    others = [s for s in listed if s["id"] != me]
    assert {s["id"] for s in others} >= {"victim"}
    assert all(set(s) <= SEEN_OF_OTHERS for s in others), others
    for shown in (runs[1], runs[2]):
        assert set(json.loads(shown["stdout"])["data"]["session"]) <= SEEN_OF_OTHERS, shown
    assert "victim" in runs[3]["stdout"] and "victim" in runs[4]["stdout"]
    own = json.loads(runs[5]["stdout"])["data"]["session"]
    assert own["id"] == me and own["process"]["pid"] and own["directive"]  # its own, whole
    for refused in runs[6:]:
        told = refused["stdout"] + refused["stderr"]
        assert refused["exit"] == 1 and "no mail m1 of yours" in told, refused
    assert [m.subject for m in Mailbox(paths).inbox("user", mark=False)[0]] == []


# The bound's tests set a small one; the bomb stops by itself at three times that, so a
# bound that does not hold cannot take the machine's processes.
LIMIT = 64
# Forks children running BOMBED (their output to /dev/null: the shell's pipes close)
# until a fork fails or it has CAP of them; says how many, and whether it was stopped.
BOMB = f"""
import os
made, said = 0, "CAPPED"
while made < {3 * LIMIT}:
    try:
        pid = os.fork()
    except OSError as exc:
        said = f"STOPPED {{exc.strerror}}"
        break
    if pid == 0:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.execv("/bin/sleep", {BOMBED.split()!r})
    made += 1
print("FORKED", made, said)
"""


def ours_left() -> list[Path]:
    """The cgroups this process's dispatches made and did not remove."""
    found = sandbox.cgroups()
    return list(found.glob(f"maestro-{os.getpid()}-*")) if found else []


needs_cgroup = pytest.mark.skipif(
    sandbox.cgroups() is None,
    reason="no cgroup Maestro can write here: it cannot know a bound was hit",
)


@needs_cgroup
def test_a_fork_bomb_is_stopped_at_the_bound_and_its_task_fails_naming_it(
    cli, project, runenv, monkeypatch
):
    monkeypatch.setenv("MAESTRO_SANDBOX_PROCESSES", str(LIMIT))
    monkeypatch.setenv("MAESTRO_MAX_RETRIES", "0")
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [step(shell=[{"sh": f"{sys.executable} -c {shlex.quote(BOMB)}"}])])
    res = cli("run")
    assert daemons(BOMBED) == []  # none of its processes outlives the dispatch
    said = shell_said(runenv.runs("codex")[0])
    made = int(said.split()[1])
    assert "STOPPED Resource temporarily unavailable" in said and made < LIMIT, said
    assert res.code != 0, res.out + res.err
    t = plan(project).task("1")
    assert t.status != "done"
    assert f"at the limit of {LIMIT} at once (MAESTRO_SANDBOX_PROCESSES)" in t.result, t.result
    log = (project / ".ai" / "MAESTRO-LOG.md").read_text()
    assert "processes:" in log and "refused at the limit" in log
    assert ours_left() == []


@needs_cgroup
def test_a_validation_command_stopped_at_the_bound_does_not_pass(project, monkeypatch):
    monkeypatch.setenv("MAESTRO_SANDBOX_PROCESSES", str(LIMIT))
    settings = load_settings(project)
    ran = run_validation(
        f"{sys.executable} -c {shlex.quote(BOMB)}",  # exits 0 once it is stopped
        root=project,
        env=dict(os.environ),
        timeout_s=60,
        confined=sandbox.rules(settings, dict(os.environ)),
        state=settings.paths.state_dir,
        passes=(),
    )
    assert ran.exit_code == 0 and "STOPPED" in ran.output
    assert not ran.passed
    assert ran.output.endswith(f"at the limit of {LIMIT} at once (MAESTRO_SANDBOX_PROCESSES)")
    assert daemons(BOMBED) == [] and ours_left() == []


def test_a_disk_filler_is_stopped_at_the_size_of_its_tmp_and_leaves_nothing(
    cli, project, runenv, monkeypatch
):
    """Its /tmp and /dev/shm are memory of a bounded size, gone with it; /dev is
    read-only."""
    size = 8
    monkeypatch.setenv("MAESTRO_SANDBOX_TMP_MB", str(size))
    name = f"maestro-filler-{uuid.uuid4().hex}"
    # Writes 1 MB at a time until a write fails or it has written three times the size.
    code = (
        "import sys\n"
        "wrote, said = 0, 'CAPPED'\n"
        "with open(sys.argv[1], 'wb') as out:\n"
        f"    while wrote < {3 * size} << 20:\n"
        "        try:\n"
        "            wrote += out.write(bytes(1 << 20))\n"
        "            out.flush()\n"
        "        except OSError as exc:\n"
        "            said = f'FULL {exc.strerror}'\n"
        "            break\n"
        "print(sys.argv[1], wrote >> 20, said)\n"
    )
    fill = f"{sys.executable} -c {shlex.quote(code)}"
    fillers = [
        {"sh": f"{fill} /tmp/{name}"},
        {"sh": f"{fill} /dev/shm/{name}"},
        {"sh": f"echo x > /dev/{name} && echo ESCAPED-dev"},
    ]
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [step(shell=fillers)])
    res = cli("run")
    assert res.code == 0, res.out + res.err
    runs = runenv.runs("codex")[0]["shell"]
    for run, folder in zip(runs, ("/tmp", "/dev/shm"), strict=False):
        path, wrote, said = run["stdout"].split(maxsplit=2)
        assert path == f"{folder}/{name}" and said.strip() == "FULL No space left on device"
        assert int(wrote) <= size, run
    assert "Read-only file system" in runs[2]["stderr"] and "ESCAPED" not in runs[2]["stdout"]
    for folder in ("/tmp", "/dev/shm", "/dev"):
        assert not (Path(folder) / name).exists()
    assert plan(project).task("1").status == "done"  # the rest of its work stands
