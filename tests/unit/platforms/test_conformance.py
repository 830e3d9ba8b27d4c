"""Every registered platform through the same contract: it is a `Platform` (each declared member
present, of its declared kind and signature), its captured payloads parse into the core's closed
kinds (and the hook knows its pre-tool events), it renders every response kind, an install in
every scope merges, is idempotent and uninstalls byte for byte, and every file it writes is
guarded by the gate's record-delete rule. A platform added to the registry runs through all of it
with no test of its own to write."""

from __future__ import annotations

import subprocess

import collections.abc
import inspect
import json
import os
import types
import typing
from pathlib import Path

import pytest
from captured_payloads import NO_CAPTURED_PAYLOADS, captured

from vacant.core import platform_facts
from vacant.core.calls import KINDS, TOOL_KINDS, HookCall, Response
from vacant.core.locations import state_dir
from vacant.platforms import base, deny
from vacant.platforms import protocol as protocols
from vacant.platforms.all_platforms import PLATFORMS, REGISTERED, client_table
from vacant.platforms.settings_file import hook_command
from vacant.policy.gate import recordguard

NAMES = sorted(PLATFORMS)
HOOKED = [name for name in NAMES if PLATFORMS[name].scopes]
SEED = {".json": '{ "theirs":  [1, 2],\n"keep": {"a": "b"} }\n', ".toml": "# theirs\n[tools]\nweb_search = false\n"}


# -- the protocol ------------------------------------------------------------------------------


def _matches(value: object, hint: object) -> bool:
    origin = typing.get_origin(hint)
    if hint is typing.Any:
        return True
    if origin in (typing.Union, types.UnionType):
        return any(_matches(value, arg) for arg in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if origin is collections.abc.Callable:
        return callable(value)
    if origin is type:
        return isinstance(value, type) and issubclass(value, typing.get_args(hint)[0])
    if origin in (tuple, dict, list):
        if not isinstance(value, origin):
            return False
        args = typing.get_args(hint)
        if origin is dict:
            return all(_matches(k, args[0]) and _matches(v, args[1]) for k, v in value.items())
        return all(_matches(item, args[0]) for item in value)
    return isinstance(value, hint)


def _members(protocol: type) -> tuple[dict[str, object], list[str]]:
    """The protocol's data members with their types (a read-only property's is its getter's
    return type) and its methods, its bases' included (the composed protocols)."""
    hints: dict[str, object] = {}
    methods: list[str] = []
    for cls in protocol.__mro__:
        if cls in (object, typing.Protocol, typing.Generic):
            continue
        hints.update(typing.get_type_hints(cls, vars(protocols)))
        for member, value in vars(cls).items():
            if isinstance(value, property):
                hints[member] = typing.get_type_hints(value.fget, vars(protocols))["return"]
            elif inspect.isfunction(value) and not member.startswith("_"):
                methods.append(member)
    return hints, methods


@pytest.mark.parametrize("name", NAMES)
def test_every_platform_is_a_platform_member_by_member(name):
    protocol = protocols.Platform
    platform = PLATFORMS[name]
    assert all(isinstance(platform, part) for part in protocols.PROTOCOLS)
    hints, methods = _members(protocol)
    for member, hint in hints.items():
        assert _matches(getattr(platform, member), hint), f"{name}.{member} = {getattr(platform, member)!r} is not {hint}"
    assert {"parse", "render", "install", "uninstall", "doctor", "files", "headless", "intent"} <= set(methods)
    for member in methods:
        declared = list(inspect.signature(getattr(protocol, member)).parameters)[1:]
        given = list(inspect.signature(getattr(platform, member)).parameters)
        given = given[1:] if given[:1] == ["self"] else given
        assert given[:len(declared)] == declared, f"{name}.{member}{given} does not take {declared}"
    assert platform.name and platform.cell_platform and set(platform.events.values()) <= set(KINDS)
    assert (platform.driver is None) == (platform.scopes == ()), "hooks to install and a `vacant do` driver go together"


def test_names_aliases_and_programs_are_unique():
    seen: list[str] = []
    for platform in REGISTERED:
        seen += [platform.name, *platform.aliases]
    assert len(seen) == len(set(seen))
    programs = [p.program for p in REGISTERED if p.program]
    assert len(programs) == len(set(programs))


# -- payloads ----------------------------------------------------------------------------------


def test_every_hooked_platform_has_captured_payloads_or_says_why_not():
    assert {name for name in NAMES if not captured(PLATFORMS[name])} == set(NO_CAPTURED_PAYLOADS)


@pytest.mark.parametrize("name", [n for n in NAMES if n not in NO_CAPTURED_PAYLOADS])
def test_captured_payloads_parse_into_closed_kinds(name, tmp_path):
    platform = PLATFORMS[name]
    kinds = set()
    for payload in captured(platform):
        text = json.dumps(payload).replace("<ws>", str(tmp_path)).replace("<home>", str(tmp_path))
        call = platform.parse(json.loads(text), {"PWD": str(tmp_path)})
        assert isinstance(call, HookCall) and call.kind in KINDS
        event = payload[platform.event_key]
        assert call.kind in (platform.events.get(event, "ignore"), "ignore"), event  # (or left out)
        assert (deny.pre_tool(text.encode()) is not None) == (call.kind == "tool_pre"), event  # the fail-closed test
        if call.kind in ("tool_pre", "tool_post"):
            assert call.tool and call.key and (call.tool_kind is None or call.tool_kind in TOOL_KINDS)
        kinds.add(call.kind)
    assert {"tool_pre", "tool_post"} <= kinds, "the captures must include a tool step"


# -- responses ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_every_response_kind_renders(name, tmp_path):
    platform = PLATFORMS[name]
    reason = "Not run: held for the person's answer (vacant asks #1)."
    for kind in KINDS:
        call = HookCall(kind, "s", tmp_path, scope=None)
        for response in (Response(), Response("deny", reason), Response("block", reason),
                         Response(system_message="note for the person")):
            out, code = platform.render(call, response)
            assert isinstance(out, str) and isinstance(code, int)
            if response.action == "allow" and not response.system_message:
                assert reason not in out
    pre = HookCall("tool_pre", "s", tmp_path, scope=None)
    stop = HookCall("stop", "s", tmp_path, scope=None)
    if platform.scopes:  # a platform with hooks can refuse a tool call, and says why
        assert reason in platform.render(pre, Response("deny", reason))[0]
    if platform.scopes and platform.stop_rounds != 0:  # its Stop carries feedback back to the model
        assert reason in platform.render(stop, Response("block", reason))[0]


# -- installation ------------------------------------------------------------------------------


@pytest.fixture
def installable(isolated_home, tmp_path, monkeypatch):
    monkeypatch.delenv("CODEX_HOME", raising=False)  # the default homes: what the gate's list names
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("VACANT_CODEX_BIN", str(tmp_path / "no-codex-here"))  # Codex trusted offline
    root = tmp_path / "ws"
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)  # a real repository: git passes over an empty .git
    monkeypatch.chdir(root)
    return root, isolated_home


