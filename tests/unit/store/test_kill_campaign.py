"""Class 7 of issue 11: real processes SIGKILLed at random points of their work.

Recorded Claude payloads (fixtures/payloads) are replayed one process per call, and a random
share of the calls is cut by a SIGKILL after a random delay drawn around the call's own measured
duration. Two campaigns, one per writer of the step log:

* `writer`: the in-process hook (`python -I -m vacant.hook.entry claude`, what answers when no
  daemon runs); the hook process itself is killed;
* `daemon`: the installed lean client with the workspace's daemon answering; the *daemon* is
  killed while a call is under way, and the calls that follow fall back in-process and start a
  new daemon, as they do on a person's machine.

Then a Stop (not killed) and the oracle, which knows only what each call was asked and how it
ended:

* an acknowledged event (the call exited 0 on its own) is in the log: a Pre's `step_start`, a
  Post's `step_end`, a prompt's read with exactly the prompt's content hash;
* no step number is handed out twice, no call is started twice; every step is closed after the
  Stop;
* `verify` finds the chain intact (torn lines from killed writers are allowed: never fatal).

The campaign goes on until it has its kills (calls are generated as needed, within a bound), so
a machine fast enough to finish most calls before their kill does not shorten it.
`VACANT_KILLS=400` runs a longer writer campaign (default 100 kills of each). Each campaign runs
in shares (parallel tests, each its own workspace and seed) that together make its kills.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import shlex
import signal
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import xxhash

from vacant.core import events
from vacant.core.locations import mark_installed, run_dir
from vacant.daemon import lifecycle
from vacant.hook.paths import daemon_dir, info
from vacant.platforms.settings_file import hook_command
from vacant.store.steplog import StepLog, verify

PAYLOADS = Path(__file__).resolve().parents[3] / "fixtures" / "payloads" / "claude-code-hook_payloads.json"
SESSION = "kill-campaign"
WRITER = [sys.executable, "-I", "-m", "vacant.hook.entry", "claude"]


def templates() -> dict[str, dict]:
    recorded = json.loads(PAYLOADS.read_text())
    return {name: recorded[name]["stdin"] for name in
            ("UserPromptSubmit", "PreToolUse:Write", "PostToolUse:Write", "PreToolUse:Bash", "PostToolUse:Bash",
             "Stop:stop_hook_active=False")}


def payload(template: dict, ws: Path, **changes) -> bytes:
    body = json.loads(json.dumps(template).replace("<ws>", str(ws)))
    body.update(session_id=SESSION, cwd=str(ws), transcript_path=None)
    for key, value in changes.items():
        if key == "tool_input":
            body["tool_input"] = value
        else:
            body[key] = value
    return json.dumps(body).encode()


def calls(ws: Path, rng: random.Random) -> Iterator[tuple[str, str, bytes]]:
    """(kind, identity, payload), without end: prompts and Write/Bash pairs, every call unique."""
    tpl = templates()
    for i in itertools.count():
        choice = rng.random()
        if choice < 0.15:
            prompt = f"prompt {i} {rng.random()}"
            yield "prompt", xxhash.xxh3_128_hexdigest(prompt.encode()), payload(tpl["UserPromptSubmit"], ws, prompt=prompt)
            continue
        tool = "Write" if choice < 0.6 else "Bash"
        key = f"toolu_kill_{i}"
        tool_input = ({"file_path": str(ws / f"f{i % 7}.txt"), "content": f"v{i}\n"} if tool == "Write"
                      else {"command": f"echo {i} > b{i % 5}.txt"})
        yield "pre", f"main/{key}", payload(tpl[f"PreToolUse:{tool}"], ws, tool_use_id=key, tool_input=tool_input)
        yield "post", f"main/{key}", payload(tpl[f"PostToolUse:{tool}"], ws, tool_use_id=key, tool_input=tool_input)


def start(command: list[str], data: bytes, env: dict, ws: Path) -> subprocess.Popen:
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=env, cwd=ws)
    proc.stdin.write(data)
    proc.stdin.close()
    return proc


@pytest.fixture(autouse=True)
def homes(tmp_path, monkeypatch):
    """This process finds the workspace's state (and its daemon) where the hooks keep it."""
    monkeypatch.setenv("VACANT_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("VACANT_STATE_DIR", raising=False)


def workspace(tmp_path: Path) -> tuple[Path, Path, dict]:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {**os.environ, "VACANT_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "CLAUDE_PROJECT_DIR": str(ws), "HOME": str(tmp_path / "home")}
    env.pop("VACANT_STATE_DIR", None)
    env.pop("VACANT_DO", None)
    mark_installed(ws)  # with this test's homes (the fixture below sets them in this process too)
    return ws, run_dir(ws, SESSION), env


def live_daemon(ws: Path) -> int | None:
    """The pid of the workspace's daemon when one runs (checked on /proc: a reused pid is not it)."""
    pid = (info(ws) or {}).get("pid")
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except (OSError, TypeError):
        return None
    return pid if b"vacant.daemon" in cmdline and str(ws).encode() in cmdline else None


def wait_for_daemon(ws: Path, timeout: float = 30.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pid = live_daemon(ws)
        if pid is not None and lifecycle.running(ws):
            return pid
        time.sleep(0.02)
    raise AssertionError("the workspace's daemon did not come up")


class Campaign:
    """One campaign's bookkeeping: what was acknowledged, how many kills landed, how long a call takes."""

    def __init__(self, command: list[str], env: dict, ws: Path):
        self.command, self.env, self.ws = command, env, ws
        self.acknowledged: list[tuple[str, str]] = []
        self.kills = 0
        self.durations: list[float] = []

    @property
    def typical(self) -> float:
        return statistics.median(self.durations[-9:])  # recent calls: a daemon makes them faster

    def unkilled(self, kind: str, ident: str, data: bytes) -> None:
        began = time.monotonic()
        assert start(self.command, data, self.env, self.ws).wait(timeout=60) == 0
        self.durations.append(time.monotonic() - began)
        self.acknowledged.append((kind, ident))

    def ended(self, kind: str, ident: str, code: int, began: float) -> None:
        if code == 0:
            self.acknowledged.append((kind, ident))
            self.durations.append(time.monotonic() - began)


def writer_campaign(cmp: Campaign, plan: Iterator, kills_wanted: int, rng: random.Random) -> None:
    """The hook process is the victim."""
    for kind, ident, data in plan:
        began = time.monotonic()
        proc = start(cmp.command, data, cmp.env, cmp.ws)
        if cmp.kills < kills_wanted and rng.random() < 0.75:
            time.sleep(rng.uniform(0.2, 1.1) * cmp.typical)
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
        code = proc.wait(timeout=60)
        cmp.kills += code == -signal.SIGKILL
        cmp.ended(kind, ident, code, began)
        if cmp.kills >= kills_wanted and len(cmp.acknowledged) > kills_wanted:
            return


def daemon_campaign(cmp: Campaign, plan: Iterator, kills_wanted: int, rng: random.Random) -> None:
    """The daemon is the victim, while a client's call is under way; the next calls find it gone.

    The daemon's part of a call is its last few milliseconds (after the client's start), so the
    delays are drawn around the end of a call the daemon answers: most kills land while it
    records, answers, or saves its state."""
    answered: list[float] = []  # durations of calls the daemon answered (it ran before and after)
    for kind, ident, data in plan:
        running = live_daemon(cmp.ws)
        victim = running if answered and cmp.kills < kills_wanted and rng.random() < 0.3 else None
        began = time.monotonic()
        proc = start(cmp.command, data, cmp.env, cmp.ws)
        if victim is not None:
            time.sleep(rng.uniform(0.5, 1.05) * statistics.median(answered[-9:]))
            try:
                os.kill(victim, signal.SIGKILL)
                cmp.kills += 1
            except ProcessLookupError:
                pass
        code = proc.wait(timeout=60)
        cmp.ended(kind, ident, code, began)
        if victim is None and running is not None and code == 0 and live_daemon(cmp.ws) == running:
            answered.append(time.monotonic() - began)
        if victim is not None:
            (daemon_dir(cmp.ws) / "spawned").unlink(missing_ok=True)  # no 10 s grace before the next one starts
        if cmp.kills >= kills_wanted and len(cmp.acknowledged) > kills_wanted:
            return


def campaign(tmp_path: Path, kills_wanted: int, seed: int, victim: str = "writer") -> dict:
    rng = random.Random(seed)
    ws, log_dir, env = workspace(tmp_path)
    command = WRITER if victim == "writer" else shlex.split(hook_command("claude"))
    plan = itertools.islice(calls(ws, rng), kills_wanted * 12)  # bounded: a campaign that cannot kill fails
    cmp = Campaign(command, env, ws)
    try:
        for kind, ident, data in itertools.islice(plan, 6):  # the call's own duration, measured unkilled
            cmp.unkilled(kind, ident, data)
        if victim == "writer":
            writer_campaign(cmp, plan, kills_wanted, rng)
        else:
            wait_for_daemon(ws)
            for kind, ident, data in itertools.islice(plan, 6):  # its duration through the daemon
                cmp.unkilled(kind, ident, data)
            daemon_campaign(cmp, plan, kills_wanted, rng)
        stop = payload(templates()["Stop:stop_hook_active=False"], ws)
        assert start(command, stop, env, ws).wait(timeout=300) == 0
    finally:
        if victim == "daemon":
            stop_daemon(ws)
    return {"ws": ws, "log_dir": log_dir, "kills": cmp.kills, "acknowledged": cmp.acknowledged,
            "typical_s": cmp.typical, "calls": len(cmp.acknowledged) + cmp.kills}


def stop_daemon(ws: Path) -> None:
    lifecycle.stop(ws)
    deadline = time.monotonic() + 10
    while (pid := live_daemon(ws)) is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    if pid is not None:
        os.kill(pid, signal.SIGKILL)


def check(result: dict) -> dict:
    log = StepLog(result["log_dir"])
    with _quiet():
        records = events.load(log.path)
    starts = [r for r in records if r["type"] == "step_start"]
    ends = [r for r in records if r["type"] == "step_end"]
    numbers = Counter(r["step"] for r in starts)
    duplicates = {n: c for n, c in numbers.items() if c > 1}
    twice = {k: c for k, c in Counter(r["key"] for r in starts).items() if c > 1}  # one call, two steps
    started_keys = {r["key"] for r in starts}
    ended_keys = {r["key"] for r in ends}
    prompt_objects = {r["object"] for r in records if r["type"] == "read" and r.get("origin") == "prompt"}
    lost = []
    for kind, ident in result["acknowledged"]:
        if (kind == "pre" and ident not in started_keys) or (kind == "post" and ident not in ended_keys) or (
                kind == "prompt" and ident not in prompt_objects):
            lost.append((kind, ident))
    unclosed = sorted({r["step"] for r in starts} - {r["step"] for r in ends})
    problems = verify(log)
    return {"kills": result["kills"], "acknowledged": len(result["acknowledged"]), "lost": lost,
            "duplicates": duplicates, "twice": twice, "unclosed": unclosed, "fatal": [p for p in problems if p.fatal],
            "torn": sum(1 for p in problems if not p.fatal), "steps": len(starts),
            "typical_ms": round(result["typical_s"] * 1000)}


class _quiet:
    def __enter__(self):
        import warnings

        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        warnings.simplefilter("ignore")  # torn lines of killed writers: counted by verify below

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)


def run_campaign(tmp_path: Path, kills: int, trust_tally, seed: int, victim: str = "writer") -> dict:
    figures = check(campaign(tmp_path, kills, seed, victim))
    print(f"kill campaign ({victim}): {figures['kills']} SIGKILLs, {figures['acknowledged']} acknowledged events, "
          f"{len(figures['lost'])} lost, {len(figures['duplicates'])} duplicate step numbers, "
          f"{len(figures['twice'])} calls started twice, "
          f"{len(figures['unclosed'])} unclosed steps, {len(figures['fatal'])} chain breaks, "
          f"{figures['torn']} torn lines, {figures['steps']} steps, call ~{figures['typical_ms']} ms")
    held = not figures["lost"] and not figures["duplicates"] and not figures["twice"]
    for _ in range(figures["kills"]):
        trust_tally(f"7 crash consistency (SIGKILLs of the {victim})", held)
    assert figures["kills"] >= kills
    assert figures["lost"] == [] and figures["duplicates"] == {} and figures["unclosed"] == []
    assert figures["twice"] == {}
    assert figures["fatal"] == []
    return figures


def share_of(kills: int, shares: int, share: int) -> int:
    """This share's kills: together the shares make `kills`."""
    return kills // shares + (share < kills % shares)


# Each campaign runs in shares (own workspace, own seed; together the same number of kills), so
# pytest-xdist runs them on several workers at once.
@pytest.mark.slow
@pytest.mark.parametrize("share", range(2))
def test_kill_campaign_loses_no_acknowledged_event_and_reuses_no_step_number(tmp_path, trust_tally, share):
    kills = share_of(int(os.environ.get("VACANT_KILLS", "100")), 2, share)
    run_campaign(tmp_path, kills, trust_tally, seed=11 + 100 * share)


@pytest.mark.slow
@pytest.mark.parametrize("share", range(4))
def test_killing_the_daemon_mid_call_loses_no_acknowledged_event_and_records_no_call_twice(tmp_path, trust_tally,
                                                                                           share):
    run_campaign(tmp_path, share_of(100, 4, share), trust_tally, seed=12 + 100 * share, victim="daemon")
