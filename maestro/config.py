"""Settings, resolved with one precedence: environment ``MAESTRO_*`` > project ``.env`` >
project config file (``<state dir>/maestro.toml``) > defaults.

Every effective value remembers where it came from, so ``maestro config`` can show it and
an error can name it. The config file may also hold tables that are not single settings:
``[agents.<name>]`` (model, temperature, max_turns, timeout_mins), ``[prices.<model>]``
(dollars per million input/output tokens) and ``[budgets.<cli>]`` (budget, abort).
"""

from __future__ import annotations

import contextlib
import math
import os
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from maestro.defaults import RETIRED, SETTINGS, SETTINGS_BY_KEY, TABLES, Setting
from maestro.errors import ConfigError
from maestro.formatting import shown_path, shown_url
from maestro.paths import DEFAULT_STATE_DIR, ProjectPaths, find_project_root, user_state_dir

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class Value:
    value: Any
    source: str  # "environment" | ".env" | "<path to maestro.toml>" | "default"


def _bad(setting: Setting, raw: Any, source: str) -> ConfigError:
    where = f"in {source}" if source != "environment" else "in the environment"
    name = setting.env if source in ("environment", ".env") else setting.key
    return ConfigError(
        f"setting {name}={raw!r} ({where}) is not valid: expected {setting.allowed()}.",
        f"set {name} to {setting.allowed()}, or remove it to use the default.",
    )


# Each parser takes the raw value (stripped text, or a TOML value) and raises ValueError
# or TypeError for one its kind cannot hold (convert turns either into one ConfigError).


def _to_int(text: Any, setting: Setting) -> int:
    if isinstance(text, bool) or (isinstance(text, float) and not text.is_integer()):
        raise ValueError
    return int(text)


def _to_float(text: Any, setting: Setting) -> float:
    if isinstance(text, bool):
        raise TypeError
    value = float(text)
    if not math.isfinite(value):
        raise ValueError
    return value


def _to_bool(text: Any, setting: Setting) -> bool:
    if isinstance(text, bool):
        return text
    word = str(text).lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise ValueError


def _to_enum(text: Any, setting: Setting) -> str:
    value = str(text).lower()
    if value not in setting.choices:
        raise ValueError
    return value


def _to_list(text: Any, setting: Setting) -> tuple[str, ...]:
    items = text if isinstance(text, list) else str(text).split(",")
    return tuple(str(i).strip() for i in items if str(i).strip())


def _to_str(text: Any, setting: Setting) -> str:
    if not isinstance(text, str):
        raise TypeError
    return text


def _to_url(text: Any, setting: Setting) -> str:
    """An http(s) URL with a host: nothing else is ever opened (no file:, no ftp:)."""
    parts = urlsplit(_to_str(text, setting))
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.port == 0:
        raise ValueError  # (a port past 65535 raises it too)
    return str(text)


_PARSE: dict[str, Callable[[Any, Setting], Any]] = {
    "int": _to_int,
    "float": _to_float,
    "bool": _to_bool,
    "enum": _to_enum,
    "list": _to_list,
    "str": _to_str,
    "url": _to_url,
}


def _within(setting: Setting, value: Any) -> bool:
    """A number inside the setting's bounds (other kinds have none)."""
    if setting.kind not in ("int", "float"):
        return True
    if setting.minimum is not None and value < setting.minimum:
        return False
    return setting.maximum is None or value <= setting.maximum


def convert(setting: Setting, raw: Any, source: str) -> Any:
    """Turn a raw value (text from env/.env, or a TOML value) into the setting's type."""
    text = raw.strip() if isinstance(raw, str) else raw
    if isinstance(text, str) and text == "" and setting.kind != "str":
        return setting.default
    parse: Callable[[Any, Setting], Any] = _PARSE.get(setting.kind, _to_str)
    try:
        value = parse(text, setting)
    except (TypeError, ValueError):
        raise _bad(setting, raw, source) from None
    if not _within(setting, value):
        raise _bad(setting, raw, source)
    return value