def _snapshot(paths: list[Path]) -> dict[Path, bytes | None]:
    return {path: path.read_bytes() if path.is_file() else None for path in paths}


def _seed(paths: list[Path]) -> None:
    for path in paths:
        if path.suffix in SEED:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(SEED[path.suffix])


@pytest.mark.parametrize("seeded", [False, True], ids=["fresh", "theirs"])
@pytest.mark.parametrize("name", HOOKED)
def test_install_in_every_scope_is_idempotent_and_uninstalls_byte_for_byte(name, seeded, installable):
    root, _home = installable
    platform = PLATFORMS[name]
    files = platform.files(root)
    if seeded:
        _seed(files)
    before = _snapshot(files)
    for scope in platform.scopes:
        command = hook_command(name, scope)
        written = Path(platform.install(root, scope, command))
        assert written in files or written.resolve() in [f.resolve() for f in files]
        once = _snapshot(files)
        platform.install(root, scope, command)
        assert _snapshot(files) == once, f"{scope}: a second install changed something"
        if seeded and written.suffix == ".json":
            assert json.loads(written.read_text())["keep"] == {"a": "b"}, "the person's settings were not kept"
        assert platform.uninstall(root, scope) is not None
        assert _snapshot(files) == before, f"{scope}: uninstall did not restore every file byte for byte"
    # (a directory an install created is `vacant uninstall`'s to remove: commands/footprint.py)


@pytest.mark.parametrize("name", HOOKED)
def test_every_file_an_install_writes_is_guarded_by_the_gate(name, installable):
    root, home = installable
    platform = PLATFORMS[name]
    state_dir(root).mkdir(parents=True, exist_ok=True)
    for scope in platform.scopes:
        before = _snapshot(platform.files(root))
        platform.install(root, scope, hook_command(name, scope))
        written = [path for path, data in _snapshot(platform.files(root)).items() if data != before[path]]
        assert written
        guarded = recordguard.guarded(str(root), str(state_dir(root)), str(home))
        for path in written:
            real = os.path.realpath(path)
            assert any(real == g or real.startswith(g + os.sep) for g in guarded), f"{path} ({scope}) is not guarded"
        platform.uninstall(root, scope)


def test_the_guard_fails_closed_when_no_platform_registered(monkeypatch, tmp_path):
    monkeypatch.setattr(platform_facts, "REGISTERED", [])
    with pytest.raises(platform_facts.NotRegistered):
        recordguard.guarded(str(tmp_path), str(tmp_path / "state"), None)


# -- what derives from the registry ------------------------------------------------------------


def test_the_lean_clients_table_is_the_registrys():
    source = (Path(base.__file__).resolve().parents[1] / "hook" / "client.py").read_text()
    assert client_table() in source, "run `python -m vacant.gendocs --write`"
    from vacant.hook import client

    for platform in REGISTERED:
        assert all(prefix in client.FORWARDED_PREFIXES for prefix in platform.hook_env)
        for event in platform.events_of("stop", "subagent_stop"):
            assert any(mark in json.dumps({platform.event_key: event}).encode() for mark in client.STOP_MARKS)
        for event in platform.events_of("session_start"):  # only http hooks need the daemon up at once
            waits = client._is_session_start(platform.name, json.dumps({platform.event_key: event}).encode())
            assert waits == platform.http_hooks


def test_providers_reach_the_exporters():
    for platform in REGISTERED:
        assert platform_facts.PROVIDERS.get(platform.cell_platform) == platform.provider


def test_do_and_experiment_take_every_registered_platform():
    from vacant.do.runner import PLATFORMS as DO_PLATFORMS
    from vacant.do.runner import pick_platform
    from vacant.experiment.runner import AGENTS

    for platform in REGISTERED:
        assert platform.name in DO_PLATFORMS
        for alias in platform.aliases:
            assert pick_platform(["x"], alias) == platform.name
        if platform.program:
            assert pick_platform([f"/opt/bin/{platform.program}", "task"], "auto") == platform.name
        argv = platform.headless(platform.name, "the task", "m1", ["--extra"])
        assert (platform.name in AGENTS) == (argv is not None)
        if argv is not None:
            assert "the task" in argv and "m1" in argv and "--extra" in argv
