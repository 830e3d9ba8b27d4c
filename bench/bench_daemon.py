"""Hook latency with the watch daemon, next to `git status` on the same tree, in one run.

    python bench/bench_daemon.py [--tree DIR] [--reps 15] [--json OUT]

Rows, per workspace (a small one, and --tree, e.g. bench/gen_tree.py's 40k tree): the http hook
(an HTTP POST of a real payload, a fresh connection per call as Claude's hook runner makes it),
the command hook through the lean client with a daemon, and the same command with no daemon
(the in-process fallback), each for Pre/Post of Read, Write, Edit and a shell step (the Bash Post
after the step wrote one file); then `python -I -S -c pass`, `git status`, and `git status` with
core.fsmonitor=true + core.untrackedCache=true. Figures are medians and p95 in ms; ratios only
mean something within one run. Never asserts a time. Also the daemon's RSS after the run, and its CPU
time and thread wake-ups over 5 s with nothing happening (a poll would show as wake-ups).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from vacant.core.locations import mark_installed  # noqa: E402
from vacant.daemon import lifecycle  # noqa: E402
from vacant.hook.paths import daemon_dir, info  # noqa: E402

PYTHON = sys.executable
SESSION = f"bench-{os.getpid()}-{int(time.time())}"  # a new run each time: a kept tree holds the last run's keys
CLIENT = [PYTHON, "-I", "-S", str(REPO / "vacant" / "vacant-hook-client.py"), "claude"]


def hold_spawned(ws: Path) -> None:
    """A `spawned` marker dated an hour ahead: the client believes a daemon is starting, answers
    in-process (the fallback) and starts none, however long a call takes (a shell step's full scan
    of a 40k tree under load outlasts the 10 s grace of a marker written before it)."""
    marker = daemon_dir(ws) / "spawned"
    marker.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    marker.write_text("bench")
    ahead = time.time() + 3600
    os.utime(marker, (ahead, ahead))


def stats(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def payload(ws: Path, event: str, tool: str, key: str, **extra) -> bytes:
    return json.dumps({"session_id": SESSION, "transcript_path": "/nonexistent.jsonl", "cwd": str(ws),
                       "hook_event_name": event, "tool_name": tool, "tool_use_id": key, **extra}).encode()


def inputs(ws: Path, n: int) -> dict[str, dict]:
    target = str(ws / "bench_target.txt")
    return {"Read": {"tool_input": {"file_path": target},
                     "tool_response": {"type": "text", "file": {"filePath": target, "content": "x\n"}}},
            "Write": {"tool_input": {"file_path": target, "content": f"write {n}\n"}},
            "Edit": {"tool_input": {"file_path": target, "old_string": "x", "new_string": "y"}},
            "Bash": {"tool_input": {"command": f"echo {n} > bench_shell.txt"},
                     "tool_response": {"stdout": "", "stderr": "", "interrupted": False}}}


def run_command(cmd: list[str], body: bytes | None, env: dict, cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, input=body, env=env, cwd=cwd, stdout=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - started) * 1000


def run_http(ws: Path, body: bytes) -> float:
    config = lifecycle.ensure_config(ws)
    port = info(ws)["port"]
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("POST", "/hook/claude", body, {"Content-Type": "application/json", "X-Vacant-Token": config["secret"],
                                                "Host": f"127.0.0.1:{port}"})
    response = conn.getresponse()
    response.read()
    conn.close()
    if response.status != 200:
        raise SystemExit(f"http hook answered {response.status}")
    return (time.perf_counter() - started) * 1000


def steps(ws: Path, reps: int, mode: str, env: dict) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for n in range(reps):
        for tool, fields in inputs(ws, n).items():
            key = f"{mode}-{tool}-{n}"
            pre = {k: v for k, v in fields.items() if k != "tool_response"}
            for event, body in (("PreToolUse", payload(ws, "PreToolUse", tool, key, **pre)),
                                ("PostToolUse", payload(ws, "PostToolUse", tool, key, **fields))):
                if event == "PostToolUse" and tool == "Write":
                    (ws / "bench_target.txt").write_text(f"write {n}\n")
                if event == "PostToolUse" and tool == "Bash":
                    (ws / "bench_shell.txt").write_text(f"{n}\n")
                if mode == "http":
                    took = run_http(ws, body)
                else:
                    if mode == "fallback":
                        hold_spawned(ws)
                    took = run_command(CLIENT, body, env, ws)
                out.setdefault(f"{mode} {event}:{tool}", []).append(took)
    return out


def measure(ws: Path, reps: int) -> tuple[dict[str, list[float]], dict]:
    env = dict(os.environ, CLAUDE_PROJECT_DIR=str(ws))
    mark_installed(ws)  # hooks record only in an installed workspace
    (ws / "bench_target.txt").write_text("x\n")
    hold_spawned(ws)
    subprocess.run(CLIENT, input=json.dumps({"session_id": SESSION, "cwd": str(ws), "hook_event_name": "SessionStart",
                                           "source": "startup"}).encode(), env=env, cwd=ws, check=True)
    samples: dict[str, list[float]] = {"python -I -S -c pass": [], "git status": [], "git status (fsmonitor)": []}
    git = ["git", "-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false", "status", "--porcelain"]
    fsm = ["git", "-c", "core.fsmonitor=true", "-c", "core.untrackedCache=true", "status", "--porcelain"]
    is_git = (ws / ".git").exists()
    for _ in range(reps):
        samples["python -I -S -c pass"].append(run_command([PYTHON, "-I", "-S", "-c", "pass"], None, env, ws))
        if is_git:
            samples["git status"].append(run_command(git, None, env, ws))
            samples["git status (fsmonitor)"].append(run_command(fsm, None, env, ws))
    samples.update(steps(ws, reps, "fallback", env))  # no daemon yet
    (daemon_dir(ws) / "spawned").unlink(missing_ok=True)
    daemon = subprocess.Popen([PYTHON, "-m", "vacant.daemon", str(ws)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while not (info(ws) or {}).get("pid") == daemon.pid:
            time.sleep(0.05)
        run_command(CLIENT, payload(ws, "PostToolUse", "Bash", "warm", tool_input={"command": "true"}), env, ws)
        samples.update(steps(ws, reps, "http", env))
        samples.update(steps(ws, reps, "client+daemon", env))
        status = lifecycle.ask_status(ws)
        status["idle"] = idle(daemon.pid, IDLE_S)
    finally:
        lifecycle.stop(ws)
        daemon.wait(10)
    return {k: v for k, v in samples.items() if v}, status


IDLE_S = 5.0


def idle(pid: int, seconds: float) -> dict:
    """What the daemon costs while nothing happens: CPU time and thread wake-ups (the kernel's
    context-switch counts, every thread) over `seconds` with no call and no change."""
    def snapshot() -> tuple[int, int]:
        ticks = switches = 0
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                fields = Path(f"/proc/{pid}/task/{task}/stat").read_text().rsplit(")", 1)[1].split()
                status = Path(f"/proc/{pid}/task/{task}/status").read_text()
            except FileNotFoundError:
                continue
            ticks += int(fields[11]) + int(fields[12])  # utime + stime
            switches += sum(int(line.split()[1]) for line in status.splitlines() if "ctxt_switches" in line)
        return ticks, switches
    time.sleep(1.0)  # the last call's save is done
    ticks, switches = snapshot()
    time.sleep(seconds)
    after_ticks, after_switches = snapshot()
    return {"seconds": seconds, "cpu_ms": (after_ticks - ticks) * 1000 / os.sysconf("SC_CLK_TCK"),
            "wakeups": after_switches - switches}


def report(title: str, samples: dict[str, list[float]], status: dict) -> dict:
    print(f"\n{title}")
    print(f"{'row':<38}{'median ms':>11}{'p95 ms':>9}")
    rows = {}
    for name, values in samples.items():
        median, p95 = stats(values)
        rows[name] = {"median": round(median, 2), "p95": round(p95, 2)}
        print(f"{name:<38}{median:>11.1f}{p95:>9.1f}")
    print(f"daemon: rss {status.get('rss_kb')} kB, watches {status.get('watches')}, scans {status.get('scans')}")
    quiet = status.get("idle") or {}
    print(f"daemon idle {quiet.get('seconds')} s: cpu {quiet.get('cpu_ms')} ms, thread wake-ups {quiet.get('wakeups')}")
    if not (status.get("scans") or {}).get("scoped"):
        raise SystemExit("the daemon scanned nothing: its calls were not recorded, so these figures mean nothing")
    return {"rows": rows, "daemon": {k: status.get(k) for k in ("rss_kb", "watches", "scans", "last_rescan", "idle")}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tree", type=Path)
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results = {}
    small = Path(tempfile.mkdtemp(prefix="vacant-bench-small-"))
    try:
        for n in range(20):
            (small / f"f{n}.txt").write_text(f"{n}\n")
        subprocess.run(["git", "init", "-q"], cwd=small, check=True)
        subprocess.run(["git", "add", "-A"], cwd=small, check=True)
        subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "x"], cwd=small, check=True)
        results["small"] = report("small workspace (20 files)", *measure(small, args.reps))
    finally:
        shutil.rmtree(small, ignore_errors=True)
    if args.tree:
        results["tree"] = report(f"tree {args.tree}", *measure(args.tree.resolve(), args.reps))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
