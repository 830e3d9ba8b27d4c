"""The worst attacks of issue 22, run for real as shell commands of the agent: behind the wall
(bubblewrap as `vacant do` invokes it, vacant/do/bwrap.py) and without it (the same command,
plain). Each case passes only when the wall stops it AND it succeeds without the wall, so no case
can pass by being unable to fail. Missing bwrap fails these tests (scripts/setup installs it)."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vacant.core.locations import mark_installed, state_dir, user_config_dir
from vacant.core.wall import ensure_hidden_dirs, temp_dirs, wall_for
from vacant.do.bwrap import wrap
from vacant.platforms import lean_registry  # noqa: F401 - the platforms' settings files the wall guards, as the CLI loads them

pytestmark = [pytest.mark.usefixtures("isolated_home"), pytest.mark.disk_tmp]  # bwrap: nothing on tmpfs behind it

KEY = b"K" * 32


@pytest.fixture
def site(tmp_path, isolated_home, monkeypatch):
    """A workspace installed by vacant with the person's key, a run, the daemon's socket and a
    pointer, hook settings, and a `vacant` on PATH in a directory of its own."""
    assert shutil.which("bwrap"), "bubblewrap is missing: scripts/setup installs it (apt-get install bubblewrap)"
    (tmp_path / "tmp").mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))  # the daemon's temp directory, this test's own
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    mark_installed(ws)
    ensure_hidden_dirs(ws)
    (user_config_dir() / "key").write_bytes(KEY)
    run = state_dir(ws) / "runs" / "r1"
    run.mkdir(parents=True)
    (run / "report.json").write_text('{"findings": ["f1"]}\n')
    (state_dir(ws) / "lock").write_bytes(b"")
    (state_dir(ws) / "daemon").mkdir()
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.local.json").write_text('{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", '
                                                       '"command": "vacant-hook claude"}]}]}}\n')
    bin_dir = tmp_path / "person-bin"
    bin_dir.mkdir()
    (bin_dir / "vacant").write_text("#!/bin/sh\nexec true\n")
    (bin_dir / "vacant").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return ws, tmp_path


def daemon_tmp() -> Path:
    """This test's `$TMPDIR/vacant-<uid>` (one of core/wall.temp_dirs)."""
    found = [d for d in temp_dirs() if str(d).startswith(os.environ["TMPDIR"])]
    assert found, temp_dirs()
    return found[0]


def run(ws: Path, tmp: Path, command: str, walled: bool, **popen) -> subprocess.CompletedProcess:
    argv = ["sh", "-c", command]
    if walled:
        argv = wrap(argv, ws, ws, tmp / "sandbox-tmp", wall_for(ws), terminal=False)
    return subprocess.run(argv, cwd=ws, capture_output=True, timeout=60, **popen)


KEY_READS = [
    "cat {key}", "dd if={key} 2>/dev/null", "tar -C {config} -cf - vacant", "find {home} -name key -exec cat {{}} \\;",
    "grep -r K {config}", "python3 -c 'print(open(\"{key}\").read())'", "cp {key} ./stolen && cat ./stolen",
    "git -C {config} --git-dir=$PWD/.git --work-tree={config} add -f vacant/key && git show :vacant/key",
]


@pytest.mark.parametrize("attack", KEY_READS)
@pytest.mark.parametrize("walled", [True, False])
def test_the_key_is_unreadable_behind_the_wall(site, attack, walled):
    ws, tmp = site
    key = user_config_dir() / "key"
    command = attack.format(key=key, config=key.parent.parent, home=os.environ["HOME"])
    out = run(ws, tmp, command, walled)
    leaked = KEY.decode() in out.stdout.decode(errors="replace")
    assert leaked is not walled, (command, out.stderr.decode(errors="replace")[-400:])
    (ws / "stolen").unlink(missing_ok=True)


