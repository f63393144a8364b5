"""A session's manifest: its mode and the capability vector derived from it.

Four modes form a 2x2: what the session does (work or coordinate) by whether it answers
to a coordinator. A mode's family has one strategy, which the manifest and the system
prompt name: ``simple`` for workers, ``default`` for coordinators.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from maestro.errors import MaestroError

MODES = ("worker", "coordinator", "coordinated-worker", "coordinated-coordinator")
STRATEGY = {"execute": "simple", "coordinate": "default"}
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


def _derive(mode: str, shell: bool) -> dict[str, bool]:
    coordinator = family(mode) == "coordinate"
    caps = {
        "can_spawn_sessions": coordinator,
        "can_edit_tasks": coordinator,
        "can_use_queue": False,  # no strategy hands a worker a queue
        "can_report_task_level": True,
        "can_report_session_level": True,
        "can_run_commands": True,
        # Setting Maestro up (install, config, doctor) is for sessions a person started.
        "can_configure": not mode.startswith("coordinated-"),
    }
    if not shell:
        # Without a shell no command can run: the session reports in its final answer.
        caps = dict.fromkeys(caps, False)
    return caps


@dataclass(frozen=True)
class SessionManifest:
    mode: str
    session_id: str | None = None
    coordinator_session_id: str | None = None
    run_id: str | None = None
    agent: str | None = None
    shell: bool = True  # may the session run commands at all
    capabilities: dict[str, bool] = field(init=False, compare=False)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise MaestroError(f"unknown mode {self.mode!r}.", f"use one of: {', '.join(MODES)}.")
        if family(self.mode) == "coordinate" and not self.shell:
            raise MaestroError(
                f"a {self.mode} needs to run commands, but this manifest has no shell.",
                "give the session shell access, or make it a worker.",
            )
        object.__setattr__(self, "capabilities", _derive(self.mode, self.shell))

    @property
    def strategy(self) -> str:
        return STRATEGY[family(self.mode)]
