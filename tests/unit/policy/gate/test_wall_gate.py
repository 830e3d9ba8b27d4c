"""The platforms' own file tools (Claude's Read/Write/Edit/MultiEdit/NotebookEdit, Codex's
apply_patch) run outside any Bash sandbox: the gate refuses them on every path the wall protects,
whatever form the path takes (absolute, relative, `..`, `~`, through a symlink, doubled slashes).

Generated: hypothesis builds a path form to a protected or a near-miss target; the oracle is the
kernel's own answer (the inode of the directory the form lands in, walked up with `..`), not
vacant's path arithmetic."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vacant.core.calls import HookCall
from vacant.core.locations import mark_installed, state_dir, user_config_dir
from vacant.core.wall import temp_dirs
from vacant.platforms.all_platforms import PLATFORMS
from vacant.policy.gate import gate
from vacant.policy.gate import rules as policy_rules

pytestmark = pytest.mark.usefixtures("isolated_home")

READ_TOOLS = {"Read": "file_path"}
WRITE_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}


@pytest.fixture
def walled(tmp_path, isolated_home):
    """A git workspace installed by vacant, its protected directories present, and a symlink into
    each from inside the workspace (the trick a tool call could use)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    mark_installed(ws)
    (ws / "src").mkdir()
    (ws / "src" / "a.txt").write_text("a\n")
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.local.json").write_text("{}\n")
    user_config_dir().mkdir(parents=True, exist_ok=True)
    (user_config_dir() / "key").write_bytes(b"k" * 32)
    (isolated_home / ".claude").mkdir(parents=True)
    (isolated_home / ".claude" / "settings.json").write_text("{}\n")
    for directory in temp_dirs():
        directory.mkdir(parents=True, exist_ok=True)
    targets = {
        "state": (state_dir(ws), "hidden"),
        "key": (user_config_dir(), "hidden"),
        "sockets": (temp_dirs()[0], "hidden"),
        "local settings": (ws / ".claude" / "settings.local.json", "hidden"),
        "user settings": (isolated_home / ".claude" / "settings.json", "readonly"),
        "package": (Path(gate.__file__).resolve().parents[2], "readonly"),
        # near misses: same prefixes, not protected
        "near state": (ws / ".git" / "vacantx", None),
        "src": (ws / "src", None),
        "near settings": (ws / ".claude" / "settings.local.json.bak", None),
    }
    (ws / ".git" / "vacantx").mkdir()
    links = {}
    for name, (target, _) in targets.items():
        link = ws / "src" / f"link-{name.replace(' ', '-')}"
        link.symlink_to(target if target.exists() else target.parent)
        links[name] = link
    return ws, isolated_home, targets, links


def kernel_protected(form: str, cwd: Path, targets: dict, writing: bool) -> bool:
    """The oracle: does the kernel resolve `form` (from `cwd`) into a protected target? Compares
    inodes of the directory the form lands in and of each of its ancestors (reached with `..`)."""
    protected = [t for t, klass in targets.values() if klass == "hidden" or (klass == "readonly" and writing)]
    full = form if os.path.isabs(form) else os.path.join(cwd, form)
    ids = {(s.st_dev, s.st_ino) for s in (os.stat(t) for t in protected if os.path.exists(t))}
    if os.path.exists(full) and (os.stat(full).st_dev, os.stat(full).st_ino) in ids:
        return True
    probe = os.path.dirname(full.rstrip("/")) or "/"
    while not os.path.exists(probe):  # a file to be created under directories to be created
        probe = os.path.dirname(probe)
    for _ in range(64):
        try:
            info = os.stat(probe)
        except OSError:
            return False
        if (info.st_dev, info.st_ino) in ids:
            return True
        if (info.st_dev, info.st_ino) == (os.stat("/").st_dev, os.stat("/").st_ino):
            return False
        probe = os.path.join(probe, "..")
    return False


