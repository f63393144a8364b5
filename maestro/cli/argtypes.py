"""Argument types the verbs share: each turns a command-line word into its value or says,
in one line, what it should have been."""

from __future__ import annotations

import argparse


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 <= value <= 86_400:
        raise argparse.ArgumentTypeError("the timeout must be from 0 to 86400 seconds")
    return value


def count(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number (0 or more)")
    return int(text)