@dataclass
class Settings:
    paths: ProjectPaths
    values: dict[str, Value]
    tables: dict[str, dict[str, Any]] = field(default_factory=dict)
    config_file: Path | None = None
    # One typed attribute per entry of SETTINGS (tests/test_config.py checks they match),
    # set from ``values``, so mypy checks every use of a setting.
    state_dir: str = field(init=False, repr=False, compare=False)
    state_dir_outside: bool = field(init=False, repr=False, compare=False)
    max_concurrent: int = field(init=False, repr=False, compare=False)
    stagger_delay: float = field(init=False, repr=False, compare=False)
    agent_timeout: float | None = field(init=False, repr=False, compare=False)
    max_retries: int = field(init=False, repr=False, compare=False)
    max_depth: int = field(init=False, repr=False, compare=False)
    retry_backoff: float = field(init=False, repr=False, compare=False)
    default_model: str | None = field(init=False, repr=False, compare=False)
    writer_model: str | None = field(init=False, repr=False, compare=False)
    default_temperature: float | None = field(init=False, repr=False, compare=False)
    max_turns: int | None = field(init=False, repr=False, compare=False)
    disabled_agents: tuple[str, ...] = field(init=False, repr=False, compare=False)
    budget_usd_run: float | None = field(init=False, repr=False, compare=False)
    budget_usd_task: float | None = field(init=False, repr=False, compare=False)
    budget_usd_day: float | None = field(init=False, repr=False, compare=False)
    budget_tokens_run: int | None = field(init=False, repr=False, compare=False)
    budget_tokens_task: int | None = field(init=False, repr=False, compare=False)
    budget_tokens_day: int | None = field(init=False, repr=False, compare=False)
    budget_hard: bool = field(init=False, repr=False, compare=False)
    price_table: str | None = field(init=False, repr=False, compare=False)
    validation_strictness: str = field(init=False, repr=False, compare=False)
    log: str = field(init=False, repr=False, compare=False)
    review_rounds: int = field(init=False, repr=False, compare=False)
    commit: bool = field(init=False, repr=False, compare=False)
    pr: bool = field(init=False, repr=False, compare=False)
    pr_remote: str | None = field(init=False, repr=False, compare=False)
    pr_ci_rounds: int = field(init=False, repr=False, compare=False)
    pr_ci_timeout: float = field(init=False, repr=False, compare=False)
    pr_poll: float = field(init=False, repr=False, compare=False)
    pr_merge: str = field(init=False, repr=False, compare=False)
    in_place: bool = field(init=False, repr=False, compare=False)
    keep_worktrees: bool = field(init=False, repr=False, compare=False)
    sandbox: bool = field(init=False, repr=False, compare=False)
    sandbox_hide: tuple[str, ...] = field(init=False, repr=False, compare=False)
    sandbox_write: tuple[str, ...] = field(init=False, repr=False, compare=False)
    sandbox_hosts: tuple[str, ...] = field(init=False, repr=False, compare=False)
    sandbox_env: tuple[str, ...] = field(init=False, repr=False, compare=False)
    sandbox_tmp_mb: int = field(init=False, repr=False, compare=False)
    sandbox_processes: int = field(init=False, repr=False, compare=False)
    workspace_links: tuple[str, ...] = field(init=False, repr=False, compare=False)
    workspace_copy: tuple[str, ...] = field(init=False, repr=False, compare=False)
    notify_desktop: bool = field(init=False, repr=False, compare=False)
    notify_webhook: str | None = field(init=False, repr=False, compare=False)
    hub: str | None = field(init=False, repr=False, compare=False)
    sim_delay: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for key, value in self.values.items():
            if key in SETTINGS_BY_KEY:
                setattr(self, key, value.value)

    def source(self, key: str) -> str:
        return self.values[key].source

    def table(self, name: str) -> dict[str, Any]:
        return self.tables.get(name, {})

    def as_rows(self) -> list[dict[str, Any]]:
        rows = []
        for setting in SETTINGS:
            val = self.values[setting.key]
            shown = list(val.value) if isinstance(val.value, tuple) else val.value
            if setting.kind == "url" and shown is not None:
                shown = shown_url(str(shown))  # a webhook's path is its password
            rows.append(
                {
                    "key": setting.key,
                    "env": setting.env,
                    "value": shown,
                    "source": val.source,
                    "allowed": setting.allowed(),
                }
            )
        return rows


