"""One folder watched for changes, for the waits that must not sleep in a loop
(``maestro wait`` on a run folder, ``mail wait`` and the engine on doorbell files).

watchdog (inotify on Linux) runs an observer thread that sets ``event`` when a file in
``folder`` changes and ``accept`` takes its name. A file being opened or closed unread
is not a change: a waiter reading the folder must not wake itself. watchdog is imported
on entry, so commands that never wait do not pay for it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

# watchdog logs an error when its emitter is stopped during a read (our own stop racing
# an event); with logging not set up, Python would print it under a command's answer.
logging.getLogger("watchdog").addHandler(logging.NullHandler())
_READS = ("opened", "closed_no_write")


class FolderObserver:
    def __init__(
        self,
        folder: Path,
        *,
        event: threading.Event | None = None,
        accept: Callable[[str], bool] | None = None,
    ) -> None:
        self.folder = folder
        self.event = event or threading.Event()
        self.accept = accept
        self._observer: Any = None

    def __enter__(self) -> FolderObserver:  # noqa: PYI034 - a final helper class
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer

        wake, accept = self.event, self.accept

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: Any) -> None:
                if event.event_type in _READS:
                    return
                if accept is None:
                    wake.set()
                    return
                for path in (event.src_path, getattr(event, "dest_path", "")):
                    name = path.decode() if isinstance(path, bytes) else str(path)
                    if name and accept(name.rsplit("/", 1)[-1]):
                        wake.set()

        self.folder.mkdir(parents=True, exist_ok=True)
        self._observer = Observer()
        self._observer.schedule(Handler(), str(self.folder), recursive=False)
        self._observer.daemon = True
        self._observer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=2)
            self._observer = None
