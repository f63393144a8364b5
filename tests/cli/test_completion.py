"""`maestro completion bash|zsh|fish`: each script is valid in its shell and completes
commands, verbs, flags and choices as the parser has them."""

import shutil
import subprocess

import pytest

from maestro.commands import COMMANDS

# (words typed, the word being completed) -> what must be offered
CASES = [
    (["maestro", "st"], {"status"}),
    (["maestro", "mail", ""], {"send", "reply", "inbox", "wait"}),
    (["maestro", "mail", "send", "--to"], {"--to", "--to-coordinator", "--to-siblings"}),
    (["maestro", "-C", "mail", "st"], {"status"}),  # -C's value is passed over, not a verb
    (["maestro", "run", "--tool", ""], {"claude", "gemini", "codex", "sim"}),
    (["maestro", "run", "--tool", "codex", "--d"], {"--detach", "--dry-run"}),
    (["maestro", "agents", ""], {"list", "show", "validate", "permissions"}),
    (["maestro", "completion", ""], {"bash", "zsh", "fish"}),
]


def script(cli, shell, tmp_path):
    res = cli("completion", shell)
    assert res.code == 0, res.err
    for spec in COMMANDS:
        assert spec.name in res.out
    path = tmp_path / f"maestro.{shell}"
    path.write_text(res.out, encoding="utf-8")
    return path


def offered(shell, path, words):
    if shell == "bash":
        probe = (
            f"source {path}; COMP_WORDS=({' '.join(repr(w) for w in words)}); "
            f"COMP_CWORD={len(words) - 1}; _maestro; printf '%s\\n' \"${{COMPREPLY[@]}}\""
        )
        argv = ["bash", "-c", probe]
    elif shell == "zsh":
        probe = (
            "compdef() { :; }; compadd() { shift; print -l -- $@; }; _files() { :; }; "
            "_describe() { print -l -- ${${(P)4}%%:*}; }; "
            f"source {path}; words=({' '.join(repr(w) for w in words)}); CURRENT={len(words)}; "
            "_maestro"
        )
        argv = ["zsh", "-f", "-c", probe]
    else:
        line = " ".join(words)
        argv = ["fish", "--no-config", "-c", f"source {path}; complete -C{line!r} | cut -f1"]
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=30)
    assert done.returncode == 0, done.stderr
    return {w for w in done.stdout.split("\n") if w}


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_the_script_is_valid_and_completes_from_the_parser(cli, tmp_path, shell):
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    path = script(cli, shell, tmp_path)
    check = subprocess.run([shell, "-n", str(path)], capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stderr
    for words, expected in CASES:
        # zsh's own compadd keeps what starts with the word typed; the stub here offers all.
        every = offered(shell, path, words)
        got = {w for w in every if w.startswith(words[-1])}
        assert expected <= got, (words, got)
        assert shell == "zsh" or got == every


def test_an_unknown_shell_is_one_line_with_the_choices(cli, capsys):
    assert cli("completion", "tcsh").code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'bash', 'zsh', 'fish'" in err
