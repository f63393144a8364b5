"""The one way Maestro runs git: the same answer whatever the calling environment injects.

Maestro often runs inside a host CLI's shell tool, and those inject git configuration
through the environment: Gemini CLI sets ``GIT_CONFIG_COUNT`` / ``GIT_CONFIG_KEY_n`` /
``GIT_CONFIG_VALUE_n`` (an empty ``diff.external`` among them, which makes every patch
fail with "cannot run : No such file or directory"), ``GIT_CONFIG_GLOBAL=/dev/null`` and
a pager; a user's shell may set ``GIT_EXTERNAL_DIFF`` or ``color.ui=always``; a git hook
that runs Maestro passes ``GIT_DIR`` and ``GIT_INDEX_FILE``. None of that is the
repository's own configuration, so :func:`clean_env` drops it, and :func:`run_git` adds
the switches that keep git's output machine-readable (no pager, no colour, no external
diff, no textconv), and none of what a repository can be set to run on its own: no
fsmonitor, no hooks (but for a ``--commit``, made as the user). The repository's own
settings (``.git/config``, attributes, the user's real global config) still apply.

Spokes get :func:`clean_env` too: the git they run should see the user's configuration,
not the one the hub's shell tool put in front of it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from maestro.errors import MaestroError
from maestro.process import run_process

if TYPE_CHECKING:  # process.py is imported where it runs, as before
    from maestro.process import ProcessOutcome

GIT_TIMEOUT_S = 120.0
# Set by whoever called us, never by the repository: configuration given as if on the
# command line, and the variables that point git at another repository or index.
_INJECTED = frozenset(
    {
        "GIT_CONFIG",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_COUNT",
        "GIT_EXTERNAL_DIFF",
        "GIT_DIFF_OPTS",
        "GIT_PAGER",
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_COMMON_DIR",
        "GIT_PREFIX",
        "GIT_NAMESPACE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    }
)
_INJECTED_PREFIXES = ("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_")
# A config file pointed at the null device hides the user's own settings (Gemini CLI does
# this to every shell command); a real path is the user's choice and stays.
_HIDING = ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM")
# Flags that make a diff's text independent of pager, colour, external tools and textconv.
_DIFF_FLAGS = ("--no-color", "--no-ext-diff", "--no-textconv")
_DIFF_COMMANDS = frozenset({"diff", "diff-tree", "diff-index", "diff-files", "show", "log"})


def clean_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's) without the git settings a caller injected."""
    source = dict(os.environ if env is None else env)
    cleaned = {
        k: v
        for k, v in source.items()
        if k not in _INJECTED and not k.startswith(_INJECTED_PREFIXES)
    }
    for key in _HIDING:
        if cleaned.get(key) == os.devnull:
            del cleaned[key]
    if "GIT_CONFIG_SYSTEM" not in cleaned and source.get("GIT_CONFIG_SYSTEM") == os.devnull:
        cleaned.pop("GIT_CONFIG_NOSYSTEM", None)  # set together with the null system file
    return cleaned


def git_argv(*args: str, hooks: bool = False, config: Sequence[str] = ()) -> list[str]:
    """``git`` with ``args``, plus the switches that keep its output plain and run
    nothing the repository configures to run on its own: no fsmonitor, and no hooks
    unless ``hooks`` (a commit made as the user: their hooks); ``config``: more ``-c``
    settings (``unfiltered``'s)."""
    argv = ["git", "--no-pager", "-c", "color.ui=never", "-c", "core.fsmonitor=false"]
    if not hooks:
        argv += ["-c", f"core.hooksPath={os.devnull}"]
    for setting in config:
        argv += ["-c", setting]
    argv += args
    if args and args[0] in _DIFF_COMMANDS:
        argv[argv.index(args[0]) + 1 : argv.index(args[0]) + 1] = list(_DIFF_FLAGS)
    return argv


def run_git(
    *args: str,
    cwd: Path | str,
    env: Mapping[str, str] | None = None,
    extra_env: Mapping[str, str] | None = None,
    timeout_s: float = GIT_TIMEOUT_S,
    hooks: bool = False,
    config: Sequence[str] = (),
) -> ProcessOutcome:
    """Run git through the one process runner; returns its ``ProcessOutcome``.

    ``env`` is the caller's environment (default: this process's); ``extra_env`` is what
    Maestro itself sets for this call (a private index, say), applied after cleaning;
    ``config``: ``-c`` settings for this call (``unfiltered``'s).
    """

    full = clean_env(env)
    full.setdefault("GIT_OPTIONAL_LOCKS", "0")  # never contend with the user's own git
    full.update(extra_env or {})
    argv = git_argv(*args, hooks=hooks, config=config)
    return run_process(argv, cwd=cwd, env=full, timeout_s=timeout_s)


_FILTER_KEY = re.compile(r"filter\.(.+)\.(?:clean|smudge|process|required)")


def unfiltered(cwd: Path | str, env: Mapping[str, str] | None = None) -> list[str]:
    """``-c`` settings that switch off every filter driver the configuration seen from
    ``cwd`` defines (``clean``, ``smudge`` and ``process`` empty, not ``required``): for
    git reading a tree a spoke wrote, whose ``.gitattributes`` may name any driver the
    person configured (git-lfs's, a script's) for any file. A spoke's files are then
    read as their bytes."""
    out = run_git("config", "--name-only", "--get-regexp", r"^filter\.", cwd=cwd, env=env)
    names = dict.fromkeys(
        found.group(1)
        for line in out.stdout.splitlines()
        if (found := _FILTER_KEY.fullmatch(line.strip())) is not None
    )
    return [
        f"filter.{name}.{key}"
        for name in names
        for key in ("clean=", "smudge=", "process=", "required=false")
    ]


class GitError(MaestroError):
    """A git command Maestro needs failed."""
