"""`maestro` and `python -m maestro`: refuse a platform Maestro does not run on, in one
line, before anything imports what only Linux and macOS have (``fcntl`` locks every
state file), then hand over to the CLI."""

import sys

SUPPORTED = {"linux": "Linux", "darwin": "macOS"}


def main() -> None:
    if sys.platform not in SUPPORTED:
        sys.exit(
            f"maestro: {sys.platform} is not supported: Maestro runs on Linux and macOS "
            "(it locks its state files with fcntl). Fix: run it there, or on Windows "
            "inside WSL."
        )
    from maestro.cli import console_main  # only past the check: see the module's doc

    console_main()


if __name__ == "__main__":
    main()
