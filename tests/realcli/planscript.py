"""A scripted hub model that plans the way the installed `/maestro:plan` says, with its
recon done by the host's subagent or by hand, and the fixture repository it plans in.

The hub's model: recon (the host's subagent, or the same reads in the hub itself), then
the steps the command names (`maestro plan --schema`, the two skills, the dry run of a
fixed plan), each command line read from the command as the host showed it to the
model, then a one-line summary. The subagent's model reads the tree, the README and the
files the goal touches, one tool call each, and answers a fixed brief. Each request the
host sent is counted (cl100k over its body) as the hub's or the subagent's.

Used by tests/realcli/test_recon.py and bench/recon.py.
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from maestro.tokens import count_tokens

from .fake_model import Call, ToolCall, tool_results

API = {"claude": "anthropic", "gemini": "gemini", "codex": "openai"}
GOAL = "Add retries with exponential backoff to the HTTP client"
# What the goal touches in the fixture: the recon reads these after the tree.
TOUCHED = [
    "README.md",
    "pyproject.toml",
    "src/shop/http/client.py",
    "src/shop/http/session.py",
    "src/shop/http/errors.py",
    "src/shop/http/__init__.py",
    "src/shop/config/settings.py",
    "src/shop/payments/gateway.py",
    "src/shop/inventory/sync.py",
    "tests/http/test_client.py",
    "tests/http/test_session.py",
    "docs/http.md",
]
BRIEF = """BRIEF
## Relevant files
- src/shop/http/client.py: HttpClient.request sends every call; retries belong here
- src/shop/http/session.py: Session pools connections; its send() is what fails
- src/shop/http/errors.py: TransportError and StatusError decide what is retryable
- src/shop/config/settings.py: Settings holds timeouts; add retry settings beside them
- src/shop/payments/gateway.py, src/shop/inventory/sync.py: the two callers
## Patterns
- settings are frozen dataclasses read once; errors subclass ShopError
## Tests
- pytest; tests/http/test_client.py fakes Session with a stub; run `make test`
## Conventions
- type hints everywhere, ruff, no sleeping in tests (inject a clock)
## Risks
- payments must not retry a charge that may have gone through (idempotency key)
"""
PLAN = """\
goal: Add retries with exponential backoff to the HTTP client
hub: {hub}
tasks:
  - id: 1
    title: Add retry settings
    specialist: code
    tool: sim
    files: [src/shop/config/settings.py]
    criteria: [Settings has retry fields]
    validation: test -f src/shop/config/settings.py
  - id: 2
    title: Retry transport errors with backoff in HttpClient
    specialist: code
    tool: sim
    files: [src/shop/http/client.py, tests/http/test_client.py]
    depends: [1]
    criteria: [a transport error is retried with growing delays]
    validation: test -f src/shop/http/client.py
  - id: 3
    title: Send an idempotency key with payment charges
    specialist: code
    tool: sim
    files: [src/shop/payments/gateway.py]
    depends: [2]
    criteria: [a retried charge carries the same key]
    validation: test -f src/shop/payments/gateway.py
"""
DRY_RUN_OK = "Dry run: .ai/MAESTRO.md not written."
SUB_MARKER = "planner that will split a goal"  # from agents/hub/maestro-recon.md


# -- the fixture repository ----------------------------------------------------------

PACKAGES = [
    "http",
    "config",
    "payments",
    "inventory",
    "orders",
    "catalog",
    "customers",
    "shipping",
    "pricing",
    "reports",
    "auth",
    "storage",
    "notifications",
]
MODULES = ["client", "session", "errors", "models", "service", "store", "views", "sync"]


def _module(package: str, module: str) -> str:
    """About 110 lines of plausible Python, different for every module."""
    cls = f"{package.title()}{module.title()}"
    lines = [
        f'"""The {module} of the {package} package: what {cls} keeps and how it is used."""',
        "",
        "from __future__ import annotations",
        "",
        "import logging",
        "from dataclasses import dataclass, field",
        "",
        f"from shop.{'config' if package != 'config' else 'storage'}.settings import Settings",
        "",
        "log = logging.getLogger(__name__)",
        "",
        "",
        "@dataclass",
        f"class {cls}:",
        f'    """One {module} of {package}: its settings, its records and their history."""',
        "",
        "    settings: Settings",
        "    records: dict[str, dict[str, object]] = field(default_factory=dict)",
        "    history: list[str] = field(default_factory=list)",
        "",
    ]
    for n, verb in enumerate(["load", "save", "find", "update", "remove", "check", "send"]):
        lines += [
            f"    def {verb}_{module}(self, key: str, value: object = None) -> object:",
            f'        """{verb.title()} the {module} record ``key`` of {package} ({n}).',
            "",
            f"        Raises KeyError when the record is missing and {verb} needs it.",
            '        """',
            f'        log.debug("{package}.{module}: {verb} %s", key)',
            "        record = self.records.get(key)",
            f"        if record is None and {n % 2 == 0}:",
            f'            raise KeyError(f"no {module} {{key!r}} in {package}")',
            "        self.history.append(key)",
            f"        if len(self.history) > self.settings.history_limit + {n}:",
            "            self.history.pop(0)",
            f"        return record if value is None else {{**(record or {{}}), {verb!r}: value}}",
            "",
        ]
    lines += [
        "",
        f"def default_{module}(settings: Settings) -> {cls}:",
        f'    """A {cls} with no records yet."""',
        f"    return {cls}(settings)",
    ]
    return "\n".join(lines) + "\n"


