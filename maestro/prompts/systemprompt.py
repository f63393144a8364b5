"""The XML prompt contract: one renderer for every CLI.

``render_system_prompt`` gives a dispatched spoke's session (a coordinated mode) its
identity, capabilities, workflow and the commands it may run (the work itself is the
delegation, ``prompts.delegation``). The XML is structured text for the model, not a
runtime format, but it is always well-formed: every value is escaped, so a directive can
hold ``<``, ``&`` and quotes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from maestro import commands as registry
from maestro.prompts.sessionmanifest import CAPABILITIES, SessionManifest
from maestro.prompts.workflows import IDENTITY, phases

VERSION = "3.0"
# Characters XML 1.0 cannot carry even escaped (control codes other than tab/newline/CR).
_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(value: Any) -> str:
    return _ILLEGAL.sub("\ufffd", str(value))


def _attrs(values: dict[str, Any]) -> str:
    return "".join(
        f" {key}={quoteattr(_clean(value))}" for key, value in values.items() if value is not None
    )


def _leaf(indent: int, tag: str, text: str | None = None, **attrs: Any) -> str:
    pad = "  " * indent
    if text is None:
        return f"{pad}<{tag}{_attrs(attrs)} />"
    return f"{pad}<{tag}{_attrs(attrs)}>{escape(_clean(text))}</{tag}>"


def _open(manifest: SessionManifest, tag: str) -> str:
    return f"<{tag}{_attrs({'mode': manifest.mode, 'strategy': manifest.strategy, 'version': VERSION})}>"


def enabled_commands(manifest: SessionManifest) -> list[Any]:
    """The registry's commands this session may run: its capability must be enabled
    (a command without one needs only the ability to run commands), the office's only
    for a session that has one, and the hub's own (``hub_only``: plan, run, ...) never:
    the session is a spoke Maestro dispatched."""
    caps = manifest.capabilities
    office = has_office(manifest)
    return [
        spec
        for spec in registry.COMMANDS
        if caps.get(spec.capability or "can_run_commands", False)
        and (office or spec.group != "office")
        and not getattr(spec, "hub_only", False)
    ]


def has_office(manifest: SessionManifest) -> bool:
    """The mail, session and task-report commands need an addressable session (its id
    is what they send as) and a shell to type them in."""
    return manifest.session_id is not None and manifest.capabilities["can_run_commands"]


def _session_lines(manifest: SessionManifest, directive: Mapping[str, str] | None) -> list[str]:
    """Who the session is and who it answers to: the ids its mail commands use."""
    facts = {
        "session_id": manifest.session_id,
        "mode": manifest.mode,
        "coordinator_session_id": manifest.coordinator_session_id,
        "run_id": manifest.run_id,
    }
    lines = ["  <session_context>"]
    lines += [_leaf(2, key, value) for key, value in facts.items() if value is not None]
    lines.append("  </session_context>")
    if directive and directive.get("message"):
        attrs = {"from": directive.get("from"), "subject": directive.get("subject")}
        lines.append(
            f"  <coordinator_directive{_attrs(attrs)}>{escape(_clean(directive['message']))}</coordinator_directive>"
        )
    return lines


def render_system_prompt(
    manifest: SessionManifest, *, directive: Mapping[str, str] | None = None
) -> str:
    """``directive``: the session's initial directive (subject, message, from), as its
    manifest under ``.ai/maestro/sessions/`` records it."""
    lines = [_open(manifest, "maestro_system_prompt"), "  <identity>"]
    lines.append(_leaf(2, "profile", manifest.mode))
    if manifest.agent:
        lines.append(_leaf(2, "agent", manifest.agent))
    lines += [_leaf(2, "instruction", IDENTITY[manifest.mode]), "  </identity>"]
    lines += _session_lines(manifest, directive)
    lines.append("  <capabilities>")
    for name in CAPABILITIES:
        lines.append(
            _leaf(2, "capability", name=name, enabled=str(manifest.capabilities[name]).lower())
        )
    lines += ["  </capabilities>", "  <workflow>"]
    for name, text in phases(manifest.mode, office=has_office(manifest)):
        lines.append(_leaf(2, "phase", text, name=name))
    lines.append("  </workflow>")
    shown = enabled_commands(manifest)
    if shown:
        lines.append("  <commands>")
        groups: dict[str, list[Any]] = {}
        for spec in shown:
            groups.setdefault(spec.group, []).append(spec)
        for group, specs in groups.items():
            lines.append(f"    <group{_attrs({'name': group})}>")
            for spec in specs:
                syntax = spec.syntax_for(manifest.mode)
                lines.append(
                    _leaf(3, "command", name=spec.name, syntax=syntax, description=spec.summary)
                )
            lines.append("    </group>")
        lines.append("  </commands>")
    else:
        lines.append(_leaf(1, "commands", "none: report through your final answer"))
    lines.append("</maestro_system_prompt>")
    return "\n".join(lines) + "\n"
