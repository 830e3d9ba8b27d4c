"""`vacant do` without an agent binary: command lines per platform (first round, continuation),
the platform pick, the workspace root, which run a round wrote to, and the watcher's bursts."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from vacant.core.exitcodes import Exit
from vacant.core.locations import mark_installed
from vacant.do import runner, watch
from vacant.platforms import claude, opencode
from vacant.platforms import driver as do_driver
from vacant.platforms.codex import driver as codex_driver

FEEDBACK = "vacant: 1 finding(s) must be fixed before you stop (round 1 of 3)."


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("VACANT_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "home" / ".codex"))


def driver(cls, argv, tmp_path, **env):
    made = cls(argv, tmp_path, dict(os.environ, **env), tmp_path / "tmp")
    (tmp_path / "tmp").mkdir(exist_ok=True)
    return made


def test_parse_args_like_the_agents_parsers():
    parsed = do_driver.parse_args(["-p", "--allowedTools", "Bash", "Edit", "--model=x", "--resume", "task", "--", "-lit"],
                           {"--model"}, {"--allowedTools"}, {"--resume"})
    assert parsed.positionals == ["-lit"]
    assert parsed.values == {"-p": [None], "--allowedTools": ["Bash", "Edit"], "--model": ["x"], "--resume": ["task"]}
    assert do_driver.without(parsed, {"--resume", "-p"}) == ["--allowedTools", "Bash", "Edit", "--model=x"]


def test_claude_pins_a_session_and_resumes_it_with_the_feedback(tmp_path):
    argv = ["claude", "-p", "set the rate", "--permission-mode", "acceptEdits", "--allowedTools", "Bash"]
    made = driver(claude.ClaudeDriver, argv, tmp_path)
    made.prepare()
    first = made.first()
    assert first[:2] == ["claude", "set the rate"] and "--session-id" in first and first[-2] == "--settings"
    settings = json.loads(first[-1])
    assert set(settings["hooks"]) >= {"PreToolUse", "PostToolUse", "Stop", "SessionEnd"}
    assert first[first.index("--session-id") + 1] == made.session
    again = made.resume(made.session, FEEDBACK)
    assert again[:2] == ["claude", FEEDBACK] and "set the rate" not in again and "--session-id" not in again
    assert again[again.index("--resume") + 1] == made.session
    assert again[again.index("--allowedTools") + 1] == "Bash" and again[-1] == first[-1]


def test_claude_keeps_the_persons_settings_and_session(tmp_path):
    mine = {"env": {"X": "1"}, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo mine"}]}]}}
    made = driver(claude.ClaudeDriver, ["claude", "-p", "t", "--settings", json.dumps(mine), "--resume", "abc"], tmp_path)
    made.prepare()
    assert made.session == "abc" and "--session-id" not in made.first()
    settings = json.loads(made.first()[-1])
    assert settings["env"] == {"X": "1"} and settings["hooks"]["Stop"][0]["hooks"][0]["command"] == "echo mine"
    assert len(settings["hooks"]["Stop"]) == 2 and made.first().count("--settings") == 1
    with pytest.raises(do_driver.DoError, match="skip every hook"):
        driver(claude.ClaudeDriver, ["claude", "--bare", "-p", "t"], tmp_path).prepare()


def test_codex_exec_gets_session_flag_hooks_and_resumes_after_exec(tmp_path, monkeypatch):
    monkeypatch.setattr(codex_driver, "foreign_untrusted_codex_hooks", lambda binary, root, env: [])
    argv = ["codex", "exec", "--sandbox", "workspace-write", "-c", 'x="y"', "--json", "task"]
    made = driver(codex_driver.CodexDriver, argv, tmp_path)
    made.prepare()
    first = made.first()
    assert first[:2] == ["codex", "exec"] and first[-1] == "task" and "--dangerously-bypass-hook-trust" in first
    flags = [first[i + 1] for i, token in enumerate(first) if token == "-c"]
    assert any(flag.startswith("hooks.PreToolUse=[{hooks=[{type=\"command\",command=") for flag in flags)
    assert any(flag.startswith("hooks.SessionEnd=") and "timeout=3}" in flag for flag in flags)
    again = made.resume("0199-abc", FEEDBACK)
    assert again[-3:] == ["resume", "0199-abc", FEEDBACK] and "task" not in again
    assert again[again.index("--sandbox") + 1] == "workspace-write" and "--json" in again


def test_codex_resume_forms(tmp_path, monkeypatch):
    monkeypatch.setattr(codex_driver, "foreign_untrusted_codex_hooks", lambda binary, root, env: [])
    made = driver(codex_driver.CodexDriver, ["codex", "exec", "resume", "--last", "-m", "gpt-5.5", "more"], tmp_path)
    made.prepare()
    assert made.session is None
    assert made.resume("S", FEEDBACK)[-5:] == ["resume", "-m", "gpt-5.5", "S", FEEDBACK]
    tui = driver(codex_driver.CodexDriver, ["codex", "-m", "gpt-5.5", "task"], tmp_path)
    tui.prepare()
    assert tui.resume("S", FEEDBACK)[-3:] == ["resume", "S", FEEDBACK] and "task" not in tui.resume("S", FEEDBACK)


def test_codex_refuses_to_bypass_trust_over_untrusted_hooks(tmp_path, monkeypatch):
    monkeypatch.setattr(codex_driver, "foreign_untrusted_codex_hooks", lambda binary, root, env: ["/x/hooks.json:stop:0:0"])
    with pytest.raises(do_driver.DoError, match="not trusted"):
        driver(codex_driver.CodexDriver, ["codex", "exec", "task"], tmp_path).prepare()


def test_opencode_plugin_from_a_temporary_file(tmp_path):
    made = driver(opencode.OpenCodeDriver, ["opencode", "run", "--format", "json", "task", "-f", "a.txt"], tmp_path)
    made.prepare()
    (entry,) = json.loads(made.env["OPENCODE_CONFIG_CONTENT"])["plugin"]
    plugin = Path(entry.removeprefix("file://"))
    assert plugin.is_file() and "vacant-hook" in plugin.read_text() and made.env["PWD"] == str(tmp_path)
    assert "OPENCODE_CONFIG_DIR" not in made.env
    assert made.can_continue and made.first() == made.argv
    assert made.resume("ses_1", FEEDBACK) == ["opencode", "run", FEEDBACK, "--format", "json", "-f", "a.txt",
                                              "--session", "ses_1"]


def test_opencode_merges_into_the_persons_own_config_content(tmp_path):
    made = driver(opencode.OpenCodeDriver, ["opencode", "run", "task"], tmp_path, OPENCODE_CONFIG_DIR="/mine",
                  OPENCODE_CONFIG_CONTENT='{"plugin": ["p1"]}')
    made.prepare()
    assert made.env["OPENCODE_CONFIG_DIR"] == "/mine"
    plugins = json.loads(made.env["OPENCODE_CONFIG_CONTENT"])["plugin"]
    assert plugins[0] == "p1" and plugins[1].startswith("file://") and plugins[1].endswith("/vacant.js")
    with pytest.raises(do_driver.DoError, match="--pure"):
        driver(opencode.OpenCodeDriver, ["opencode", "run", "--pure", "t"], tmp_path).prepare()
    assert not driver(opencode.OpenCodeDriver, ["opencode"], tmp_path).can_continue  # the TUI: one round


@pytest.mark.parametrize("argv, platform, expected", [
    (["/x/node_modules/.bin/claude", "-p", "t"], "auto", "claude"),
    (["codex", "exec", "t"], "auto", "codex"),
    (["opencode", "run", "t"], "auto", "opencode"),
    (["./agent.sh"], "auto", "command"),
    (["claude"], "command", "command"),
    (["x"], "claude-code", "claude"),
])
def test_pick_platform(argv, platform, expected):
    assert runner.pick_platform(argv, platform) == expected


def test_pick_platform_rejects_unknown():
    with pytest.raises(do_driver.DoError):
        runner.pick_platform(["x"], "cursor")


def test_do_root_prefers_the_git_top_over_an_enclosing_workspace(tmp_path):
    outer = tmp_path / "outer"
    outer.mkdir()
    mark_installed(outer)  # an enclosing workspace vacant was installed in
    repo = outer / "repo"
    (repo / "sub").mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    assert runner.do_root(repo / "sub") == repo.resolve()
    (repo / ".vacant").mkdir()
    assert runner.do_root(repo / "sub") == repo.resolve()
    plain = outer / "plain" / "deep"
    plain.mkdir(parents=True)
    assert runner.do_root(plain) == outer.resolve()  # no git: the enclosing workspace


def test_find_run_is_the_log_that_grew(tmp_path):
    from vacant.store.steplog import StepLog

    root = tmp_path
    for name in ("a", "b"):
        StepLog(root / ".vacant" / "runs" / name).emit("run_start", run=name, platform="codex", workspace="w",
                                                       source="startup", baseline="x", session=f"S-{name}")
    before = runner._sizes(root)
    assert runner.find_run(root, before, None, "codex") is None
    StepLog(root / ".vacant" / "runs" / "b").emit("run_end", reason="other")
    assert runner.find_run(root, before, None, "codex").name == "b"
    assert runner.find_run(root, before, "a", "codex").name == "b"  # the pinned one did not grow
    assert do_driver.run_session(root / ".vacant" / "runs" / "b") == "S-b"


def test_exit_code_is_about_the_deliverable():
    assert runner._exit_code({"findings": [], "nothing_to_verify": False}) == Exit.OK
    assert runner._exit_code({"findings": [{"id": "x"}], "nothing_to_verify": False}) == Exit.FAILED
    assert runner._exit_code({"findings": [], "nothing_to_verify": True}) == Exit.NOTHING_TO_VERIFY


def test_a_question_waiting_on_the_person_is_a_pause_never_green():
    """A changed test or a contract change waiting on the person: `vacant do` stops the rounds (the
    agent has nothing to fix) and exits WAITING_ON_PERSON, never OK; anything else left still fails."""
    from types import SimpleNamespace

    waiting = {"ask": "ask#1", "kind": "contract", "fate": "awaiting-human"}
    question = {"id": "q", "level": "changed_test", "blocking": False}
    record = {"id": "r", "level": "record", "blocking": False}
    assert runner._exit_code({"findings": [], "questions": [waiting]}) == Exit.WAITING_ON_PERSON
    assert runner._exit_code({"findings": [question], "questions": [waiting]}) == Exit.WAITING_ON_PERSON
    assert runner._exit_code({"findings": [record], "questions": [waiting]}) == Exit.FAILED
    assert runner._exit_code({"findings": [], "questions": [{**waiting, "fate": "approved"}]}) == Exit.OK
    driver = SimpleNamespace(can_continue=True)
    paused = SimpleNamespace(feedback=None, blocking=[], report={"findings": [question], "questions": [waiting]})
    assert runner.Runner._decision(None, paused, driver, 0, True) == "waiting_on_person"
    held = SimpleNamespace(feedback="fix it", blocking=[{"id": "b"}], report={"questions": [waiting]})
    assert runner.Runner._decision(None, held, driver, 0, True) == "continue"


class Bursts:
    def __init__(self):
        self.calls: list[list[str] | None] = []
        self.event = threading.Event()

    def __call__(self, paths):
        self.calls.append(paths)
        self.event.set()


def wait_for(predicate, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


@pytest.mark.slow
def test_watcher_groups_a_burst_and_ignores_reads_and_state_dirs(tmp_path):
    (tmp_path / ".vacant").mkdir()
    (tmp_path / ".git").mkdir()
    (tmp_path / "seen.txt").write_text("x\n")
    bursts = Bursts()
    watcher = watch.Watcher(tmp_path, bursts, gap=0.3)
    watcher.start()
    try:
        (tmp_path / "ready.txt").write_text("")  # the watch is set up once a change is seen
        assert wait_for(lambda: bursts.calls)
        bursts.calls.clear()
        for _ in range(200):  # a read-only pass: the kernel is not even asked for these events
            (tmp_path / "seen.txt").read_bytes()
        (tmp_path / ".vacant" / "index").write_text("vacant's own\n")
        (tmp_path / ".git" / "HEAD").write_text("git's own\n")
        # the changes the burst must hold come after the reads and the state writes: had any of those
        # reached the watcher, it would be in this burst or in one before it
        (tmp_path / "a.txt").write_text("a\n")
        (tmp_path / "d").mkdir()
        (tmp_path / "d" / "b.txt").write_text("b\n")
        assert wait_for(lambda: bursts.calls)
        watcher.stop(settle=0.2)  # whatever arrives late makes a second burst here
        assert len(bursts.calls) == 1
        assert set(bursts.calls[0]) == {str(tmp_path / "a.txt"), str(tmp_path / "d"), str(tmp_path / "d" / "b.txt")}
    finally:
        watcher.stop(settle=0)


def test_watcher_sees_a_mode_change_alone(tmp_path):
    """chmod +x changes the file's recorded state (its mode) without writing a byte."""
    (tmp_path / "run.sh").write_text("echo hi\n")
    os.chmod(tmp_path / "run.sh", 0o644)
    bursts = Bursts()
    watcher = watch.Watcher(tmp_path, bursts, gap=0.2)
    watcher.start()
    try:
        (tmp_path / "ready.txt").write_text("")  # the watch is set up once a change is seen
        assert wait_for(lambda: bursts.calls)
        os.chmod(tmp_path / "run.sh", 0o755)
        assert wait_for(lambda: len(bursts.calls) == 2)
        assert bursts.calls == [[str(tmp_path / "ready.txt")], [str(tmp_path / "run.sh")]]
    finally:
        watcher.stop(settle=0)


