"""A lower layer never imports a higher one.

The layers are the list under "Layers" in docs/architecture.md; every import in
maestro/ (at the top of a module or inside a function: a lazy import is still a
dependency) is read with ast, so an import that goes up fails here.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from bench.structure import circles, module_imports, shared_names
from maestro.commands import COMMANDS

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "maestro"
LAYER = re.compile(r"^layer (\d+):\s+(.+?)\s*$")

# Imports that go up, each with why it is there and what would remove it: none today.
# Any upward import not listed fails; an entry here that the code no longer has fails too.
KNOWN: dict[tuple[str, str], str] = {}


def layers() -> dict[str, int]:
    """Top-level module or package of maestro -> its layer number (0 is the bottom)."""
    found: dict[str, int] = {}
    for line in (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8").splitlines():
        match = LAYER.match(line)
        if match:
            for name in match.group(2).split():
                found[name] = int(match.group(1))
    return found


def units() -> set[str]:
    """The top-level modules and packages of maestro (``__init__`` is the package's own)."""
    names = {p.stem for p in PACKAGE.glob("*.py")}
    names |= {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    return names


def unit_of(module: str) -> str:
    """``maestro.engine.run`` -> ``engine``; ``maestro`` itself -> ``__init__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imported_units(source: str) -> list[tuple[str, int]]:
    """(top-level unit, line) for every import of maestro in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [
                (unit_of(a.name), node.lineno)
                for a in node.names
                if a.name.split(".")[0] == "maestro"
            ]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "maestro":  # from maestro import graph, __version__
                found += [
                    (a.name if a.name in units() else "__init__", node.lineno) for a in node.names
                ]
            elif node.module.split(".")[0] == "maestro":
                found.append((unit_of(node.module), node.lineno))
    return found


def upward_imports(rel: str, source: str, levels: dict[str, int]) -> list[tuple[str, str, int]]:
    """(file, imported unit, line) for each import in ``rel`` of a higher layer."""
    parts = Path(rel).with_suffix("").parts
    own = parts[0]
    return [
        (rel, target, line)
        for target, line in imported_units(source)
        if target != own and levels.get(target, -1) > levels.get(own, -1)
    ]


def all_upward() -> list[tuple[str, str, int]]:
    levels = layers()
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        found += upward_imports(rel, path.read_text(encoding="utf-8"), levels)
    return found


def test_every_module_has_one_layer():
    levels = layers()
    assert units() - set(levels) == set(), "add it to the Layers list in docs/architecture.md"
    assert set(levels) - units() == set(), "a listed name that is no module of maestro"


def test_no_lower_layer_imports_a_higher_one():
    new = [
        f"maestro/{rel}:{line} imports maestro.{target}"
        for rel, target, line in all_upward()
        if (rel, target) not in KNOWN
    ]
    assert new == [], (
        "an import that goes up a layer (docs/architecture.md, Layers): move the code down"
    )


def test_every_known_exception_is_still_there():
    still = {(rel, target) for rel, target, _ in all_upward()}
    assert set(KNOWN) - still == set(), "gone from the code: drop it from KNOWN"


@pytest.mark.parametrize(
    "source",
    [
        "from maestro.cli import main\n",
        "import maestro.cli.context\n",
        "from maestro import cli\n",
        "def later():\n    from maestro.cli.render import render\n",
    ],
)
def test_an_added_upward_import_is_seen(source):
    assert upward_imports("state/store.py", source, layers()) == [
        ("state/store.py", "cli", source.count("\n"))
    ]


def test_imports_down_or_within_a_layer_pass():
    source = "from maestro import errors, __version__\nfrom maestro.state.model import Plan\nimport maestro.graph\n"
    assert upward_imports("state/store.py", source, layers()) == []


def test_no_modules_import_one_another():
    """Every import counts, type-only ones too: each is a dependency a reader follows
    (bench/structure.py prints the same figure for any revision)."""
    assert circles(module_imports(ROOT)) == []


def test_a_circle_is_seen():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_two_modules_share_a_name():
    """A name says which module it is: the one pair allowed is a command's module in
    cli/ (what `maestro <name>` runs) and the package or module that does its work."""
    commands = {spec.module.rsplit(".", 1)[1] for spec in COMMANDS}
    shared = shared_names(ROOT)
    assert {
        name: paths
        for name, paths in shared.items()
        if name not in commands or sum(not p.startswith("cli/") for p in paths) > 1
    } == {}


def test_a_shared_name_is_seen(tmp_path):
    for rel in ("maestro/one/wait.py", "maestro/two/wait.py", "maestro/two/run.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    assert shared_names(tmp_path) == {"wait": ["one/wait.py", "two/wait.py"]}
