"""`maestro completion bash|zsh|fish`: a completion script written from the parser.

Every command, verb, flag and choice comes from the parser itself (``cli.tree``), so the
scripts cannot fall behind a new flag. Each script finds where the words typed so far
lead (``maestro mail send``: the node ``mail.send``), skipping each flag's value, then
offers that node's verbs or choices, its flags after a ``-``, a flag's choices after it,
and file names where a value or an argument is free.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from maestro.cli import build_parser
from maestro.cli.context import Context, Result
from maestro.cli.tree import Node, walk
from maestro.commands import BY_NAME

EXAMPLES = """\
  maestro completion bash > ~/.local/share/bash-completion/completions/maestro
  maestro completion zsh > "${fpath[1]}/_maestro"      a folder on zsh's fpath
  maestro completion fish > ~/.config/fish/completions/maestro.fish
  source <(maestro completion bash)                   this shell only"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shell", choices=tuple(_WRITERS), help="the shell to complete in")


def run(args: argparse.Namespace, ctx: Context) -> Result:
    del ctx
    nodes = list(walk(build_parser(*BY_NAME)))
    script = _WRITERS[args.shell](nodes)
    return Result("completion", {"shell": args.shell, "script": script}, script)


def _id(node: Node) -> str:
    return ".".join(node.path)


def _steps(nodes: list[Node]) -> tuple[list[str], list[str]]:
    """``node/word`` for each flag that takes a value (the next word is its value) and
    for each verb (the next node down)."""
    values = [
        f"{_id(n)}/{name}" for n in nodes for f in n.flags if f.takes_value for name in f.names
    ]
    verbs = [f"{_id(n)}/{name}" for n in nodes for name, _ in n.children]
    return values, verbs


def _find_node(nodes: list[Node], words: str, current: str, first: int) -> list[str]:
    """bash's and zsh's loop over the words before the one being completed (``words``
    from index ``first`` up to ``current``), setting ``node``: a flag that takes a value
    skips the next word, another flag is passed over, a verb goes a level down."""
    values, verbs = ("|".join(f'"{step}"' for step in steps) for steps in _steps(nodes))
    return [
        f"    local cur=${{{words}[{current}]}} prev=${{{words}[{current}-1]}}",
        '    local node="" skip="" word i',
        f"    for ((i = {first}; i < {current}; i++)); do",
        f"        word=${{{words}[i]}}",
        '        if [[ -n $skip ]]; then skip=""; continue; fi',
        '        case "${node}/${word}" in',
        f"            {values}) skip=1 ;;",
        "            -*|*/-*) ;;",
        f"            {verbs}) node=${{node:+${{node}}.}}${{word}} ;;",
        "        esac",
        "    done",
    ]


def _value_cases(nodes: list[Node], choices: str, free: str) -> list[str]:
    """The ``case "$node/$prev"`` arms for the word after a flag: its choices, or files."""
    lines = ['    case "${node}/${prev}" in']
    free_names = []
    for node in nodes:
        for flag in node.flags:
            patterns = "|".join(f'"{_id(node)}/{name}"' for name in flag.names)
            if flag.choices:
                lines.append(
                    f"        {patterns}) {choices.format(' '.join(flag.choices))}; return ;;"
                )
            elif flag.takes_value:
                free_names.append(patterns)
    lines.append(f"        {'|'.join(free_names)}) {free}; return ;;")
    return [*lines, "    esac"]


def bash(nodes: list[Node]) -> str:
    lines = [
        "# bash completion for maestro, written by `maestro completion bash`",
        "_maestro() {",
        *_find_node(nodes, "COMP_WORDS", "COMP_CWORD", 1),
        "    local words flags",
        *_value_cases(nodes, 'COMPREPLY=($(compgen -W "{}" -- "$cur"))', "COMPREPLY=()"),
        "    case $node in",
    ]
    for node in nodes:
        words = " ".join([name for name, _ in node.children] or node.words)
        lines.append(
            f'        "{_id(node)}") words="{words}" flags="{" ".join(n for f in node.flags for n in f.names)}" ;;'
        )
    lines += [
        "    esac",
        "    [[ $cur == -* ]] && words=$flags",
        '    COMPREPLY=($(compgen -W "$words" -- "$cur"))',
        "}",
        "complete -o default -F _maestro maestro",
        "",
    ]
    return "\n".join(lines)


