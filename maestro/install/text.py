"""Turning a canonical body into one host's text (see ``sources`` for the notation)."""

from __future__ import annotations

import re

from maestro.commands import COMMANDS
from maestro.install.sources import VERBS

_HOST_TAG = re.compile(r"^\[([a-z]+(?:,[a-z]+)*)\] ")
_VERB_REF = re.compile(r"/maestro:(" + "|".join(VERBS) + r")\b")
# `maestro <subcommand>` as a command, not `$maestro`, `/maestro:`, `.ai/maestro/` or
# `maestro-recover`.
_CALL = re.compile(r"(?<![\w$/.:@-])maestro(?= (?:" + "|".join(c.name for c in COMMANDS) + r")\b)")
_STATE = re.compile(r"(?<![\w./-])\.ai/")


def for_host(body: str, host: str) -> str:
    """Keep untagged lines, and tagged lines (without their tag) that name ``host``."""
    kept = []
    for line in body.splitlines(keepends=True):
        tag = _HOST_TAG.match(line)
        if tag is None:
            kept.append(line)
        elif host in tag.group(1).split(","):
            kept.append(line[tag.end() :])
    return "".join(kept)


def verb_refs(text: str, template: str) -> str:
    """``/maestro:<verb>`` -> the host's syntax, ``template`` holding ``{verb}``."""
    return _VERB_REF.sub(lambda m: template.format(verb=m.group(1)), text)


def pin_invocation(text: str, invocation: str) -> str:
    """Every ``maestro <subcommand>`` runs ``invocation`` instead of whatever ``maestro``
    the host's PATH happens to find."""
    return _CALL.sub(lambda _m: invocation, text)


def state_dir(text: str, folder: str) -> str:
    return text if folder == ".ai" else _STATE.sub(lambda _m: folder.rstrip("/") + "/", text)


def render_body(
    body: str, *, host: str, verb_template: str, arguments: str, invocation: str, state: str = ".ai"
) -> str:
    text = for_host(body, host)
    text = verb_refs(text, verb_template)
    text = text.replace("$ARGUMENTS", arguments).replace("$HUB", host)
    text = state_dir(text, state)
    return pin_invocation(text, invocation)
