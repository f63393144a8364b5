"""The run engine: scheduling, the dispatch pipeline, gates, the retry ladder, budgets,
receipts, runs (events, detach, wait), and later challenge, review and report."""
