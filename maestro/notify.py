"""Telling the person, away from the board, that something waits for them: a desktop
notification and a webhook, the channels the person turned on (``notify_desktop``,
``notify_webhook``).

A notice holds only what Maestro wrote about a moment (its kind, the task's id and
title, what is asked, cut short, and the command that answers it): never a transcript,
never a setting's value. The webhook's body is JSON that Slack's incoming webhooks
(``text``), Discord's (``content``) and ntfy (any body; ``?tpl=1&t={{.title}}&m={{.text}}``
on its URL shows the two fields) all take, with the same facts as fields of their own.
Each send is bounded (``TIMEOUT_S``) and says what happened; none raises.
"""

from __future__ import annotations

import http.client
import json
import socket
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any

from maestro import __version__
from maestro.config import Settings
from maestro.errors import SpokeError
from maestro.formatting import shown_url
from maestro.process import ExecutableNotFound, resolve, run_process

FORMAT_VERSION = 1
TIMEOUT_S = 5.0
TEXT_LIMIT = 1900  # Discord refuses a content over 2,000 characters
# Slack reads <!channel>, <@U123> and <https://...|...> in a text as mentions and links: a
# worker's words must not ping a channel (Discord's pings are off: ``allowed_mentions``).
_SLACK_MARKUP = str.maketrans({"<": "‹", ">": "›"})


@dataclass(frozen=True)
class Notice:
    title: str  # one line: who waits, for what
    text: str  # what is asked and the command that answers it
    fields: dict[str, Any] = field(default_factory=dict)  # the same, as data


@dataclass(frozen=True)
class Sent:
    channel: str  # desktop | webhook
    ok: bool
    detail: str  # what happened, in a few words
    fix: str | None = None
    absent: bool = False  # the system has no such channel (no notify-send): not an error


def channels(settings: Settings) -> list[str]:
    """The channels the person turned on."""
    return [
        name
        for name, on in (("desktop", settings.notify_desktop), ("webhook", settings.notify_webhook))
        if on
    ]


def send(notice: Notice, settings: Settings, env: dict[str, str], skip: set[str]) -> list[Sent]:
    """``notice`` through every channel turned on but those in ``skip``, one after the
    other; what happened on each."""
    done = []
    for name in channels(settings):
        if name in skip:
            continue
        if name == "desktop":
            done.append(desktop(notice, env))
        elif settings.notify_webhook:
            done.append(webhook(settings.notify_webhook, notice))
    return done


# -- the desktop ---------------------------------------------------------------------------


def _desktop_argv(notice: Notice) -> list[str]:
    if sys.platform == "darwin":
        # The texts are arguments of the script, never part of it: nothing in them runs.
        script = "on run argv\ndisplay notification (item 2 of argv) with title (item 1 of argv)\nend run"
        return ["osascript", "-e", script, notice.title, notice.text]
    return ["notify-send", "--app-name=maestro", notice.title, notice.text]


def desktop(notice: Notice, env: dict[str, str]) -> Sent:
    argv = _desktop_argv(notice)
    try:
        argv[0] = resolve(argv[0], env)
    except ExecutableNotFound:
        fix = (
            "install libnotify-bin (Debian, Ubuntu) or libnotify (Fedora, Arch) for notify-send"
            if argv[0] == "notify-send"
            else f"put {argv[0]} on PATH"
        )
        return Sent("desktop", False, f"no {argv[0]} on PATH", fix, absent=True)
    try:
        done = run_process(argv, cwd="/", env=env, timeout_s=TIMEOUT_S)
    except (OSError, SpokeError) as exc:
        return Sent("desktop", False, f"{argv[0]} did not start: {exc}", "check that it runs")
    if done.timed_out:
        return Sent("desktop", False, f"{argv[0]} gave no answer within {TIMEOUT_S:g} s")
    if done.exit_code != 0:
        said = " ".join(done.stderr.split())[:200] or f"exit {done.exit_code}"
        return Sent("desktop", False, f"{argv[0]} failed: {said}", "run it once in your session")
    return Sent("desktop", True, f"shown ({argv[0].rsplit('/', 1)[-1]})")


# -- the webhook -----------------------------------------------------------------------------


def body(notice: Notice) -> bytes:
    """The JSON a webhook receives: ``text`` (Slack), ``content`` (Discord), ``title``, and
    the moment's fields."""
    text = f"{notice.title}\n{notice.text}"
    text = (text if len(text) <= TEXT_LIMIT else text[: TEXT_LIMIT - 1] + "…").translate(
        _SLACK_MARKUP
    )
    data = {
        "text": text,
        "content": text,
        "allowed_mentions": {"parse": []},
        "title": notice.title,
        "maestro": FORMAT_VERSION,
        **notice.fields,
    }
    return json.dumps(data, ensure_ascii=False).encode("utf-8")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # a redirected POST would go on as a GET without its body: say so


def webhook(url: str, notice: Notice) -> Sent:
    where = f"webhook {shown_url(url)}"
    request = urllib.request.Request(
        url,
        data=body(notice),
        headers={"Content-Type": "application/json", "User-Agent": f"maestro/{__version__}"},
        method="POST",
    )
    try:
        with urllib.request.build_opener(_NoRedirect).open(request, timeout=TIMEOUT_S) as answer:
            return Sent(where, True, f"sent (HTTP {answer.status})")
    except urllib.error.HTTPError as exc:
        return Sent(where, False, f"answered HTTP {exc.code} {exc.reason}", "check the URL")
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, socket.gaierror):
            return Sent(where, False, f"no such host ({reason.strerror})", "check the URL's host")
        if isinstance(reason, TimeoutError):
            return Sent(where, False, f"no answer within {TIMEOUT_S:g} s")
        return Sent(where, False, f"unreachable: {reason}", "check the URL and the network")
    except TimeoutError:
        return Sent(where, False, f"no answer within {TIMEOUT_S:g} s")
    except (OSError, http.client.HTTPException, ValueError) as exc:
        return Sent(where, False, f"failed: {exc}", "check the URL and the network")
