"""Maestro: hub-and-spoke orchestration of AI coding CLIs."""

__version__ = "0.1.0"
