"""The real `codex` binary, vacant's hooks installed and trusted by `vacant init --platform codex`,
a scripted fake Responses upstream: each scenario asserts the exact steps, reads, change deltas and
actor cells in `vacant log --json`. No bypass flag is ever passed: the hooks fire because they are
trusted. A missing binary fails these tests (codex_binary() raises), it never skips them."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from codex_harness import (
    MODEL,
    FakeResponses,
    codex_binary,
    codex_env,
    make_codex_workspace,
    patch,
    run_codex_exec,
    run_scripted,
    shell,
    turn,
    vacant,
)
from harness import BEHIND_THE_BACK, assert_out_of_band, h, summary, text
from vacant.core.locations import state_dir

pytestmark = pytest.mark.e2e
SANDBOX_MOUNT_POINTS = {".agents", ".aws", ".codex"}
CELL = {"platform": "codex", "agent_definition": "main", "model": MODEL, "task_family": "general"}


def assert_clean(run) -> None:
    assert codex_binary().exists()
    assert run.process.returncode == 0, run.process.stderr
    assert "bypass-hook-trust" not in run.process.stderr
    assert run.errors() == "", run.errors()


def test_apply_patch_add_then_update(scratch):
    run = run_scripted(scratch, [
        turn(patch("*** Begin Patch\n*** Add File: src/hello.py\n+print('hello')\n*** End Patch\n")),
        turn(patch("*** Begin Patch\n*** Update File: src/hello.py\n@@\n-print('hello')\n+print('world')\n*** End Patch\n")),
        turn(text("All done.")),
    ], files={"README.md": "readme\n"})
    assert_clean(run)
    steps = run.steps()
    assert summary(steps) == [
        ("apply_patch", "ok", None, ["src", "src/hello.py"]),  # the new directory is an entry too
        ("apply_patch", "ok", None, ["src/hello.py"]),
    ]
    add, update = steps
    assert add.scope == ["src/hello.py"] and update.scope == ["src/hello.py"]
    assert sorted(add.changes[0]["added"]) == ["src", "src/hello.py"] and not add.changes[0]["changed"]
    assert add.changes[0]["added"]["src"][0] == "d"
    assert add.changes[0]["added"]["src/hello.py"][3] == h(b"print('hello')\n")
    assert list(update.changes[0]["changed"]) == ["src/hello.py"] and not update.changes[0]["added"]
    assert update.changes[0]["changed"]["src/hello.py"][3] == h(b"print('world')\n")
    assert add.key.endswith("call_resp_1_0") and update.key.endswith("call_resp_2_0")
    for step in steps:
        assert step.actor == CELL
        assert step.reads == []
    records = run.log()
    types = [r["type"] for r in records]
    assert types[0] == "run_start" and "stop" in types and types[-1] == "run_end"
    assert [r["ref"] for r in records if r["type"] == "read" and r["origin"] == "prompt"] == ["user"]
    assert [r["model"] for r in records if r["type"] == "actor"] == [MODEL]
    assert run.view().group_changes == []


def test_shell_creates_a_file_and_a_failing_command(scratch):
    run = run_scripted(scratch, [
        turn(shell("echo made > made.txt")),
        turn(shell("echo to-stderr >&2; echo to-stdout; exit 3")),
        turn(text("done")),
    ])
    assert_clean(run)
    steps = run.steps()
    assert summary(steps) == [
        ("Bash", "ok", 0, ["made.txt"]),
        ("Bash", "failed", 3, []),
    ]
    made, failed = steps
    assert made.scope is None  # a shell command may touch anything: full scan
    assert made.changes[0]["added"]["made.txt"][3] == h(b"made\n")
    assert [(r["origin"], r["ref"]) for r in made.reads] == [("command", "echo made > made.txt")]
    assert [(r["origin"], r["ref"]) for r in failed.reads] == [
        ("command", "echo to-stderr >&2; echo to-stdout; exit 3")]
    # Codex merges the two pipes as the bytes arrive: either order is what the command printed
    assert failed.reads[0]["object"] in (h(b"to-stderr\nto-stdout\n"), h(b"to-stdout\nto-stderr\n"))
    assert all(step.actor == CELL for step in steps)


def test_cat_and_sed_reads_come_from_parsed_cmd(scratch):
    run = run_scripted(scratch, [
        turn(shell("cat notes.txt")),
        turn(shell("sed -n 2,3p m.py", workdir="src")),  # the path is relative to the workdir
        turn(text("done")),
    ], files={"notes.txt": "the notes\n", "src/m.py": "l1\nl2\nl3\nl4\n"})
    assert_clean(run)
    steps = run.steps()
    assert summary(steps) == [("Bash", "ok", 0, []), ("Bash", "ok", 0, [])]
    cat, sed = steps
    assert [(r["origin"], r["ref"]) for r in cat.reads] == [("file", "notes.txt"), ("command", "cat notes.txt")]
    assert cat.reads[0]["object"] == h(b"the notes\n")
    assert [(r["origin"], r["ref"]) for r in sed.reads] == [("file", "src/m.py"), ("command", "sed -n 2,3p m.py")]
    # issue 12: the file read is the file as recorded before the step, the output the command's own read
    assert sed.reads[0]["object"] == h(b"l1\nl2\nl3\nl4\n") and sed.reads[1]["object"] == h(b"l2\nl3\n")
    assert all(step.changes == [] for step in steps)


def test_parallel_shell_calls_are_two_steps(scratch):
    run = run_scripted(scratch, [
        turn(shell("cat a.txt"), shell("sleep 0.3; echo b > b.txt")),  # one response, two calls
        turn(text("done")),
    ], files={"a.txt": "A\n"})
    assert_clean(run)
    steps = run.steps()
    assert sorted((s.tool, s.outcome, s.exit_code) for s in steps) == [("Bash", "ok", 0), ("Bash", "ok", 0)]
    assert sorted(s.key.rsplit("/", 1)[1] for s in steps) == ["call_resp_1_0", "call_resp_1_1"]
    reads = sorted((r["origin"], r["ref"]) for s in steps for r in s.reads)
    assert reads == [("command", "cat a.txt"), ("command", "sleep 0.3; echo b > b.txt"), ("file", "a.txt")]
    # While a sandboxed command runs, Codex's bubblewrap sandbox puts empty read-only mount points
    # (.agents, .aws) in the workspace; a scan at the end of the overlapping call sees them come
    # and go. They are real (transient) changes, so they are recorded: set them aside here.
    changes = [c for s in steps for c in s.changes] + run.view().group_changes
    changed = [p for c in changes for p in [*c["added"], *c["changed"]] if p not in SANDBOX_MOUNT_POINTS]
    assert changed == ["b.txt"]  # seen once, by whichever scan came first while the calls overlapped
    for change in changes:
        for path, entry in change["added"].items():
            assert path == "b.txt" or (path in SANDBOX_MOUNT_POINTS and entry[0] == "d")
    assert any(s.open_at_start for s in steps), "the parallel calls must be recorded as overlapping"


def test_apply_patch_through_the_shell_is_seen_by_the_bash_steps_scan(scratch):
    heredoc = ("apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: shell_made.txt\n+via shell\n"
               "*** End Patch\nEOF")
    run = run_scripted(scratch, [
        turn(shell(heredoc)),  # Codex intercepts it: PreToolUse as Bash, and no PostToolUse at all
        turn(text("done")),
    ])
    assert_clean(run)
    assert (run.workspace / "shell_made.txt").read_text() == "via shell\n"
    hooks = run.hook_runs()
    assert hooks.count("hook: PreToolUse") == 1 and "hook: PostToolUse" not in hooks
    steps = run.steps()
    assert [(s.tool, s.input) for s in steps] == [("Bash", {"command": heredoc})]
    bash = steps[0]
    # never reported by a hook: closed at the Stop, from the rollout's record of the call
    assert bash.scope is None and bash.outcome == "ok" and bash.exit_code is None
    # Seen while that Bash step was the only open step that could write: it is that step's change.
    assert run.view().group_changes == []
    assert [(c["open_steps"], sorted(c["added"])) for c in bash.changes] == [([bash.number], ["shell_made.txt"])]
    assert bash.changes[0]["added"]["shell_made.txt"][3] == h(b"via shell\n")
    assert not [s for s in steps if s.out_of_band]


def test_change_by_another_process_is_out_of_band(scratch):
    ws = scratch.path / "ws"
    run = run_scripted(scratch, [
        turn(patch("*** Begin Patch\n*** Add File: a.txt\n+agent\n*** End Patch\n")),
        # the upstream process (not any tool) rewrites notes.txt before answering
        turn(shell("cat a.txt"), write_files={str(ws / "notes.txt"): BEHIND_THE_BACK}),
        turn(text("done")),
    ], files={"notes.txt": "original\n"})
    assert_clean(run)
    steps = run.steps()
    assert_out_of_band(steps, "apply_patch")
    assert steps[0].actor == CELL and steps[2].actor == CELL


def test_trust_doctor_and_uninstall(scratch):
    """`vacant init` trusts through Codex's app-server; untrusted hooks record nothing; uninstall
    puts config.toml back byte for byte and takes hooks.json away."""
    env = codex_env(scratch.home, scratch.codex_home, scratch.vacant_home)
    ws = make_codex_workspace(scratch, {"a.txt": "a\n"}, install=False)
    config = scratch.codex_home / "config.toml"
    before = config.read_bytes()
    vacant(["init", "--platform", "codex"], ws, env=env)
    assert (ws / ".codex" / "hooks.json").exists()
    doctor = vacant(["doctor", "--platform", "codex"], ws, env=env).stdout
    assert "[ok] hooks would fire: 6 of 6 vacant hooks trusted and enabled (codex app-server hooks/list)" in doctor
    assert "[ok] project trust" in doctor

    # untrusted: the same hooks with the trust entries removed do not fire (silently)
    vacant(["uninstall", "--platform", "codex"], ws, env=env)
    assert config.read_bytes() == before
    assert not (ws / ".codex").exists()
    no_env = {k: v for k, v in env.items() if k != "PATH"}
    no_env["PATH"] = "/usr/bin:/bin"  # no codex on PATH: trust is recorded offline
    vacant(["init", "--platform", "codex"], ws, env=no_env)
    offline_trust = config.read_text()
    text_only = config.read_text()
    config.write_text(text_only.split("\n[hooks.state.")[0] + "\n")  # drop the hook trust only
    doctor = vacant(["doctor", "--platform", "codex"], ws, env=env, check=False)
    assert doctor.returncode != 0
    assert "[!!] hooks would fire: 0 of 6" in doctor.stdout
    with FakeResponses({"turns": [{"items": [shell("echo hi > hi.txt")]}, {"items": [text("done")]}]},
                       scratch.path / "up-untrusted") as up:
        proc = run_codex_exec(ws, scratch.codex_home, up, "go", home=scratch.home, vacant_home=scratch.vacant_home)
    assert proc.returncode == 0, proc.stderr
    assert (ws / "hi.txt").exists() and "hook: " not in proc.stderr
    assert not list((state_dir(ws) / "runs").glob("*/events.jsonl"))

    # the offline trust (hashes computed the way Codex does) makes them fire
    config.write_text(offline_trust)
    with FakeResponses({"turns": [{"items": [shell("echo hi2 > hi2.txt")]}, {"items": [text("done")]}]},
                       scratch.path / "up-trusted") as up:
        proc = run_codex_exec(ws, scratch.codex_home, up, "go", home=scratch.home, vacant_home=scratch.vacant_home)
    assert proc.returncode == 0, proc.stderr
    assert "hook: PreToolUse Completed" in proc.stderr
    log = [json.loads(line) for line in vacant(["log", "--json"], ws, env=env).stdout.splitlines()]
    starts = [(r["tool"], r["input"]) for r in log if r["type"] == "step_start"]
    assert starts == [("Bash", {"command": "echo hi2 > hi2.txt"})]

    vacant(["uninstall", "--platform", "codex"], ws, env=no_env)
    assert config.read_bytes() == before
    assert not (ws / ".codex").exists()
    assert subprocess.run(["git", "status", "--porcelain", "--ignored", ".codex"], cwd=ws, capture_output=True,
                          text=True).stdout == ""
    # the platform's backups are gone; the workspace's registry entry (`ws-*.json`) stays with its state
    assert [name for name in os.listdir(scratch.vacant_home / "installs") if not name.startswith("ws-")] == []
