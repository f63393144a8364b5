"""The execution log, ``.ai/MAESTRO-LOG.md``, in the design notes' table format.

    # Maestro Execution Log

    ## Session: 2026-01-16 14:30 UTC
    **Goal:** Add user authentication

    | Time | Actor | Action | Target | Tokens | Duration | Outcome | Notes |
    |------|-------|--------|--------|--------|----------|---------|-------|
    | 14:31:02 | Hub | Dispatch | Gemini (Task 1) | 27,316 ($0.55) | 45s | ✅ | Task 1 complete |

    ## Totals
    | Tool | Dispatches | Tokens | Failures | Retries |
    ...

Every cell is readable text, and every ``LogRow`` field can be read back from it: the
Target names the tool (``Gemini (Task 1)``) and the task (``Task 1``), the Tokens cell
carries the cost (``~$`` when estimated), a failed row's Outcome starts with ❌, and a
retry's Action is ``Retry`` or ends in ``(retry)``. That is what lets every append
recompute ``## Totals`` from all the rows.

An append holds a lock, splices one row into the file's text (so a person's notes in the
log are kept), recomputes the totals, and writes atomically: several processes may
append at once without losing a row.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from maestro import clock
from maestro.errors import ConfigError
from maestro.formatting import shown_path
from maestro.fsutil import atomic_write, file_lock
from maestro.logfile.document import LogSession, ParsedLog, add_row, add_session, parse
from maestro.logfile.rows import VERBOSITIES, LogFormatError, LogRow, short_name
from maestro.paths import ProjectPaths

# What the rest of Maestro takes from here; the format's parts are in .rows and .document.
__all__ = ["ExecutionLog", "LogRow", "LogSession", "ParsedLog", "lock_path", "short_name"]


# The log as the engine uses it ------------------------------------------------------------


def lock_path(paths: ProjectPaths) -> Path:
    return paths.machine_dir / "locks" / "log.lock"


class ExecutionLog:
    """Appends to ``.ai/MAESTRO-LOG.md`` at the given verbosity (off writes nothing).

    ``summary`` and ``detailed`` both write rows; under ``detailed`` the engine also keeps
    full prompts and outputs in ``.ai/maestro/runs/<run-id>/``, which the session header
    points to.
    """

    def __init__(self, paths: ProjectPaths, verbosity: str = "off") -> None:
        if verbosity not in VERBOSITIES:
            raise ConfigError(
                f"log verbosity {verbosity!r} is not valid.",
                f"set MAESTRO_LOG to one of {', '.join(VERBOSITIES)}.",
            )
        self.paths = paths
        self.verbosity = verbosity
        self.path = paths.log
        self._session: LogSession | None = None
        self._shown = shown_path(self.path, paths.root)

    @property
    def enabled(self) -> bool:
        return self.verbosity != "off"

    def exists(self) -> bool:
        return self.path.is_file()

    def start_session(
        self, goal: str, *, run_id: str | None = None, hub: str | None = None
    ) -> None:
        details = None
        if self.verbosity == "detailed" and run_id:
            runs = self.paths.runs_dir / run_id
            details = shown_path(runs, self.paths.root, folder=True)
        self._session = LogSession(clock.stamp(), goal, run_id=run_id, hub=hub, details=details)
        if self.enabled:
            session = self._session
            self._update(lambda text: add_session(text, session, self._shown))

    def append(self, row: LogRow) -> None:
        if not self.enabled:
            return
        fallback = self._session or LogSession(clock.stamp(), "-")
        self._update(lambda text: add_row(text, row, fallback, self._shown))

    def read(self) -> ParsedLog:
        """The log as written (an empty log when there is no file)."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return ParsedLog()
        except (OSError, UnicodeDecodeError) as exc:
            raise LogFormatError(
                f"cannot read the log: {exc}.", "check the file, or archive it.", file=self.path
            ) from None
        return parse(text, self._shown)

    def _update(self, change: Callable[[str], str]) -> None:
        with file_lock(lock_path(self.paths)):
            try:
                # Bytes, not read_text: universal newlines would hide a CRLF file.
                text = self.path.read_bytes().decode("utf-8")
            except FileNotFoundError:
                text = ""
            except (OSError, UnicodeDecodeError) as exc:
                raise LogFormatError(
                    f"cannot read the log: {exc}.",
                    "repair the file, or archive it.",
                    file=self.path,
                ) from None
            newline = "\r\n" if "\r\n" in text else "\n"
            updated = change(text)
            atomic_write(self.path, updated.replace("\n", newline) if newline != "\n" else updated)
