"""`vacant contract add` as a person runs it: --keep, the probe's last lines, and Ctrl-C during a probe;
`vacant doctor` and `vacant report` on a contract that does not read."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from waiting import wait_for

from vacant.core.exitcodes import Exit

pytestmark = pytest.mark.usefixtures("isolated_home")


def vacant(ws: Path, *args: str, **popen) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "vacant", *args], cwd=ws, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **popen)


def run(ws: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    proc = vacant(ws, *args, env=env)
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def carrying(token: str) -> list[int]:
    """The live processes (host pids) whose command line holds `token`."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as handle:
                    if token.encode() in handle.read() and alive(int(name)):
                        found.append(int(name))
            except OSError:
                continue
    return found



@pytest.mark.slow
def test_keep_adds_a_guard_and_shows_the_probe(ws):
    (ws / "tests").mkdir()
    (ws / "tests" / "__init__.py").write_text("")
    (ws / "tests" / "test_a.py").write_text("import unittest\n\nclass A(unittest.TestCase):\n"
                                            "    def test_a(self):\n        pass\n")
    code, out, err = run(ws, "contract", "add", "tests", "--keep", "--", f"{sys.executable} -m unittest tests.test_a")
    assert code == Exit.OK, err
    assert out.startswith("added guard 'tests' to vacant.toml (probe: exit 0 in ")
    assert "  | OK" in out and "  | Ran 1 test" in out
    code, out, _ = run(ws, "contract", "list", "--json")
    assert [(row["kind"], row["name"]) for row in json.loads(out)["checks"]] == [("guard", "tests")]


@pytest.mark.slow
def test_a_program_that_is_not_installed_is_added_with_its_env_warning(ws):
    """`vacant contract add lint -- ruff check .` where ruff is on no PATH: exit 127, accepted (the
    agent may provision ruff), the env/ruff warning said, the probe's env kept and listed."""
    path = os.pathsep.join(d for d in os.environ["PATH"].split(os.pathsep) if d and not (Path(d) / "ruff").exists())
    assert shutil.which("ruff", path=path) is None
    env = {**os.environ, "PATH": path}
    code, out, err = run(ws, "contract", "add", "lint", "--", "ruff", "check", ".", env=env)
    assert code == Exit.OK, err
    assert out.startswith("added check 'lint' to vacant.toml (probe: exit 127 in ")
    assert "ruff: command not found" in out  # the probe's last lines
    assert err.startswith("vacant: warning: env/ruff: `ruff` is not available to checks, so 'lint' is red for a "
                          "reason editing code cannot fix")
    code, out, _ = run(ws, "contract", "list", env=env)
    assert code == Exit.OK and ", env/ruff" in out and "added broken" not in out


@pytest.mark.slow
def test_a_wrapper_vacant_cannot_read_is_added_with_one_sentence_saying_so(ws):
    """`make test` whose recipe goes through a make variable: vacant cannot tell which runner it
    calls, so the guard is added and `contract add` says, in one sentence on stderr, that it runs
    whole and why; a plain recipe gets no such sentence."""
    (ws / "Makefile").write_text(f"PY = {sys.executable}\n.PHONY: test\ntest:\n\t$(PY) -c pass\n")
    code, out, err = run(ws, "contract", "add", "suite", "--keep", "--", "make", "-s", "test")
    assert code == Exit.OK, err
    [said] = [line for line in err.splitlines() if "make -s test" in line]
    assert said.startswith("vacant: warning: `make -s test` runs whole") and said.count(". ") == 0
    assert "make variables or functions ($)" in said and said.endswith("for a finding per test")
    (ws / "Makefile").write_text(f".PHONY: check\ncheck:\n\t{sys.executable} -c pass\n")
    code, out, err = run(ws, "contract", "add", "plain", "--keep", "--", "make", "-s", "check")
    assert code == Exit.OK and "runs whole" not in err, err


def test_the_refusal_of_a_passing_check_names_the_guard_in_one_sentence(ws):
    code, _, err = run(ws, "contract", "add", "ok", "--", "echo all good")
    assert code == Exit.USER_ERROR
    first = err.splitlines()[0]
    assert "passes now" in first and "add it as a guard with --keep" in first
    assert "`vacant contract add ok --keep -- 'echo all good'`" in first and "  | all good" in err


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupt_kills_the_probe_group_and_exits_130(ws, sig):
    """As a terminal sends it: to vacant's process group (the probe runs in a group of its own, and
    behind the wall in a pid namespace of its own: its processes are found by a token in their
    command lines, as the host numbers them)."""
    token = f"60.{os.getpid()}{sig}"  # sleep's own argument: unique to this test's processes
    proc = vacant(ws, "contract", "add", "slow", "--", f"sleep {token} & echo started > child.pid; wait; false",
                  start_new_session=True)
    child_file = ws / "child.pid"
    assert wait_for(lambda: child_file.exists() and child_file.read_text().strip()), proc.stderr.read()
    assert wait_for(lambda: len(carrying(token)) >= 2)  # the probe's shell and its sleep, at least
    sent = time.monotonic()
    os.killpg(proc.pid, sig)
    out, err = proc.communicate(timeout=10)
    assert time.monotonic() - sent < 2.0
    assert proc.returncode == Exit.INTERRUPTED == 130
    assert err.strip() == (f"vacant: stopped by {signal.Signals(sig).name}; the probe of 'slow' was killed with its "
                           "process group; nothing was added to vacant.toml")
    assert wait_for(lambda: not carrying(token), 2.0), carrying(token)
    assert not (ws / "vacant.toml").exists()


@pytest.mark.slow
def test_doctor_fails_on_a_contract_that_does_not_read(ws):
    (ws / "vacant.toml").write_text('[[check]]\nname = "a"\ncommand = "false"\n[[check]\n')
    code, out, _ = run(ws, "doctor", "--json")
    lines = {line["name"]: line for line in json.loads(out)["lines"]}
    assert code == Exit.FAILED
    assert lines["contract"]["status"] == "fail"
    assert f"{ws / 'vacant.toml'} is not valid TOML at line 4" in lines["contract"]["detail"]
    (ws / "vacant.toml").write_text('[[guard]]\nname = "a"\ncommand = "true"\n')
    code, out, _ = run(ws, "doctor", "--json")
    lines = {line["name"]: line for line in json.loads(out)["lines"]}
    assert lines["contract"]["status"] == "ok" and "1 guard(s), 0 acceptance check(s)" in lines["contract"]["detail"]


def test_check_names_the_line_and_the_nearest_key(ws):
    (ws / "vacant.toml").write_text('[[check]]\nname = "a"\ncomand = "false"\n')
    code, _, err = run(ws, "check")
    assert code == Exit.USER_ERROR
    assert err.strip() == (f"vacant: {ws / 'vacant.toml'}, line 3: [[check]] #1 ('a'): unknown key 'comand' "
                           "(did you mean 'command'?): allowed keys are name, command, timeout, probe, junit, network")
