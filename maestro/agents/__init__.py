"""Agent personas: the catalog, tiers, overrides and the least-privilege check."""
