"""Command-line parsing of the fake CLIs, with the real CLIs' rejections.

Each fake accepts the options its real CLI has (HOSTS.md, the host samples) and refuses
anything else the way the real one does: same message shape, same exit code. So a wrong
flag in an adapter fails a test the way it would fail in production.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from samples import read_sample


class Rejected(Exception):
    def __init__(self, stderr: str, code: int) -> None:
        super().__init__(stderr)
        self.stderr = stderr
        self.code = code


@dataclass
class Opts:
    values: dict[str, list[str]] = field(default_factory=dict)
    flags: set[str] = field(default_factory=set)
    positional: list[str] = field(default_factory=list)

    def get(self, name: str, default: str | None = None) -> str | None:
        return self.values[name][-1] if self.values.get(name) else default

    def all(self, name: str) -> list[str]:
        return self.values.get(name, [])


# name -> (kind, choices, metavar); kind: flag | value | many (variadic) | repeat
Spec = dict[str, tuple[str, tuple[str, ...], str]]

CLAUDE: Spec = {
    "--print": ("flag", (), ""),
    "--verbose": ("flag", (), ""),
    "--no-session-persistence": ("flag", (), ""),
    "--bare": ("flag", (), ""),
    "--continue": ("flag", (), ""),
    "--dangerously-skip-permissions": ("flag", (), ""),
    "--output-format": ("value", ("text", "json", "stream-json"), "format"),
    "--input-format": ("value", ("text", "stream-json"), "format"),
    "--model": ("value", (), "model"),
    "--fallback-model": ("value", (), "model"),
    "--max-turns": ("value", (), "turns"),
    "--append-system-prompt": ("value", (), "prompt"),
    "--system-prompt": ("value", (), "prompt"),
    "--resume": ("value", (), "sessionId"),
    "--session-id": ("value", (), "uuid"),
    "--permission-mode": (
        "value",
        ("acceptEdits", "bypassPermissions", "default", "dontAsk", "plan"),
        "mode",
    ),
    "--setting-sources": ("value", (), "sources"),
    "--plugin-dir": ("repeat", (), "path"),
    "--allowedTools": ("many", (), "tools..."),
    "--disallowedTools": ("many", (), "tools..."),
    "--tools": ("many", (), "tools..."),
    "--add-dir": ("many", (), "directories..."),
    "--mcp-config": ("many", (), "configs..."),
}
CLAUDE_ALIASES = {
    "-p": "--print",
    "-c": "--continue",
    "-r": "--resume",
    "--allowed-tools": "--allowedTools",
    "--disallowed-tools": "--disallowedTools",
}

GEMINI: Spec = {
    "--prompt": ("value", (), "string"),
    "--model": ("value", (), "string"),
    "--output-format": ("value", ("text", "json", "stream-json"), "string"),
    "--approval-mode": ("value", ("default", "auto_edit", "yolo", "plan"), "string"),
    "--policy": ("many", (), "array"),
    "--admin-policy": ("many", (), "array"),
    "--allowed-tools": ("many", (), "array"),
    "--extensions": ("many", (), "array"),
    "--include-directories": ("many", (), "array"),
    "--resume": ("value", (), "string"),
    "--session-id": ("value", (), "string"),
    "--skip-trust": ("flag", (), ""),
    "--yolo": ("flag", (), ""),
    "--debug": ("flag", (), ""),
    "--sandbox": ("flag", (), ""),
}
GEMINI_ALIASES = {
    "-p": "--prompt",
    "-m": "--model",
    "-o": "--output-format",
    "-y": "--yolo",
    "-d": "--debug",
    "-s": "--sandbox",
    "-r": "--resume",
    "-e": "--extensions",
}

CODEX: Spec = {
    "--json": ("flag", (), ""),
    "--skip-git-repo-check": ("flag", (), ""),
    "--ephemeral": ("flag", (), ""),
    "--dangerously-bypass-approvals-and-sandbox": ("flag", (), ""),
    "--approve-for-me": ("flag", (), ""),
    "--oss": ("flag", (), ""),
    "--sandbox": ("value", ("read-only", "workspace-write", "danger-full-access"), "SANDBOX_MODE"),
    "--model": ("value", (), "MODEL"),
    "--cd": ("value", (), "DIR"),
    "--output-last-message": ("value", (), "FILE"),
    "--config": ("repeat", (), "key=value"),
    "--enable": ("repeat", (), "FEATURE"),
    "--disable": ("repeat", (), "FEATURE"),
    "--profile": ("value", (), "CONFIG_PROFILE"),
    "--image": ("repeat", (), "FILE"),
    "--add-dir": (
        "repeat",
        (),
        "DIR",
    ),  # codex 0.169 exec: "Additional directories that should be writable"
}
CODEX_ALIASES = {
    "-s": "--sandbox",
    "-m": "--model",
    "-C": "--cd",
    "-o": "--output-last-message",
    "-c": "--config",
    "-p": "--profile",
    "-i": "--image",
}


def _claude_error(
    kind: str, opt: str, meta: str = "", value: str = "", choices: tuple[str, ...] = ()
) -> Rejected:
    if kind == "unknown":
        return Rejected(f"error: unknown option '{opt}'\n", 1)
    if kind == "missing":
        return Rejected(f"error: option '{opt} <{meta}>' argument missing\n", 1)
    return Rejected(
        f"error: option '{opt} <{meta}>' argument '{value}' is invalid. Allowed choices are {', '.join(choices)}.\n",
        1,
    )


def _gemini_usage() -> str:
    stderr = read_sample("gemini_bad_flag").stderr
    return stderr[stderr.index("Usage: gemini") :]


def _gemini_error(
    kind: str, opt: str, meta: str = "", value: str = "", choices: tuple[str, ...] = ()
) -> Rejected:
    name = opt.lstrip("-")
    if kind == "unknown":
        return Rejected(f"Unknown argument: {name}\n" + _gemini_usage(), 1)
    if kind == "missing":
        return Rejected(f"Not enough arguments following: {name}\n" + _gemini_usage(), 1)
    shown = ", ".join(f'"{c}"' for c in choices)
    return Rejected(
        f'Invalid values:\n  Argument: {name}, Given: "{value}", Choices: {shown}\n'
        + _gemini_usage(),
        1,
    )


def _codex_error(
    kind: str, opt: str, meta: str = "", value: str = "", choices: tuple[str, ...] = ()
) -> Rejected:
    if kind == "unknown":
        # The genuine clap message, for the option at hand.
        return Rejected(read_sample("codex_full_auto").stderr.replace("--full-auto", opt), 2)
    tail = "\nFor more information, try '--help'.\n"
    if kind == "missing":
        return Rejected(
            f"error: a value is required for '{opt} <{meta}>' but none was supplied\n{tail}", 2
        )
    return Rejected(
        f"error: invalid value '{value}' for '{opt} <{meta}>'\n  [possible values: {', '.join(choices)}]\n{tail}",
        2,
    )


def _parse(
    args: list[str], spec: Spec, aliases: dict[str, str], error, *, single_positional: bool = False
) -> Opts:
    opts = Opts()
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            opts.positional.extend(args[i:])
            break
        if not arg.startswith("-") or arg == "-":
            opts.positional.append(arg)
            continue
        name, inline = (arg.split("=", 1) + [None])[:2] if arg.startswith("--") else (arg, None)
        name = aliases.get(name, name)
        if name not in spec:
            raise error("unknown", arg)
        kind, choices, meta = spec[name]
        if kind == "flag":
            opts.flags.add(name)
            continue
        if inline is not None:
            values = [inline]
        elif kind == "many":
            values = []
            while i < len(args) and not args[i].startswith("-"):
                values.append(args[i])
                i += 1
        elif i < len(args) and (not args[i].startswith("-") or args[i] == "-"):
            values = [args[i]]
            i += 1
        else:
            values = []
        if not values:
            raise error("missing", name, meta)
        for value in values:
            if choices and value not in choices:
                raise error("invalid", name, meta, value, choices)
        opts.values.setdefault(name, []).extend(values)
    if single_positional and len(opts.positional) > 1:
        raise error("unknown", opts.positional[1])
    return opts


def parse_claude(args: list[str]) -> Opts:
    return _parse(args, CLAUDE, CLAUDE_ALIASES, _claude_error)


def parse_gemini(args: list[str]) -> Opts:
    return _parse(args, GEMINI, GEMINI_ALIASES, _gemini_error)


def parse_codex(args: list[str]) -> Opts:
    if not args or args[0] != "exec":
        raise Rejected("fake codex: only `codex exec` is scripted\n", 2)
    return _parse(args[1:], CODEX, CODEX_ALIASES, _codex_error, single_positional=True)


PARSERS = {"claude": parse_claude, "gemini": parse_gemini, "codex": parse_codex}
