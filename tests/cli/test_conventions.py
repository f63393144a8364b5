"""The terminal conventions of every command: did-you-mean for typos, `--json` on either
side of the command, an example in every verb's help."""

import json

import pytest

from maestro.cli import build_parser
from maestro.cli.tree import children, walk
from maestro.commands import COMMANDS


@pytest.mark.parametrize(
    "argv,suggestion",
    [
        (["stauts"], "did you mean 'status'?"),
        (["mail", "inbx"], "did you mean 'inbox'?"),
        (["agents", "lst"], "did you mean 'list'?"),
        (["run", "--dryrun"], "did you mean '--dry-run'?"),
        (["--jsn", "status"], "did you mean '--json'?"),
        (["mail", "inbox", "--unred"], "did you mean '--unread'?"),
        (["status", "--jsn=1"], "did you mean '--json'?"),
    ],
)
def test_a_typo_gets_one_line_naming_the_closest_word(cli, capsys, argv, suggestion):
    assert cli(*argv).code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and suggestion in err and "Traceback" not in err


def test_a_word_close_to_nothing_lists_the_choices(cli, capsys):
    assert cli("xyzzy").code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "did you mean" not in err and "'status'" in err


@pytest.mark.parametrize("argv", [["--json", "config"], ["config", "--json"]])
def test_json_is_accepted_before_and_after_the_command(cli, project, argv):
    res = cli(*argv)
    assert res.code == 0, res.err
    assert json.loads(res.out)["command"] == "config"


def test_json_before_a_verb_and_after_it(cli, project):
    for argv in (
        ["--json", "mail", "inbox"],
        ["mail", "--json", "inbox"],
        ["mail", "inbox", "--json"],
    ):
        res = cli(*argv)
        assert res.code == 0 and json.loads(res.out)["command"] == "mail", argv


def test_every_verb_has_an_example_in_its_help():
    parser = build_parser(*(spec.name for spec in COMMANDS))
    verbs = [node.path for node in walk(parser) if len(node.path) == 2]
    assert len(verbs) == 18
    for path in verbs:
        text = children(children(parser)[path[0]])[path[1]].format_help()
        assert "example:\n  maestro " + " ".join(path) in text, path


@pytest.mark.parametrize(
    "argv,header",
    [
        (["config"], ["SETTING", "SOURCE", "VALUE"]),
        (["skill"], ["SKILL", "TOKENS", "DESCRIPTION"]),
        (["agents", "list"], ["NAME", "TIER"]),
        (["agents", "permissions"], ["TIER", "AGENTS"]),
    ],
)
def test_a_table_opens_with_its_header(cli, project, argv, header):
    res = cli(*argv)
    assert res.code == 0, res.err
    heads = [line.split()[: len(header)] for line in res.out.splitlines()]
    assert header in heads
