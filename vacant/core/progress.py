"""A progress line for long work a person waits on at a terminal (a first scan, a Stop's replay).

Silent unless stderr is a terminal and the work outlasts `after_s`; never in `--json` output (the
caller passes `enabled=False`) and never in hooks (their stderr is not a terminal). The line is
rewritten in place and erased when the work ends. Stdlib only.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

AFTER_S = 1.0
EVERY_S = 0.25
FRAMES = "|/-\\"


@contextmanager
def progress(label: str, enabled: bool = True, after_s: float = AFTER_S, stream: TextIO | None = None) -> Iterator[None]:
    stream = stream or sys.stderr
    if not enabled or not getattr(stream, "isatty", lambda: False)():
        yield
        return
    done = threading.Event()
    started = time.monotonic()
    shown = threading.Event()

    def spin() -> None:
        if done.wait(after_s):
            return
        frame = 0
        while not done.is_set():
            stream.write(f"\r{FRAMES[frame % len(FRAMES)]} {label} {time.monotonic() - started:.0f} s")
            stream.flush()
            shown.set()
            frame += 1
            done.wait(EVERY_S)

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        if shown.is_set():
            stream.write("\r\033[K")
            stream.flush()
