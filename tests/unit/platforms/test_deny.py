"""One deny (issue 44): every registered platform's pre-tool call, fed to each place that denies it
without asking the platform's module, is denied as that platform obeys a deny; any other call
gets nothing there (the recorder fails open).

The places, each of which reads the registry's deny table (vacant/platforms/deny.py):
- `hookcall.fail_closed` on a payload it could not read, and on a parsed call whose platform
  cannot render;
- the in-process hook's last line (vacant/hook/entry.py `_failed`), whatever stopped it: KeyboardInterrupt too;
- the lean client's `last_resort` (vacant/hook/client.py);
- the launcher (vacant/vacant-hook-client.py) as a real process, from a copy of the package that
  cannot be imported: `package` (vacant/__init__.py raises: the client imports, and its last resort
  answers) and `modules` (every module raises but the launcher and the deny table it loads: not
  even the client imports).

The payloads: each platform's pre-tool payloads captured from its real binary (fixtures/payloads/);
OpenCode's, which vacant's own plugin builds, as the real plugin sends it (node).

A deny the platform obeys, two ways: the reply is the platform's own `render` of a deny with that
reason, for any registered platform with nothing to write here; and it meets the deny contract its
module documents (OBEYS: one line a platform; OpenCode's contract is its plugin, run under node with
the answer as its hook's output: it throws, so the tool does not run).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import opencode_plugin
import pi_extension
import pytest
from captured_payloads import captured, in_workspace
from hypothesis import given
from hypothesis import strategies as st

from vacant.hook import call as hookcall
from vacant.core.calls import HookCall, Response
from vacant.hook import client
from vacant.platforms import deny
from vacant.platforms.all_platforms import ALIASES, PLATFORMS, REGISTERED, deny_table

REPO = Path(__file__).resolve().parents[3]
PRE = sorted(name for name, platform in PLATFORMS.items() if platform.events_of("tool_pre"))
BROKEN = ("package", "modules")
# the platforms whose payloads vacant's own code builds (no binary of theirs to capture them from)
BUILT_BY_VACANT: dict[str, Callable[[Path, Path], bytes]] = {"opencode": opencode_plugin.payload}


# -- what each platform obeys, as its module documents it ---------------------------------------


def claude_dialect(stdout: str, code: int, scratch: Path) -> str:
    """Claude Code, Codex, Qwen (qwen.py), Droid (droid.py) and Copilot with Claude's names (copilot.py): exit 0 and
    `hookSpecificOutput.permissionDecision: "deny"` on stdout; exit 1 or a crash runs the tool."""
    assert code == 0, code
    out = json.loads(stdout)["hookSpecificOutput"]
    assert (out["hookEventName"], out["permissionDecision"]) == ("PreToolUse", "deny"), out
    return out["permissionDecisionReason"]


def gemini_deny(stdout: str, code: int, scratch: Path) -> str:
    """Gemini CLI's BeforeTool (gemini.py): `{"decision": "deny", "reason": R}`, the model gets R."""
    assert code == 0, code
    out = json.loads(stdout)
    assert out["decision"] == "deny", out
    return out["reason"]


def opencode_throws(stdout: str, code: int, scratch: Path) -> str:
    """OpenCode: vacant's plugin throws on the hook's `{"action": "deny"}` (opencode.py); run here
    with this answer as its hook's output."""
    answer = scratch / "answer.json"
    answer.write_text(stdout)
    done = opencode_plugin.before(f"cat {shlex.quote(str(answer))}; exit {code}", scratch, scratch / "plugin")
    assert not done["ran"], "the plugin let the tool run"
    return done["message"]


def pi_blocks(stdout: str, code: int, scratch: Path) -> str:
    """pi: vacant's extension returns `{block: true, reason}` from `tool_call` on the hook's
    `{"action": "deny"}`, and when the hook gave no answer (pi/platform.py); run here with this
    answer as its hook's output."""
    answer = scratch / "answer.json"
    answer.write_text(stdout)
    done = pi_extension.before(f"cat {shlex.quote(str(answer))}; exit {code}", scratch, scratch / "extension")
    assert not done["ran"], "the extension let the tool run"
    return done["message"]


