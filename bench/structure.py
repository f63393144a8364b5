"""The shape of the package at one git revision: the figures issue 10 is judged by.

1. Files and lines of Python per package of ``maestro/`` (``maestro`` itself: its
   top-level modules).
2. Modules that name a CLI: ``claude``, ``gemini`` or ``codex`` in an identifier (a name,
   attribute, argument, function, class or import: ``ClaudeSpoke`` counts) or in a string
   literal. Docstrings and comments are prose and do not count.
3. ``Any`` in ``maestro/engine``: the names ``Any`` in code (tokens, so prose that says
   "Any" does not count), and beside it the lines ``grep -w Any`` finds.
4. The ten most complex functions (cyclomatic complexity, radon's ``cc``; radon is a
   tool, not a dependency: ``pip install radon``; skipped, and said, without it).
5. Issue 22's figures: files over 500 lines; groups of modules that import one another
   (every import counts, type-only ones too); functions with an import inside them, and
   those imports; branches on which workspace a dispatch has (``worktree is None``,
   ``workspaces is not None`` ...) outside the workspace modules; modules that build a
   spoke's ``DispatchRequest``.

The revision is read from git (``git archive``) into a temporary folder; the work tree
is not touched, so any revision can be measured from any checkout.
Run: python bench/structure.py [REV] [--repo DIR] [--list]
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import sys
import tarfile
import tempfile
import tokenize
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from maestro.git import run_git  # the checkout's own package, found above

CLI_WORDS = ("claude", "gemini", "codex")
# In a string: the word standing alone between non-letters (".gemini/", "CLAUDE_CODE_X").
_IN_TEXT = re.compile(r"(?<![a-z])(?:" + "|".join(CLI_WORDS) + r")(?![a-z])", re.IGNORECASE)
# An identifier's words: snake_case parts and CamelCase humps.
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def checkout(repo: Path, rev: str, into: Path) -> str:
    """``maestro/`` of ``rev`` under ``into``; returns the revision's one-line description."""
    described = run_git("log", "-1", "--format=%h %s", rev, cwd=repo)
    if described.exit_code != 0:
        raise SystemExit(f"structure: no revision {rev!r} in {repo}: {described.stderr.strip()}")
    archive = into / "maestro.tar"
    made = run_git("archive", "--format=tar", "-o", str(archive), rev, "maestro", cwd=repo)
    if made.exit_code != 0:
        raise SystemExit(f"structure: git archive failed: {made.stderr.strip()}")
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return described.stdout.strip()


def modules(root: Path) -> list[Path]:
    return sorted((root / "maestro").rglob("*.py"))


def package_of(path: Path, root: Path) -> str:
    parts = path.relative_to(root / "maestro").parts
    return parts[0] if len(parts) > 1 else "maestro"


def files_and_lines(root: Path) -> dict[str, tuple[int, int]]:
    found: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for path in modules(root):
        entry = found[package_of(path, root)]
        entry[0] += 1
        entry[1] += len(path.read_text(encoding="utf-8").splitlines())
    return {name: (files, lines) for name, (files, lines) in sorted(found.items())}


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                found.add(id(body[0].value))
    return found


def _identifiers(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.alias):
        return [node.name, node.asname or ""]
    if isinstance(node, ast.keyword):
        return [node.arg or ""]
    return []


def names_a_cli(source: str) -> bool:
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    for node in ast.walk(tree):
        for name in _identifiers(node):
            if any(
                w.lower() in CLI_WORDS for part in name.split(".") for w in _WORDS.findall(part)
            ):
                return True
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and _IN_TEXT.search(node.value)
        ):
            return True
    return False


def cli_modules(root: Path) -> tuple[list[str], int]:
    paths = modules(root)
    naming = [
        path.relative_to(root).as_posix()
        for path in paths
        if names_a_cli(path.read_text(encoding="utf-8"))
    ]
    return naming, len(paths)


