"""`maestro notify test`: one test notification through each channel the person turned on
(a desktop notification, a webhook), and what happened on each."""

from __future__ import annotations

import argparse

from maestro import notify
from maestro.cli.context import Context, Result
from maestro.cli.verbs import verb_adder
from maestro.errors import ConfigError

EXAMPLES = """\
  MAESTRO_NOTIFY_DESKTOP=1 maestro notify test
  MAESTRO_NOTIFY_WEBHOOK=https://hooks.slack.com/services/... maestro notify test

During a run its engine sends each moment that waits for you (a worker's question or
blocker, a decision, a failed task, the run's token budget reached) once, through these
channels (docs/notify.md)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    verb_adder(parser)("test", "send one test notification through each channel", "")


def run(args: argparse.Namespace, ctx: Context) -> Result:
    settings = ctx.settings
    if not notify.channels(settings):
        raise ConfigError(
            "no notification channel is turned on.",
            "set MAESTRO_NOTIFY_DESKTOP=1 (also `notify_desktop = true` in .ai/maestro.toml) "
            "or MAESTRO_NOTIFY_WEBHOOK=<url> in your environment, then run this again.",
        )
    project = settings.paths.root.name
    notice = notify.Notice(
        f"maestro · {project}: a test notification",
        "This is how Maestro tells you that something waits for you.",
        {"id": "test", "kind": "test", "project": project},
    )
    sent = notify.send(notice, settings, ctx.env, set())
    lines = [
        f"{s.channel}: {s.detail}" + (f". Fix: {s.fix}." if s.fix and not s.ok else "")
        for s in sent
    ]
    data = {"channels": [s.__dict__ for s in sent]}
    return Result("notify", data, "\n".join(lines), 0 if all(s.ok for s in sent) else 1)
