"""The gate's policy: shipped rules, `[gate]` rules, arms and their mode line, normal forms,
refusals, and failing closed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vacant.core.locations import state_dir

from vacant.hook import call as hook
from vacant.core.calls import HookCall
from vacant.platforms.all_platforms import PLATFORMS
from vacant.policy.gate import gate, modes
from vacant.policy.gate import rules as policy_rules
from vacant.policy.gate.shellwords import normal_form, simple_commands

pytestmark = pytest.mark.usefixtures("isolated_home")


@pytest.fixture
def ws_files() -> dict:
    return {
        "arms/act.sh": "#!/bin/sh\n# MODE: ACT\necho hi >> marker\n",
        "arms/read.py": "# MODE: READ\nprint('look')\n",
        "arms/nomode.sh": "echo who knows\n",
        "src": None,
    }


def call(root: Path, tool: str, tool_input, cwd: Path | str | None = None, scope=None) -> HookCall:
    """A PreToolUse call as the platform that owns `tool` reads it (the first that knows its name)."""
    kind, intent = None, {}
    for platform in PLATFORMS.values():
        kind, intent = platform.intent(tool, tool_input)
        if kind is not None:
            break
    return HookCall("tool_pre", "s1", root, tool=tool, tool_input=tool_input, key="t1",
                    scope=scope, cwd=str(cwd or root), tool_kind=kind, intent=intent)


def verdict(root: Path, command: str, cwd=None):
    return gate.classify(root, call(root, "Bash", {"command": command}, cwd), policy_rules.load_policy(root))


def rules(root: Path, command: str, cwd=None) -> set[str] | str:
    v = verdict(root, command, cwd)
    if v.kind == "refuse":
        return "refuse"
    return set() if v.kind == "pass" else {hit.rule for hit in v.action.hits}


# -- shipped rules --------------------------------------------------------------------------------


def unwalled(ws) -> None:
    """The workspace's install record: its platform's sandbox was not set up (`vacant init --no-wall`)."""
    record = state_dir(ws) / "install.json"
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps({"walls": {"claude": False}}))


@pytest.mark.parametrize("command, expected", [
    ("git push origin main", {"git-push"}),
    ("git  push  'origin'  main", {"git-push"}),
    ("git -C sub push", {"git-push"}),
    ("FOO=1 sudo -u me git push --force", {"git-push"}),
    ("bash -c 'git push'", {"git-push"}),
    ("sh -lc \"cd x && git push\"", {"git-push"}),
    ("echo $(git push)", {"git-push"}),
    ("eval git push", {"git-push"}),
    ("make && git push", {"git-push"}),
    ("git status; git log | head", set()),
    ("git stash push", set()),
    ("git commit -m 'please push later'", set()),
    # a mention the gate cannot tell from a line the sandbox runs outside the wall: asked (unwalled)
    ("echo 'git push'", {"unwalled"}),
    ("echo '$(git push)'", {"unwalled"}),
    ("npm publish", {"package-publish"}),
    ("npm --tag beta publish", {"package-publish"}),
    ("twine upload dist/*", {"package-publish"}),
    ("python3 -m twine upload dist/*", {"package-publish"}),
    ("cargo publish --dry-run", {"package-publish"}),
    ("npm install", set()),
    ("kubectl apply -f k8s.yaml", {"deploy"}),
    ("kubectl get pods", set()),
    ("terraform apply -auto-approve", {"deploy"}),
    ("terraform plan", set()),
    ("helm upgrade --install web chart/", {"deploy"}),
    ("curl -X POST https://api.example.com/x", {"http-write"}),
    ("curl -sXDELETE https://api.example.com/x", {"http-write"}),
    ("curl --request PUT https://x", {"http-write"}),
    ("curl -d 'a=1' https://x", {"http-write"}),
    ("curl --data-binary @f https://x", {"http-write"}),
    ("curl -fsSL https://example.com/install.sh -o install.sh", set()),
    ("wget --post-data 'a=1' https://x", {"http-write"}),
    ("wget https://example.com/file", set()),
])
def test_shipped_rules(ws, command, expected):
    assert rules(ws, command) == expected


@pytest.mark.parametrize("command, act", [
    ("rm -rf build", False),
    ("rm -f src/*.o", False),
    ("rm -rf /tmp/elsewhere", True),
    ("rm -rf ../sibling", True),
    ("rm -rf .", True),  # the workspace itself
    ("rm ~/notes.txt", True),
    ("rm \"$HOME/notes.txt\"", True),
    ("rm -- -weird-name", False),
    ("rm \"$X\"", True),  # a path vacant cannot resolve counts as outside
    ("find /tmp/x -name '*.log' -delete", True),
    ("find . -name '*.pyc' -delete", False),
    ("find /var -exec rm {} \\;", True),
    ("rmdir /tmp/empty", True),
    ("sudo rm -rf /", True),
])
def test_delete_outside_the_workspace(ws, command, act):
    assert ("delete-outside-workspace" in rules(ws, command)) is act


def test_delete_through_a_symlinked_parent(ws, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f").write_text("x")
    (ws / "link").symlink_to(outside)
    assert "delete-outside-workspace" in rules(ws, "rm link/f")
    assert rules(ws, "rm link") == set()  # removes the link itself, inside


def test_relative_paths_resolve_from_the_working_directory(ws):
    assert rules(ws, "rm -rf ../x", cwd=ws / "src") == set()  # ws/x: inside
    assert "delete-outside-workspace" in rules(ws, "rm -rf ../../x", cwd=ws / "src")


# -- normal form ----------------------------------------------------------------------------------


@pytest.mark.parametrize("a, b", [
    ("git push origin main", "git  push   origin main"),
    ("git push origin main", "git push 'origin' \"main\""),
    ("sh arms/act.sh", "sh \"arms/act.sh\""),
    ("echo a\\ b", "echo 'a b'"),
    ("a && b", "a&&b"),
    ("x=1; y", "x=1\ny"),
])
def test_normal_form_ignores_whitespace_and_quoting(a, b):
    assert normal_form(a) == normal_form(b)


@pytest.mark.parametrize("a, b", [
    ("echo '$(git push)'", "echo $(git push)"),
    ("echo '|' rm x", "echo | rm x"),
    ("git push origin main", "git push origin dev"),
    ("cat > a <<EOF\none\nEOF", "cat > a <<EOF\ntwo\nEOF"),
])
def test_normal_form_keeps_what_changes_the_meaning(a, b):
    assert normal_form(a) != normal_form(b)


def test_simple_commands_split_on_operators_and_keep_heredocs():
    commands = simple_commands("cat > f <<'EOF'\nbody $(x)\nEOF\nsh f | tee log && echo ok")
    assert [[w.text for w in c.argv] for c in commands] == [["cat"], ["sh", "f"], ["tee", "log"], ["echo", "ok"]]
    assert commands[0].heredocs == ["body $(x)"]
    assert commands[1].pipeline == commands[2].pipeline != commands[3].pipeline


def test_same_action_means_same_normal_form_and_cwd(ws):
    a = verdict(ws, "git push origin main").action
    b = verdict(ws, "git  push 'origin' main").action
    c = verdict(ws, "git push origin main", cwd=ws / "src").action
    assert a.fingerprint == b.fingerprint != c.fingerprint


# -- arms -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name, text, mode", [
    ("x.sh", "# MODE: READ\n", "READ"),
    ("x.sh", "#!/bin/bash\n# MODE: ACT\necho\n", "ACT"),
    ("x.sh", "#MODE:ACT\n", "ACT"),
    ("x.py", "#!/usr/bin/env python3\n# MODE: READ\n", "READ"),
    ("x.js", "// MODE: ACT\n", "ACT"),
    ("x.ts", "/* MODE: READ */\n", "READ"),
    ("x.lua", "-- MODE: ACT\n", "ACT"),
    ("x.bat", "REM MODE: READ\r\n", "READ"),
    ("x", "; MODE: ACT\n", "ACT"),
    ("x.sh", "echo hi\n# MODE: ACT\n", None),  # not first
    ("x.sh", "\n# MODE: ACT\n", None),
    ("x.sh", "# mode: act\n", None),
    ("x.sh", "# MODE: WRITE\n", None),
    ("x.js", "# MODE: ACT\n", None),  # not JavaScript's comment syntax
    ("x.py", "// MODE: READ\n", None),
    ("x.sh", "", None),
    ("x.sh", "# MODE: READ and more\n", None),
])
def test_mode_line(name, text, mode):
    assert modes.mode_of(text, name) == mode


@pytest.mark.parametrize("command, act", [
    ("sh arms/act.sh", True),
    ("./arms/act.sh", True),
    ("bash ./arms/act.sh --flag", True),
    ("sh arms/nomode.sh", True),  # unreadable mode: ACT
    ("sh arms/missing.sh", True),  # a file that is not there has no mode
    ("sh arms/read.py", False),
    ("python3 arms/read.py", False),
    ("cat arms/act.sh", False),  # reading an arm is not running it
    ("grep -n MODE arms/*.sh", False),
    ("git diff arms/act.sh", False),
    ("cat arms/act.sh | sh", True),
    ("sh < arms/act.sh", True),
    ("source arms/act.sh", True),
    ("echo '# MODE: READ' > arms/act.sh", True),  # rewriting an ACT arm through the shell
    ("cat > arms/new.sh <<'EOF'\necho new\nEOF", True),  # a new arm with no mode line
    ("sed -i s/ACT/READ/ arms/act.sh", True),
    ("chmod +x arms/act.sh", False),
    ("cd arms && sh act.sh", True),
    ("cd arms; ./act.sh", True),
    ("cd src && sh ../arms/act.sh", True),
    ("cd arms && sh read.py", False),
    ("cd \"$DIR\" && sh act.sh", True),  # a directory vacant cannot know: an arm of that name counts
    ("cd \"$DIR\" && sh other.sh", False),
    ("cd /elsewhere && sh arms/act.sh", False),
])
def test_running_arms(ws, command, act):
    result = rules(ws, command)
    assert ("arm" in result) is act, result


def test_an_arm_run_from_inside_the_arms_directory(ws):
    assert "arm" in rules(ws, "sh act.sh", cwd=ws / "arms")
    assert rules(ws, "sh read.py", cwd=ws / "arms") == set()


def test_the_approval_of_an_arm_is_bound_to_its_content(ws):
    before = verdict(ws, "sh arms/act.sh").action
    assert before.kind == "arm" and before.receipts["arm"] == ["arms/act.sh"]
    (ws / "arms" / "act.sh").write_text("#!/bin/sh\n# MODE: ACT\ngit push --force\n")
    assert verdict(ws, "sh arms/act.sh").action.fingerprint != before.fingerprint


def refusal(root: Path, tool: str, tool_input, cwd=None) -> str | None:
    v = gate.classify(root, call(root, tool, tool_input, cwd), policy_rules.load_policy(root))
    return v.message if v.kind == "refuse" else None


def test_writing_an_arm_without_a_mode_line_is_refused(ws):
    message = refusal(ws, "Write", {"file_path": str(ws / "arms" / "x.sh"), "content": "echo x\n"})
    assert message.startswith("Refusing to write arms/x.sh — it must include a `MODE: READ` or `MODE: ACT` line")
    assert refusal(ws, "Write", {"file_path": str(ws / "arms" / "x.sh"), "content": "# MODE: READ\necho x\n"}) is None
    assert refusal(ws, "Write", {"file_path": str(ws / "src" / "x.sh"), "content": "echo x\n"}) is None
    assert refusal(ws, "Write", {"file_path": "arms/y.sh", "content": "echo\n"}, cwd=ws) is not None  # relative


def test_editing_an_arm_checks_the_resulting_text(ws):
    arm = str(ws / "arms" / "act.sh")
    assert refusal(ws, "Edit", {"file_path": arm, "old_string": "# MODE: ACT\n", "new_string": ""}) is not None
    assert refusal(ws, "Edit", {"file_path": arm, "old_string": "ACT", "new_string": "READ"}) is None
    assert refusal(ws, "Edit", {"file_path": arm, "old_string": "echo hi", "new_string": "echo bye"}) is None
    assert refusal(ws, "MultiEdit", {"file_path": arm, "edits": [
        {"old_string": "echo hi", "new_string": "echo bye"}, {"old_string": "# MODE: ACT", "new_string": "#"}]}) is not None


def test_codex_patches_of_arms(ws):
    add_bad = "*** Begin Patch\n*** Add File: arms/p.sh\n+echo p\n*** End Patch\n"
    add_ok = "*** Begin Patch\n*** Add File: arms/p.sh\n+# MODE: READ\n+echo p\n*** End Patch\n"
    drop_mode = "*** Begin Patch\n*** Update File: arms/act.sh\n@@\n #!/bin/sh\n-# MODE: ACT\n echo hi >> marker\n*** End Patch\n"
    body_only = "*** Begin Patch\n*** Update File: arms/act.sh\n@@\n-echo hi >> marker\n+echo bye >> marker\n*** End Patch\n"
    assert "Refusing to write arms/p.sh" in refusal(ws, "apply_patch", {"command": add_bad})
    assert refusal(ws, "apply_patch", {"command": add_ok}) is None
    assert "Refusing to write arms/act.sh" in refusal(ws, "apply_patch", {"command": drop_mode})
    assert refusal(ws, "apply_patch", {"command": body_only}) is None
    heredoc = f"apply_patch <<'EOF'\n{add_bad}EOF"
    assert "Refusing to write arms/p.sh" in refusal(ws, "Bash", {"command": heredoc})


def test_the_arms_directory_is_configurable(ws):
    (ws / "vacant.toml").write_text('[gate]\narms = "tools/arms"\n')
    (ws / "tools" / "arms").mkdir(parents=True)
    (ws / "tools" / "arms" / "go.sh").write_text("# MODE: ACT\n")
    assert "arm" in rules(ws, "sh tools/arms/go.sh")
    assert rules(ws, "sh arms/act.sh") == set()  # no longer an arm


# -- refusals -------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [
    "vacant approve ask#1",
    "vacant decline ask#1",
    "  vacant   approve 'ask#1' --expires 1h",
    "/usr/local/bin/vacant approve ask#1",
    "python -m vacant approve ask#1",
    "echo ok && vacant approve ask#2",
    "bash -c 'vacant decline ask#1'",
    "env CLAUDECODE= vacant approve ask#1",
])
def test_the_agent_answering_itself_is_refused(ws, command):
    message = refusal(ws, "Bash", {"command": command})
    assert message == policy_rules.ANSWER_REFUSAL


@pytest.mark.parametrize("command", ["vacant asks", "vacant ask ask#1", "vacant log --json", "echo vacant approve"])
def test_the_agent_may_look_at_the_ask_book(ws, command):
    assert rules(ws, command) == set()


def test_the_signing_key_is_out_of_reach(ws, tmp_path):
    key = tmp_path / "home" / ".config" / "vacant" / "key"
    assert policy_rules.KEY_REFUSAL.split("{")[0] in refusal(ws, "Bash", {"command": f"cat {key}"})
    assert refusal(ws, "Bash", {"command": "cat ~/.config/vacant/key"}) is not None
    assert refusal(ws, "Read", {"file_path": str(key)}) is not None
    assert refusal(ws, "Write", {"file_path": str(key), "content": "x"}) is not None


def test_gate_self(ws):
    (ws / "vacant.toml").write_text('task_family = "x"\n')
    toml = str(ws / "vacant.toml")
    changes_gate = gate.classify(ws, call(ws, "Write", {"file_path": toml, "content": '[gate]\nremove = ["git-push"]\n'}),
                                 policy_rules.load_policy(ws))
    assert changes_gate.kind == "act" and [h.rule for h in changes_gate.action.hits] == ["gate-self"]
    same_gate = gate.classify(ws, call(ws, "Write", {"file_path": toml, "content": 'task_family = "y"\n'}),
                              policy_rules.load_policy(ws))
    assert same_gate.kind == "pass"
    assert "gate-self" in rules(ws, "echo '[gate]' >> vacant.toml")
    assert "gate-self" in rules(ws, f"rm -rf {state_dir(ws)}")
    assert "gate-self" in rules(ws, "sed -i s/x/y/ .claude/settings.local.json")
    assert rules(ws, "cat vacant.toml .vacant/asks/ask-1.json") == set()


# -- [gate] in vacant.toml ------------------------------------------------------------------------


def test_rules_are_added_and_removed(ws):
    (ws / "vacant.toml").write_text(
        '[gate]\nremove = ["git-push"]\n'
        '[[gate.act]]\nname = "release"\ncommand = \'^make\\s+release\\b\'\nwhy = "the public release"\n'
        '[[gate.act]]\nname = "gh-writes"\ntool = "mcp__github__(create|update)_.*"\n'
        '[[gate.allow]]\nname = "dry"\ncommand = "--dry-run"\n'
    )
    assert rules(ws, "git push") == {"unwalled"}  # a push leaves the wall: still the person's answer
    assert rules(ws, "git push origin HEAD:x") == {"unwalled"}
    unwalled(ws)
    assert rules(ws, "git push") == set()  # no wall to leave: the person's [gate] decides
    assert rules(ws, "make  release") == {"release"}
    assert rules(ws, "npm publish --dry-run") == set()
    assert rules(ws, "npm publish") == {"package-publish"}
    mcp = gate.classify(ws, call(ws, "mcp__github__create_issue", {"title": "t"}), policy_rules.load_policy(ws))
    assert mcp.kind == "act" and mcp.action.receipts["rules"] == ["gh-writes"]
    assert gate.classify(ws, call(ws, "mcp__github__get_issue", {"n": 1}), policy_rules.load_policy(ws)).kind == "pass"


def test_defaults_can_be_switched_off(ws):
    (ws / "vacant.toml").write_text("[gate]\ndefaults = false\n")
    assert rules(ws, "git push") == {"unwalled"}
    unwalled(ws)
    assert rules(ws, "git push") == set()
    assert rules(ws, "rm -rf /tmp/x") == set()
    assert "arm" in rules(ws, "sh arms/act.sh")  # arms declare their own mode


def test_an_unreadable_policy_fails_closed(ws):
    (ws / "vacant.toml").write_text("[gate]\nremove = [\"no-such-rule\"]\n")
    assert rules(ws, "ls") == "refuse"
    assert "no-such-rule" in verdict(ws, "ls").message
    assert gate.classify(ws, call(ws, "Read", {"file_path": "x"}, scope=[]), policy_rules.load_policy(ws)).kind == "pass"
    (ws / "vacant.toml").write_text("[gate\n")
    assert rules(ws, "ls") == "refuse"
    (ws / "vacant.toml").write_text("[gate]\narms = 'arms'\n")
    assert rules(ws, "ls") == set()


def test_the_policy_parse_is_cached_by_content(ws):
    (ws / "vacant.toml").write_text('[gate]\nremove = ["git-push"]\n')
    assert rules(ws, "git push") == {"unwalled"}
    cache = state_dir(ws) / "gate-policy.json"
    assert json.loads(cache.read_text())["table"] == {"remove": ["git-push"]}
    (ws / "vacant.toml").write_text('[gate]\nremove = ["deploy"]\n')  # same size class, new content
    assert rules(ws, "git push") == {"git-push"}


def test_the_pydantic_model_says_the_same_as_the_hot_path(ws):
    from vacant.policy.contract.contract import ContractError, parse_contract

    for text in ('[gate]\nremove = ["nope"]\n', '[[gate.act]]\nname = "x"\n', '[[gate.act]]\nname="x"\ncommand="("\n',
                 '[gate]\narms = "../out"\n', '[gate]\nunknown = 1\n'):
        with pytest.raises(ContractError):
            parse_contract(text)
        assert policy_rules.table_problems(__import__("tomllib").loads(text).get("gate"))
    contract = parse_contract('[gate]\nremove = ["deploy"]\n[[gate.allow]]\nname = "ok"\ntool = "X"\n')
    assert contract.gate.remove == ["deploy"] and contract.gate.allow[0].tool == "X"


# -- the hook: deny rendering, hot path, failing closed -------------------------------------------


def run_hook(ws: Path, payload: dict) -> dict | None:
    body = {"session_id": "s1", "cwd": str(ws), "hook_event_name": "PreToolUse", "tool_use_id": "t1", **payload}
    stdout, code = hook.run("claude", json.dumps(body).encode(), {"CLAUDE_PROJECT_DIR": str(ws)})
    assert code == 0
    return json.loads(stdout)["hookSpecificOutput"] if stdout else None


def test_claude_and_codex_render_the_deny(ws, monkeypatch):
    out = run_hook(ws, {"tool_name": "Bash", "tool_input": {"command": "git push"}})
    assert out["permissionDecision"] == "deny" and json.loads(out["permissionDecisionReason"])["performed"] is False
    monkeypatch.chdir(ws)
    body = {"session_id": "s2", "cwd": str(ws), "hook_event_name": "PreToolUse", "tool_use_id": "c1",
            "tool_name": "Bash", "tool_input": {"command": "git push"}, "model": "gpt-5.5"}
    stdout, _ = hook.run("codex", json.dumps(body).encode(), {})
    decision = json.loads(stdout)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny" and "needs-confirm" in decision["permissionDecisionReason"]


PROBE = """
import sys, json
before = set(sys.modules)
from vacant.hook.call import run
out = run("claude", sys.stdin.buffer.read(), {"CLAUDE_PROJECT_DIR": sys.argv[1]})
extra = sorted({m.split(".")[0] for m in set(sys.modules) - before} - set(sys.stdlib_module_names) - {"vacant", "xxhash", "_xxhash"})
print(json.dumps([extra, out[0]]))
"""


@pytest.mark.parametrize("command", ["git push", "sh arms/act.sh", "sh arms/read.py", "vacant approve ask#1"])
def test_the_gate_stays_on_the_hot_path(ws, command):
    (ws / "vacant.toml").write_text('[gate]\n[[gate.act]]\nname = "r"\ncommand = "^make release"\n')
    payload = json.dumps({"session_id": "s1", "cwd": str(ws), "hook_event_name": "PreToolUse", "tool_use_id": "t",
                          "tool_name": "Bash", "tool_input": {"command": command}})
    env = {**os.environ, "HOME": str(ws.parent / "home")}
    proc = subprocess.run([sys.executable, "-I", "-c", PROBE, str(ws)], input=payload.encode(), capture_output=True,
                          check=True, env=env)
    extra, _ = json.loads(proc.stdout)
    assert extra == [], f"the gate imported non-stdlib modules: {extra}"
    assert not (state_dir(ws) / "errors.log").exists()


def test_an_internal_error_denies_an_act_action(ws, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(gate, "classify", broken)
    out = run_hook(ws, {"tool_name": "Bash", "tool_input": {"command": "git push"}})
    assert out["permissionDecision"] == "deny"
    assert out["permissionDecisionReason"] == policy_rules.FAILED.format(error="RuntimeError: boom")
    assert "gate: RuntimeError: boom" in (state_dir(ws) / "errors.log").read_text()
    # a tool that writes nothing is not held back by vacant's own error
    assert run_hook(ws, {"tool_name": "Read", "tool_input": {"file_path": str(ws / "x")}, "tool_use_id": "t2"}) is None


def test_when_the_recorder_fails_an_act_action_is_still_denied(ws, monkeypatch):
    from vacant.record import recorder

    def broken(self, call):
        raise OSError("disk full")

    monkeypatch.setattr(recorder.Recorder, "recording", broken)  # what the hook call enters
    out = run_hook(ws, {"tool_name": "Bash", "tool_input": {"command": "git push origin main"}})
    assert out["permissionDecision"] == "deny" and "OSError: disk full" in out["permissionDecisionReason"]
    with pytest.raises(OSError):  # READ: the hook entry logs it and fails open, as before the gate
        run_hook(ws, {"tool_name": "Bash", "tool_input": {"command": "ls"}})
    assert run_hook(ws, {"tool_name": "Bash", "tool_input": {"command": "vacant approve ask#1"}})[
        "permissionDecisionReason"] == policy_rules.ANSWER_REFUSAL
    assert "the call was denied" in (state_dir(ws) / "errors.log").read_text()


@pytest.mark.slow
def test_a_held_lock_denies_an_act_action_within_the_hook_budget(ws):
    """The workspace lock is held elsewhere: the hook gives up at its budget and denies ACT."""
    import fcntl
    import time

    state = state_dir(ws)
    state.mkdir(exist_ok=True)
    holder = open(state / "lock", "w")
    fcntl.flock(holder, fcntl.LOCK_EX)
    try:
        env = {**os.environ, "CLAUDE_PROJECT_DIR": str(ws), "VACANT_HOOK_BUDGET_S": "1"}
        payload = json.dumps({"session_id": "s1", "cwd": str(ws), "hook_event_name": "PreToolUse", "tool_use_id": "t",
                              "tool_name": "Bash", "tool_input": {"command": "git push"}}).encode()
        started = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "vacant.hook.entry", "claude"], input=payload, env=env,
                              capture_output=True, cwd=ws, timeout=30)
        elapsed = time.monotonic() - started
    finally:
        holder.close()
    assert proc.returncode == 0
    decision = json.loads(proc.stdout)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny" and "HookTimeout" in decision["permissionDecisionReason"]
    assert elapsed < 10


def test_a_workspace_reached_through_a_symlink(ws, tmp_path):
    """macOS reaches /tmp through /private/tmp: paths are compared after resolving symlinks."""
    alias = tmp_path / "alias"
    alias.symlink_to(ws)
    assert "arm" in rules(alias, "sh arms/act.sh")
    assert "arm" in rules(alias, f"sh {ws}/arms/act.sh", cwd=alias)
    assert "arm" in rules(ws, f"sh {alias}/arms/act.sh")
    assert refusal(alias, "Write", {"file_path": str(alias / "arms" / "x.sh"), "content": "echo\n"}) is not None
    assert refusal(ws, "Write", {"file_path": str(alias / "arms" / "x.sh"), "content": "echo\n"}) is not None
    assert "delete-outside-workspace" not in rules(alias, f"rm -rf {ws}/build")