def any_in_engine(root: Path) -> tuple[int, int]:
    """(``Any`` names in code, lines with the word ``Any``) in maestro/engine."""
    names = lines = 0
    for path in sorted((root / "maestro" / "engine").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines += sum(1 for line in text.splitlines() if re.search(r"\bAny\b", line))
        names += sum(
            1
            for token in tokenize.generate_tokens(io.StringIO(text).readline)
            if token.type == tokenize.NAME and token.string == "Any"
        )
    return names, lines


def long_files(root: Path, limit: int = 500) -> list[tuple[int, str]]:
    found = []
    for path in modules(root):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > limit:
            found.append((lines, path.relative_to(root).as_posix()))
    return sorted(found, reverse=True)


def module_imports(root: Path) -> dict[str, set[str]]:
    """maestro's module -> the maestro modules it imports (at the top, inside a function
    or for types only: each is a dependency a reader has to follow)."""
    names = {}
    for path in modules(root):
        parts = path.relative_to(root).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path

    def known(name: str) -> str:
        while name and name not in names:
            name = name.rpartition(".")[0]
        return name

    graph: dict[str, set[str]] = {}
    for name, path in names.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {known(a.name) for a in node.names if a.name.startswith("maestro")}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join([*up, base] if base else up)
                if base.startswith("maestro"):
                    found |= {
                        f"{base}.{a.name}" if f"{base}.{a.name}" in names else known(base)
                        for a in node.names
                    }
        graph[name] = found - {name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import one another, directly or round about (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                other = stack.pop()
                group.append(other)
                if other == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def local_imports(root: Path) -> tuple[int, int]:
    """(functions with an import statement inside, those imports)."""
    functions = imports = 0
    for path in modules(root):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                inner = [
                    n
                    for n in ast.walk(node)
                    if isinstance(n, ast.Import | ast.ImportFrom) and n is not node
                ]
                # (a nested function's imports are counted with it, not its parent's)
                nested = {
                    id(i)
                    for f in ast.walk(node)
                    if f is not node and isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
                    for i in ast.walk(f)
                }
                own = [n for n in inner if id(n) not in nested]
                functions += bool(own)
                imports += len(own)
    return functions, imports


_WHICH_SPACE = re.compile(r"\b(?:worktree|workspaces|spaces) is (?:not )?None\b")
_SPACE_MODULES = {
    "engine/workspace.py",
    "engine/landing.py",
    "engine/readonly.py",
    "engine/worktree.py",
}


def workspace_branches(root: Path) -> int:
    return sum(
        len(_WHICH_SPACE.findall(path.read_text(encoding="utf-8")))
        for path in modules(root)
        if path.relative_to(root / "maestro").as_posix() not in _SPACE_MODULES
    )


def dispatch_builders(root: Path) -> list[str]:
    """Modules that build a spoke's request (``DispatchRequest(...)``)."""
    found = []
    for path in modules(root):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            func = getattr(node, "func", None)
            name = getattr(func, "id", None) or getattr(func, "attr", None)
            if isinstance(node, ast.Call) and name == "DispatchRequest":
                found.append(path.relative_to(root / "maestro").as_posix())
                break
    return found


def shared_names(root: Path) -> dict[str, list[str]]:
    """Module names (``waiting``, ``schema``) that more than one module has, with where."""
    where: dict[str, list[str]] = {}
    for path in modules(root):
        rel = path.relative_to(root / "maestro")
        name = rel.parent.name if rel.name == "__init__.py" else rel.stem
        if rel.as_posix() != "__init__.py":
            where.setdefault(name, []).append(rel.as_posix())
    return {name: sorted(paths) for name, paths in sorted(where.items()) if len(paths) > 1}


def most_complex(root: Path, count: int = 10) -> list[tuple[int, str, str]] | None:
    try:
        from radon.complexity import cc_visit
    except ImportError:
        return None
    found = []
    for path in modules(root):
        rel = path.relative_to(root / "maestro").as_posix()
        for block in cc_visit(path.read_text(encoding="utf-8")):
            if hasattr(block, "methods"):  # a class: its methods are listed on their own
                continue
            found.append((block.complexity, rel, block.fullname))
    return sorted(found, key=lambda f: (-f[0], f[1], f[2]))[:count]


def report(root: Path, described: str, listed: bool) -> str:
    out = [f"maestro/ at {described}", "", "files and lines of Python per package:"]
    sizes = files_and_lines(root)
    out.append(f"  {'package':<12} {'files':>5} {'lines':>7}")
    for name, (files, lines) in sizes.items():
        out.append(f"  {name:<12} {files:>5} {lines:>7}")
    total_files = sum(f for f, _ in sizes.values())
    total_lines = sum(n for _, n in sizes.values())
    out.append(f"  {'total':<12} {total_files:>5} {total_lines:>7}")
    naming, total = cli_modules(root)
    out += [
        "",
        f"modules that name a CLI (claude, gemini or codex in code): {len(naming)} of {total}",
    ]
    if listed:
        out += [f"  {name}" for name in naming]
    names, lines = any_in_engine(root)
    out += ["", f"Any in maestro/engine: {names} names in code ({lines} lines with the word)"]
    long = long_files(root)
    out += ["", f"files over 500 lines: {len(long)}"]
    out += [f"  {lines:>5}  {rel}" for lines, rel in long]
    found = circles(module_imports(root))
    out += ["", f"groups of modules that import one another: {len(found)}"]
    out += [f"  {' <-> '.join(group)}" for group in found]
    functions, imports = local_imports(root)
    out += ["", f"functions with an import inside: {functions} ({imports} imports)"]
    branches = workspace_branches(root)
    out += ["", f"branches on which workspace a dispatch has, outside its modules: {branches}"]
    builders = dispatch_builders(root)
    out += ["", f"modules that build a spoke's DispatchRequest: {len(builders)}"]
    out += [f"  {rel}" for rel in builders]
    shared = shared_names(root)
    out += ["", f"module names that more than one module has: {len(shared)}"]
    out += [f"  {name}: {', '.join(paths)}" for name, paths in shared.items()]
    complex_ = most_complex(root)
    if complex_ is None:
        out += ["", "complexity: radon is not installed (`pip install radon` measures it)"]
    else:
        out += ["", "the ten most complex functions (cyclomatic complexity):"]
        out += [f"  {cc:>3}  {rel}  {name}" for cc, rel, name in complex_]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev", nargs="?", default="HEAD", help="the git revision (HEAD)")
    parser.add_argument("--repo", type=Path, default=Path.cwd(), help="the repository (here)")
    parser.add_argument("--list", action="store_true", help="list the modules that name a CLI")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="maestro-structure-") as folder:
        root = Path(folder)
        described = checkout(args.repo.resolve(), args.rev, root)
        print(report(root, described, args.list))
    return 0


if __name__ == "__main__":
    sys.exit(main())
