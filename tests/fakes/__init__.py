"""Fake claude, gemini and codex executables for tests (see README.md here)."""
