"""A session's manifest: mode, strategy and the capability vector derived from them.

Four modes form a 2x2: what the session does (work or coordinate) by whether it answers
to a coordinator.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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
    capabilities: dict[str, bool] = field(init=False, compare=False)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise MaestroError(f"unknown mode {self.mode!r}.", f"use one of: {', '.join(MODES)}.")
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
