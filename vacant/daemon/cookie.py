"""The Watchman cookie rule: before answering, be sure every event queued so far has been seen.

`sync()` creates a uniquely named cookie file inside the watched tree and waits until the watcher
reports that very file. inotify keeps one queue per instance, in order, so when the cookie's event
arrives every event the kernel queued before it has been handed over. A cookie that never shows
up within `timeout` means events may be lost: the caller must rescan. Cookies are removed again
and their events never reach the dirty set.
"""

from __future__ import annotations

import itertools
import os
import threading
from pathlib import Path

COOKIE_PREFIX = ".vacant-cookie-"


class Cookies:
    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self._counter = itertools.count(1)
        self._lock = threading.Condition()
        self._seen: set[str] = set()

    @staticmethod
    def is_cookie(path: str) -> bool:
        return os.path.basename(path).startswith(COOKIE_PREFIX)

    def saw(self, path: str) -> None:
        """Called by the watcher for every event on a cookie path."""
        with self._lock:
            self._seen.add(os.path.basename(path))
            self._lock.notify_all()

    def sync(self, timeout: float = 5.0) -> bool:
        """True when the cookie's own event arrived within `timeout` seconds."""
        name = f"{COOKIE_PREFIX}{os.getpid()}-{next(self._counter)}"
        path = self.directory / name
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
        try:
            with self._lock:
                arrived = self._lock.wait_for(lambda: name in self._seen, timeout)
                self._seen.discard(name)
            return arrived
        finally:
            try:
                os.unlink(path)
            except OSError:
                pass