def _forms(ws: Path, home: Path, targets: dict, links: dict):
    names = sorted(targets)

    @st.composite
    def form(draw):
        name = draw(st.sampled_from(names))
        target, _ = targets[name]
        leaf = draw(st.sampled_from(["", "x.json", "runs/r/events.jsonl", "install.json", "key"]))
        if target.is_file() or not target.exists():
            leaf = ""
        style = draw(st.sampled_from(["absolute", "relative", "dotdot", "symlink", "tilde", "slashes", "dot"]))
        base = str(target)
        if style == "relative":
            base = os.path.relpath(target, ws)
        elif style == "dotdot":
            base = str(ws / "src" / ".." / "src" / ".." / os.path.relpath(target, ws))
        elif style == "symlink":
            link = links[name]
            base = str(link) if target.exists() and os.path.realpath(link) == str(target.resolve()) \
                else str(link / target.name)
        elif style == "tilde" and str(target).startswith(str(home) + os.sep):
            base = "~/" + os.path.relpath(target, home)
        elif style == "slashes":
            base = str(target).replace(os.sep, os.sep * 2)
        elif style == "dot":
            base = str(target.parent / "." / target.name)
        return os.path.join(base, leaf) if leaf else base

    return form()


def _call(ws: Path, tool: str, tool_input: dict) -> HookCall:
    for platform in PLATFORMS.values():
        kind, intent = platform.intent(tool, tool_input)
        if kind is not None:
            break
    return HookCall("tool_pre", "s1", ws, tool=tool, tool_input=tool_input, key="t1", cwd=str(ws),
                    tool_kind=kind, intent=intent)


def _refused_by_wall(ws: Path, tool: str, tool_input: dict) -> bool:
    verdict = gate.classify(ws, _call(ws, tool, tool_input), policy_rules.load_policy(ws))
    return verdict.kind == "refuse" and ("behind vacant's wall" in verdict.message
                                         or "signing key" in verdict.message)


def _input(tool: str, field: str, path: str) -> dict:
    if tool == "Write":
        return {field: path, "content": "x\n"}
    if tool == "Edit":
        return {field: path, "old_string": "a", "new_string": "b"}
    if tool == "MultiEdit":
        return {field: path, "edits": [{"old_string": "a", "new_string": "b"}]}
    return {field: path}


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_form_of_a_protected_path_is_refused_and_no_other(walled, data):
    ws, home, targets, links = walled
    path = data.draw(_forms(ws, home, targets, links), label="path")
    tool = data.draw(st.sampled_from(sorted({**READ_TOOLS, **WRITE_TOOLS, "apply_patch": None})), label="tool")
    writing = tool != "Read"
    oracle_form = os.path.expanduser(path) if path.startswith("~") else path
    expected = kernel_protected(oracle_form, ws, targets, writing)
    if tool == "apply_patch":
        verb = data.draw(st.sampled_from(["Add File", "Update File", "Delete File"]), label="verb")
        patch = f"*** Begin Patch\n*** {verb}: {path}\n+x\n*** End Patch\n"
        got = _refused_by_wall(ws, "apply_patch", {"command": ["apply_patch", patch]})
    else:
        field = {**READ_TOOLS, **WRITE_TOOLS}[tool]
        got = _refused_by_wall(ws, tool, _input(tool, field, path))
    assert got == expected, (tool, path)


def test_a_move_into_the_state_directory_is_refused(walled):
    ws, _home, targets, _links = walled
    patch = (f"*** Begin Patch\n*** Update File: src/a.txt\n*** Move to: {targets['state'][0]}/install.json\n"
             "@@\n-a\n+b\n*** End Patch\n")
    assert _refused_by_wall(ws, "apply_patch", {"command": ["apply_patch", patch]})


def test_ordinary_work_passes(walled):
    ws, *_ = walled
    assert gate.classify(ws, _call(ws, "Write", {"file_path": str(ws / "src" / "new.py"), "content": "x\n"}),
                         policy_rules.load_policy(ws)).kind == "pass"
    assert gate.classify(ws, _call(ws, "Read", {"file_path": str(ws / ".claude" / "settings.json")}),
                         policy_rules.load_policy(ws)).kind == "pass"
