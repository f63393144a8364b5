"""Human-facing output is inert: control characters from spokes, sessions and plan text
are shown escaped in every command's text output; JSON stays exact."""

from __future__ import annotations

import io
import json
import re

from maestro.engine.progress import LiveProgress

RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
TITLE = "hi \x1b]0;PWNED\x07\x1b[2J"
BODY = "x\x1b[31mred\x9b2J\ttab\nline two\rover"


def test_mail_escapes_terminal_codes_finding_4(project, cli):
    sent = cli("mail", "send", "--to", "user", "--subject", TITLE, "--message", BODY)
    assert sent.code == 0, sent.err
    for argv in (("mail", "inbox"), ("mail", "show", "m1"), ("mail", "thread", "m1")):
        out = cli(*argv).out
        assert not RAW.search(out), (argv, out)
        assert "hi \\x1b]0;PWNED\\x07\\x1b[2J" in out
        assert "x\\x1b[31mred\\x9b2J\ttab\n  line two\n  over" in out


def test_json_output_stays_exact_finding_4(project, cli):
    cli("mail", "send", "--to", "user", "--subject", TITLE, "--message", BODY)
    out = cli("mail", "show", "m1", "--json").out
    assert not RAW.search(out)  # C1 and DEL go out as \u escapes, like the C0 ones
    message = json.loads(out)["data"]["mail"]
    assert message["subject"] == TITLE and message["message"] == BODY


def test_a_subject_is_one_line_finding_4(project, cli):
    cli("mail", "send", "--to", "user", "--subject", "first\nm9 forged", "--message", "x")
    assert cli("mail", "inbox").out.splitlines()[0].endswith(": first m9 forged")


def test_error_lines_escape_terminal_codes_finding_4(project, cli):
    res = cli("plan", "--from", "plan\x1b[2J.yaml")
    assert res.code == 1 and "\x1b" not in res.err and "\\x1b[2J" in res.err


def test_live_view_keeps_its_cursor_codes_and_escapes_what_it_shows_finding_4(
    project, cli, monkeypatch
):
    monkeypatch.setenv("COLUMNS", "200")

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Terminal()
    view = LiveProgress(out, [("1", "Title \x1b[2J")], "R1")
    view.handle({"kind": "task_failed", "task": "1", "reason": "bad\x1b]0;PWNED\x07\nnext"})
    view.handle({"kind": "task_failed", "task": "1", "reason": "again"})
    drawn = out.getvalue()
    assert drawn.count("\x1b[2K") == 6 and drawn.count("\x1b[3F") == 1
    assert "Title \\x1b[2J" in drawn and "bad\\x1b]0;PWNED\\x07\\x0anext" in drawn
    assert not RAW.search(re.sub(r"\x1b\[(2K|3F)", "", drawn).replace("\n", ""))


def test_a_usage_error_escapes_what_it_quotes_finding_4(project, cli, capsys):
    res = cli("status", "extra\x1b]0;PWNED\x07")
    err = capsys.readouterr().err
    assert res.code == 1 and "\x1b" not in err and "extra\\x1b]0;PWNED\\x07" in err
