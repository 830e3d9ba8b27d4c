"""Suite-wide: vacant's user data directory (where a non-git workspace keeps its state) lives in a
temporary directory for the whole session, never in the real home of whoever runs the tests."""

from __future__ import annotations

import os
import tempfile

if not os.environ.get("VACANT_TEST_KEEP_HOME"):
    os.environ["VACANT_HOME"] = tempfile.mkdtemp(prefix="vacant-test-data-")


# -- daemons ------------------------------------------------------------------------------------
# A hook client starts its workspace's daemon detached (its own session), and a daemon lives until
# it has been idle for 30 minutes: left alone, every test that records through real hooks would
# leave one behind, each holding an inotify instance (128 per user by default) and memory. After
# each test, every daemon this session started is stopped: one whose environment carries this
# session's mark (processes inherit it) or whose workspace lies under the session's temporary base.

import signal  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

SESSION_MARK = f"VACANT_TEST_SESSION={uuid.uuid4().hex}".encode()
os.environ["VACANT_TEST_SESSION"] = SESSION_MARK.split(b"=", 1)[1].decode()


def _daemons() -> list[tuple[int, bytes, bytes]]:
    """(pid, workspace root, environment) of every `python -m vacant.daemon ROOT` this user runs."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
            if b"vacant.daemon" not in args[:4]:
                continue
            found.append((int(entry.name), args[args.index(b"vacant.daemon") + 1], (entry / "environ").read_bytes()))
        except (OSError, IndexError):
            continue
    return found


def _stop_ours(base: bytes | None) -> None:
    ours = [pid for pid, root, environ in _daemons()
            if SESSION_MARK in environ.split(b"\0") or (base and root.startswith(base))]
    for pid in ours:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 5
    for pid in ours:
        while time.monotonic() < deadline and Path(f"/proc/{pid}").exists() and not _zombie(pid):
            time.sleep(0.02)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


@pytest.fixture(autouse=True)
def _no_daemon_outlives_its_test(request):
    yield
    factory = getattr(request.config, "_tmp_path_factory", None)
    base = str(factory.getbasetemp()).encode() if factory is not None else None
    _stop_ours(base)
