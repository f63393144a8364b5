"""Time in the forms Maestro writes. Tests may pin the clock with MAESTRO_FAKE_NOW."""

from __future__ import annotations

import os
from datetime import UTC, datetime


def utc_now() -> datetime:
    fake = os.environ.get("MAESTRO_FAKE_NOW")
    if fake:
        return datetime.fromisoformat(fake).astimezone(UTC)
    return datetime.now(UTC)


def iso(moment: datetime | None = None) -> str:
    """2026-11-21T12:00:00Z"""
    return (moment or utc_now()).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


def stamp(moment: datetime | None = None) -> str:
    """2026-11-21 12:00 UTC (the plan's Source line and log session headers)."""
    return (moment or utc_now()).astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def folder_stamp(moment: datetime | None = None) -> str:
    """20261121T120000Z (archive folders, run ids)."""
    return (moment or utc_now()).astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