def cline_cancel(stdout: str, code: int, scratch: Path) -> str:
    """Cline (cline/platform.py): `{"cancel": true, "errorMessage": R}` on stdout; the tool does not
    run and the whole task is aborted (there is no per-call deny); a failing hook runs the tool."""
    assert code == 0, code
    out = json.loads(stdout)
    assert out["cancel"] is True, out
    return out["errorMessage"]


OBEYS: dict[str, Callable[[str, int, Path], str]] = {
    "claude": claude_dialect, "codex": claude_dialect, "qwen": claude_dialect, "copilot": claude_dialect,
    "droid": claude_dialect,
    "gemini": gemini_deny, "opencode": opencode_throws, "kilo": opencode_throws, "pi": pi_blocks,
    "cline": cline_cancel,
}


def check_denied(name: str, answer: tuple[str, int] | None, reason: str, scratch: Path) -> None:
    """`answer` is a deny the platform obeys, saying `reason`, and the platform's own render of it."""
    assert answer is not None and answer[0], f"{name}: nothing printed, so the tool runs"
    stdout, code = answer
    assert OBEYS[name](stdout, code, scratch) == reason, f"{name}: the model is not told why"
    rendered, rendered_code = PLATFORMS[name].render(HookCall("tool_pre", "s", scratch, scope=None),
                                                     Response("deny", reason))
    assert (json.loads(stdout), code) == (json.loads(rendered), rendered_code), f"{name}: not the platform's reply"


# -- the payloads ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("ws")


@pytest.fixture(scope="module")
def payloads(workspace, tmp_path_factory) -> dict[str, tuple[list[bytes], list[bytes]]]:
    """Each platform's (pre-tool payloads, the others)."""
    found = {}
    for name, platform in PLATFORMS.items():
        pre, others = [], []
        for payload in captured(platform):
            (pre if payload[platform.event_key] in platform.events_of("tool_pre") else others).append(
                in_workspace(payload, workspace))
        if name in BUILT_BY_VACANT:
            pre.append(BUILT_BY_VACANT[name](workspace, tmp_path_factory.mktemp(f"{name}-payload")))
        found[name] = (pre, others)
    return found


def test_every_platform_with_a_pre_tool_event_has_payloads_and_a_stated_contract(payloads):
    assert all(payloads[name][0] for name in PRE), [name for name in PRE if not payloads[name][0]]
    assert set(OBEYS) == set(PRE), "say here how each platform obeys a deny (its module's docstring)"


# -- the table ------------------------------------------------------------------------------------


def test_the_table_is_the_registrys():
    assert deny_table() in Path(deny.__file__).read_text(), "run `python -m vacant.gendocs --write`"


@given(st.text(max_size=300))
def test_every_name_gets_its_platforms_own_render_whatever_the_reason(reason):
    for name in sorted({*PLATFORMS, *ALIASES}):
        platform = PLATFORMS[ALIASES.get(name, name)]
        rendered = platform.render(HookCall("tool_pre", "s", REPO, scope=None), Response("deny", reason))
        replied = deny.reply(name, reason)
        if not rendered[0]:
            assert replied is None, name  # nobody reads a deny (a watched command)
            continue
        assert replied is not None and (json.loads(replied[0]), replied[1]) == (json.loads(rendered[0]), rendered[1])


def test_an_unknown_name_answers_in_the_dialect_its_payload_names():
    for event, first in deny.PRE_TOOL.items():
        assert first == next(p.name for p in REGISTERED if event in p.events_of("tool_pre"))
        raw = json.dumps({"hook_event_name": event, "event": event}).encode()
        assert deny.denial("no-such-platform", raw, "R") == deny.reply(first, "R")
    assert deny.reply("no-such-platform", "R") is None


@pytest.mark.parametrize("raw, event", [
    (b'{"hook_event_name": "BeforeTool", "tool_input": {"command": "git push origin main"', "BeforeTool"),  # cut short
    (b'{"hook_event_name" :"PreToolUse"}', "PreToolUse"),
    (b'{"tool_name": "Bash", "note": "PreToolUse"}', "PreToolUse"),  # no event named: one mentioned is enough
    (b'{"hook_event_name": "PostToolUse", "tool_response": "PreToolUse BeforeTool"}', None),  # names another
    (b'{"hook_event_name": "PostToolUse", "tool_input": {"text": "{\\"event\\": \\"tool.execute.before\\"}"}}', None),
    (b"\xff\xfe not json at all BeforeTool", "BeforeTool"),
    (b"", None),
])
def test_pre_tool_reads_the_bytes(raw, event):
    assert deny.pre_tool(raw) == event