def _test(package: str, module: str) -> str:
    cls = f"{package.title()}{module.title()}"
    lines = [
        f'"""Tests of shop.{package}.{module}."""',
        "",
        "import pytest",
        "",
        f"from shop.{package}.{module} import {cls}, default_{module}",
        "from shop.config.settings import Settings",
        "",
        "",
        "@pytest.fixture",
        f"def subject() -> {cls}:",
        f"    return default_{module}(Settings())",
        "",
    ]
    for verb in ["load", "save", "find", "update"]:
        lines += [
            "",
            f"def test_{verb}_records_history(subject):",
            '    subject.records["a"] = {"x": 1}',
            f'    subject.{verb}_{module}("a")',
            '    assert subject.history == ["a"]',
            "",
            f"def test_{verb}_of_a_missing_record(subject):",
            "    with pytest.raises(KeyError):",
            f'        subject.{verb}_{module}("missing")',
        ]
    return "\n".join(lines) + "\n"


def fixture_repo(root: Path) -> int:
    """A committed git repository of about 200 files (a web shop in Python); the count."""
    files: dict[str, str] = {
        "README.md": "# shop\n\nA small web shop: catalog, orders, payments, shipping.\n\n"
        + "".join(
            f"- `src/shop/{p}`: the {p} package, its models, services and views.\n"
            for p in PACKAGES
        )
        + "\nRun the tests with `make test` (pytest). Settings live in `shop.config`.\n",
        "pyproject.toml": '[project]\nname = "shop"\nversion = "1.4.0"\n'
        'requires-python = ">=3.11"\ndependencies = ["httpx>=0.27", "pydantic>=2"]\n\n'
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n\n[tool.ruff]\nline-length = 100\n',
        "Makefile": "test:\n\tpytest -q\n\nlint:\n\truff check src tests\n",
        ".gitignore": "__pycache__/\n.venv/\n",
    }
    for package in PACKAGES:
        files[f"src/shop/{package}/__init__.py"] = f'"""The {package} package."""\n'
        for module in MODULES:
            files[f"src/shop/{package}/{module}.py"] = _module(package, module)
            if module in ("client", "session", "service", "store", "sync"):
                files[f"tests/{package}/test_{module}.py"] = _test(package, module)
        files[f"docs/{package}.md"] = f"# {package}\n\n" + "".join(
            f"- `{m}`: {_module(package, m).splitlines()[0].strip(chr(34))}\n" for m in MODULES
        )
    files["src/shop/payments/gateway.py"] = _module("payments", "gateway")
    files["src/shop/config/settings.py"] = (
        '"""Settings read once at start."""\n\nfrom dataclasses import dataclass\n\n\n'
        "@dataclass(frozen=True)\nclass Settings:\n    timeout_s: float = 10.0\n"
        "    history_limit: int = 100\n    base_url: str = 'https://api.example.invalid'\n"
    )
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for argv in (
        ["git", "init", "-q"],
        ["git", "add", "-A"],
        ["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "shop"],
    ):
        subprocess.run(argv, cwd=root, check=True, capture_output=True)
    return len(files)


# -- the scripted models ---------------------------------------------------------------


@dataclass
class Counted:
    role: str  # hub | sub | side
    tokens: int
    tools: list[str]


def tool_names(api: str, body: Any) -> list[str]:
    if api == "anthropic":
        return [t.get("name", "") for t in body.get("tools") or []]
    if api == "gemini":
        return [
            f.get("name", "")
            for t in body.get("tools") or []
            for f in t.get("functionDeclarations") or []
        ]
    return [t.get("name") or t.get("type", "") for t in body.get("tools") or []]


def calls_made(api: str, body: Any) -> int:
    """The tool calls already in this conversation."""
    text = json.dumps(body)
    if api == "anthropic":
        return text.count('"type": "tool_use"')
    if api == "gemini":
        return text.count('"functionCall"')
    kinds = ('"type": "function_call"', '"type": "custom_tool_call"', '"type": "tool_search_call"')
    return sum(text.count(k) for k in kinds)


def _shown(body: Any) -> str:
    """The request as text, its JSON escapes undone: the command as the model read it."""
    return json.dumps(body).replace("\\n", "\n").replace('\\"', '"')


@dataclass
class Planner:
    """The hub's and the subagent's model for one `/maestro:plan` run on ``host``.
    ``subagent``: recon through the host's subagent; else the hub reads by hand."""

    host: str
    project: Path
    subagent: bool
    steps: bool = True  # run --schema and the two skills before the dry run
    counted: list[Counted] = field(default_factory=list)
    results: list[str] = field(default_factory=list)  # the hub's last tool results
    final: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def api(self) -> str:
        return API[self.host]

    def __call__(self, api: str, body: Any) -> Any:
        role = self.role(body)
        with self._lock:
            self.counted.append(
                Counted(
                    role, count_tokens(json.dumps(body, ensure_ascii=False)), tool_names(api, body)
                )
            )
        if role == "side":
            return "ok"
        if role == "sub":
            return self._recon(calls_made(api, body), final=self._brief())
        return self._hub(body)

    def role(self, body: Any) -> str:
        """Whose request this is: the hub's, its subagent's, or the host's own (side)."""
        tools = tool_names(self.api, body)
        if not tools:
            return "side"  # a title or a check of the host's own, not a model turn
        if self.host == "claude":
            return "hub" if "Agent" in tools else "sub"
        if self.host == "gemini":
            return "sub" if "complete_task" in tools else "hub"
        return "hub" if "tool_search" in tools else "sub"

    # -- recon: the same reads, in the subagent or in the hub --------------------------
    def _read(self, rel: str) -> Any:
        path = self.project / rel
        if self.host == "claude":
            return Call("Read", {"file_path": str(path)})
        if self.host == "gemini":
            return Call("read_file", {"file_path": str(path)})
        return ToolCall(f"cat {rel}")

    def _tree(self) -> Any:
        if self.host == "gemini":
            return Call("glob", {"pattern": "**/*"})
        if self.host == "claude":
            return Call("Bash", {"command": "git ls-files | head -200", "description": "tree"})
        return ToolCall("git ls-files | head -200")

    def _recon(self, done: int, final: Any) -> Any:
        """The recon's ``done``-th call: the tree, then each touched file, then ``final``."""
        if done == 0:
            return self._tree()
        if done <= len(TOUCHED):
            return self._read(TOUCHED[done - 1])
        return final

    def _brief(self) -> Any:
        return Call("complete_task", {"result": BRIEF}) if self.host == "gemini" else BRIEF

    # How the installed plan command names each host's subagent.
    NAMED = {
        "claude": "Launch the Explore subagent",
        "gemini": "`invoke_agent` with agent_name `maestro-recon`",
        "codex": "spawn agent_type `maestro-recon`",
    }

    def _delegate(self, done: int, body: Any) -> Any | None:
        """The hub's calls that run the subagent, as the command names it; None once it
        answered."""
        assert self.NAMED[self.host] in _shown(body), "the plan command names no subagent"
        ask = f"Goal: {GOAL}. Explore what it touches and answer with the brief."
        if self.host == "claude" and done == 0:
            return Call(
                "Agent", {"subagent_type": "Explore", "description": "Recon", "prompt": ask}
            )
        if self.host == "gemini" and done == 0:
            return Call("invoke_agent", {"agent_name": "maestro-recon", "prompt": ask})
        if self.host == "codex" and done < 3:
            if done == 0:
                return Call("tool_search", {"query": "spawn_agent sub-agent", "limit": 8})
            if done == 1:
                return Call(
                    "spawn_agent",
                    {"agent_type": "maestro-recon", "message": ask},
                    "multi_agent_v1",
                )
            spawned = json.loads(tool_results(self.api, body)[-1])
            return Call(
                "wait_agent",
                {"targets": [spawned["agent_id"]], "timeout_ms": 600_000},
                "multi_agent_v1",
            )
        return None

    def _hub(self, body: Any) -> Any:
        done = calls_made(self.api, body)
        self.results = tool_results(self.api, body)
        if self.host == "codex":  # `$maestro plan` injects the router: read the verb's file
            if done == 0:
                skill = _named(_shown(body), r"<path>([^<]+/skills/maestro)/SKILL\.md</path>")
                return ToolCall(f"cat {skill}/verbs/plan.md")
            done -= 1
        if self.subagent:
            recon = self._delegate(done, body)
            spent = {"claude": 1, "gemini": 1, "codex": 3}[self.host]
        else:
            recon = self._recon(done, final=None)
            spent = len(TOUCHED) + 1
        if recon is not None:
            return recon
        shown = _shown(body)
        steps = []
        if self.steps:
            steps = [
                _named(shown, r"Run `([^`]*plan --schema)`"),
                _named(shown, r"`([^`]*skill maestro-decompose)`"),
                _named(shown, r"`([^`]*skill maestro-route)`"),
            ]
        dry = _named(shown, r"`([^`]*plan --from - --hub \w+ --dry-run) <<'EOF'`")
        steps.append(f"{dry} <<'EOF'\n{PLAN.format(hub=self.host)}EOF")
        if done - spent < len(steps):
            return ToolCall(steps[done - spent])
        self.final = "PLANNED: " + (self.results[-1][-300:] if self.results else "")
        return self.final

    # -- what it cost ----------------------------------------------------------------
    def of(self, role: str) -> list[int]:
        return [c.tokens for c in self.counted if c.role == role]

    @property
    def hub_context(self) -> int:
        """The hub's context at the end: its last request, the validated plan in it."""
        return self.of("hub")[-1]


def _named(text: str, pattern: str) -> str:
    match = re.search(pattern, text)
    assert match, f"the plan command names no {pattern!r}"
    return match.group(1)