def _zsh_item(name: str, description: str) -> str:
    text = f"{name}:{description.replace(':', chr(92) + ':')}"
    return "'" + text.replace("'", "'\\''") + "'"


def zsh(nodes: list[Node]) -> str:
    lines = [
        "#compdef maestro",
        "# zsh completion for maestro, written by `maestro completion zsh`",
        "_maestro() {",
        *_find_node(nodes, "words", "CURRENT", 2),
        "    local -a items",
        *_value_cases(nodes, "compadd -- {}", "_files"),
        "    if [[ $cur == -* ]]; then",
        "        case $node in",
    ]
    for node in nodes:
        items = " ".join(_zsh_item(name, flag.help) for flag in node.flags for name in flag.names)
        lines.append(f'            "{_id(node)}") items=({items}) ;;')
    lines += [
        "        esac",
        "        _describe -t options option items",
        "        return",
        "    fi",
        "    case $node in",
    ]
    for node in nodes:
        if node.children:
            items = " ".join(_zsh_item(name, summary) for name, summary in node.children)
            lines.append(
                f'        "{_id(node)}") items=({items}); _describe -t commands command items ;;'
            )
        elif node.words:
            lines.append(f'        "{_id(node)}") compadd -- {" ".join(node.words)} ;;')
    lines += [
        "        *) _files ;;",
        "    esac",
        "}",
        'if [[ "${funcstack[1]}" == _maestro ]]; then _maestro "$@"; else compdef _maestro maestro; fi',
        "",
    ]
    return "\n".join(lines)


def _fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def fish(nodes: list[Node]) -> str:
    values, verbs = (" ".join(_fish_quote(step) for step in steps) for steps in _steps(nodes))
    lines = [
        "# fish completion for maestro, written by `maestro completion fish`",
        "function __maestro_node",
        "    set -l node ''",
        "    set -l skip 0",
        "    set -l tokens (commandline -opc)",
        "    set -e tokens[1]",
        "    for word in $tokens",
        "        if test $skip = 1",
        "            set skip 0",
        "            continue",
        "        end",
        '        switch "$node/$word"',
        f"            case {values}",
        "                set skip 1",
        "            case '-*' '*/-*'",
        f"            case {verbs}",
        '                if test -z "$node"',
        "                    set node $word",
        "                else",
        '                    set node "$node.$word"',
        "                end",
        "        end",
        "    end",
        "    echo $node",
        "end",
        "",
        "function __maestro_at",
        "    set -l node (__maestro_node)",
        '    test "$node" = "$argv[1]"',
        "end",
        "",
    ]
    for node in nodes:
        at = f"-n {_fish_quote('__maestro_at ' + _fish_quote(_id(node)))}"
        if node.children or node.words:
            lines.append(f"complete -c maestro {at} -f")
        for name, summary in node.children:
            lines.append(f"complete -c maestro {at} -a {name} -d {_fish_quote(summary)}")
        for word in node.words:
            lines.append(f"complete -c maestro {at} -a {_fish_quote(word)}")
        for flag in node.flags:
            names = " ".join(
                f"-l {name[2:]}" if name.startswith("--") else f"-s {name[1:]}"
                for name in flag.names
            )
            value = (
                f"-x -a {_fish_quote(' '.join(flag.choices))}"
                if flag.choices
                else "-r"
                if flag.takes_value
                else ""
            )
            lines.append(
                " ".join(
                    p
                    for p in (
                        f"complete -c maestro {at} {names}",
                        value,
                        f"-d {_fish_quote(flag.help)}" if flag.help else "",
                    )
                    if p
                )
            )
    return "\n".join([*lines, ""])


_WRITERS: dict[str, Callable[[list[Node]], str]] = {"bash": bash, "zsh": zsh, "fish": fish}
