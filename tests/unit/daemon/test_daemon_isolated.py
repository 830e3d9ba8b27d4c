"""The daemon starts isolated like the hook (issue 41): `python -I -S`, vacant's package and the
environment's site-packages put on sys.path by path. A `.pth` file an unwalled agent planted in a
site-packages of the environment vacant runs from, a PYTHONPATH naming the agent's own modules and
a `python3`/`vacant` shim first on PATH: none of it runs in a daemon the hook client starts.

The environment is a copy made of links (a venv whose site-packages links every entry of this
suite's own), so that the planted `.pth` lands in no environment another test uses."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

from vacant.core.locations import mark_installed
from vacant.hook.paths import info

pytestmark = pytest.mark.usefixtures("isolated_home")

PACKAGE_ROOT = str(Path(__file__).resolve().parents[3])
PLANT = "import os; open({mark!r}, 'a').write('{who} ran\\n')\n"  # the path written in: the daemon's environment is scrubbed


def linked_environment(base: Path) -> Path:
    """A venv whose interpreter is this one and whose site-packages links this suite's entries."""
    env = base / "env"
    lib = env / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    lib.mkdir(parents=True)
    (env / "bin").mkdir()
    os.symlink(sys.executable, env / "bin" / "python")
    shutil.copy(Path(sys.prefix) / "pyvenv.cfg", env / "pyvenv.cfg")
    ours = Path(sysconfig.get_paths()["purelib"])
    for entry in ours.iterdir():
        os.symlink(entry, lib / entry.name)
    return env


def test_a_daemon_the_client_starts_runs_none_of_what_the_agent_planted(tmp_path, ws):
    mark = tmp_path / "ran.txt"
    env_dir = linked_environment(tmp_path)
    site = next((env_dir / "lib").glob("python*/site-packages"))
    (site / "zz-planted.pth").write_text(PLANT.format(mark=str(mark), who="pth"))
    planted = tmp_path / "agent-modules"
    planted.mkdir()
    (planted / "sitecustomize.py").write_text(PLANT.format(mark=str(mark), who="sitecustomize"))
    shims = tmp_path / "shims"
    shims.mkdir()
    for name in ("python3", "python", "vacant"):
        (shims / name).write_text(f"#!/bin/sh\necho {name} shim ran >> {mark}\nexit 1\n")
        (shims / name).chmod(0o755)
    mark_installed(ws)
    environment = dict(os.environ, PYTHONPATH=str(planted),
                       PATH=f"{shims}{os.pathsep}{os.environ['PATH']}")
    # the client's own start: its interpreter isolated, vacant's package put on sys.path by path
    starter = (f"import sys; sys.path[:0] = [{PACKAGE_ROOT!r}, {str(site)!r}]; from pathlib import Path; "
               f"from vacant.hook.paths import spawn; print(spawn(Path({str(ws)!r})))")
    started = subprocess.run([str(env_dir / "bin" / "python"), "-I", "-S", "-c", starter], env=environment,
                             capture_output=True, text=True, timeout=60)
    assert started.returncode == 0 and int(started.stdout) > 0, started.stderr
    pid = int(started.stdout)
    deadline = time.monotonic() + 30
    while (info(ws) or {}).get("pid") != pid:
        assert time.monotonic() < deadline, (ws / ".git").exists()
        time.sleep(0.1)
    assert not mark.exists(), mark.read_text()  # nothing planted ran: the daemon came up without it
    os.kill(pid, 15)
