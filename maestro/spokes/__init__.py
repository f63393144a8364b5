"""Spokes: the interface every CLI's adapter (in its module, ``maestro.clis``) fulfils,
availability and prices. See docs/architecture.md, "spokes"."""

from maestro.process import ProcessOutcome, run_process
from maestro.spokes.base import Spoke, refuse_if_inside_spoke
from maestro.spokes.contract import ERROR_KINDS, DispatchRequest, SpokeResult
from maestro.spokes.registry import Availability, detect_available, get_spoke

__all__ = [
    "ERROR_KINDS",
    "Availability",
    "DispatchRequest",
    "ProcessOutcome",
    "Spoke",
    "SpokeResult",
    "detect_available",
    "get_spoke",
    "refuse_if_inside_spoke",
    "run_process",
]
