"""The CLIs Maestro knows, one module each.

A CLI's module holds everything about it: its roster facts (``maestro.roster.Cli``), how
it runs as a spoke and how its output is read (a ``maestro.spokes.base.Spoke``), where an
install puts its files and how its commands look, with its quirks as a hub (a
``maestro.install.host.Host``; none for a CLI that is no hub), and its ``maestro doctor``
checks. Imported, it gives them to ``maestro.roster.register``, and every list of CLIs or
hosts (argparse choices, the plan format, the manifest, doctor, ``install --host all``,
completion) has it from then on.

A plugin adds a CLI the same way: a module that registers itself, importable by name,
named in ``MAESTRO_CLIS`` (module names, comma-separated) in the environment Maestro
starts in. ``load`` imports the built-ins below, then those; the command line calls it
before it reads its arguments. Only the environment names them, never a file a spoke
could write. (Not an entry-point group: importing ``importlib.metadata`` to read one
costs every command about 20 ms.)
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module

from maestro.errors import ConfigError

BUILTIN = ("maestro.clis.claude", "maestro.clis.gemini", "maestro.clis.codex", "maestro.clis.sim")
PLUGINS = "MAESTRO_CLIS"


def load(env: Mapping[str, str]) -> None:
    """Register the built-in CLIs, then those of the modules ``env`` names (one that fails
    to: ``ConfigError``)."""
    for module in BUILTIN:
        import_module(module)
    for module in filter(None, (name.strip() for name in env.get(PLUGINS, "").split(","))):
        try:
            import_module(module)
        except Exception as exc:  # noqa: BLE001 - a plugin's failure is one line for its user
            raise ConfigError(
                f"{PLUGINS} names {module!r}, which failed to load ({type(exc).__name__}: {exc}).",
                f"install or fix it, or take it out of {PLUGINS}.",
            ) from None
