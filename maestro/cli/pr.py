"""`maestro pr status|watch|sync`: the pull request a `maestro run --pr` opened for this
plan (engine/pullrequest.py): its checks, following them (a failing one sent back to its
task as a revision), and its review comments sent to the tasks that own their files."""

from __future__ import annotations

import argparse
from typing import Any

from maestro.bus.mailbox import Mailbox
from maestro.bus.sessions import USER
from maestro.cli.context import Context, Result
from maestro.cli.verbs import verb_adder
from maestro.engine.pullrequest import (
    Delivery,
    following,
    latest,
    load_record,
    record_path,
    round_text,
)
from maestro.engine.rundir import RunLock
from maestro.errors import MaestroError
from maestro.forge import Comment, Forge
from maestro.repo import Repo
from maestro.review import engine_revise
from maestro.spokes.registry import resumption
from maestro.state.store import PlanStore

EXAMPLES = """\
  maestro pr status          the request, its checks and the CI rounds so far
  maestro pr watch           follow its checks: a failing one goes back to its task
  maestro pr sync            send new review comments to the tasks owning their files

A run opens the request with `maestro run --pr` (or the `pr` setting); each command here
works on the one recorded in .ai/maestro/pr.json (docs/pr.md)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    verb = verb_adder(parser)
    verb("status", "show the pull request, its checks and CI rounds", "")
    verb("watch", "follow its checks; failures go back to their tasks as revisions", "")
    verb("sync", "send new review comments to the tasks owning their files", "")


def _delivery(ctx: Context) -> Delivery:
    record = load_record(ctx.paths)
    if record is None:
        raise MaestroError(
            "no pull request is recorded for this project.",
            "open one with `maestro run --pr`.",
        )
    repo = Repo.find(ctx.paths.root)
    if repo is None:
        raise MaestroError(
            f"{ctx.paths.root} is not in a git repository any more, but {record_path(ctx.paths)} "
            "names a branch.",
            "run this from the project's repository.",
        )
    forge = Forge(repo.top, record.get("remote"), env=ctx.env)
    return Delivery(ctx.paths, repo, forge, record)


def run(args: argparse.Namespace, ctx: Context) -> Result:
    delivery = _delivery(ctx)
    record = delivery.record
    if args.verb == "status":
        pr = delivery.forge.find(delivery.branch)
        checks = latest(delivery.forge.checks(pr)) if pr else []
        lines = [
            f"{delivery.branch} -> {record.get('base')}: "
            + (
                f"pull request #{pr.number} ({pr.state.lower()}) {pr.url}"
                if pr
                else "no pull request open"
            )
        ]
        lines += [f"  {c.state:9} {c.name}" for c in checks]
        lines += [
            f"  CI round {n}: {round_text(rnd)}"
            for n, rnd in enumerate(record.get("rounds") or [], 1)
        ]
        if record.get("decision"):
            lines.append(f"  waits for you: {record['decision']['asked']}")
        data: dict[str, Any] = {
            **record,
            "checks": [c.__dict__ for c in checks],
            "pull_request": pr.__dict__ if pr else None,
        }
        return Result("pr", data, "\n".join(lines))
    holder = RunLock(ctx.paths).holder()
    if holder:
        raise MaestroError(
            f"run {holder.get('run_id', '')} is in progress: it follows its own pull request.",
            "wait for it to end (`maestro wait`), then run this again.",
        )
    with following(ctx.paths):
        return _follow(args, ctx, delivery)


def _follow(args: argparse.Namespace, ctx: Context, delivery: Delivery) -> Result:
    record = delivery.record
    settings, env = ctx.settings, dict(ctx.env)
    revise = engine_revise(ctx, pr=True)

    def resumable(task: Any) -> str | None:
        return resumption(task, settings, env)[0]

    if args.verb == "watch":
        line = delivery.follow(
            PlanStore(ctx.paths).load, revise, resumable, lambda *a, **k: None, settings
        )
        # As `maestro run --pr`: 3 while its checks wait for the person.
        waits = 3 if delivery.record.get("decision") else 0
        return Result("pr", dict(delivery.record), line, exit_code=waits)

    def mail(comment: Comment) -> None:
        where = (
            f" on {comment.path}" + (f":{comment.line}" if comment.line else "")
            if comment.path
            else ""
        )
        Mailbox(ctx.paths).send(
            f"pr-{record.get('number')}",
            [USER],
            type="notification",
            priority="normal",
            subject=f"review comment{where} from {comment.author}"[:120],
            body=f"{comment.body}\n\n{comment.url}",
        )

    to_tasks, mailed = delivery.sync(PlanStore(ctx.paths).load(), revise, resumable, mail)
    text = f"pull request #{record.get('number')}: {to_tasks} sent to tasks, {mailed} mailed to you"
    return Result("pr", {"sent": to_tasks, "mailed": mailed}, text)
