"""A scripted hub model that plans the way the installed `/maestro:plan` says, with its
recon done by the host's subagent or by hand, and the fixture repository it plans in.

The hub's model: recon (the host's subagent, or the same reads in the hub itself), then
the steps the command names (the two skills in one shell call, the dry run of a fixed
plan), each command line read from the command as the host showed it to the
model, then a one-line summary. The subagent's model reads the tree, the README and the
files the goal touches, one tool call each, and answers a fixed brief. Each request the
host sent is counted (request_tokens: cl100k, as the model reads it) as the hub's or the
subagent's.

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

# Each kind of file is about as large as the mean of that kind in five public Python
# projects of 125 to 265 files (httpx, flask, requests, httpie and pipx at their 2026
# default branches; each project's mean in cl100k tokens, the five means averaged): a
# source module 2,416, a test module 1,914, a documentation page 1,371, the README 946,
# pyproject.toml 933, a package's __init__.py 475. The median file is smaller (the sizes
# are skewed: the five medians averaged in REFERENCE_MEDIAN_TOKENS), but the twelve files
# a recon reads cost their sum, which the mean gives.
REFERENCE_TOKENS = {
    "source": 2416,
    "test": 1914,
    "doc": 1371,
    "readme": 946,
    "pyproject": 933,
    "init": 475,
}
REFERENCE_MEDIAN_TOKENS = {
    "source": 1440,
    "test": 870,
    "doc": 646,
    "readme": 946,
    "pyproject": 833,
    "init": 407,
}
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
VERBS = ["load", "save", "find", "update", "remove", "check", "send", "merge"]
VERBS += ["count", "reset", "export", "validate", "refresh", "archive", "restore", "fetch"]


def _module(package: str, module: str) -> str:
    """A source module of plausible Python, different for every module."""
    cls = f"{package.title()}{module.title()}"
    lines = [
        f'"""The {module} of the {package} package: what {cls} keeps and how it is used.',
        "",
        f"{cls} holds the {module} records of {package} in memory, keyed by id, with the",
        "history of the keys it touched; the service layer owns one per request.",
        '"""',
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
    for n, verb in enumerate(VERBS):
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


def _settings() -> str:
    """The settings module: one frozen dataclass, a few fields per package."""
    lines = [
        '"""Settings read once at start, from the environment (SHOP_<FIELD>) or defaults.',
        "",
        "Every package reads its own fields; nothing changes them after start.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "import os",
        "from dataclasses import dataclass, fields",
        "",
        "",
        "@dataclass(frozen=True)",
        "class Settings:",
        '    """What the shop is configured with."""',
        "",
        "    timeout_s: float = 10.0  # connect and read timeout of every outgoing call",
        "    history_limit: int = 100  # keys a store remembers",
        "    base_url: str = 'https://api.example.invalid'",
    ]
    for package in PACKAGES:
        lines += [
            f"    # {package}",
            f"    {package}_enabled: bool = True  # turn the {package} package off",
            f"    {package}_timeout_s: float = 5.0  # {package}'s own calls",
            f"    {package}_batch_size: int = 50  # records {package} handles at once",
            f"    {package}_url: str = 'https://{package}.example.invalid'",
            f"    {package}_page_size: int = 20  # records a {package} view shows",
            f"    {package}_cache_ttl_s: float = 60.0  # how long {package} keeps a read",
            f"    {package}_max_records: int = 10_000  # {package} refuses more",
            f"    {package}_log_level: str = 'INFO'  # of the shop.{package} loggers",
            f"    {package}_region: str = 'eu-west-1'  # where {package}'s data lives",
        ]
    lines += [
        "",
        "    @classmethod",
        "    def from_env(cls) -> Settings:",
        '        """The settings the environment sets (SHOP_TIMEOUT_S=...), defaults else."""',
        "        values: dict[str, object] = {}",
        "        for f in fields(cls):",
        '            raw = os.environ.get(f"SHOP_{f.name.upper()}")',
        "            if raw is None:",
        "                continue",
        "            kind = type(f.default)",
        '            values[f.name] = raw.lower() in ("1", "true") if kind is bool else kind(raw)',
        "        return cls(**values)",
    ]
    return "\n".join(lines) + "\n"