def test_watcher_full_scan_after_an_overflow(tmp_path):
    bursts = Bursts()
    watcher = watch.Watcher(tmp_path, bursts, gap=0.2)
    watcher.start()
    try:
        (tmp_path / "a.txt").write_text("a\n")
        import logging

        logging.getLogger("watchdog.observers.inotify_c").warning("Inotify queue overflowed; filesystem events were lost")
        assert wait_for(lambda: bursts.calls)
        assert bursts.calls == [None] and watcher.overflows == 1
        watcher.MAX_DIRTY = 3
        for n in range(5):
            (tmp_path / f"f{n}.txt").write_text("x\n")
        assert wait_for(lambda: len(bursts.calls) == 2)
        assert bursts.calls[1] is None  # too many paths for a scoped scan
    finally:
        watcher.stop(settle=0)


def test_codex_adds_nothing_when_vacants_hooks_are_installed(tmp_path, monkeypatch):
    monkeypatch.setattr(codex_driver, "installed_codex_hooks", lambda root: True)
    monkeypatch.setattr(codex_driver, "foreign_untrusted_codex_hooks", lambda *a: pytest.fail("no trust bypass needed"))
    made = driver(codex_driver.CodexDriver, ["codex", "exec", "task"], tmp_path)
    made.prepare()
    assert made.first() == ["codex", "exec", "task"]
    assert made.resume("S", FEEDBACK) == ["codex", "exec", "resume", "S", FEEDBACK]


