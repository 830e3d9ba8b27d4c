"""The real `gemini` binary (@google/gemini-cli, pinned) offline against the scripted Gemini API
fake (fixtures/upstreams/fake_gemini.py through GOOGLE_GEMINI_BASE_URL).

Installed hooks (`vacant init --platform gemini`), one run (CI time): a read, an ACT arm the gate
holds, the planted error; AfterAgent denies with located feedback, which comes back as the next
user message of the same run, and the fix. The person approves from the shell; a resumed run
makes the same call again and performs it once. Then report/blame/view and a byte-for-byte uninstall
on that run. A missing binary fails this test, it never skips it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from codex_harness import BIN, git_workspace
from harness import AGENTS_BIN, MARK, UPSTREAMS, ScriptedUpstream, agent_binary, marks
from do_harness import FEEDBACK, FILES, log_of, report, vacant_do

from vacant.core.locations import state_dir
from vacant.policy.gate.asks.answer import AGENT_ENV

pytestmark = pytest.mark.e2e
MODEL = "gemini-2.5-flash"


class FakeGemini(ScriptedUpstream):
    SERVER = UPSTREAMS / "fake_gemini.py"
    TITLE = "fake Gemini upstream"

    @property
    def base_url(self) -> str:
        return self._origin()


def gemini_env(home: Path, workspace: Path, base_url: str, vacant_home: Path) -> dict:
    """An offline run: isolated HOME with an API-key auth and the workspace trusted (measured:
    an untrusted folder drops --yolo), the fake as the Gemini API."""
    gemini_home = home / ".gemini"
    gemini_home.mkdir(parents=True, exist_ok=True)
    (gemini_home / "settings.json").write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}))
    (gemini_home / "trustedFolders.json").write_text(json.dumps({str(workspace): "TRUST_FOLDER"}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GEMINI", "GOOGLE", "CLAUDE"))}
    return {**env, "HOME": str(home), "VACANT_HOME": str(vacant_home), "GOOGLE_GEMINI_BASE_URL": base_url,
            "GEMINI_API_KEY": "fake-key", "NO_COLOR": "1",
            "PATH": f"{AGENTS_BIN}{os.pathsep}{BIN}{os.pathsep}{env.get('PATH', '')}"}


def tool(name: str, match: str | None = None, **arguments) -> dict:
    turn = {"items": [{"type": "function", "name": name, "arguments": arguments}]}
    return {**turn, "match": match} if match else turn


def text(words: str, match: str | None = None) -> dict:
    turn = {"items": [{"type": "text", "text": words}]}
    return {**turn, "match": match} if match else turn


def vacant(args: list[str], cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "vacant"), *args], cwd=cwd, env=env, capture_output=True, text=True, check=False)


def gemini(workspace: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([str(agent_binary("gemini", "Gemini")), "--yolo", "-m", MODEL, *args], cwd=workspace,
                          env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=240, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def user_texts(request: dict) -> list[str]:
    """The text of every user message of a logged generateContent request."""
    return ["".join(str(part.get("text", "")) for part in content.get("parts", []) if isinstance(part, dict))
            for content in (request.get("body") or {}).get("contents", []) if content.get("role") == "user"]


def blocked_results(request: dict) -> list[str]:
    """Every functionResponse error the request carries back to the model."""
    return [str(((part.get("functionResponse") or {}).get("response") or {}).get("error", ""))
            for content in (request.get("body") or {}).get("contents", [])
            for part in content.get("parts", []) if isinstance(part, dict) and "functionResponse" in part]


def test_installed_hooks_gate_and_feedback_in_one_run(plain_scratch):
    scratch = plain_scratch
    files = {**FILES, "spec/rates.md": "The rate is 0.08.\n", "arms/mark.sh": MARK}
    workspace = git_workspace(scratch.path / "ws", files).resolve()
    config = str(workspace / "config.py")
    turns = [
        tool("read_file", file_path=str(workspace / "spec" / "rates.md")),
        tool("run_shell_command", command="sh arms/mark.sh", description="mark"),  # ACT: held
        tool("write_file", file_path=config, content="RATE = 0.09\n"),  # the planted error
        text("Done."),
        tool("replace", match=FEEDBACK, file_path=config, old_string="0.09", new_string="0.08", instruction="fix"),
        text("Fixed."),
        tool("run_shell_command", "SESSION-TWO", command="sh arms/mark.sh", description="mark"),  # the same call
        text("Marked once."),
    ]
    with FakeGemini({"turns": turns}, scratch.path / "upstream") as upstream:
        env = gemini_env(scratch.home, workspace, upstream.base_url, scratch.vacant_home)
        settings = workspace / ".gemini" / "settings.json"
        installed = vacant(["init", "--platform", "gemini"], workspace, env)
        assert installed.returncode == 0, installed.stderr
        assert "vacant-hook" in settings.read_text()
        doctor = vacant(["doctor", "--platform", "gemini"], workspace, env)
        assert doctor.returncode == 0 and "trusted folder" not in doctor.stdout, doctor.stdout
        first = gemini(workspace, env, "-p", "set the rate in config.py")
        assert marks(workspace) == []  # held: the person has not answered
        session = next(r["session"] for r in log_of(workspace) if r["type"] == "run_start")
        person = {k: v for k, v in env.items() if k not in AGENT_ENV}
        assert "approved ask#1" in vacant(["approve", "ask#1"], workspace, person).stdout
        gemini(workspace, env, "--resume", session, "-p", "SESSION-TWO: go on")
        requests = upstream.requests()
    assert marks(workspace) == ["marked"]  # after the approval, exactly once
    assert first.returncode == 0

    log = log_of(workspace)
    assert [r["decision"] for r in log if r["type"] == "human_decided"] == ["approved"]
    arms = [r["step"] for r in log if r["type"] == "step_start" and r["tool"] == "run_shell_command"]
    ends = {r["step"]: r for r in log if r["type"] == "step_end"}
    # the same call, made again after the approval, is a step of its own (no tool id on the wire)
    assert [ends[step]["outcome"] for step in arms] == ["not-run", "ok"]
    paused = [r for r in log if r["type"] == "pause_surfaced"]
    assert [(p["ask"], p["status"]) for p in paused] == [("ask#1", "awaiting-human")]
    assert any("ask#1" in result for request in requests for result in blocked_results(request))

    starts = {r["step"]: r for r in log if r["type"] == "step_start" and r["tool"] != "oob"}
    by_tool = {r["tool"]: step for step, r in reversed(starts.items())}  # each tool's first step
    assert set(by_tool) == {"read_file", "run_shell_command", "write_file", "replace"}
    assert all(r["actor"]["platform"] == "gemini-cli" and r["actor"]["model"] == MODEL for r in starts.values())
    ends = {r["step"]: r for r in log if r["type"] == "step_end"}
    assert set(ends) >= set(starts), "every tool step is closed"
    assert ends[by_tool["run_shell_command"]]["outcome"] == "not-run"  # held, never performed
    reads = [(r["origin"], r["ref"], r["step"]) for r in log if r["type"] == "read"]
    assert ("file", "spec/rates.md", by_tool["read_file"]) in reads

    stopped = report(workspace, 1)
    (finding,) = stopped["findings"]
    assert (finding["level"], finding["step"], finding["tool"], finding["path"]) == (
        "provable", by_tool["write_file"], "write_file", "config.py")
    feedback = [r for r in log if r["type"] == "feedback"]
    assert feedback and finding["id"] in feedback[0]["text"]
    for identity in ("gemini", "google", MODEL):
        assert identity not in feedback[0]["text"].lower()
    reached = [r for r in requests if any(FEEDBACK in t for t in user_texts(r))]
    assert reached and finding["id"] in user_texts(reached[0])[-1]  # the next request of the same run
    assert report(workspace, 2)["findings"] == []

    blame = json.loads(vacant(["blame", "config.py", "--json"], workspace, env).stdout)
    (line,) = blame["lines"]
    assert (line["text"], line["step"], line["actor"]["platform"]) == ("RATE = 0.08", by_tool["replace"], "gemini-cli")
    page = json.loads(vacant(["view", "--no-open", "--json"], workspace, env).stdout)
    assert "write_file" in Path(page["html"]).read_text()
    removed = vacant(["uninstall", "--platform", "gemini"], workspace, env)
    assert removed.returncode == 0 and not settings.exists()  # vacant created it: it goes
    assert not (state_dir(workspace) / "errors.log").exists()


def test_vacant_do_feeds_back_in_the_same_run(scratch):
    """`vacant do` installs nothing in the workspace (a system settings file of the run's own, in
    vacant's data dir: Gemini skips one under any directory others may write to, /tmp included, so
    this test's scratch is where Codex's is, never under a temporary directory)."""
    workspace = git_workspace(scratch.path / "ws", FILES).resolve()
    config = str(workspace / "config.py")
    turns = [
        tool("write_file", file_path=config, content="RATE = 0.09\n"),
        text("Done."),
        tool("replace", match=FEEDBACK, file_path=config, old_string="0.09", new_string="0.08", instruction="fix"),
        text("Fixed."),
    ]
    with FakeGemini({"turns": turns}, scratch.path / "upstream") as upstream:
        env = dict(gemini_env(scratch.home, workspace, upstream.base_url, scratch.vacant_home),
                   TMPDIR=str(scratch.path / "tmp"))
        (scratch.path / "tmp").mkdir(exist_ok=True)
        done = vacant_do(["--", str(agent_binary("gemini", "Gemini")), "--yolo", "-m", MODEL, "-p",
                          "set the rate in config.py"], workspace, env)
        requests = upstream.requests()
    assert done.returncode == 0, done.stderr
    log = log_of(workspace)
    assert len({r["session"] for r in log if r["type"] == "run_start"}) == 1
    (finding,) = report(workspace, 1)["findings"]
    assert (finding["level"], finding["tool"]) == ("provable", "write_file")
    assert any(finding["id"] in t for r in requests for t in user_texts(r) if FEEDBACK in t)
    assert report(workspace)["findings"] == []
    assert not (workspace / ".gemini").exists() and not (state_dir(workspace) / "errors.log").exists()


def test_a_tool_call_does_not_run_when_vacant_cannot_start(plain_scratch):
    """Issue 44: the installed hook command from a copy of vacant where every module but the
    launcher and its deny table (vacant/platforms/deny.py) raises at import: Gemini's BeforeTool
    gets the deny table's reply, the tool does not run, and the model reads why."""
    import shlex
    import shutil
    import sys

    from vacant.platforms import deny
    from vacant.platforms.all_platforms import load

    scratch = plain_scratch
    workspace = git_workspace(scratch.path / "ws", {**FILES, "arms/mark.sh": MARK}).resolve()
    package = scratch.path / "broken" / "vacant"
    shutil.copytree(Path(deny.__file__).resolve().parents[1], package,
                    ignore=shutil.ignore_patterns("__pycache__", "demo"))
    kept = {package / "vacant-hook-client.py", package / "platforms" / "deny.py"}
    for module in package.rglob("*.py"):
        if module not in kept:
            module.write_text("raise ImportError('broken for this test')\n")
    launcher = package / "vacant-hook-client.py"
    load("gemini").install(workspace, "project",
                           f"{shlex.quote(sys.executable)} -I -S {shlex.quote(str(launcher))} gemini")
    turns = [tool("run_shell_command", command="sh arms/mark.sh", description="mark"), text("Done.")]
    with FakeGemini({"turns": turns}, scratch.path / "upstream") as upstream:
        env = gemini_env(scratch.home, workspace, upstream.base_url, scratch.vacant_home)
        gemini(workspace, env, "-p", "mark it")
        requests = upstream.requests()
    assert marks(workspace) == [], "the tool ran"
    reason = deny.CANNOT_START.format(error="ImportError")
    assert any(reason in result for request in requests for result in blocked_results(request)), requests[-1:]
