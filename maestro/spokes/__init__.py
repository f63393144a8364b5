"""Spokes: the interface every CLI's adapter (in its module, ``maestro.clis``) fulfils,
availability and prices. See docs/architecture.md, "spokes"."""