# -- the failure sites ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", PRE)
def test_fail_closed_denies_an_unreadable_pre_tool_payload(name, payloads, tmp_path):
    error = ValueError("the payload could not be read")
    reason = hookcall.UNREADABLE.format(error="ValueError: the payload could not be read")
    pre, others = payloads[name]
    for raw in pre:
        check_denied(name, hookcall.fail_closed(name, raw, error, {}), reason, tmp_path)
    for raw in others:
        assert hookcall.fail_closed(name, raw, error, {}) is None, raw[:200]


@pytest.mark.parametrize("name", PRE)
def test_fail_closed_denies_when_the_platform_cannot_render(name, payloads, workspace, tmp_path, monkeypatch):
    """The gate said deny, and the platform's module then failed to render it: the table's reply."""
    platform = PLATFORMS[name]
    monkeypatch.setattr(hookcall, "_deny_if_act", lambda call, reason: Response("deny", "Held for the person."))
    for raw in payloads[name][0]:
        call = platform.parse(json.loads(raw), {"PWD": str(workspace)})
        assert call.kind == "tool_pre"
        with monkeypatch.context() as broken:
            broken.setattr(platform, "render", lambda call, response: 1 / 0)
            answer = hookcall.fail_closed(name, raw, RuntimeError("the lock timed out"), {}, call)
        check_denied(name, answer, "Held for the person.", tmp_path)


@pytest.mark.parametrize("name", PRE)
def test_the_clients_last_resort_denies(name, payloads, tmp_path, capsys):
    reason = deny.CANNOT_START.format(error="ImportError")
    pre, others = payloads[name]
    for raw in pre:
        code = client.last_resort(raw, ImportError("no vacant"), name)
        check_denied(name, (capsys.readouterr().out, code), reason, tmp_path)
    for raw in others:
        assert client.last_resort(raw, ImportError("no vacant"), name) == 0
        assert capsys.readouterr().out == ""


@pytest.fixture(scope="module")
def broken(tmp_path_factory) -> dict[str, Path]:
    """Copies of the package that cannot be imported (see the module's docstring)."""
    made = {}
    for kind in BROKEN:
        root = tmp_path_factory.mktemp(f"broken-{kind}")
        shutil.copytree(REPO / "vacant", root / "vacant", ignore=shutil.ignore_patterns("__pycache__", "demo"))
        kept = {root / "vacant" / "vacant-hook-client.py", root / "vacant" / "platforms" / "deny.py"}
        for module in (root / "vacant").rglob("*.py"):
            if (kind == "package" and module == root / "vacant" / "__init__.py") or (
                    kind == "modules" and module not in kept):
                module.write_text(f"raise ImportError('{module.name} is broken for this test')\n")
        made[kind] = root
    return made


def launch(root: Path, name: str, raw: bytes, workspace: Path) -> subprocess.CompletedProcess:
    """The installed hook command, as `vacant init` writes it, from the broken copy under `root`."""
    env = {key: value for key, value in os.environ.items() if not key.endswith("_PROJECT_DIR")}
    return subprocess.run([sys.executable, "-I", "-S", str(root / "vacant" / "vacant-hook-client.py"), name],
                          input=raw, capture_output=True, cwd=workspace, env=env, timeout=60)


