"""`vacant experiment` with the real Claude Code binary against fake_fixer.py, a model that fixes
its planted error only when the feedback names the error's location: the experiment finds that
built-in effect (RL beats RF and RS), finds none between RL and RF when the model ignores what the
feedback says, sends each arm's words (vacant's located feedback, the one generic sentence, none),
continues after a SIGKILL without running a finished cell again, and refuses a changed plan. One
located-feedback cell each on Codex and OpenCode proves their command lines."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from claude_harness import claude_binary, claude_env, isolated_home
from codex_harness import FakeResponses, codex_binary, codex_env, write_config
from harness import BIN, UPSTREAMS, ScriptedUpstream
from opencode_harness import opencode_binary, opencode_env, write_opencode_config

from vacant.experiment.arms import GENERIC_FEEDBACK

pytestmark = pytest.mark.e2e

CHECK = """import sys
line = open("{path}").read().splitlines()[:1] if __import__("os").path.exists("{path}") else []
if line != ["{want}"]:
    print("{path}:1: expected {want!r}, found " + repr(line[0] if line else None))
    sys.exit(1)
"""
TASKS = {
    "rate": ("config.py", "RATE = 0.08", "RATE = 0.09"),
    "greeting": ("hello.txt", "Hello, Ada", "Hello, Bob"),
}


class FakeFixer(ScriptedUpstream):
    SERVER = UPSTREAMS / "fake_fixer.py"
    TITLE = "fake fixer upstream"

    @property
    def url(self) -> str:
        return self._origin()


def write_tasks(root: Path) -> Path:
    for name, (path, right, _) in TASKS.items():
        task = root / name
        (task / "seed").mkdir(parents=True)
        (task / "hidden").mkdir()
        (task / "task.toml").write_text('family = "programming"\n' if name == "rate" else 'family = "general"\n')
        (task / "prompt.md").write_text(f"TASK-{name.upper()}: write {path} as the checks ask.\n")
        (task / "vacant.toml").write_text(f'[[check]]\nname = "{name}"\ncommand = "python3 check.py"\n')
        (task / "seed" / "check.py").write_text(CHECK.format(path=path, want=right))
        (task / "hidden" / "checks.toml").write_text('[[check]]\nname = "held"\ncommand = "python3 _hidden/h.py"\n')
        (task / "hidden" / "h.py").write_text(f"import sys\nsys.exit(0 if open({path!r}).read() == {right + chr(10)!r} else 1)\n")
    return root


def policy(located: float, chance: float, first_right: float = 0.0) -> dict:
    return {"seed": 7, "located": located, "chance": chance, "first_right": first_right,
            "tasks": [{"key": f"TASK-{name.upper()}", "location": f"{path}:1",
                       "wrong": f"printf '%s\\n' '{wrong}' > {path}", "right": f"printf '%s\\n' '{right}' > {path}"}
                      for name, (path, right, wrong) in TASKS.items()]}


def experiment(scratch, upstream: FakeFixer, args: list[str], wait: bool = True):
    env = dict(claude_env(scratch.home, upstream.url), VACANT_HOME=str(scratch.vacant_home),
               TMPDIR=str(scratch.path / "tmp"))
    isolated_home(scratch.home, scratch.path)
    argv = [str(BIN / "vacant"), "experiment", str(scratch.path / "tasks"), "--agent", "claude",
            "--agent-bin", str(claude_binary()), "--rounds", "1", "--out", str(scratch.path / "out"), *args]
    proc = subprocess.Popen(argv, cwd=scratch.path, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    if not wait:
        return proc
    try:
        out, err = proc.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        raise AssertionError("vacant experiment did not finish in 600 s")
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def journal(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "journal.jsonl").read_text().splitlines() if line.strip()]


def feedbacks(upstream: FakeFixer) -> dict[str, list[str]]:
    """Per attempt (TASK/ARM/REPEAT/attempt-K/ws, from the agent's working directory), its user texts."""
    seen: dict[str, list[str]] = {}
    for request in upstream.scripted_requests():
        body = request["body"]
        system = json.dumps(body.get("system", "")).replace("\\n", "\n")
        cell = system.split("Primary working directory: ", 1)[1].split("\n", 1)[0].split("/cells/", 1)[1]
        last = [m for m in body["messages"] if m.get("role") == "user"][-1]
        texts = [b.get("text", "") for b in last["content"] if isinstance(b, dict) and b.get("type") == "text"] \
            if isinstance(last["content"], list) else [last["content"]]
        if texts and not any(b.get("type") == "tool_result" for b in last["content"] if isinstance(b, dict)):
            seen.setdefault(cell, []).append(texts[-1])
    return seen


def rates(summary: dict, family: str = "all") -> dict[str, tuple[int, int]]:
    return {r["arm"]: (r["successes"], r["n"]) for r in summary["rates"] if r["family"] == family}


def difference(summary: dict, a: str, b: str, family: str = "all") -> dict:
    return next(d for d in summary["differences"] if (d["a"], d["b"], d["family"]) == (a, b, family))


def test_the_experiment_finds_the_built_in_effect(scratch):
    write_tasks(scratch.path / "tasks")
    with FakeFixer(policy(located=1.0, chance=0.0), scratch.path / "upstream") as upstream:
        done = experiment(scratch, upstream, ["--json"])
        sent = feedbacks(upstream)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert rates(summary) == {"rs": (0, 2), "rf": (0, 2), "rl": (2, 2)}
    assert rates(summary, "general") == {"rs": (0, 1), "rf": (0, 1), "rl": (1, 1)}
    assert difference(summary, "rl", "rf")["interval95"][0] > 0
    assert difference(summary, "rl", "rs")["interval95"][0] > 0
    plan = json.loads((scratch.path / "out" / "plan.json").read_text())
    assert summary["plan"] == plan["sha256"] and all(r["plan"] == plan["sha256"] for r in journal(scratch.path / "out"))
    # what each arm's agent was told after its first answer
    assert sorted(c for c in sent if "/rs/" in c) == [f"{t}/rs/{r}/attempt-{k}/ws" for t in sorted(TASKS)
                                                      for r in (1,) for k in (1, 2)]
    for cell, texts in sent.items():
        task, arm = cell.split("/")[:2]
        prompt, *after = texts
        assert prompt.startswith(f"TASK-{task.upper()}")
        if arm == "rl":
            assert len(after) == 1 and f"{TASKS[task][0]}:1" in after[0] and "must be fixed" in after[0]
        elif arm == "rf":
            assert after == [GENERIC_FEEDBACK]
        else:
            assert after == []  # rs: no feedback; each attempt a fresh session
    records = {r["cell"]: r for r in journal(scratch.path / "out") if r["event"] == "done"}
    assert {r["attempts"] for c, r in records.items() if "/rs/" in c} == {2}
    assert {r["agent_runs"] for r in records.values()} == {2}
    # each cell names the runs `vacant do` recorded in its workspace (the session's one run id)
    assert all(len(r["runs"]) == r["attempts"] for r in records.values()), records
    html = (scratch.path / "out" / "summary.html").read_text()
    assert "<svg" in html and summary["plan"] in html and "http" not in html.replace("http://www.w3.org/2000/svg", "")


def test_a_model_that_ignores_what_the_feedback_says_shows_no_rl_rf_effect(scratch):
    write_tasks(scratch.path / "tasks")
    with FakeFixer(policy(located=1.0, chance=1.0), scratch.path / "upstream") as upstream:
        done = experiment(scratch, upstream, ["--arms", "rf,rl", "--task", "greeting", "--json"])
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert rates(summary) == {"rf": (1, 1), "rl": (1, 1)}
    low, high = difference(summary, "rl", "rf")["interval95"]
    assert low < 0 < high and "includes 0" in difference(summary, "rl", "rf")["verdict"]


def test_a_killed_experiment_continues_where_it_stopped_and_a_changed_plan_is_refused(scratch):
    write_tasks(scratch.path / "tasks")
    out = scratch.path / "out"
    with FakeFixer(policy(located=1.0, chance=0.0), scratch.path / "upstream") as upstream:
        first = experiment(scratch, upstream, ["--task", "rate"], wait=False)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:  # kill it while its second cell runs
            lines = journal(out) if (out / "journal.jsonl").exists() else []
            if [r["event"] for r in lines] == ["start", "done", "start"]:
                break
            time.sleep(0.2)
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
        before = journal(out)
        assert [r["event"] for r in before] == ["start", "done", "start"]
        again = experiment(scratch, upstream, ["--task", "rate", "--json"])
        assert again.returncode == 0, again.stderr
        after = journal(out)
        changed = experiment(scratch, upstream, ["--task", "rate", "--repeats", "2"])
    done = [r["cell"] for r in after if r["event"] == "done"]
    assert sorted(done) == ["rate/rf/1", "rate/rl/1", "rate/rs/1"]  # each cell done exactly once
    assert after[:3] == before and after[3]["cell"] == before[2]["cell"]  # the killed cell ran again
    assert [r["cell"] for r in after if r["event"] == "start"].count(before[0]["cell"]) == 1
    assert json.loads(again.stdout)["cells_restarted"] == 1
    killed = before[2]["cell"]
    assert not (out / "aborted").exists() or (out / "aborted" / f"{killed}.1").is_dir()  # kept, not deleted
    assert changed.returncode == 3 and "plan changed after the first run (repeats)" in changed.stderr
    assert journal(out) == after


def test_codex_runs_a_located_feedback_cell(scratch):
    """The experiment's Codex command line (`codex exec … --json`, resumed by `vacant do`)."""
    write_tasks(scratch.path / "tasks")
    add = "*** Begin Patch\n*** Add File: config.py\n+RATE = 0.09\n*** End Patch\n"
    fix = "*** Begin Patch\n*** Update File: config.py\n@@\n-RATE = 0.09\n+RATE = 0.08\n*** End Patch\n"
    turns = [{"items": [{"type": "custom", "name": "apply_patch", "input": add}]},
             {"items": [{"type": "text", "text": "Done."}]},
             {"match": "config.py:1", "items": [{"type": "custom", "name": "apply_patch", "input": fix}]},
             {"items": [{"type": "text", "text": "Fixed."}]}]
    write_config(scratch.codex_home)
    env = dict(codex_env(scratch.home, scratch.codex_home, scratch.vacant_home), TMPDIR=str(scratch.path / "tmp"))
    with FakeResponses({"turns": turns}, scratch.path / "upstream") as upstream:
        done = subprocess.run(
            [str(BIN / "vacant"), "experiment", str(scratch.path / "tasks"), "--agent", "codex", "--agent-bin",
             str(codex_binary()), "--arms", "rl", "--task", "rate", "--rounds", "1", "--out", str(scratch.path / "out"),
             "--agent-arg=-c", f"--agent-arg=model_providers.fake.base_url={json.dumps(upstream.base_url)}", "--json"],
            cwd=scratch.path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    (record,) = [r for r in journal(scratch.path / "out") if r["event"] == "done"]
    assert (record["success"], record["agent_runs"], record["attempts"]) == (True, 2, 1)
    assert record["input_tokens"] is not None  # codex exec --json printed its usage


def test_opencode_runs_a_located_feedback_cell(scratch):
    """The experiment's OpenCode command line (`opencode run --format json`, resumed by `vacant do`)."""
    write_tasks(scratch.path / "tasks")
    bash = {"type": "function", "name": "bash"}
    turns = [{"items": [{**bash, "arguments": {"command": "printf 'RATE = 0.09\\n' > config.py", "description": "w"}}]},
             {"items": [{"type": "text", "text": "Done."}]},
             {"match": "config.py:1",
              "items": [{**bash, "arguments": {"command": "printf 'RATE = 0.08\\n' > config.py", "description": "f"}}]},
             {"items": [{"type": "text", "text": "Fixed."}]}]
    with FakeResponses({"turns": turns}, scratch.path / "upstream") as upstream:
        write_opencode_config(scratch.home, upstream.base_url)
        env = dict(opencode_env(scratch.home, scratch.path, scratch.vacant_home), TMPDIR=str(scratch.path / "tmp"))
        done = subprocess.run(
            [str(BIN / "vacant"), "experiment", str(scratch.path / "tasks"), "--agent", "opencode", "--agent-bin",
             str(opencode_binary()), "--arms", "rl", "--task", "rate", "--rounds", "1", "--out",
             str(scratch.path / "out"), "--json"],
            cwd=scratch.path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    (record,) = [r for r in journal(scratch.path / "out") if r["event"] == "done"]
    assert (record["success"], record["agent_runs"], record["attempts"]) == (True, 2, 1)