def _init(package: str) -> str:
    names = [n for m in MODULES for n in (f"{package.title()}{m.title()}", f"default_{m}")]
    lines = [f'"""The {package} package of the shop.', ""]
    lines += [
        f"- {m}: {package.title()}{m.title()}, the {m} records of {package}, and default_{m}(),"
        f" a {package.title()}{m.title()} with no records yet"
        for m in MODULES
    ]
    lines += ["", f"Import from shop.{package}, never from its modules: they may move. Every"]
    lines += ["class takes the Settings it runs with; none reads the environment itself.", ""]
    lines += ["Use:", "", f"    from shop.{package} import default_service", ""]
    lines += ["    service = default_service(Settings.from_env())", '"""', ""]
    lines += [f"from .{m} import {package.title()}{m.title()}, default_{m}" for m in MODULES]
    return "\n".join([*lines, "", "__all__ = [", *(f'    "{n}",' for n in names), "]"]) + "\n"


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
        f"    return default_{module}(Settings(history_limit=2))",
        "",
    ]
    for verb in VERBS:
        lines += [
            "",
            f"def test_{verb}_records_history(subject):",
            '    subject.records["a"] = {"x": 1}',
            f'    subject.{verb}_{module}("a")',
            '    assert subject.history == ["a"]',
            "",
            "",
            f"def test_{verb}_of_a_missing_record(subject):",
            "    with pytest.raises(KeyError):",
            f'        subject.{verb}_{module}("missing")',
            "",
            "",
            f"def test_{verb}_keeps_the_history_bounded(subject):",
            '    for key in ("a", "b", "c", "d"):',
            "        subject.records[key] = {}",
            f"        subject.{verb}_{module}(key)",
            f"    assert len(subject.history) <= subject.settings.history_limit + {VERBS.index(verb)}",
        ]
    return "\n".join(lines) + "\n"


def _doc(package: str) -> str:
    lines = [
        f"# {package}",
        "",
        f"The `shop.{package}` package: its models, the service that changes them, the store",
        "that keeps them and the views that show them. Each class holds its records in",
        "memory and remembers the keys it touched; the service layer owns one per request.",
    ]
    for m in MODULES:
        cls = f"{package.title()}{m.title()}"
        lines += [
            "",
            f"## {m}",
            "",
            f"`{cls}` (`src/shop/{package}/{m}.py`) keeps the {m} records of {package}.",
            f"`load_{m}` and `find_{m}` read one, `save_{m}` and `update_{m}` change it.",
            f"A missing record raises `KeyError` naming the key and the {package} package; the",
            f"history keeps at most `history_limit` keys. `SHOP_{package.upper()}_BATCH_SIZE`",
            "bounds how many records one call handles. The other calls: "
            + ", ".join(f"`{v}_{m}`" for v in VERBS[4:])
            + ".",
            "",
            "```python",
            f"{m} = default_{m}(Settings.from_env())",
            f'{m}.save_{m}("key", {{"state": "new"}})',
            f'assert {m}.find_{m}("key") is not None',
            "```",
        ]
    return "\n".join(lines) + "\n"