def test_a_change_set_is_one_step_of_the_command_or_nothing(tmp_path):
    from vacant.platforms.all_platforms import load
    from vacant.record.recorder import Recorder
    from vacant.store.run import RunView

    platform = load("command")
    (tmp_path / ".vacant").mkdir()
    (tmp_path / "a.txt").write_text("a\n")

    def call(**payload):
        payload = {"session": "do-1", "workspace": str(tmp_path), "program": "agent.sh", "command": ["./agent.sh"],
                   **payload}
        Recorder(tmp_path, "do-1", platform).handle(platform.parse(payload, {}))

    call(event="start")
    call(event="burst", burst=1, paths=[str(tmp_path / "a.txt")])  # nothing changed: no step
    (tmp_path / "a.txt").write_text("b\n")
    (tmp_path / "new.txt").write_text("n\n")
    call(event="burst", burst=2, paths=[str(tmp_path / "a.txt")])  # scoped: new.txt is not this burst's
    call(event="end", reason="process exited")
    view = RunView.load(tmp_path / ".vacant" / "runs" / "do-1")
    steps = view.ordered()
    assert [(s.number, s.tool, s.changed_paths()) for s in steps] == [(1, "burst", ["a.txt"]), (2, "oob", ["new.txt"])]
    assert steps[0].actor == {"platform": "command", "agent_definition": "agent.sh", "model": None,
                              "task_family": "general"}
    assert steps[0].input == {"burst": 2, "command": ["./agent.sh"]}


