"""A loopback fake of GitHub that the real ``gh`` and ``git`` talk to over HTTPS.

It answers, GitHub Enterprise style (``https://HOST/api/v3/`` and ``/api/graphql``; gh
2.23 takes a host with a port from ``GH_HOST`` and ``--repo``), exactly the requests
that Maestro's gh commands were seen to make (GH_DEBUG=api) and that gh 2.23.0's source
sends for them; anything else gets HTTP 501 and lands in ``unknown``, which the fixture
asserts empty. ``/OWNER/REPO.git`` is a bare repository served by ``git http-backend``,
so the remote gh is told about is the one git pushes to.

State is plain attributes a test sets: ``ci`` (the check runs each push starts, with
their logs), ``fail_with`` (an HTTP status for every API request), ``hang`` (answer
nothing), ``protect`` (branches a pre-receive hook refuses), ``review_decision``.
"""

from __future__ import annotations

import io
import json
import re
import ssl
import subprocess
import threading
import zipfile
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

TOKEN = "fakehub-token"
LOGIN = "alice"
STAMP = "2023-03-01T10:00:00Z"


@dataclass
class Step:
    name: str
    conclusion: str  # success, failure, skipped
    log: str = ""


@dataclass
class Job:
    """One check run, which is a GitHub Actions job (its id is the job's id)."""

    name: str
    status: str = "completed"  # queued, in_progress, completed
    conclusion: str | None = "success"  # success, failure, cancelled, skipped, ...
    steps: list[Step] = field(default_factory=list)
    workflow: str = "CI"
    id: int = 0
    run_id: int = 0


@dataclass
class Pull:
    number: int
    head: str
    base: str
    title: str
    body: str
    state: str = "open"
    merged: bool = False
    fork: str = ""  # the owner of the fork its head is on, when not this repository
    review_comments: list[dict[str, Any]] = field(default_factory=list)
    reviews: list[dict[str, Any]] = field(default_factory=list)
    comments: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: Any  # JSON as parsed, else bytes


