"""The parser read as a tree: each command's and verb's flags, choices and sub-verbs.

Did-you-mean reads the flags of the command a typo was made in; `maestro completion`
writes every shell's script from the whole tree, so neither can drift from the parser.
argparse keeps a parser's arguments in ``_actions``: read here only.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Flag:
    names: tuple[str, ...]  # "-C", "--project"
    help: str
    takes_value: bool
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class Node:
    """One command line level: `maestro`, `maestro mail`, `maestro mail send`."""

    path: tuple[str, ...]
    summary: str
    flags: tuple[Flag, ...]
    words: tuple[str, ...]  # the choices of its first positional that has any
    children: tuple[tuple[str, str], ...]  # (verb, summary)


def children(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parsers of a parser's sub-commands, by name."""
    return {
        name: child
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
        for name, child in action.choices.items()
    }


def flags(parser: argparse.ArgumentParser) -> list[Flag]:
    return [
        Flag(
            tuple(action.option_strings),
            "" if action.help in (None, argparse.SUPPRESS) else str(action.help),
            action.nargs != 0,
            tuple(str(c) for c in action.choices or ()),
        )
        for action in parser._actions
        if action.option_strings
    ]


def walk(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = (), summary: str = ""
) -> Iterator[Node]:
    """Every level of the command line, the top first."""
    kids = children(parser)
    summaries = {
        choice.dest: str(choice.help or "")
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
        for choice in action._choices_actions
    }
    positional = [
        action.choices
        for action in parser._actions
        if not action.option_strings
        and action.choices
        and not isinstance(action, argparse._SubParsersAction)
    ]
    words = tuple(str(c) for c in positional[0]) if positional else ()
    yield Node(
        path,
        summary,
        tuple(flags(parser)),
        words,
        tuple((name, summaries.get(name, "")) for name in kids),
    )
    for name, child in kids.items():
        yield from walk(child, (*path, name), summaries.get(name, ""))


def closest(word: str, known: Iterable[str]) -> str | None:
    """The one known word a typo most likely meant, if any is close."""
    found = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return found[0] if found else None
