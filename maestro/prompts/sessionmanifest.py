"""A session's manifest: mode, strategy and the capability vector derived from them.

Four modes form a 2x2: what the session does (work or coordinate) by whether it answers
to a coordinator. The older two-mode names (``execute``/``coordinate``, or
``role=worker|orchestrator``) are still read, with a deprecation warning, and mapped to
the coordinated variant when the manifest names a coordinator session.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from maestro.errors import MaestroError

MODES = ("worker", "coordinator", "coordinated-worker", "coordinated-coordinator")
STRATEGIES = {
    "execute": ("simple", "queue", "tree"),
    "coordinate": ("default", "intelligent-batching", "dag"),
}
CAPABILITIES = (
    "can_spawn_sessions",
    "can_edit_tasks",
    "can_use_queue",
    "can_report_task_level",
    "can_report_session_level",
    "can_run_commands",
    "can_configure",
)
LEGACY_MODES = {"execute": "worker", "coordinate": "coordinator"}
LEGACY_ROLES = {"worker": "worker", "orchestrator": "coordinator"}
_KEY_ALIASES = {
    "coordinatorSessionId": "coordinator_session_id",
    "sessionId": "session_id",
    "runId": "run_id",
}
_FIELDS = (
    "mode",
    "strategy",
    "session_id",
    "coordinator_session_id",
    "run_id",
    "agent",
    "shell",
    "restrict",
)


class ManifestDeprecationWarning(DeprecationWarning):
    """A manifest used a name kept only for compatibility."""


def family(mode: str) -> str:
    return "coordinate" if mode.endswith("coordinator") else "execute"


def is_coordinated(mode: str) -> bool:
    return mode.startswith("coordinated-")


def strategies_for(mode: str) -> tuple[str, ...]:
    return STRATEGIES[family(mode)]


def _derive(mode: str, strategy: str, shell: bool, restrict: tuple[str, ...]) -> dict[str, bool]:
    coordinator = family(mode) == "coordinate"
    caps = {
        "can_spawn_sessions": coordinator,
        "can_edit_tasks": coordinator,
        "can_use_queue": not coordinator and strategy == "queue",
        "can_report_task_level": True,
        "can_report_session_level": True,
        "can_run_commands": True,
        # Setting Maestro up (install, config, doctor) is for sessions a person started.
        "can_configure": not is_coordinated(mode),
    }
    if not shell:
        # Without a shell no command can run: the session reports in its final answer.
        caps = dict.fromkeys(caps, False)
    for name in restrict:
        caps[name] = False
    return caps


@dataclass(frozen=True)
class SessionManifest:
    mode: str
    strategy: str | None = None
    session_id: str | None = None
    coordinator_session_id: str | None = None
    run_id: str | None = None
    agent: str | None = None
    shell: bool = True  # may the session run commands at all
    restrict: tuple[str, ...] = ()  # capabilities switched off beyond what the mode allows
    warnings: tuple[str, ...] = ()
    capabilities: dict[str, bool] = field(init=False, compare=False)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            hint = (
                " (a deprecated name: read manifests with load_manifest)"
                if self.mode in LEGACY_MODES
                else ""
            )
            raise MaestroError(
                f"unknown mode {self.mode!r}{hint}.", f"use one of: {', '.join(MODES)}."
            )
        allowed = strategies_for(self.mode)
        strategy = self.strategy or allowed[0]
        if strategy not in allowed:
            raise MaestroError(
                f"strategy {strategy!r} is not valid for mode {self.mode}.",
                f"use one of: {', '.join(allowed)}.",
            )
        object.__setattr__(self, "strategy", strategy)
        unknown = [name for name in self.restrict if name not in CAPABILITIES]
        if unknown:
            raise MaestroError(
                f"unknown capability {unknown[0]!r} in restrict.",
                f"use one of: {', '.join(CAPABILITIES)}.",
            )
        if family(self.mode) == "coordinate" and not self.shell:
            raise MaestroError(
                f"a {self.mode} needs to run commands, but this manifest has no shell.",
                "give the session shell access, or make it a worker.",
            )
        object.__setattr__(
            self, "capabilities", _derive(self.mode, strategy, self.shell, tuple(self.restrict))
        )


def _legacy(data: dict[str, Any]) -> tuple[str, list[str]]:
    """Map the two-mode names to the four modes; return the mode and what was deprecated."""
    notes = []
    mode = data.get("mode")
    role = data.pop("role", None)
    coordinated = bool(data.get("coordinator_session_id"))
    if role is not None:
        if role not in LEGACY_ROLES:
            raise MaestroError(f"unknown role {role!r}.", f"use mode, one of: {', '.join(MODES)}.")
        from_role = LEGACY_ROLES[role]
        if (
            mode is not None
            and LEGACY_MODES.get(mode, mode).removeprefix("coordinated-") != from_role
        ):
            raise MaestroError(
                f"role {role!r} contradicts mode {mode!r}.", "drop role and keep mode."
            )
        if mode is None:
            mode = from_role
            notes.append(f"role={role}")
    if mode in LEGACY_MODES:
        notes.append(f"mode={mode}")
        mode = LEGACY_MODES[mode]
    if notes and coordinated:
        mode = f"coordinated-{mode}"
    if mode is None:
        raise MaestroError("the manifest has no mode.", f"set mode to one of: {', '.join(MODES)}.")
    messages = [f"{old} is deprecated; use mode={mode}" for old in notes]
    return mode, messages


def load_manifest(data: Mapping[str, Any]) -> SessionManifest:
    """Build a manifest from plain data, accepting the deprecated names with a warning."""
    values = {_KEY_ALIASES.get(key, key): value for key, value in data.items()}
    messages = []
    if "orchestratorStrategy" in values:
        legacy_strategy = values.pop("orchestratorStrategy")
        values.setdefault("strategy", legacy_strategy)
        messages.append("orchestratorStrategy is deprecated; use strategy")
    mode, notes = _legacy(values)
    messages += notes
    values["mode"] = mode
    unknown = sorted(key for key in values if key not in _FIELDS)
    if unknown:
        raise MaestroError(
            f"unknown manifest key {unknown[0]!r}.",
            f"use: {', '.join(_FIELDS)}, or role (deprecated).",
        )
    values["restrict"] = tuple(values.get("restrict") or ())
    for message in messages:
        warnings.warn(message, ManifestDeprecationWarning, stacklevel=2)
    return SessionManifest(**values, warnings=tuple(messages))
