"""The delegation prompt: everything one spoke is told about one task.

Sections in the notes' order: base protocol, filesystem safety, the tool-restriction
and file-writing blocks (only when the spoke's CLI cannot enforce the agent's tier
itself), the context chain from completed dependencies, the task as a handoff
(Task, Context, Success Criteria, Constraints, Output Format), deliverables, validation,
prohibitions, and who consumes the output. The same inputs give the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from maestro.agents.catalog import ResolvedAgent, agent_name_for
from maestro.agents.tiers import can_shell, can_write
from maestro.prompts import protocols
from maestro.prompts.sessionmanifest import SessionManifest
from maestro.prompts.systemprompt import render_system_prompt
from maestro.prompts.templates import output_format
from maestro.state.model import task_sort_key

MISSING_CONTEXT = "Downstream Context missing from the plan. Verify this dependency's output yourself before building on it."


@dataclass(frozen=True)
class Delegation:
    system: str
    prompt: str


def spoke_manifest(
    agent: ResolvedAgent, session: Any = None, *, coordinating: bool = False
) -> SessionManifest:
    """A dispatched spoke is a coordinated worker of the run, or a coordinated coordinator
    for a task with ``Mode: coordinate`` (``coordinating``). With its ``session`` (a
    ``bus.sessions.Session`` it can reach from its shell) it uses the office's mail;
    without, it reports in its answer."""
    if session is None:
        coordinator = coordinating and can_shell(agent.tier)
        return SessionManifest(
            mode="coordinated-coordinator" if coordinator else "coordinated-worker",
            agent=agent.name,
            shell=can_shell(agent.tier),
        )
    return SessionManifest(
        mode=session.mode,
        agent=agent.name,
        shell=can_shell(agent.tier),
        session_id=session.id,
        coordinator_session_id=session.coordinator,
        run_id=session.data.get("run_id"),
    )


def _system(agent: ResolvedAgent, session: Any = None, *, coordinating: bool = False) -> str:
    persona = f"# Agent: {agent.name} ({agent.tier})\n\n{agent.agent.description}\n\n{agent.body.strip()}\n"
    directive = session.data.get("directive") if session is not None else None
    return (
        render_system_prompt(
            spoke_manifest(agent, session, coordinating=coordinating), directive=directive
        )
        + "\n"
        + persona
    )


def _indent(text: str) -> str:
    return "\n".join(("  " + line) if line.strip() else "" for line in text.strip().splitlines())


def context_chain(plan: Any, task: Any) -> str:
    lines = ["## Context from completed tasks"]
    if not task.depends:
        lines.append("None: this task depends on no other task.")
    for dep_id in sorted(task.depends, key=task_sort_key):
        dep = plan.find(dep_id)
        if dep is None:
            lines.append(
                f"- Task {dep_id}: not in the plan. Treat anything it was to provide as missing."
            )
        elif dep.status != "done":
            lines.append(
                f"- Task {dep.id} ({agent_name_for(dep)}): not completed (status: {dep.status}); its output is not available."
            )
        elif dep.downstream_context and dep.downstream_context.strip():
            lines.append(
                f"- Task {dep.id} ({agent_name_for(dep)}): {dep.title}\n{_indent(dep.downstream_context)}"
            )
        else:
            lines.append(f"- Task {dep.id} ({agent_name_for(dep)}): {MISSING_CONTEXT}")
    return "\n".join(lines)


def _absolute(root: Path, name: str) -> str:
    path = Path(name)
    return str(path if path.is_absolute() else root / path)


def _handoff(task: Any, agent: ResolvedAgent, root: Path) -> str:
    depends = ", ".join(f"Task {dep}" for dep in sorted(task.depends, key=task_sort_key)) or "none"
    context = [
        f"- Project root: {root}",
        f"- Agent: {agent.name} (tier {agent.tier})"
        + (f"; specialist: {task.specialist}" if task.specialist else ""),
        f"- Depends on: {depends}" + (" (their context is above)" if task.depends else ""),
    ]
    if task.risk:
        context.append(f"- Risk: {task.risk}")
    criteria = [f"- [ ] {c}" for c in task.criteria] or [
        "- [ ] The task as stated is done; say how you checked it."
    ]
    constraints = []
    if can_write(agent.tier):
        constraints.append(
            "- Change only the files under Deliverables. A change needed elsewhere goes under Issues, not into the file."
        )
    else:
        constraints.append("- You change no files: your findings are the deliverable.")
    constraints.append("- Follow the project's existing conventions (see the base protocol).")
    if task.risk == "high":
        constraints.append(
            "- High risk: make the smallest change that meets the criteria, and list anything you are unsure of under Assumptions."
        )
    return "\n\n".join(
        [
            f"## Task\nTask {task.id}: {task.title}",
            "## Context\n" + "\n".join(context),
            "## Success Criteria\n" + "\n".join(criteria),
            "## Constraints\n" + "\n".join(constraints),
            "## Output Format\n" + output_format(),
        ]
    )


def _deliverables(task: Any, agent: ResolvedAgent, root: Path) -> str:
    paths = [f"- {_absolute(root, name)}" for name in task.files]
    if not can_write(agent.tier):
        head = "Your deliverable is your final message: the Result Submission and the Downstream Context."
        if paths:
            return "## Deliverables\n" + head + "\nFiles in scope (read only):\n" + "\n".join(paths)
        return "## Deliverables\n" + head
    if not paths:
        return "## Deliverables\nNo files are assigned: do not create or change any file; report under Issues if one is needed."
    return "## Deliverables\nCreate or change exactly these files:\n" + "\n".join(paths)


def _validation(task: Any, agent: ResolvedAgent, root: Path) -> str:
    if not task.validation:
        return "## Validation\nNo validation command was given. Verify each criterion with the tools you have and say how under Verification."
    command = task.validation.strip()
    if can_shell(agent.tier):
        return (
            f"## Validation\nWhen you are done, run from {root}:\n\n    {command}\n\n"
            "Fix what fails and run it again. Put the final output under Validation Output."
        )
    return (
        f"## Validation\nAfter you finish, Maestro runs from {root}:\n\n    {command}\n\n"
        "You have no shell, so you cannot run it: check by reading that it will pass, and set Validation: skipped."
    )


def _prohibitions(agent: ResolvedAgent, office: bool) -> str:
    scope = (
        "- create, modify or delete any file other than the deliverables"
        if can_write(agent.tier)
        else "- create, modify or delete any file"
    )
    return "\n".join(
        [
            "## Prohibitions",
            "Do NOT:",
            "- ask questions in your answer: nobody reads them before you end. Ask your coordinator by mail "
            "(see your commands) and wait for the answer, or decide, and record the decision under Decisions Made"
            if office
            else "- ask follow-up questions: nobody will answer. Decide, and record the decision under Decisions Made",
            "- create git commits, branches or tags, or push: Maestro records the change",
            scope,
            "- run interactive commands (editors, pagers, prompts, REPLs, watch modes)",
            "- add dependencies the task does not ask for",
        ]
    )


def consumers(plan: Any, task: Any) -> str:
    dependents = sorted(
        (t for t in plan.tasks if task.id in t.depends), key=lambda t: task_sort_key(t.id)
    )
    if not dependents:
        return "Your output will be consumed by: the hub, which accepts the task from your Result Submission."
    names = ", ".join(f"{agent_name_for(t)} (Task {t.id})" for t in dependents)
    need = "needs" if len(dependents) == 1 else "need"
    return (
        f"Your output will be consumed by: {names}, who {need} the interfaces, patterns, "
        "integration points and warnings in your Downstream Context."
    )


def build_delegation(
    plan: Any,
    task: Any,
    agent: ResolvedAgent,
    *,
    project_root: Path,
    tool: str,
    enforced_by_cli: bool,
    extra_context: str | None = None,
    session: Any = None,
) -> Delegation:
    """``session``: the dispatch's session (``bus.sessions``), when the spoke can reach
    the office from its shell: its prompt then carries the session and the mail commands."""
    root = Path(project_root).absolute()
    sections = [
        protocols.filled("agent-base-protocol.md", tool),
        protocols.filled("filesystem-safety-protocol.md", tool),
    ]
    if not enforced_by_cli:
        sections += [
            protocols.tool_restrictions(agent.tier, agent.tools, tool),
            protocols.filled("file-writing-rules.md", tool),
        ]
    sections += [
        context_chain(plan, task),
        _handoff(task, agent, root),
        _deliverables(task, agent, root),
        _validation(task, agent, root),
    ]
    if extra_context and extra_context.strip():
        sections.append(
            "## Retry context (your previous attempt did not pass)\n"
            "Read this before anything else; it explains what failed last time.\n\n"
            "<<<RETRY CONTEXT\n" + extra_context.strip() + "\nRETRY CONTEXT>>>"
        )
    office = session is not None and can_shell(agent.tier)
    sections += [_prohibitions(agent, office), consumers(plan, task)]
    system = _system(agent, session, coordinating=task.mode == "coordinate")
    return Delegation(system=system, prompt="\n\n".join(sections) + "\n")
