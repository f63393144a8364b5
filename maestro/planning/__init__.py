"""The plan a hub produces: its JSON Schema, its loading, and the static AAVSR checks.

Callers import this package (``from maestro import planning``); the parts are its
modules: ``schema``, ``loading``, ``aavsr``, and ``ask`` and ``replan`` for
``maestro plan``.
"""

from __future__ import annotations

from maestro.planning.aavsr import AavsrFinding, aavsr, errors, path_problem, unlandable
from maestro.planning.loading import load, parse_text, to_plan
from maestro.planning.planschema import EXAMPLE, INPUT_VERSION, SCHEMA, check

__all__ = [
    "EXAMPLE",
    "INPUT_VERSION",
    "SCHEMA",
    "AavsrFinding",
    "aavsr",
    "check",
    "errors",
    "load",
    "parse_text",
    "path_problem",
    "to_plan",
    "unlandable",
]