def _readme() -> str:
    return (
        "# shop\n\nA small web shop: catalog, orders, payments, shipping. One process\n"
        "serves the views; every package keeps its records through its store.\n\n"
        "## Packages\n\n"
        + "".join(
            f"- `src/shop/{p}`: the {p} package: {', '.join(MODULES)} (docs/{p}.md).\n"
            for p in PACKAGES
        )
        + "\n## Install\n\n```sh\npython -m venv .venv\n.venv/bin/pip install -e '.[dev]'\n```\n\n"
        "## Configuration\n\nSettings live in `shop.config.settings` and are read once at\n"
        "start from the environment: `SHOP_TIMEOUT_S`, `SHOP_BASE_URL`, and for each package\n"
        "`SHOP_<PACKAGE>_URL`, `SHOP_<PACKAGE>_TIMEOUT_S`, `SHOP_<PACKAGE>_BATCH_SIZE`.\n\n"
        "## Development\n\nRun the tests with `make test` (pytest), the linters with\n"
        "`make lint` (ruff, mypy). Every change comes with a test; tests never sleep (inject\n"
        "a clock) and never reach the network (fake the session).\n\n"
        "## Usage\n\n```python\nfrom shop.config.settings import Settings\n"
        "from shop.orders import default_service\n\nsettings = Settings.from_env()\n"
        'orders = default_service(settings)\norders.save_service("A-1", {"items": 2})\n```\n\n'
        "## Layout\n\n- `src/shop/<package>/`: the code, one folder per package\n"
        "- `tests/<package>/`: its tests, one module per module tested\n"
        "- `docs/<package>.md`: what each package holds and how to use it\n\n"
        "## Running locally\n\n```sh\nexport SHOP_BASE_URL=http://localhost:8080\n"
        "export SHOP_PAYMENTS_URL=http://localhost:8081  # the payment provider's sandbox\n"
        "make serve  # the views on http://localhost:8000\nmake test lint\n```\n\n"
        "The payment sandbox never charges; a charge it receives twice answers with the\n"
        "first charge's result when both carry the same idempotency key.\n\n"
        "## Releasing\n\nBump `version` in `pyproject.toml`, note the change in the\n"
        "changelog, tag `vX.Y.Z`; CI builds and deploys the tag.\n\n"
        "## Support\n\nQuestions and bugs: the issue tracker (see `pyproject.toml`). Security\n"
        "reports: security@example.invalid, never a public issue; we answer within two days.\n\n"
        "## License\n\nMIT.\n"
    )


PYPROJECT = """\
[build-system]
requires = ["hatchling>=1.27"]
build-backend = "hatchling.build"

[project]
name = "shop"
version = "1.4.0"
description = "A small web shop: catalog, orders, payments, shipping"
readme = "README.md"
license = "MIT"
requires-python = ">=3.11"
classifiers = [
  "Programming Language :: Python :: 3 :: Only",
  "Programming Language :: Python :: 3.11",
  "Programming Language :: Python :: 3.12",
  "Framework :: AsyncIO",
  "Private :: Do Not Upload",
]
dependencies = [
  "httpx>=0.27",
  "pydantic>=2.6",
  "sqlalchemy>=2.0",
  "jinja2>=3.1",
  "structlog>=24.1",
]

[project.optional-dependencies]
dev = [
  "pytest>=8",
  "pytest-cov>=5",
  "respx>=0.21",
  "ruff>=0.5",
  "mypy>=1.10",
]

authors = [{ name = "Shop team", email = "shop@example.invalid" }]
keywords = ["shop", "catalog", "orders", "payments"]

[project.urls]
Homepage = "https://shop.example.invalid"
Documentation = "https://shop.example.invalid/docs"
Issues = "https://git.example.invalid/shop/issues"

[project.scripts]
shop = "shop.cli:main"

[tool.hatch.build.targets.wheel]
packages = ["src/shop"]

[tool.hatch.envs.default]
dependencies = ["pytest", "pytest-cov", "respx"]

[tool.hatch.envs.default.scripts]
test = "pytest {args}"
cov = "pytest --cov=shop --cov-report=term-missing {args}"
lint = ["ruff check src tests", "ruff format --check src tests", "mypy"]

[tool.pytest.ini_options]
testpaths = ["tests"]
addopts = "-q --strict-markers"
markers = ["slow: takes more than a second"]
filterwarnings = ["error"]

[dependency-groups]
docs = ["mkdocs>=1.6", "mkdocs-material>=9.5", "mkdocstrings[python]>=0.25"]
typing = ["mypy>=1.10", "types-requests", "sqlalchemy[mypy]"]

[tool.coverage.paths]
source = ["src/shop", "*/site-packages/shop"]

[tool.coverage.run]
source = ["shop"]
branch = true

[tool.coverage.report]
fail_under = 90
show_missing = true
exclude_lines = ["pragma: no cover", "if TYPE_CHECKING:"]

[tool.ruff]
line-length = 100
target-version = "py311"
src = ["src", "tests"]

[tool.ruff.lint]
select = ["E", "F", "W", "I", "B", "UP", "SIM", "RUF", "PT", "N"]
ignore = [
  "B008",  # function calls in argument defaults: FastAPI-style dependencies
  "N818",  # exception names: ours end in Error already
  "SIM108",  # ternaries where an if block reads better
]

[tool.ruff.lint.isort]
known-first-party = ["shop"]

[tool.ruff.format]
quote-style = "double"
docstring-code-format = true

[tool.ruff.lint.per-file-ignores]
"tests/*" = ["S101"]

[tool.mypy]
python_version = "3.11"
strict = true
warn_unreachable = true
files = ["src"]

[[tool.mypy.overrides]]
module = ["respx.*", "structlog.*"]
ignore_missing_imports = true

[[tool.mypy.overrides]]
module = ["tests.*"]
disallow_untyped_defs = false
disallow_incomplete_defs = false
"""