class FakeHub:
    def __init__(self, root: Path, cert: Path, key: Path, owner: str = "acme", name: str = "app"):
        self.owner, self.name = owner, name
        self.repos = root / "repos"
        self.bare = self.repos / owner / f"{name}.git"
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(self.bare)], check=True)
        subprocess.run(
            ["git", "-C", str(self.bare), "config", "http.receivepack", "true"], check=True
        )
        self.pulls: dict[int, Pull] = {}
        self.jobs: dict[int, Job] = {}
        self.statuses: dict[str, list[dict[str, str]]] = {}  # sha -> commit statuses (other CI)
        self.checks_by_sha: dict[str, list[int]] = {}
        self.ci: list[Job] = []  # what each push starts, copied per pushed commit
        self.requests: list[Request] = []
        self.unknown: list[str] = []
        self.fail_with: int | None = None
        self.hang = threading.Event()  # set: API requests wait until the hub stops
        self.stopping = threading.Event()
        self.review_decision = ""  # GraphQL reviewDecision: "", REVIEW_REQUIRED, APPROVED, ...
        self._ids = 100
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.hub = self  # type: ignore[attr-defined]
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.host = f"127.0.0.1:{self.server.server_address[1]}"
        self.url = f"https://{self.host}/{owner}/{name}.git"
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()

    # -- what a test sets --------------------------------------------------------------

    def protect(self, *branches: str) -> None:
        """A pre-receive hook refuses pushes to these branches, as GitHub's protection does."""
        names = " ".join(f"refs/heads/{b}" for b in branches)
        hook = self.bare / "hooks" / "pre-receive"
        hook.write_text(
            "#!/bin/sh\nwhile read old new ref; do\n  for p in "
            + names
            + '; do\n    if [ "$ref" = "$p" ]; then\n'
            '      echo "error: GH006: Protected branch update failed for $ref." >&2\n'
            "      exit 1\n    fi\n  done\ndone\n"
        )
        hook.chmod(0o755)

    def next_id(self) -> int:
        with self._lock:
            self._ids += 1
            return self._ids

    def head_sha(self, branch: str) -> str:
        got = subprocess.run(
            ["git", "-C", str(self.bare), "rev-parse", "--verify", "-q", f"refs/heads/{branch}"],
            capture_output=True,
            text=True,
            check=False,
        )
        return got.stdout.strip()

    def jobs_for(self, sha: str) -> list[Job]:
        return [self.jobs[i] for i in self.checks_by_sha.get(sha, [])]

    def pushed(self) -> None:
        """After a push: start ``ci``'s jobs on every branch head that has none yet."""
        refs = subprocess.run(
            ["git", "-C", str(self.bare), "for-each-ref", "--format=%(objectname)", "refs/heads"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        for sha in refs:
            if sha in self.checks_by_sha:
                continue
            run_id = self.next_id()
            self.checks_by_sha[sha] = []
            for template in self.ci:
                job = Job(**{**template.__dict__, "id": self.next_id(), "run_id": run_id})
                self.jobs[job.id] = job
                self.checks_by_sha[sha].append(job.id)

    def api_url(self, path: str) -> str:
        return f"https://{self.host}/api/v3/{path}"

    def web_url(self, path: str) -> str:
        return f"https://{self.host}/{self.owner}/{self.name}/{path}"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go as two writes: no 40 ms stall between
    server: Any

    def log_message(self, format: str, *args: Any) -> None:
        pass  # recorded in hub.requests instead

    @property
    def hub(self) -> FakeHub:
        return self.server.hub

    def do_GET(self) -> None:
        self._serve()

    do_POST = do_PATCH = do_PUT = do_DELETE = do_HEAD = do_GET

    def _serve(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        url = urlsplit(self.path)
        if re.match(r"^/[^/]+/[^/]+\.git/", url.path):
            self._git(url.path, url.query, raw)
            return
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw
        self.hub.requests.append(Request(self.command, self.path, dict(self.headers), body))
        if self.hub.hang.is_set():
            self.hub.stopping.wait(120)
            return
        if self.hub.fail_with:
            self._json(self.hub.fail_with, {"message": "Server Error"})
            return
        if url.path.startswith("/_blobs/"):  # where GitHub redirects a log download
            self._send(200, "application/zip", _zip(self.hub, int(url.path.split("/")[-1])))
            return
        if self.headers.get("Authorization") != f"token {TOKEN}":
            self._json(401, {"message": "Bad credentials"})
            return
        answer = _api(self.hub, self.command, url.path, parse_qs(url.query), body)
        if answer is None:
            line = f"fakehub: unknown request {self.command} {self.path} {raw[:200]!r}"
            self.hub.unknown.append(line)
            print(line)
            self._json(501, {"message": line})
        elif answer[0] == 302:
            self.send_response(302)
            self.send_header("Location", answer[1])
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self._json(*answer)

    def _json(self, status: int, data: Any) -> None:
        self._send(status, "application/json; charset=utf-8", json.dumps(data).encode())

    def _send(self, status: int, kind: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _git(self, path: str, query: str, raw: bytes) -> None:
        """Smart HTTP through ``git http-backend`` (CGI), as a Git server does."""
        env = {
            "GIT_PROJECT_ROOT": str(self.hub.repos),
            "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "REQUEST_METHOD": self.command,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(raw)),
            "REMOTE_USER": LOGIN,
            "REMOTE_ADDR": "127.0.0.1",
            "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
            "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
            "PATH": "/usr/bin:/bin",
        }
        out = subprocess.run(
            ["git", "http-backend"], input=raw, env=env, capture_output=True, check=False
        ).stdout
        head, _, data = out.partition(b"\r\n\r\n")
        status, headers = 200, []
        for line in head.decode().split("\r\n"):
            name, _, value = line.partition(": ")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers.append((name, value))
        if path.endswith("/git-receive-pack"):
            self.hub.pushed()  # before git hears back: the test's next step sees the checks
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


# -- the API ---------------------------------------------------------------------------


def _api(hub: FakeHub, method: str, path: str, query: dict[str, list[str]], body: Any):
    """(status, JSON) for a known request, (302, location) for a redirect, else None."""
    repo = f"/api/v3/repos/{hub.owner}/{hub.name}"
    if (method, path) == ("GET", "/api/v3/user"):
        return 200, {"login": LOGIN, "id": 1}
    if (method, path) == ("POST", "/api/graphql"):
        return _graphql(hub, body)
    if (method, path) == ("POST", f"{repo}/pulls"):
        return _create(hub, body)
    if m := re.fullmatch(rf"{repo}/pulls/(\d+)(/merge|/comments|/reviews)?", path):
        pull = hub.pulls.get(int(m[1]))
        if pull is None:
            return 404, {"message": "Not Found"}
        return _pull(hub, method, pull, m[2] or "", body)
    if method == "GET" and (m := re.fullmatch(rf"{repo}/issues/(\d+)/comments", path)):
        return 200, hub.pulls[int(m[1])].comments
    if method == "GET" and (m := re.fullmatch(rf"{repo}/actions/jobs/(\d+)", path)):
        return 200, _job(hub, hub.jobs[int(m[1])])
    if method == "GET" and (m := re.fullmatch(rf"{repo}/actions/runs/(\d+)", path)):
        return 200, _run(hub, int(m[1]))
    if method == "GET" and (m := re.fullmatch(rf"{repo}/actions/runs/(\d+)/jobs", path)):
        return 200, {"jobs": [_job(hub, j) for j in hub.jobs.values() if j.run_id == int(m[1])]}
    if method == "GET" and (m := re.fullmatch(rf"{repo}/actions/workflows/(\d+)", path)):
        return 200, {"id": int(m[1]), "name": "CI", "path": ".github/workflows/ci.yml"}
    if method == "GET" and (m := re.fullmatch(rf"{repo}/actions/runs/(\d+)/logs", path)):
        return 302, f"https://{hub.host}/_blobs/{m[1]}"
    return None


def _rest_pull(hub: FakeHub, pull: Pull) -> dict[str, Any]:
    return {
        "number": pull.number,
        "html_url": hub.web_url(f"pull/{pull.number}"),
        "state": pull.state,
        "merged_at": STAMP if pull.merged else None,
        "title": pull.title,
        "body": pull.body,
        "head": {"ref": pull.head, "sha": hub.head_sha(pull.head)},
        "base": {"ref": pull.base, "sha": hub.head_sha(pull.base)},
    }


def _create(hub: FakeHub, body: dict[str, str]):
    head, base = body["head"], body["base"]
    if not hub.head_sha(head):
        return 422, {
            "message": "Validation Failed",
            "errors": [{"field": "head", "code": "invalid"}],
        }
    if any(
        (p.head, p.base, p.state, p.fork) == (head, base, "open", "") for p in hub.pulls.values()
    ):
        message = f"A pull request already exists for {hub.owner}:{head}."
        return 422, {"message": "Validation Failed", "errors": [{"message": message}]}
    number = len(hub.pulls) + 1
    hub.pulls[number] = Pull(number, head, base, body["title"], body.get("body", ""))
    return 201, _rest_pull(hub, hub.pulls[number])


def _pull(hub: FakeHub, method: str, pull: Pull, what: str, body: Any):
    if (method, what) == ("PATCH", ""):
        pull.title, pull.body = body.get("title", pull.title), body.get("body", pull.body)
        pull.base = body.get("base", pull.base)
        return 200, _rest_pull(hub, pull)
    if (method, what) == ("GET", "/comments"):
        return 200, pull.review_comments
    if (method, what) == ("GET", "/reviews"):
        return 200, pull.reviews
    if (method, what) == ("PUT", "/merge"):
        sha = hub.head_sha(pull.head)
        if body.get("sha") and body["sha"] != sha:
            return 409, {"message": "Head branch was modified. Review and try the merge again."}
        if pull.state != "open" or hub.review_decision not in ("", "APPROVED"):
            return 405, {"message": "Pull Request is not mergeable"}
        pull.state, pull.merged = "closed", True
        return 200, {"sha": sha, "merged": True, "message": "Pull Request successfully merged"}
    return None


def _job(hub: FakeHub, job: Job) -> dict[str, Any]:
    return {
        "id": job.id,
        "run_id": job.run_id,
        "name": job.name,
        "status": job.status,
        "conclusion": job.conclusion,
        "started_at": STAMP,
        "completed_at": STAMP if job.status == "completed" else None,
        "html_url": hub.web_url(f"actions/runs/{job.run_id}/jobs/{job.id}"),
        "steps": [
            {"name": s.name, "status": "completed", "conclusion": s.conclusion, "number": n}
            for n, s in enumerate(job.steps, 1)
        ],
    }


def _run(hub: FakeHub, run_id: int) -> dict[str, Any]:
    jobs = [j for j in hub.jobs.values() if j.run_id == run_id]
    done = all(j.status == "completed" for j in jobs)
    failed = any(j.conclusion == "failure" for j in jobs)
    return {
        "id": run_id,
        "name": "CI",
        "status": "completed" if done else "in_progress",
        "conclusion": ("failure" if failed else "success") if done else None,
        "workflow_id": 7,
        "run_number": 1,
        "run_attempt": 1,
        "event": "push",
        "created_at": STAMP,
        "updated_at": STAMP,
        "run_started_at": STAMP,
        "head_branch": "",
        "head_sha": "",
        "jobs_url": hub.api_url(f"repos/{hub.owner}/{hub.name}/actions/runs/{run_id}/jobs"),
        "html_url": hub.web_url(f"actions/runs/{run_id}"),
    }


def _zip(hub: FakeHub, run_id: int) -> bytes:
    """The run's logs as GitHub packs them: ``JOB/N_STEP.txt``, lines stamped."""
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as pack:
        for job in (j for j in hub.jobs.values() if j.run_id == run_id):
            for n, step in enumerate(job.steps, 1):
                lines = [f"{STAMP[:-1]}.1234567Z {line}" for line in step.log.splitlines()]
                pack.writestr(f"{job.name}/{n}_{step.name}.txt", "\n".join(lines) + "\n")
    return data.getvalue()


# -- GraphQL: the two queries gh pr list / gh pr view send ------------------------------

_OPERATION = re.compile(r"\b(?:query|mutation)\s+(\w+)")


def _graphql(hub: FakeHub, body: dict[str, Any]):
    query, variables = body["query"], body.get("variables") or {}
    operation = _OPERATION.search(query)
    name = operation[1] if operation else ""
    if name == "PullRequestList":
        asked = _selection(query, "fragment pr on PullRequest{")
        states = set(variables.get("state") or ["OPEN"])
        nodes = [
            _node(hub, p)
            for p in sorted(hub.pulls.values(), key=lambda p: -p.number)
            if _state(p) in states and variables.get("headBranch") in (None, p.head)
        ]
        pulls = {"totalCount": len(nodes), "nodes": nodes}
        pulls["pageInfo"] = {"hasNextPage": False, "endCursor": ""}
        answer = {"repository": {"pullRequests": pulls}}
    elif name == "PullRequestByNumber":
        asked = _selection(query, "pullRequest(number: $pr_number) {")
        pull = hub.pulls.get(variables["pr_number"])
        if pull is None:
            said = (
                f"Could not resolve to a PullRequest with the number of {variables['pr_number']}."
            )
            errors = [{"type": "NOT_FOUND", "message": said}]
            return 200, {"data": {"repository": {"pullRequest": None}}, "errors": errors}
        answer = {"repository": {"pullRequest": _node(hub, pull)}}
    else:
        return None
    if not asked <= _NODE_FIELDS:
        return None  # a field this fake does not answer: unknown, loudly
    return 200, {"data": answer}


def _selection(query: str, opening: str) -> set[str]:
    """The field names (aliases for aliased ones) of the selection after ``opening``."""
    top, depth = [], 0
    for char in query[query.index(opening) + len(opening) :]:
        depth += (char in "({") - (char in ")}")
        if depth < 0:
            break
        if depth == 0 and char not in ")}":
            top.append(char)
    return set(re.findall(r"\w+", re.sub(r":\s*\w+", "", "".join(top))))


_NODE_FIELDS = {
    *("id", "number", "url", "state", "title", "body", "headRefName", "baseRefName"),
    *("headRefOid", "isCrossRepository", "headRepositoryOwner", "reviewDecision"),
    *("mergeable", "statusCheckRollup"),
}


def _state(pull: Pull) -> str:
    return "MERGED" if pull.merged else pull.state.upper()


def _node(hub: FakeHub, pull: Pull) -> dict[str, Any]:
    sha = hub.head_sha(pull.head)
    contexts: list[dict[str, Any]] = [
        {
            "__typename": "CheckRun",
            "name": job.name,
            "checkSuite": {"workflowRun": {"workflow": {"name": job.workflow}}},
            "status": job.status.upper(),
            "conclusion": (job.conclusion or "").upper() if job.status == "completed" else "",
            "startedAt": STAMP,
            "completedAt": STAMP if job.status == "completed" else "0001-01-01T00:00:00Z",
            "detailsUrl": hub.web_url(f"actions/runs/{job.run_id}/jobs/{job.id}"),
        }
        for job in hub.jobs_for(sha)
    ]
    contexts += [
        {"__typename": "StatusContext", "createdAt": STAMP, **s} for s in hub.statuses.get(sha, [])
    ]
    rollup = {"contexts": {"nodes": contexts, "pageInfo": {"hasNextPage": False, "endCursor": ""}}}
    return {
        "id": f"PR_{pull.number}",
        "number": pull.number,
        "url": hub.web_url(f"pull/{pull.number}"),
        "state": _state(pull),
        "title": pull.title,
        "body": pull.body,
        "headRefName": pull.head,
        "baseRefName": pull.base,
        "headRefOid": sha,
        "isCrossRepository": bool(pull.fork),
        "headRepositoryOwner": {"id": "U_1", "login": pull.fork or hub.owner},
        "reviewDecision": hub.review_decision,
        "mergeable": "MERGEABLE",
        # The head commit's rollup: null before any check or status has reported.
        "statusCheckRollup": {
            "nodes": [{"commit": {"statusCheckRollup": rollup if contexts else None}}]
        },
    }