RECORD_WRITES = {
    "delete install.json": ("python3 -c 'import os; os.remove(\"{state}/install.json\")'",
                            lambda ws: (state_dir(ws) / "install.json").exists()),
    "remove the state": ("rm -rf {state}", lambda ws: state_dir(ws).is_dir()),
    "edit a report": ("echo '{{\"findings\": []}}' > {state}/runs/r1/report.json",
                      lambda ws: "f1" in (state_dir(ws) / "runs" / "r1" / "report.json").read_text()),
    "settings env": ("python3 -c 'import json; p=\".claude/settings.local.json\"; d=json.load(open(p)); "
                     "d[\"env\"]={{\"VACANT_HOOK_BUDGET_S\": \"x\"}}; json.dump(d, open(p, \"w\"))'",
                     lambda ws: "env" not in json.loads((ws / ".claude" / "settings.local.json").read_text())),
    "hook substring": ("sed -i 's/vacant-hook claude/true vacant-hook/' .claude/settings.local.json",
                       lambda ws: "vacant-hook claude" in (ws / ".claude" / "settings.local.json").read_text()),
    "fake pointer": ("mkdir -p {tmpdir}/roots && echo fake > {tmpdir}/roots/x",
                     lambda ws: not (daemon_tmp() / "roots" / "x").exists()),
    "rename .claude away": ("mv .claude .claude-old && mkdir .claude && echo '{{}}' > .claude/settings.local.json",
                            lambda ws: "vacant-hook claude" in (ws / ".claude" / "settings.local.json").read_text()),
    "rename .git away": ("mv .git .git-old && echo 'gitdir: .git-old' > .git",
                         lambda ws: (ws / ".git").is_dir() and (ws / ".git" / "vacant" / "install.json").is_file()),
    "vacant shim": ("printf '#!/bin/sh\\necho chain intact\\n' > {shim} && chmod +x {shim}",
                    lambda ws: "chain intact" not in Path(shutil.which("vacant")).read_text()),
}


@pytest.mark.parametrize("name", sorted(RECORD_WRITES))
@pytest.mark.parametrize("walled", [True, False])
def test_the_record_and_the_settings_stay_as_they_were(site, name, walled):
    ws, tmp = site
    command, intact = RECORD_WRITES[name]
    run(ws, tmp, command.format(state=state_dir(ws), tmpdir=daemon_tmp(), shim=shutil.which("vacant")), walled)
    assert intact(ws) is walled, name


@pytest.mark.parametrize("walled", [True, False])
def test_the_daemon_socket_is_out_of_reach(site, walled):
    ws, tmp = site
    path = str(state_dir(ws) / "daemon" / "sock")
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen(1)
    try:
        probe = f"import socket; s=socket.socket(socket.AF_UNIX); s.connect({path!r}); print('reached')"
        out = run(ws, tmp, f"{sys.executable} -I -c \"{probe}\"", walled)
        assert (b"reached" in out.stdout) is not walled, out.stderr[-300:]
    finally:
        server.close()


@pytest.mark.slow
@pytest.mark.parametrize("walled", [True, False])
def test_the_workspace_lock_cannot_be_held(site, walled):
    ws, tmp = site
    lock = state_dir(ws) / "lock"
    holder = (f"{sys.executable} -I -c \"import fcntl,time; f=open({str(lock)!r},'a'); "
              "fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True); time.sleep(20)\"")
    argv = ["sh", "-c", holder]
    if walled:
        argv = wrap(argv, ws, ws, tmp / "sandbox-tmp", wall_for(ws), terminal=False)
    proc = subprocess.Popen(argv, cwd=ws, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        assert proc.stdout.readline().strip() == b"held", proc.stderr.read()
        deadline = time.monotonic() + 5
        with open(lock, "a") as handle:
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    free = True
                    break
                except BlockingIOError:
                    free = False
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.05)
        assert free is walled
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the shell and the holder it started
        proc.wait()


@pytest.mark.slow
@pytest.mark.parametrize("walled", [True, False])
def test_normal_work_is_unaffected(site, walled):
    ws, tmp = site
    (ws / "test_x.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    out = run(ws, tmp, "echo new > new.txt && mkdir -p .github/workflows && git add -A && "
                       "git -c user.email=a@b.invalid -c user.name=a commit -qm work && "
                       f"{sys.executable} -m pytest -q -p no:cacheprovider test_x.py", walled)
    assert out.returncode == 0, out.stdout[-500:] + out.stderr[-500:]
    log = subprocess.run(["git", "log", "--format=%s"], cwd=ws, capture_output=True, text=True).stdout
    assert log.split() == ["work"] and (ws / "new.txt").read_text() == "new\n"


def test_the_environment_vacant_runs_from_is_read_only_whole(site):
    """A `.pth` planted in the site-packages of the interpreter vacant runs from would run in every
    `vacant` the person starts: the interpreter's whole prefix is on the wall's read-only list
    (which Claude's and Codex's sandbox settings and the bubblewrap wall are made from)."""
    ws, _ = site
    wall = wall_for(ws)
    assert os.path.realpath(sys.prefix) in wall.readonly
    site_packages = [p for p in sys.path if p.endswith("site-packages") and p.startswith(sys.prefix)]
    assert site_packages and all(wall.refusal(os.path.join(p, "x.pth"), writing=True) for p in site_packages)
