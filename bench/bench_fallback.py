"""The lean client's in-process fallback: the installed hook command when no daemon answers (a
session's first call, a daemon that is down or still starting), against `python -I -S -c pass`
measured in the same run.

    python bench/bench_fallback.py [--reps 30] [--first-reps 5] [--against TREE]

Rows, each the whole hook process with a real-shaped Claude payload on stdin:

- `fallback`: the installed command (`python -I -S …/vacant-hook-client.py claude`) with no daemon
  running and one started a moment ago (the client's `spawned` marker is fresh, as during a
  daemon's start-up): it finds no daemon, starts none, and answers in-process. This is the path
  the issue's "+15 ms" is about. It loads vacant's modules from the hot bundle (vacant/hook/
  bundle.py), which the bench builds first when missing or stale, as `vacant init` and every
  daemon's start do.
- `first call`: the same with no marker: the client also starts a daemon (detached), as at a
  session's very first call; the bench stops that daemon after each sample (untimed).
- `against`: with `--against TREE` (another checkout, e.g. `git worktree add --detach /tmp/old
  main`), that tree's launcher on the same calls, interleaved with this tree's sample by sample,
  so that a change is measured against what it changed under the same load.

Each row answers its calls in a workspace of its own: a second answer to the same call is a
duplicate, which costs otherwise (until 2026-12-03 a `vacant-hook.py` row, the in-process entry
run alone, retired with that launcher on 2026-12-07, answered the fallback's calls a second time in
the same workspace). Between a Write's or an Edit's Pre and Post the bench
changes the file as the tool would have (untimed), so that the Post hashes and stores a change, as
it does for real (before 2026-12-03 evening the file never changed: a Post then hashed nothing and
loaded no xxhash, about 0.7 ms less than a real one).

Each row gives wall-clock medians and p95 and, because a loaded machine's wall clock mostly measures
the other processes, the median CPU time (user + system) of the process, each next to the same
figure of the reference, and the fastest sample's difference to the fastest reference (the
nearest a shared machine gets to an idle one's figure).

A call that failed open would be fast and worthless: the bench refuses to print figures if
errors.log appeared, or if a daemon answered a `fallback` sample. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from vacant.core.locations import mark_installed, state_dir
from vacant.daemon import lifecycle
from vacant.hook import bundle
from vacant.hook.paths import daemon_dir
from vacant.platforms.settings_file import hook_command

PYTHON = sys.executable
CLIENT = shlex.split(hook_command("claude"))  # exactly what `vacant init` installs
REFERENCE = [PYTHON, "-I", "-S", "-c", "pass"]


CPU: dict[str, list[float]] = {}  # per row: the process's user + system CPU ms (steadier on a loaded machine)


def timed(cmd: list[str], payload: bytes | None, env: dict, cwd: Path, row: str = "") -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(cmd, input=payload, env=env, cwd=cwd, stdout=subprocess.DEVNULL, check=True)
    wall = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if row:
        CPU.setdefault(row, []).append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
    return wall


def stats(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def payload(workspace: Path, event: str, tool: str, key: str, fields: dict) -> bytes:
    body = {"session_id": "bench", "transcript_path": "/nonexistent.jsonl", "cwd": str(workspace),
            "hook_event_name": event, "tool_name": tool, "tool_use_id": key, **fields}
    return json.dumps(body).encode()


def calls(workspace: Path, n: int) -> list[tuple[str, bytes]]:
    """(row name, payload) of one round: Pre and Post of Read, Write, Edit and Bash."""
    target = str(workspace / "bench_target.txt")
    tools = {
        "Read": ({"tool_input": {"file_path": target}},
                 {"tool_response": {"type": "text", "file": {"filePath": target, "content": "x\n"}}}),
        "Write": ({"tool_input": {"file_path": target, "content": f"write {n}\n"}}, {}),
        "Edit": ({"tool_input": {"file_path": target, "old_string": "x", "new_string": "y"}}, {}),
        "Bash": ({"tool_input": {"command": "true"}},
                 {"tool_response": {"stdout": "", "stderr": "", "interrupted": False}}),
    }
    out = []
    for tool, (pre, post) in tools.items():
        out.append((f"Pre:{tool}", payload(workspace, "PreToolUse", tool, f"{tool}-{n}", pre)))
        out.append((f"Post:{tool}", payload(workspace, "PostToolUse", tool, f"{tool}-{n}", {**pre, **post})))
    return out


def act(workspace: Path, name: str, n: int) -> None:
    """What the tool itself did between its Pre and its Post (untimed): a Write wrote its content, an
    Edit changed the file, so that a Post hashes and stores a changed file, as it does for real. (A
    Read and `true` change nothing.)"""
    target = workspace / "bench_target.txt"
    if name == "Post:Write":
        target.write_text(f"write {n}\n")
    elif name == "Post:Edit":
        target.write_text(target.read_text().replace("x", "y", 1) + f"edit {n}\n")


def hold_spawned(workspace: Path) -> None:
    """A fresh `spawned` marker: the client believes a daemon is starting and starts none."""
    marker = daemon_dir(workspace) / "spawned"
    marker.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    marker.write_text("bench")


def no_daemon(workspace: Path) -> None:
    if lifecycle.running(workspace):
        raise SystemExit("a daemon answers in this workspace: the figures would not be the fallback's")


def measure(workspaces: dict[str, Path], reps: int, first_reps: int,
            commands: dict[str, list[str]]) -> dict[str, list[float]]:
    """Each row's command in a workspace of its own (a call answered twice is a duplicate the second
    time, and costs otherwise), the rows' samples interleaved call by call."""
    envs = {row: dict(os.environ, CLAUDE_PROJECT_DIR=str(ws)) for row, ws in workspaces.items()}
    for ws in workspaces.values():
        (ws / "bench_target.txt").write_text("x\n")
    samples: dict[str, list[float]] = {"reference": []}
    first = workspaces["fallback"]
    for n in range(reps):
        samples["reference"].append(timed(REFERENCE, None, envs["fallback"], first, "reference"))
        rounds = {row: calls(ws, n) for row, ws in workspaces.items()}
        for index, (name, _) in enumerate(rounds["fallback"]):
            for row, ws in workspaces.items():
                hold_spawned(ws)
                act(ws, name, n)
                label = f"{row} {name}"
                samples.setdefault(label, []).append(timed(commands[row], rounds[row][index][1], envs[row], ws, label))
        for ws in workspaces.values():
            no_daemon(ws)
    for n in range(first_reps):
        for name, body in calls(first, reps + n)[:2]:  # Pre/Post Read: the first call of a session
            (daemon_dir(first) / "spawned").unlink(missing_ok=True)
            samples.setdefault(f"first call {name}", []).append(
                timed(CLIENT, body, envs["fallback"], first, f"first call {name}"))
            stop_started(first)
    return samples


