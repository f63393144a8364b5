"""`maestro challenge`: other vendors' CLIs challenge the plan before work starts.

The plan summary and a recon of the project go to one challenger (another vendor than the
plan's hub) or, with ``every``, to every other installed CLI at once. Challengers always
run read-only, enforced by each CLI's own flags (the spokes' "read-only" tier). Each answer
is parsed into the notes' four categories and recorded under ``## Challenges`` with its
challenger, time, tokens and cost; an answer that does not parse is kept verbatim and
flagged, never dropped.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from maestro import clock
from maestro.challenge.answer import ParsedChallenge, parse_challenge
from maestro.challenge.challengeprompt import SYSTEM, build_prompt
from maestro.challenge.recon import recon as project_recon
from maestro.challenge.vendors import choose
from maestro.engine.dispatch import Dispatch, command_log, log_row
from maestro.engine.keptstreams import recorded, stream_file
from maestro.engine.readonly import ReadOnlyWorktree
from maestro.engine.runcontext import CommandContext
from maestro.errors import MaestroError, PlanError
from maestro.fsutil import atomic_write
from maestro.spokes.registry import detect_available
from maestro.state.model import Challenge, Plan
from maestro.state.store import PlanStore
from maestro.tokens import count_tokens

if TYPE_CHECKING:
    from maestro.config import Settings
    from maestro.paths import ProjectPaths
    from maestro.spokes.contract import SpokeResult


@dataclass
class ChallengeAnswer:
    tool: str
    ok: bool
    result: SpokeResult | None = None  # None when the CLI could not be started
    parsed: ParsedChallenge | None = None
    challenge: Challenge | None = None  # as recorded in the plan
    error: str | None = None
    stream: Path | None = None  # its streamed lines (engine/keptstreams.py)


@dataclass
class ChallengeOutcome:
    hub: str | None
    answers: list[ChallengeAnswer] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    prompt_tokens: int = 0

    @property
    def ok(self) -> bool:
        return any(answer.ok for answer in self.answers)


def load_plan(paths: ProjectPaths) -> Plan:
    store = PlanStore(paths)
    if not store.exists():
        raise store.missing()
    return store.load()


def next_id(prefix: str, existing: list[str]) -> str:
    numbers = [
        int(i[len(prefix) :])
        for i in existing
        if i.startswith(prefix) and i[len(prefix) :].isdigit()
    ]
    return f"{prefix}{max(numbers, default=0) + 1}"


def _ask(tool: str, where: Path, prompt: str, ctx: CommandContext, goal: str) -> ChallengeAnswer:
    """One challenger's answer, asked in ``where`` as a session of its own (they run at once)."""
    settings = ctx.settings
    try:
        with Dispatch(
            settings.paths,
            ctx.env,
            cli=tool,
            kind="challenge",
            subject="Challenge the plan",
            message=goal,
        ) as dispatch:
            stream = stream_file(settings.paths, "challenges", dispatch.session.id, cli=tool)
            result = dispatch.ask(
                settings,
                stream=stream,
                prompt=prompt,
                system_prompt=SYSTEM,
                cwd=where,
                title="Challenge the plan",
                progress=ctx.emit,
            )
    except MaestroError as error:
        return ChallengeAnswer(tool, ok=False, error=str(error))
    if not result.success:
        return ChallengeAnswer(
            tool,
            ok=False,
            result=result,
            error=result.error or "the CLI reported a failure",
            stream=stream,
        )
    return ChallengeAnswer(tool, ok=True, result=result, stream=stream)


def run_challenge(
    ctx: CommandContext,
    *,
    tool: str | None = None,
    every: bool = False,
) -> ChallengeOutcome:
    settings = ctx.settings
    paths = settings.paths
    plan = load_plan(paths)
    if not plan.tasks:
        raise PlanError(
            "the plan has no tasks to challenge.", "add tasks with `maestro plan --from FILE`."
        )
    hub = plan.source.hub if plan.source else settings.hub
    choice = choose(hub, detect_available(ctx.env), role="challenger", tool=tool, every=every)
    prompt = build_prompt(plan, project_recon(paths.root, plan))
    outcome = ChallengeOutcome(
        hub=hub, notes=list(choice.notes), prompt_tokens=count_tokens(SYSTEM + prompt)
    )
    for name in choice.tools:
        ctx.emit(f"asking {name} to challenge the plan (read-only)...")

    def ask(name: str) -> ChallengeAnswer:
        # Each challenger reads a worktree of the project as it is now: what it writes
        # anyway stays there and goes with it.
        reader = ReadOnlyWorktree(paths, settings, f"challenge-{name}")
        with reader as where:
            answer = _ask(name, where or paths.root, prompt, ctx, plan.goal)
            outside = reader.outside()
        if outside:  # a challenger reads: one that wrote into the project is not heard
            return ChallengeAnswer(
                name,
                ok=False,
                result=answer.result,
                error=f"changed outside its worktree while it read, put back: {', '.join(outside)}",
            )
        return answer

    with ThreadPoolExecutor(max_workers=len(choice.tools)) as pool:
        answers = list(pool.map(ask, choice.tools))
    outcome.answers = answers
    _record(paths, answers)
    _log(settings, answers, plan.goal)
    _keep_detail(settings, prompt, answers)
    return outcome


def _record(paths: ProjectPaths, answers: list[ChallengeAnswer]) -> None:

    if not any(a.ok for a in answers):
        return
    with PlanStore(paths).edit() as plan:
        known = [task.id for task in plan.tasks]
        for answer in answers:
            result = answer.result
            if not answer.ok or result is None:  # an answer is ok only with its result
                continue
            parsed = parse_challenge(result.text, known)
            answer.parsed = parsed
            challenge = Challenge(
                id=next_id("C", [c.id for c in plan.challenges]),
                challenger=answer.tool,
                time=clock.iso(),
                parsed=parsed.parsed,
                findings=parsed.findings,
                usage=result.usage,
                cost=result.cost,
                cost_estimated=result.cost_estimated,
                raw=None if parsed.parsed else result.text,
            )
            plan.challenges.append(challenge)
            answer.challenge = challenge
    for answer in answers:
        if answer.challenge is not None and answer.stream is not None:
            recorded(answer.stream, answer.challenge.id)


def _log(settings: Settings, answers: list[ChallengeAnswer], goal: str) -> None:
    log = command_log(settings, goal)
    for answer in answers:
        if answer.ok and answer.parsed is not None:
            note = (
                f"{answer.parsed.count()} findings"
                if answer.parsed.parsed
                else "answer did not parse: kept verbatim"
            )
        else:
            note = answer.error or "failed"
        log_row(
            log,
            action="Challenge",
            target="challenge",
            tool=answer.tool,
            result=answer.result,
            ok=answer.ok,
            notes=f"{answer.challenge.id}: {note}" if answer.challenge else note,
        )


def _keep_detail(settings: Settings, prompt: str, answers: list[ChallengeAnswer]) -> None:
    """At log level detailed, the full prompt and answers go next to the runs."""
    if settings.log != "detailed":
        return

    folder = settings.paths.runs_dir / f"challenge-{clock.folder_stamp()}"
    atomic_write(folder / "prompt.md", f"# System\n\n{SYSTEM}\n\n# Prompt\n\n{prompt}")
    for answer in answers:
        text = answer.result.stdout if answer.result is not None else (answer.error or "")
        atomic_write(folder / f"{answer.tool}.output.txt", text)
