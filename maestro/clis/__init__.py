"""The CLIs Maestro knows, one module each.

A CLI's module holds everything about it: its roster facts (``maestro.roster.Cli``), how
it runs as a spoke and how its output is read (a ``maestro.spokes.base.Spoke``), where an
install puts its files and how its commands look, with its quirks as a hub (a
``maestro.install.host.Host``; none for a CLI that is no hub), and its ``maestro doctor``
checks. Imported, it gives them to ``maestro.roster.register``, and every list of CLIs or
hosts (argparse choices, the plan format, the manifest, doctor, ``install --host all``,
completion) has it from then on.

A plugin adds a CLI the same way: a module that registers itself, named in the
``maestro.clis`` entry-point group of its distribution (``[project.entry-points."maestro.clis"]
mycli = "my_package.mycli"``). ``load`` imports the built-ins below, then those; the command
line calls it before it reads its arguments.
"""

from __future__ import annotations

from importlib import import_module
from importlib.metadata import entry_points

BUILTIN = ("maestro.clis.claude", "maestro.clis.gemini", "maestro.clis.codex", "maestro.clis.sim")
GROUP = "maestro.clis"


def load() -> None:
    """Register the built-in CLIs, then every plugin's."""
    for module in (*BUILTIN, *(point.value for point in entry_points(group=GROUP))):
        import_module(module)