@pytest.mark.parametrize("kind", BROKEN)
@pytest.mark.parametrize("name", PRE)
def test_the_launcher_denies_when_vacant_cannot_be_imported(name, kind, broken, payloads, workspace, tmp_path):
    done = launch(broken[kind], name, payloads[name][0][0], workspace)
    check_denied(name, (done.stdout.decode(), done.returncode), deny.CANNOT_START.format(error="ImportError"),
                 tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("kind", BROKEN)
@pytest.mark.parametrize("name", PRE)
def test_the_launcher_denies_every_captured_pre_tool_call_and_nothing_else(name, kind, broken, payloads, workspace,
                                                                            tmp_path):
    pre, others = payloads[name]
    for raw in pre:
        done = launch(broken[kind], name, raw, workspace)
        check_denied(name, (done.stdout.decode(), done.returncode), deny.CANNOT_START.format(error="ImportError"),
                     tmp_path)
    for raw in others:
        done = launch(broken[kind], name, raw, workspace)
        assert (done.stdout, done.returncode) == (b"", 0), (raw[:200], done.stderr[-500:])


@pytest.fixture(scope="module")
def beyond_the_client(tmp_path_factory) -> Path:
    """A copy of the package where nothing imports but what the `vacant-hook` console script
    imports before vacant answers (the package's and vacant/hook's __init__, the client) and the
    deny table: the in-process answer, the core, the platforms, all raise."""
    root = tmp_path_factory.mktemp("broken-beyond-client")
    shutil.copytree(REPO / "vacant", root / "vacant", ignore=shutil.ignore_patterns("__pycache__", "demo"))
    package = root / "vacant"
    kept = {package / "__init__.py", package / "hook" / "__init__.py", package / "hook" / "client.py",
            package / "platforms" / "deny.py"}
    for module in package.rglob("*.py"):
        if module not in kept:
            module.write_text(f"raise ImportError('{module.name} is broken for this test')\n")
    return root


@pytest.mark.parametrize("name", PRE)
def test_the_console_script_denies_when_vacant_cannot_answer(name, beyond_the_client, payloads, workspace, tmp_path):
    """The other door: `vacant-hook NAME`, the console script (pyproject's [project.scripts]), as
    pip writes it: it imports vacant.hook.client and calls its main."""
    script = "import sys\nfrom vacant.hook.client import main\nsys.exit(main())\n"
    env = {key: value for key, value in os.environ.items() if not key.endswith("_PROJECT_DIR")}
    env["PYTHONPATH"] = str(beyond_the_client)
    pre, others = payloads[name]
    done = subprocess.run([sys.executable, "-c", script, name], input=pre[0], capture_output=True, cwd=workspace,
                          env=env, timeout=60)
    assert b"is broken for this test" not in done.stdout, done.stdout
    check_denied(name, (done.stdout.decode(), done.returncode), deny.CANNOT_START.format(error="ImportError"),
                 tmp_path)
    for raw in others[:1]:  # a call that does not act gets nothing (opencode's payloads are all pre-tool)
        done = subprocess.run([sys.executable, "-c", script, name], input=raw, capture_output=True, cwd=workspace,
                              env=env, timeout=60)
        assert (done.stdout, done.returncode) == (b"", 0), done.stderr[-500:]


@pytest.mark.parametrize("kind", BROKEN)
def test_opencodes_plugin_blocks_the_tool_when_its_hook_cannot_import_vacant(kind, broken, workspace, tmp_path):
    launcher = broken[kind] / "vacant" / "vacant-hook-client.py"
    command = f"{shlex.quote(sys.executable)} -I -S {shlex.quote(str(launcher))} opencode"
    done = opencode_plugin.before(command, workspace, tmp_path)
    assert done == {"ran": False, "message": deny.CANNOT_START.format(error="ImportError")}


@pytest.mark.parametrize("error", [KeyboardInterrupt(), RuntimeError("the recorder failed")],
                         ids=lambda error: type(error).__name__)
@pytest.mark.parametrize("name", PRE)
def test_the_in_process_hook_denies_whatever_stopped_it(name, error, payloads, tmp_path, monkeypatch, capsys):
    """vacant/hook/entry.py's own last line (`_failed`), whatever raised: a SIGINT's KeyboardInterrupt too."""
    from vacant.hook import entry as hook

    def stopped(*args, **kwargs):
        raise error

    monkeypatch.setattr(hook, "scrub", lambda environ: [])  # the test process's environment stays whole
    monkeypatch.setattr(hook, "look_up", stopped)
    reason = hookcall.UNREADABLE.format(error=f"{type(error).__name__}: {str(error)[:200]}")
    pre, others = payloads[name]
    for raw in pre:
        code = hook.main([name], raw, deadline=time.monotonic() + 30)
        check_denied(name, (capsys.readouterr().out, code), reason, tmp_path)
    for raw in others[:3]:  # each writes a traceback to errors.log: a few are enough here
        assert hook.main([name], raw, deadline=time.monotonic() + 30) == 0
        assert capsys.readouterr().out == ""