def _not_utf8(path: Path, exc: UnicodeDecodeError) -> ConfigError:
    byte = exc.object[exc.start]
    return ConfigError(
        f"{path} is not UTF-8 text (byte 0x{byte:02x} at offset {exc.start}).",
        f"save it in the UTF-8 encoding (for example `iconv -f latin1 -t utf-8 {path.name} > {path.name}.utf8`, "
        "then move that over it), or delete the file.",
    )


def _read_dotenv(path: Path) -> dict[str, str]:
    if not path.is_file():
        return {}
    # local: python-dotenv takes 6-13 ms to import, and most projects have no .env; every
    # command loads the settings, `maestro wait` and `mail wait` (which hubs call in a
    # loop) included.
    from dotenv import dotenv_values

    try:
        values = dotenv_values(path)
    except UnicodeDecodeError as exc:
        raise _not_utf8(path, exc) from None
    except OSError as exc:
        raise ConfigError(
            f"cannot read {path}: {exc}.", "check the file's permissions, or remove it."
        ) from None
    return {k: v for k, v in values.items() if k.startswith("MAESTRO_") and v is not None}


def _read_toml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"{path} is not valid TOML ({exc}).", "correct the syntax or delete the file."
        ) from None
    except UnicodeDecodeError as exc:
        raise _not_utf8(path, exc) from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc}.", "check the file's permissions.") from None


def _check_state_dir(root: Path, state: Value, outside: Value) -> None:
    """Refuse a state dir that leaves the project unless the user said so: a typo such as
    ``../.ai`` would otherwise read and write another project's plan. Leaving is allowed
    only as an absolute path together with ``state_dir_outside``. Checked on the spelled
    path; ``_check_links`` follows the symbolic links."""
    name = state.value
    where = "in the environment" if state.source == "environment" else f"in {state.source}"
    if not name.strip():
        raise ConfigError(
            f"MAESTRO_STATE_DIR ({where}) is empty.",
            f"remove it to use {DEFAULT_STATE_DIR}, or name a folder inside the project.",
        )
    spelled = Path(os.path.normpath(root / name))
    if spelled.is_relative_to(root):
        return
    if not Path(name).is_absolute():
        raise ConfigError(
            f"MAESTRO_STATE_DIR={name!r} ({where}) leads outside the project {root} (to {spelled}).",
            f"use a folder inside the project (the default is {DEFAULT_STATE_DIR}); to keep the state "
            "elsewhere on purpose, give an absolute path and set MAESTRO_STATE_DIR_OUTSIDE=1.",
        )
    if not outside.value:
        raise ConfigError(
            f"MAESTRO_STATE_DIR={name!r} ({where}) is outside the project {root}.",
            "if that is intended, set MAESTRO_STATE_DIR_OUTSIDE=1 as well; else use a folder inside "
            f"the project (the default is {DEFAULT_STATE_DIR}).",
        )


def _check_links(paths: ProjectPaths, outside: Value) -> None:
    """Refuse a symbolic link that leads the state out of the project (a committed
    ``.ai -> ../elsewhere``, ``.ai/maestro`` or ``.ai/MAESTRO.md`` pointing away), as
    ``MAESTRO_STATE_DIR`` is: Maestro would write another folder's files. The state dir,
    what it holds and what its machine folder holds are checked; a link that stays in the
    project is followed."""
    if outside.value:
        return
    root = paths.root.resolve()
    links = [paths.state_dir] if paths.state_dir.is_symlink() else []
    for folder in (paths.state_dir, paths.machine_dir):
        with contextlib.suppress(OSError):
            links += [Path(e.path) for e in os.scandir(folder) if e.is_symlink()]
    for link in links:
        target = link.resolve()
        if not target.is_relative_to(root):
            shown = shown_path(link, paths.root)
            raise ConfigError(
                f"{shown} is a symbolic link leading outside the project {root} (to {target}).",
                "replace the link with a folder or file inside the project; to keep the state "
                "elsewhere on purpose, set MAESTRO_STATE_DIR_OUTSIDE=1.",
            )


def _check_folders(paths: ProjectPaths) -> None:
    """Refuse a state dir, or a machine folder in it, that is there but is no folder (a
    person's note named ``.ai``, a file another tool left, a link to nothing): each
    command would otherwise fail at its first read or write there, each its own way."""
    for folder in (paths.state_dir, paths.machine_dir):
        if folder.is_dir() or not (folder.is_symlink() or folder.exists()):
            continue
        shown = shown_path(folder, paths.root)
        what = f"a symbolic link to {folder.resolve()}" if folder.is_symlink() else "a file"
        raise ConfigError(
            f"{shown} is {what}, not the folder Maestro keeps this project's state in.",
            f"move {shown} elsewhere or rename it (Maestro then makes the folder), or set "
            "MAESTRO_STATE_DIR to use another folder.",
        )


