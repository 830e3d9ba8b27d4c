"""The progress line: shown only on a terminal, only after the delay, erased at the end; silent
otherwise (in --json and in hooks, whose stderr is no terminal)."""

from __future__ import annotations

import io
import time

from vacant.core.progress import progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_long_work_on_a_terminal_shows_a_line_and_erases_it():
    stream = Terminal()
    with progress("working", after_s=0.05, stream=stream):
        time.sleep(0.4)
    text = stream.getvalue()
    assert "working" in text and text.endswith("\r\033[K")


def test_short_work_or_no_terminal_or_disabled_prints_nothing():
    for stream, enabled, work in ((Terminal(), True, 0.0), (io.StringIO(), True, 0.3), (Terminal(), False, 0.3)):
        with progress("working", enabled=enabled, after_s=0.05, stream=stream):
            time.sleep(work)
        assert stream.getvalue() == ""