def test_read_coverage_counts_vacant_dos_own_resume_as_observed():
    from vacant.attribute.stop import read_coverage
    from vacant.store.run import RunView

    def records(*decisions):
        out = [{"type": "run_start", "seq": 1, "source": "startup"},
               {"type": "step_start", "seq": 2, "step": 1, "key": "k", "tool": "Write", "input": {}, "actor": {},
                "open_steps": [], "scope": ["a"]},
               {"type": "read", "seq": 3, "step": 1, "origin": "file", "ref": "a", "object": "x"}]
        seq = 4
        for decision in decisions:
            out.append({"type": "round", "seq": seq, "round": 1, "command": [], "exit_code": 0, "decision": decision})
            out.append({"type": "run_start", "seq": seq + 1, "source": "resume"})
            seq += 2
        return out

    assert read_coverage(RunView.build(records("continue")))["state"] == "complete"
    assert read_coverage(RunView.build(records("green")))["state"] == "partial"  # a later, unrecorded resume
    assert read_coverage(RunView.build(records()[:3] + [{"type": "run_start", "seq": 9, "source": "resume"}]))[
        "state"] == "partial"


def test_a_terminal_ctrl_c_is_left_to_the_agent_other_signals_are_forwarded(tmp_path):
    import signal as sig

    made_runner = runner.Runner(["./agent.sh"], tmp_path, "auto", None, cwd=tmp_path)
    made_runner.child = subprocess.Popen(["sleep", "30"])
    try:
        made_runner.terminal = True
        made_runner._on_signal(sig.SIGINT, None)  # the terminal already sent it to the agent's group
        assert made_runner.child.poll() is None and made_runner.terminal_sigint and made_runner.interrupted is None
        made_runner.terminal = False
        made_runner._on_signal(sig.SIGTERM, None)
        assert made_runner.child.wait(timeout=5) == -sig.SIGTERM and made_runner.interrupted == sig.SIGTERM
    finally:
        if made_runner.child.poll() is None:
            made_runner.child.kill()
    made_runner.child = None
    with pytest.raises(runner.Interrupted):
        made_runner._on_signal(sig.SIGINT, None)  # no agent running: vacant do itself stops
