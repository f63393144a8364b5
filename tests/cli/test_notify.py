"""`maestro notify test` and the two settings that turn notifications on."""

from __future__ import annotations

import json

import pytest

from tests.notifykit import calls


def test_with_no_channel_it_says_how_to_turn_one_on(cli, project):
    done = cli("notify", "test")
    assert done.code == 1
    assert done.err.count("\n") == 1 and "no notification channel is turned on" in done.err
    assert "MAESTRO_NOTIFY_DESKTOP=1" in done.err and "MAESTRO_NOTIFY_WEBHOOK" in done.err


def test_each_channel_gets_one_test_and_says_so(cli, project, receiver, desktop, monkeypatch):
    monkeypatch.setenv("MAESTRO_NOTIFY_WEBHOOK", receiver.url)
    monkeypatch.setenv("MAESTRO_NOTIFY_DESKTOP", "on")
    done = cli("notify", "test")
    assert done.code == 0, done.out + done.err
    lines = done.out.splitlines()
    assert lines[0] == "desktop: shown (notify-send)"
    assert lines[1].startswith("webhook http://127.0.0.1:") and lines[1].endswith(
        "/…: sent (HTTP 200)"
    )
    assert "SECRET" not in done.out
    (body,) = receiver.bodies
    assert (
        body["text"]
        == body["content"]
        == (
            "maestro · proj: a test notification\n"
            "This is how Maestro tells you that something waits for you."
        )
    )
    assert (body["kind"], body["project"]) == ("test", "proj")
    assert [args[1] for args in calls(desktop)] == ["maestro · proj: a test notification"]


def test_a_channel_that_fails_exits_1_with_its_fix(cli, project, receiver, monkeypatch):
    receiver.status = 404
    monkeypatch.setenv("MAESTRO_NOTIFY_WEBHOOK", receiver.url)
    monkeypatch.setenv("MAESTRO_NOTIFY_DESKTOP", "1")  # no notify-send on this PATH
    done = cli("notify", "test", "--json")
    assert done.code == 1
    sent = {c["channel"].split()[0]: c for c in json.loads(done.out)["data"]["channels"]}
    assert (
        sent["desktop"]["detail"] == "no notify-send on PATH"
        and "libnotify" in sent["desktop"]["fix"]
    )
    assert sent["webhook"]["detail"] == "answered HTTP 404 Not Found"
    text = cli("notify", "test")
    assert "answered HTTP 404 Not Found. Fix: check the URL." in text.out


def test_an_unreachable_webhook_says_why(cli, project, monkeypatch):
    monkeypatch.setenv("MAESTRO_NOTIFY_WEBHOOK", "http://nosuch.invalid/hook")
    done = cli("notify", "test")
    assert done.code == 1 and "no such host" in done.out and "Fix: check the URL's host" in done.out


def test_config_shows_both_settings_and_withholds_the_webhooks_path(cli, project, monkeypatch):
    monkeypatch.setenv("MAESTRO_NOTIFY_WEBHOOK", "https://hooks.slack.com/services/T0/B0/SECRET")
    (project / ".ai").mkdir()
    (project / ".ai" / "maestro.toml").write_text("notify_desktop = true\n")
    done = cli("config")
    assert done.code == 0, done.err
    rows = {line.split()[0]: line.split()[1:] for line in done.out.splitlines() if line.strip()}
    assert rows["MAESTRO_NOTIFY_DESKTOP"] == [".ai/maestro.toml", "True"]
    assert rows["MAESTRO_NOTIFY_WEBHOOK"] == ["environment", "https://hooks.slack.com/…"]
    assert "SECRET" not in cli("config", "--json").out


@pytest.mark.parametrize(
    ("file", "text"),
    [
        (".ai/maestro.toml", 'notify_webhook = "https://attacker.example/collect"\n'),
        (".env", "MAESTRO_NOTIFY_WEBHOOK=https://attacker.example/collect\n"),
    ],
)
def test_a_projects_own_files_cannot_choose_where_its_questions_go(cli, project, file, text):
    (project / file).parent.mkdir(exist_ok=True)
    (project / file).write_text(text)
    done = cli("config")
    assert done.code == 1
    assert "notify_webhook cannot be set in" in done.err and "questions are sent" in done.err
    assert "set MAESTRO_NOTIFY_WEBHOOK in your environment" in done.err


def test_a_webhook_is_an_http_url(cli, project, monkeypatch):
    monkeypatch.setenv("MAESTRO_NOTIFY_WEBHOOK", "file:///etc/passwd")
    done = cli("config")
    assert done.code == 1 and "an http:// or https:// URL" in done.err
