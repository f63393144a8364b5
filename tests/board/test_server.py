"""The board's server without a browser: the token, the origin and host checks, the
headers, paths kept inside the project's state, the actions' command lines, and the
state it serves being `maestro status`'s."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import pytest

from maestro.board import actions, snapshot
from maestro.board.server import CSP, TOKEN_HEADER
from maestro.board.snapshot import layout
from maestro.bus.mailbox import Mailbox
from maestro.cli.context import Context
from maestro.errors import MaestroError
from maestro.state.model import Task
from maestro.state.store import PlanStore
from tests.board.conftest import fetch
from tests.engine.runkit import plan, step, task, write_plan


@pytest.fixture
def board(cli, project, board_of):
    write_plan(
        cli, project, [task(1, tool="sim"), task(2, tool="sim", depends=[1], files=["b.py"])]
    )
    return board_of(project)


def test_a_request_without_the_token_is_refused(board):
    for path in ("/events", "/api/state", "/api/task?id=1", "/api/office", "/api/challenges"):
        status, headers, body = fetch(board, path, token=False)
        assert status == 401, path
        assert headers["Content-Security-Policy"] == CSP
        assert b"refused" in body
    status, _, _ = fetch(board, "/api/state", token=False, headers={TOKEN_HEADER: "wrong"})
    assert status == 401
    # A cookie, a query or a bearer header holding the token is no token: only the header.
    for sent in (
        {"Cookie": f"maestro_board_{board.port}={board.token}"},
        {"Authorization": f"Bearer {board.token}"},
    ):
        assert fetch(board, "/api/state", token=False, headers=sent)[0] == 401
    assert fetch(board, f"/api/state?token={board.token}", token=False)[0] == 401


def test_the_page_needs_no_token_and_no_answer_sets_a_cookie(board):
    """The page's files hold no data; the token comes in the URL's fragment, which
    no browser sends, and never goes into a cookie, which the browser would send to every
    other server of 127.0.0.1 too."""
    assert board.url == f"{board.origin}/#token={board.token}"
    pages = ("/", "/board.js", "/graph.js", "/board.css", "/needs.js", "/needs.css")
    for path in (*pages, "/markdown.js", "/transcript.js", f"/?token={board.token}"):
        status, headers, body = fetch(board, path, token=False)
        assert status == 200, path
        assert "Set-Cookie" not in headers and board.token.encode() not in body
    for path in ("/api/state", "/api/office", "/api/task?id=1"):
        assert "Set-Cookie" not in fetch(board, path)[1]


def test_no_other_origin_is_let_through_a_preflight(board):
    asked = {
        "Origin": "http://127.0.0.1:1",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type,x-maestro-token",
    }
    request = urllib.request.Request(board.origin + "/api/action", method="OPTIONS", headers=asked)
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code >= 400
    assert not [h for h in refused.value.headers if h.lower().startswith("access-control-")]


def test_every_answer_has_a_strict_policy(board):
    status, headers, body = fetch(board, "/")
    assert status == 200 and b'<script src="/board.js"' in body
    assert headers["Content-Security-Policy"] == CSP
    assert "'unsafe-inline'" not in CSP and "default-src 'none'" in CSP
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Referrer-Policy"] == "no-referrer"


def test_another_host_name_is_refused_on_loopback(board):
    status, _, _ = fetch(board, "/api/state", headers={"Host": f"evil.example:{board.port}"})
    assert status == 403


def test_an_action_needs_the_boards_own_origin(board):
    act = {"action": "abort"}
    assert fetch(board, "/api/action", body=act)[0] == 403  # no Origin
    foreign = {"Origin": "http://evil.example"}
    assert fetch(board, "/api/action", body=act, headers=foreign)[0] == 403
    cross = {"Origin": board.origin, "Sec-Fetch-Site": "cross-site"}
    assert fetch(board, "/api/action", body=act, headers=cross)[0] == 403
    assert (
        fetch(board, "/api/action", body=act, token=False, headers={"Origin": board.origin})[0]
        == 401
    )
    status, _, body = fetch(board, "/api/action", body=act, headers={"Origin": board.origin})
    assert status == 200
    answer = json.loads(body)
    assert answer["command"] == "maestro run --abort" and answer["exit"] == 1
    assert "no run is in progress" in answer["output"]


def test_the_state_is_what_maestro_status_says(board, cli):
    status, _, body = fetch(board, "/api/state")
    assert status == 200
    state = json.loads(body)
    expected = json.loads(cli("status", "--json").out)["data"]
    for key in ("goal", "counts", "total", "tokens", "ready", "blockers", "next"):
        assert state["plan"][key] == expected[key], key
    assert [t["id"] for t in state["plan"]["tasks"]] == ["1", "2"]
    assert [t["place"] for t in state["plan"]["tasks"]] == [[0, 0], [1, 0]]


def test_the_state_says_what_waits_for_the_person(board, project):
    paths = Context(cwd=project).paths
    with PlanStore(paths).edit() as edited:
        edited.tasks[0].status, edited.tasks[0].attempts = "failed", 1
        edited.tasks[0].result = "codex: auth: not logged in. Fix: log in."
    Mailbox(paths).send(
        "t2-abcdef",
        ["user"],
        type="query",
        priority="normal",
        subject="Which port?",
        body="Which port?",
    )
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        needs = json.loads(fetch(board, "/api/state")[2])["needs"]
        if len(needs) == 2:
            break
        time.sleep(0.1)
    assert [(n["kind"], n["task"], n["asked"]) for n in sorted(needs, key=lambda n: n["kind"])] == [
        ("failed", "1", "codex: auth (after 1 attempt)"),
        ("question", None, "Which port?"),
    ]
    failed = next(n for n in needs if n["kind"] == "failed")
    assert failed["headline"] == "Failed: Task 1 · Write module number 1"
    question = next(n for n in needs if n["kind"] == "question")
    assert question["headline"] == "Question: t2-abcdef"  # a session Maestro has no record of
    assert failed["command"] == 'maestro run 1 --clarify "<what the task needs to know>"'


@pytest.mark.parametrize(
    "query",
    [
        "run=../../..&task=1&attempt=1",
        "run=x&task=../../etc/passwd&attempt=1",
        "run=20261121T120000Z-1a2b&task=1/../../x&attempt=1",
        "reviews=../../../etc/passwd",
        "challenges=..",
        "reviews=a/b",
        "challenges=a%2F..%2F..%2Fb",
    ],
)
def test_paths_outside_the_state_are_refused(board, query):
    status, _, body = fetch(board, "/api/transcript?" + query)
    assert status == 400, body
    assert fetch(board, "/api/task?id=..%2F1")[0] == 400


def test_the_latest_runs_pointer_is_no_run_id(board, project):
    """``runs/latest`` is the file naming the newest run, never a run of its own: asked
    for as one, the answer is the same 400 as for any other id that names no run."""
    runs = project / ".ai" / "maestro" / "runs"
    (runs / "20261121T120000Z-1a2b").mkdir(parents=True)
    (runs / "latest").write_text("20261121T120000Z-1a2b\n")
    for run in ("latest", "20261121T120000Z-ffff"):
        status, _, body = fetch(board, f"/api/transcript?run={run}&task=1&attempt=1")
        assert status == 400, run
        assert json.loads(body)["error"] == f"no run {run} in this project."


def test_a_huge_mail_is_served_cut_with_its_size_and_how_to_read_it_whole(board, project):
    body = "Which port? " + "x" * 5_000_000
    Mailbox(Context(cwd=project).paths).send(
        "t1-abcdef", ["user"], type="query", priority="normal", subject="Which port?", body=body
    )
    status, _, answer = fetch(board, "/api/office")
    assert status == 200 and len(answer) < 16 * 1024
    office = json.loads(answer)
    (question,) = office["open"]
    assert question["message"].startswith("Which port? xxx")
    assert question["message"].endswith(
        f"\n… cut: the first 4,000 of {len(body):,} characters; the whole: maestro mail show m1"
    )
    assert [[m["message"] for m in thread] for thread in office["threads"]] == [
        [question["message"]]
    ]


def test_an_unknown_page_is_not_found(board):
    assert fetch(board, "/../../etc/passwd")[0] == 404
    assert fetch(board, "/api/nothing")[0] == 404


def test_an_actions_text_is_never_read_as_a_flag(project):
    ctx = Context(cwd=project)
    assert actions.command(ctx, {"action": "clarify", "task": "3", "text": "--tool=sim"}) == [
        "run",
        "3",
        "--clarify=--tool=sim",
        "--detach",
    ]
    assert actions.command(ctx, {"action": "reply", "mail": "m4", "text": "-x"}) == [
        "mail",
        "reply",
        "m4",
        "--message=-x",
    ]
    for bad in (
        {"action": "rm"},
        {"action": "retry", "task": "1; rm -rf /"},
        {"action": "reply", "mail": "--all", "text": "x"},
        {"action": "reassign", "task": "1", "tool": "bash"},
        {"action": "clarify", "task": "1", "text": "  "},
    ):
        with pytest.raises(MaestroError):
            actions.command(ctx, bad)


def test_an_attempt_without_a_stream_shows_its_detailed_output(board, project):
    run = project / ".ai" / "maestro" / "runs" / "20261121T120000Z-1a2b"
    run.mkdir(parents=True)
    (run / "task-1-attempt-1.output.txt").write_text(
        "argv: ['claude']\nexit: 0\n\n--- stdout ---\n"
        '{"type":"message","role":"assistant","content":"hello <b>there</b>"}\n'
    )
    _, _, body = fetch(board, "/api/task?id=1")
    assert json.loads(body)["transcripts"] == [
        {"run": "20261121T120000Z-1a2b", "attempt": 1, "kind": "output.txt"}
    ]
    query = "run=20261121T120000Z-1a2b&task=1&attempt=1&kind=output.txt"
    _, _, body = fetch(board, "/api/transcript?" + query)
    texts = [e["text"] for e in json.loads(body)["entries"]]
    assert "hello <b>there</b>" in texts and "exit: 0" in texts
    for kind in ("prompt.md", "../../../etc/passwd", "output.txt/.."):
        query = f"run=20261121T120000Z-1a2b&task=1&attempt=1&kind={kind}"
        assert fetch(board, "/api/transcript?" + query)[0] == 400


def test_a_board_opened_before_the_plan_follows_it_and_makes_no_folder(cli, project, board_of):
    board = board_of(project)
    _, _, body = fetch(board, "/api/state")
    assert json.loads(body)["plan"] is None and "no plan yet" in json.loads(body)["problem"]
    assert not (project / ".ai").exists()
    write_plan(cli, project, [task(1, tool="sim")])
    deadline = time.monotonic() + 5
    while json.loads(fetch(board, "/api/state")[2])["plan"] is None:
        assert time.monotonic() < deadline, "the plan never reached the board"
        time.sleep(0.05)


def test_the_layout_puts_a_task_past_its_deepest_dependency_and_a_subtask_past_its_parent():
    tasks = [
        Task(id="1", title="a"),
        Task(id="2", title="b", depends=["1"]),
        Task(id="2.1", title="c", parent="2"),
        Task(id="3", title="d", depends=["1"]),
        Task(id="4", title="e", depends=["1", "2.1"]),
    ]
    assert layout(tasks) == {"1": [0, 0], "2": [1, 0], "2.1": [2, 0], "3": [1, 1], "4": [3, 0]}
    chain = [
        Task(id=str(i), title="t", depends=[str(i - 1)] if i > 1 else []) for i in range(1, 3001)
    ]
    assert layout(chain)["3000"] == [2999, 0]  # no recursion to run out of


APPROVE = "I read the diff.\n\n```maestro-review\nverdict: approve\n- none\n```\n"
CHALLENGE = "## Assumptions\n- Task 1 assumes a src folder\n"


def test_a_reviews_and_a_challenges_streams_are_kept_and_shown(cli, project, runenv, board_of):
    write_plan(cli, project, [task(1, tool="codex", agent="coder")])
    runenv.script("codex", [step()])
    assert cli("run").code == 0
    streamed = {"events": 3, "interval": 0}
    runenv.script("claude", [{"text": APPROVE, "stream": streamed}])
    runenv.script("codex", [{"text": CHALLENGE, "stream": streamed}])
    cli("review", "1", "--tool", "claude")
    assert cli("challenge", "--tool", "codex").code == 0
    assert "stream-json" in runenv.runs("claude")[-1]["argv"]  # a reviewer streams too
    board = board_of(project)
    review, challenge = plan(project).reviews[-1], plan(project).challenges[-1]

    _, _, body = fetch(board, "/api/task?id=1")
    (kept,) = json.loads(body)["review_streams"]
    assert (kept["id"], kept["cli"], kept["round"]) == (review.id, "claude", 1)
    _, _, body = fetch(board, f"/api/transcript?reviews={kept['session']}")
    texts = [e["text"] for e in json.loads(body)["entries"]]
    assert "working, step 2" in texts and any("verdict: approve" in t for t in texts)

    _, _, body = fetch(board, "/api/challenges")
    shown = json.loads(body)
    assert shown["challenges"][0]["id"] == challenge.id
    assert shown["challenges"][0]["findings"]["assumptions"][0]["task"] == "1"
    (kept,) = shown["streams"]
    assert (kept["id"], kept["cli"]) == (challenge.id, "codex")
    _, _, body = fetch(board, f"/api/transcript?challenges={kept['session']}")
    texts = [e["text"] for e in json.loads(body)["entries"]]
    assert any("step 2" in t for t in texts) and any("Task 1 assumes" in t for t in texts)


def test_the_office_lists_the_latest_sessions_and_the_runs_own(project, monkeypatch):
    """Every dispatch leaves a session: the board reads the latest few, not all of them."""
    from maestro.board import snapshot
    from maestro.bus.sessions import SessionStore
    from maestro.bus.workers import start_run_session

    paths = Context(cwd=project).paths
    own = start_run_session(paths, "20261121T120000Z-1a2b")
    store = SessionStore(paths)
    made = []
    for n in range(5):
        made.append(store.create(mode="worker", session_id=f"t{n}-abcdef", task_ids=[str(n)]).id)
        time.sleep(0.02)  # each folder written after the one before
    monkeypatch.setattr(snapshot, "SESSIONS_SHOWN", 2)
    monkeypatch.setattr(snapshot, "run_info", lambda paths: {"id": "20261121T120000Z-1a2b"})
    shown = snapshot.office(paths)
    assert [s["id"] for s in shown["sessions"]] == ["run-20261121T120000Z-1a2b", *made[-2:]]
    assert shown["sessions_total"] == 6
    own.release()


def test_a_running_tasks_worktree_gone_between_the_look_and_the_read_is_no_diff_yet(project):
    """The engine removes a worktree when its dispatch ends: a board that found it a
    moment before reads no diff yet, not an error naming a missing folder."""
    paths = Context(cwd=project).paths
    worktrees = paths.machine_dir / "worktrees"
    worktrees.mkdir(parents=True)
    running = Task(id="1", title="t", status="running", run_id="20261128-120000-abcd")
    # What the look found: a name of the task's worktree, no folder any more.
    (worktrees / f"{running.run_id}-task-1-1").write_text("")
    assert snapshot._live_diff(paths, running) == ""
    (worktrees / f"{running.run_id}-task-1-2").symlink_to(worktrees / "gone")
    assert snapshot._live_diff(paths, running) == ""


def test_a_tasks_history_lists_each_run_of_it_with_its_clarification_and_reason(
    cli, project, runenv, board_of, monkeypatch
):
    """What the plan and the runs record already: each run started for the task, with
    its clarification or CLI (run.json's options), each attempt and how it ended, why."""
    monkeypatch.setenv("MAESTRO_MAX_RETRIES", "0")
    write_plan(cli, project, [task(1, tool="codex", agent="coder"), task(2, tool="sim")])
    runenv.script("codex", [{"exit": 1, "stdout": "", "stderr": "boom"}] * 2)
    runenv.script("claude", [step()])
    assert cli("run", "1").code != 0
    assert cli("run", "1", "--clarify=Use tabs").code != 0
    assert cli("run", "1", "--tool=claude").code == 0
    assert cli("run", "2").code == 0  # another task's run: not in Task 1's history
    board = board_of(project)
    status, _, body = fetch(board, "/api/task?id=1")
    assert status == 200
    told = [(h["kind"], h["text"]) for h in json.loads(body)["history"]]
    assert [kind for kind, _ in told] == [
        "asked", "task_started", "task_blocked",
        "asked", "task_started", "task_blocked",
        "asked", "task_started", "task_done",
    ]  # fmt: skip
    assert told[0][1] == "run on its own" and told[1][1] == "attempt 1 on codex"
    assert "boom" in told[2][1]
    assert told[3][1] == "clarified: Use tabs" and told[4][1] == "attempt 2 on codex"
    assert told[6][1] == "reassigned to claude" and told[7][1] == "attempt 3 on claude"
    # Reassign offers the CLIs installed here and sim.
    state = json.loads(fetch(board, "/api/state")[2])
    assert sorted(state["clis"]) == ["claude", "codex", "gemini", "sim"]


def test_a_request_that_fails_unforeseen_gets_an_answer_and_the_board_serves_on(
    board, monkeypatch, capsys
):
    """A read the board did not foresee failing (a store gone unreadable, say) is a 500
    with what happened, and one line on its terminal: not a connection dropped unanswered."""

    def broken(paths):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(snapshot, "office", broken)
    status, _, body = fetch(board, "/api/office")
    assert status == 500
    answer = json.loads(body)
    assert answer["error"] == "internal error: OSError: [Errno 5] Input/output error"
    assert answer["fix"]
    assert "board: GET /api/office: OSError" in capsys.readouterr().err
    assert fetch(board, "/api/state")[0] == 200