def stop_started(workspace: Path, timeout: float = 20.0) -> None:
    """Stop the daemon the first call started (untimed), so the next sample finds none."""
    deadline = time.monotonic() + timeout
    while not lifecycle.running(workspace) and time.monotonic() < deadline:
        time.sleep(0.05)
    lifecycle.stop(workspace)


def cpu(row: str) -> float:
    return statistics.median(CPU[row])


def report(title: str, samples: dict[str, list[float]]) -> None:
    ref_median, ref_p95 = stats(samples["reference"])
    print(f"\n{title}")
    ref_cpu = statistics.median(CPU["reference"])
    ref_min = min(samples["reference"])
    print(f"{'call':<30}{'median ms':>11}{'p95 ms':>9}{'med - ref':>11}{'p95 - ref':>11}{'ratio':>7}"
          f"{'cpu ms':>8}{'cpu - ref':>11}{'min - ref':>11}")
    print(f"{'python -I -S -c pass':<30}{ref_median:>11.1f}{ref_p95:>9.1f}{'':>40}{ref_cpu:>8.1f}"
          f"{f'(min {ref_min:.1f})':>22}")
    for name, values in samples.items():
        if name == "reference":
            continue
        median, p95 = stats(values)
        print(f"{name:<30}{median:>11.1f}{p95:>9.1f}{median - ref_median:>+11.1f}{p95 - ref_p95:>+11.1f}"
              f"{median / ref_median:>7.2f}{cpu(name):>8.1f}{cpu(name) - ref_cpu:>+11.1f}{min(values) - ref_min:>+11.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--first-reps", type=int, default=5)
    parser.add_argument("--against", type=Path, help="another checkout whose launcher runs interleaved with this one's")
    args = parser.parse_args()
    against = None
    if args.against:
        launcher = args.against.resolve() / "vacant" / "vacant-hook-client.py"
        if not launcher.is_file():
            raise SystemExit(f"--against: no launcher at {launcher}")
        against = [*CLIENT[:-2], str(launcher), CLIENT[-1]]
    built = bundle.ensure()  # as `vacant init` and every daemon's start do
    fresh = bundle.fresh(bundle.package_root())
    print(f"hot bundle: {bundle.bundle_path(bundle.package_root())} "
          f"({'built now' if built else 'fresh' if fresh else 'STALE: the fallback rows import without it'})")
    data = Path(tempfile.mkdtemp(prefix="vacant-bench-data-"))
    os.environ["VACANT_HOME"] = str(data)  # the install registry of this bench only
    commands = {"fallback": CLIENT, **({"against": against} if against else {})}
    workspaces = {row: Path(tempfile.mkdtemp(prefix="vacant-bench-fallback-")) for row in commands}
    try:
        for ws in workspaces.values():
            for i in range(20):
                (ws / f"f{i}.txt").write_text("small file\n" * i)
            mark_installed(ws)  # hooks record only in an installed workspace
        samples = measure(workspaces, args.reps, args.first_reps, commands)
        for ws in workspaces.values():
            errors = state_dir(ws) / "errors.log"
            if errors.exists():
                raise SystemExit(f"the hook failed (it fails open: the figures are void):\n{errors.read_text()[:2000]}")
        report(f"small workspace, no daemon ({args.reps} reps; first call {args.first_reps})", samples)
    finally:
        for ws in workspaces.values():
            lifecycle.stop(ws)
            shutil.rmtree(ws, ignore_errors=True)
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