def kind(rel: str) -> str:
    """Which kind of REFERENCE_TOKENS the fixture's file ``rel`` is ('other': none)."""
    if rel.endswith("__init__.py"):
        return "init"
    if rel.endswith(".py"):
        return "test" if rel.startswith("tests/") else "source"
    if rel.startswith("docs/"):
        return "doc"
    return {"README.md": "readme", "pyproject.toml": "pyproject"}.get(rel, "other")


def fixture_files(median: bool = False) -> dict[str, str]:
    """The fixture repository's files (about 200, a web shop in Python) by path; with
    ``median``, each cut to the median of its kind (its first lines)."""
    files: dict[str, str] = {
        "README.md": _readme(),
        "pyproject.toml": PYPROJECT,
        "Makefile": "test:\n\tpytest -q\n\nlint:\n\truff check src tests\n\tmypy\n",
        ".gitignore": "__pycache__/\n.venv/\n",
    }
    for package in PACKAGES:
        files[f"src/shop/{package}/__init__.py"] = _init(package)
        for module in MODULES:
            files[f"src/shop/{package}/{module}.py"] = _module(package, module)
            if module in ("client", "session", "service", "store", "sync"):
                files[f"tests/{package}/test_{module}.py"] = _test(package, module)
        files[f"docs/{package}.md"] = _doc(package)
    files["src/shop/payments/gateway.py"] = _module("payments", "gateway")
    files["src/shop/config/settings.py"] = _settings()
    if median:
        for rel, text in files.items():
            share = REFERENCE_MEDIAN_TOKENS.get(kind(rel), 1) / REFERENCE_TOKENS.get(kind(rel), 1)
            lines = text.splitlines(keepends=True)
            files[rel] = "".join(lines[: round(len(lines) * share) or 1])
    return files


def fixture_repo(root: Path, median: bool = False) -> int:
    """The fixture repository (fixture_files) committed in ``root``; its count of files."""
    files = fixture_files(median)
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


def request_tokens(body: Any) -> int:
    """cl100k tokens of a request as the model reads it: each text as itself (a file
    read counts its own lines, not their JSON escapes), and the JSON around them."""
    texts: list[str] = []

    def skeleton(value: Any) -> Any:
        if isinstance(value, str):
            texts.append(value)
            return ""
        if isinstance(value, dict):
            return {k: skeleton(v) for k, v in value.items()}
        if isinstance(value, list):
            return [skeleton(v) for v in value]
        return value

    frame = json.dumps(skeleton(body))
    return count_tokens(frame) + sum(count_tokens(t) for t in texts)


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
    steps: bool = True  # run the skills before the dry run
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
            self.counted.append(Counted(role, request_tokens(body), tool_names(api, body)))
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
        "claude": 'Launch the Explore subagent (Agent tool) with `model: "haiku"` and '
        "`run_in_background: false`",
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
                "Agent",
                {
                    "subagent_type": "Explore",
                    "description": "Recon",
                    "prompt": ask,
                    "model": "haiku",
                    "run_in_background": False,
                },
            )
        if self.host == "gemini" and done == 0:
            return Call("invoke_agent", {"agent_name": "maestro-recon", "prompt": ask})
        if self.host == "codex" and done < 3:
            if done == 0:
                query = _named(_shown(body), r"`tool_search` with query `([^`]+)` and limit 2")
                return Call("tool_search", {"query": query, "limit": 2})
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
            steps = [_named(shown, r"Run `([^`]*skill maestro-decompose && [^`]*maestro-route)`")]
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