# Settings that are the person's alone (their environment), never a project's `.env` or
# config file, which a repository brings along: each with why, and the way around it.
_SANDBOX = (
    "a project's own files do not loosen the sandbox of the processes its plan starts",
    " (or `maestro run --no-sandbox`)",
)
PERSON_ONLY = {
    "sandbox": _SANDBOX,
    "sandbox_hide": _SANDBOX,
    "sandbox_write": _SANDBOX,
    "sandbox_hosts": _SANDBOX,
    "sandbox_env": _SANDBOX,
    "sandbox_tmp_mb": _SANDBOX,
    "sandbox_processes": _SANDBOX,
    # A cloned repository naming a URL would receive every question of its runs.
    "notify_webhook": (
        "a project's own files do not choose where its runs' questions are sent",
        "",
    ),
}


def _refuse_in_project(
    setting: Setting, dotenv: dict[str, str], file_values: dict[str, Any], file_source: str
) -> None:
    where = ".env" if setting.env in dotenv else file_source if setting.key in file_values else None
    if where is not None:
        why, otherwise = PERSON_ONLY[setting.key]
        raise ConfigError(
            f"{setting.key} cannot be set in {where}: {why}.",
            f"remove it there and set {setting.env} in your environment{otherwise}.",
        )


def load_settings(cwd: Path | None = None, env: dict[str, str] | None = None) -> Settings:
    env = dict(os.environ) if env is None else env
    root = find_project_root(cwd, env)
    dotenv = _read_dotenv(root / ".env")

    def layered(setting: Setting, file_values: dict[str, Any], file_source: str) -> Value:
        if setting.env in env:
            return Value(convert(setting, env[setting.env], "environment"), "environment")
        if setting.key in PERSON_ONLY:
            _refuse_in_project(setting, dotenv, file_values, file_source)
            return Value(setting.default, "default")
        if setting.env in dotenv:
            return Value(convert(setting, dotenv[setting.env], ".env"), ".env")
        if setting.key in file_values:
            return Value(convert(setting, file_values[setting.key], file_source), file_source)
        return Value(setting.default, "default")

    state = layered(SETTINGS_BY_KEY["state_dir"], {}, "")
    outside = layered(SETTINGS_BY_KEY["state_dir_outside"], {}, "")
    _check_state_dir(root, state, outside)
    paths = ProjectPaths(root, state.value)
    _check_links(paths, outside)
    _check_folders(paths)
    user_state_dir(env, project=paths)  # refused now, before a command writes anything
    config_path = paths.config_file
    data = _read_toml(config_path)
    source = shown_path(config_path, root)
    for key in ("state_dir", "state_dir_outside"):
        if key in data:
            raise ConfigError(
                f"{key} cannot be set in {source}: that file lives inside the state dir.",
                f"set {SETTINGS_BY_KEY[key].env} in the environment or in .env instead.",
            )
    unknown = sorted(k for k in data if k not in SETTINGS_BY_KEY and k not in TABLES)
    if unknown and unknown[0] in RETIRED:
        raise ConfigError(
            f"setting {unknown[0]!r} in {source} is gone: {RETIRED[unknown[0]]}.",
            f"delete it from {source}.",
        )
    if unknown:
        known = ", ".join(s.key for s in SETTINGS)
        raise ConfigError(
            f"unknown setting {unknown[0]!r} in {source}.",
            f"use one of: {known}; or the tables [agents.NAME], [prices.MODEL], [budgets.CLI].",
        )
    values = {"state_dir": state, "state_dir_outside": outside}
    for setting in SETTINGS[2:]:
        values[setting.key] = layered(setting, data, source)
    tables = {}
    for name in TABLES:
        table = data.get(name, {})
        if not isinstance(table, dict):
            raise ConfigError(
                f"[{name}] in {source} must be a table.", f"write it as [{name}.NAME] sections."
            )
        tables[name] = table
    return Settings(paths=paths, values=values, tables=tables, config_file=config_path)
