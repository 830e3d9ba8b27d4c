"""The lean client's `coming_up` (two stat calls) against vacant.hook.paths.recently_spawned (the
oracle, which reads daemon.json): on generated spawn markers and daemon.json files it never says a
daemon is coming up where the oracle says none is (a daemon would then not be started), and it says
so in the common case, a marker and no daemon.json (or it saved nothing)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from vacant.hook import paths

sys.path.insert(0, str(Path(paths.__file__).parent))
import client  # noqa: E402 - the launcher's top-level module, as the hook imports it

del sys.path[0]


def test_the_grace_is_one_figure() -> None:
    assert client.SPAWN_GRACE_S == paths.SPAWN_GRACE_S


@settings(max_examples=300, deadline=None)
@given(marker_age=st.one_of(st.none(), st.floats(-5, 20)),
       info=st.one_of(st.none(), st.tuples(st.floats(-3, 3), st.floats(0, 0.05), st.booleans())))
def test_never_coming_up_where_the_oracle_says_no(tmp_path_factory, marker_age, info) -> None:
    state = tmp_path_factory.mktemp("state")
    directory = state / "daemon"
    directory.mkdir()
    now = time.time()
    if marker_age is not None:
        (directory / "spawned").write_text("client")
        os.utime(directory / "spawned", (now - marker_age, now - marker_age))
    if info is not None:
        offset, lag, readable = info  # daemon.json written `offset` s after the marker, `started` `lag` s before that
        written = now - (marker_age or 0.0) + offset
        body = json.dumps({"pid": 1, "started": written - lag}) if readable else "{torn"
        (directory / "daemon.json").write_text(body)
        os.utime(directory / "daemon.json", (written, written))
    says = client.coming_up(str(state))
    oracle = paths.recently_spawned(directory)
    assert not says or oracle, (marker_age, info)
    if marker_age is not None and 0 <= marker_age < 9 and info is None:
        assert says, "a fresh marker and no daemon.json: coming up, and told without the slow path"


PROBE = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import client
client._importable(sys.argv[3])
answer = client._try(sys.argv[2], "claude", b"{}", {}, 1.0)
print(json.dumps([answer is client.NO_DAEMON, "pathlib" in sys.modules]))
"""


def test_a_daemon_coming_up_is_told_without_the_package(tmp_path, monkeypatch) -> None:
    """While a daemon starts (fresh marker, no socket named yet) the client needs no slow lookup:
    no daemon, and the package (pathlib with it) is not loaded for the asking; without the marker
    the slow lookup runs, as before."""
    import subprocess

    from vacant.core.locations import mark_installed
    from vacant.hook.paths import daemon_dir

    monkeypatch.setenv("VACANT_HOME", str(tmp_path / "data"))
    root = tmp_path / "ws"
    root.mkdir()
    mark_installed(root)
    repo = Path(paths.__file__).resolve().parents[2]

    def ask() -> list[bool]:
        proc = subprocess.run([sys.executable, "-I", "-S", "-c", PROBE, str(Path(paths.__file__).parent), str(root),
                               str(repo)], capture_output=True, text=True, env=dict(os.environ), timeout=60)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return json.loads(proc.stdout)

    assert ask() == [True, True]  # no marker: the slow lookup (pathlib, the package) says no daemon
    (daemon_dir(root)).mkdir(parents=True, exist_ok=True)
    (daemon_dir(root) / "spawned").write_text("client")
    assert ask() == [True, False]
