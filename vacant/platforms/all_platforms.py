"""The explicit registry of agent platforms: adding one is a module plus one line here.

Every platform module is stdlib-only, but importing all seven (with Codex's app-server, trust and
schema readers and every `vacant do` driver) costs a hook call milliseconds it spends on none of
them: the hook imports only the platform it serves, through vacant/platforms/lean_registry.py.
Everything else that differs by platform derives from this list: `vacant do`'s platforms, programs
and aliases, `vacant experiment`'s agents, the hook's lean registry (`hook_table`: modules, pre-tool
event names, facts), the lean client's table (`client_table`, generated into
vacant/hook/client.py), every platform's deny for the failure paths (`deny_table`, generated
into vacant/platforms/deny.py), and the facts registered below for the layers that cannot import this
module (the gate's guarded settings files, the exporters' providers).
"""

from __future__ import annotations

from pathlib import Path

from vacant.core import platform_facts
from vacant.core.calls import HookCall, Response
from vacant.platforms import claude, command, copilot, deny, droid, gemini, kilo, lean_registry, opencode, qwen
from vacant.platforms.codex import platform as codex
from vacant.platforms.cline import platform as cline
from vacant.platforms.pi import platform as pi
from vacant.platforms.protocol import Platform


def _each_a_platform(*platforms: Platform) -> tuple[Platform, ...]:
    """The registry, each entry an argument: mypy names the one that is not a `Platform`
    (vacant/platforms/protocol.py) and the members where it differs."""
    return platforms


REGISTERED = _each_a_platform(
    claude.PLATFORM,
    codex.PLATFORM,
    opencode.PLATFORM,
    qwen.PLATFORM,
    gemini.PLATFORM,
    copilot.PLATFORM,
    pi.PLATFORM,
    cline.PLATFORM,
    droid.PLATFORM,
    kilo.PLATFORM,
    command.PLATFORM,
)
DEFAULT = claude.PLATFORM.name  # what `vacant doctor --platform` means when not given

PLATFORMS = {platform.name: platform for platform in REGISTERED}
ALIASES = {alias: platform.name for platform in REGISTERED for alias in platform.aliases}
PROGRAMS = {platform.program: platform.name for platform in REGISTERED if platform.program}

for _platform in REGISTERED:
    platform_facts.register(_platform.cell_platform, _platform.provider, _platform.settings_in_workspace,
                            _platform.settings_in_home)


UnknownPlatform = lean_registry.UnknownPlatform  # one class: the hook's lean registry raises it too


def load(name: str) -> Platform:
    """The platform registered as `name` (or one of its aliases)."""
    try:
        return PLATFORMS[ALIASES.get(name, name)]
    except (KeyError, TypeError):
        raise UnknownPlatform(f"unknown platform {name!r}: one of {', '.join(sorted(PLATFORMS))}") from None


def names(hooked_only: bool = False) -> tuple[str, ...]:
    """The registered names in registry order (`hooked_only`: those with hooks to install)."""
    return tuple(p.name for p in REGISTERED if not hooked_only or p.scopes)


def event_names(*kinds: str) -> list[str]:
    """Every platform's own names of the events of these kinds, sorted, without repeats."""
    return sorted({event for platform in REGISTERED for event in platform.events_of(*kinds)})


def wall_table() -> str:
    """docs/TRUST.md's table: what runs where, walled and unwalled, per registered platform."""
    lines = ["| platform | the agent's commands after `vacant init` | under `vacant do --platform P` | vacant's hooks "
             "| a `git push` the person approved, after `vacant init` |",
             "|---|---|---|---|---|"]
    for platform in REGISTERED:
        own = f"walled: {platform.own_sandbox}" if platform.own_sandbox else "unwalled: no sandbox of its own that vacant sets up"
        do = f"unwalled: {platform.wall_refused}" if platform.wall_refused else "walled: bubblewrap"
        hooks = ("in the agent's own process (its plugin)" if platform.wall_refused else
                 "outside the agent's sandbox, as the person" if platform.scopes else "none: recorded by watching")
        approved = ("once, by vacant's hook, outside the wall, as the person (a plain push only)"
                    if platform.hook_runs_approved is not None else
                    "by the platform, outside its sandbox (the gate holds each such line)" if platform.own_sandbox else
                    "by the platform, as the agent's other commands")
        lines.append(f"| {platform.name} | {own} | {do} | {hooks} | {approved} |")
    return "\n".join(lines) + "\n"


def client_table() -> str:
    """The lean client's platform table (vacant/hook/client.py imports builtins only, so the
    registry's facts are generated into it; a test fails on drift)."""
    prefixes = sorted({prefix for platform in REGISTERED for prefix in platform.hook_env})
    forwarded = tuple(prefixes)  # the platforms' own variables; the few of vacant's are named in the client
    http = [p for p in REGISTERED if p.http_hooks]  # only their session start waits for the daemon
    starts = sorted({f'"{event}"'.encode() for p in http for event in p.events_of("session_start")})
    waiting = tuple(name for p in http for name in (p.name, *p.aliases))
    stops = [f'"{event}"'.encode() for event in event_names("stop", "subagent_stop")]
    return "\n".join([
        f"FORWARDED_PREFIXES = {forwarded!r}",
        f"PROJECT_DIR_ENV = {_project_dir_env()!r}",
        f"SESSION_START_MARKS = {tuple(starts)!r}",
        f"HTTP_PLATFORMS = {waiting!r}",
        f"STOP_MARKS = {tuple(stops)!r}",
    ]) + "\n"


def _project_dir_env() -> dict[str, tuple[str, ...]]:
    """{name or alias: the variables naming the project's root in its hooks' environment}, for the
    platforms that have any."""
    return {name: p.project_dir_env for p in REGISTERED if p.project_dir_env for name in (p.name, *p.aliases)}


def hook_table() -> str:
    """The hook's lean registry (vacant/platforms/lean_registry.py imports only the platform a
    call names, so the facts it needs of all of them are generated into it; a test fails on drift)."""
    modules = [f"    {name!r}: {type(p).__module__!r}," for p in REGISTERED for name in (p.name, *p.aliases)]
    facts = [f"    {(p.cell_platform, p.provider, tuple(p.settings_in_workspace), tuple(p.settings_in_home))!r},"
             for p in REGISTERED]
    return "\n".join([
        "MODULES = {", *modules, "}",
        f"NAMES = {tuple(sorted(PLATFORMS))!r}",
        f"PROJECT_DIR_ENV = {_project_dir_env()!r}",
        "FACTS = (", *facts, ")",
    ]) + "\n"


def deny_reply(platform: Platform) -> tuple[str, int] | None:
    """The platform's own deny of a pre-tool call, its reason `deny.REASON_MARK`; None when it
    renders nothing (nobody reads a deny). ValueError when the reply is not JSON holding the
    reason in one string, which is all vacant/platforms/deny.py can fill in."""
    import json

    stdout, code = platform.render(HookCall("tool_pre", "", Path("."), scope=None), Response("deny", deny.REASON_MARK))
    if not stdout and not code:
        return None
    probe = 'a "quoted"\\ reason,\nover lines \u00e9'
    try:
        filled = json.loads(stdout.replace(deny.REASON_MARK, json.dumps(probe)[1:-1]))
    except ValueError:
        filled = None
    if stdout.count(deny.REASON_MARK) != 1 or probe not in _strings(filled):
        raise ValueError(f"{platform.name}'s deny {stdout!r} is not JSON with the reason in one string: "
                         "extend vacant/platforms/deny.py for it")
    return stdout, code


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    return [text for item in value for text in _strings(item)] if isinstance(value, list) else []


def deny_table() -> str:
    """The failure paths' deny table (vacant/platforms/deny.py, which the launcher and the lean
    client load without the package, so the registry's facts are generated into it; a test fails
    on drift): every name's platform, each platform's deny, which platform each pre-tool event is
    first registered for (a name the table does not know answers in the dialect its payload names),
    and every event key."""
    names = [f"    {name!r}: {p.name!r}," for p in REGISTERED for name in (p.name, *p.aliases)]
    replies = [f"    {p.name!r}: {deny_reply(p)!r}," for p in REGISTERED]
    first: dict[str, str] = {}
    for p in REGISTERED:
        for event in p.events_of("tool_pre"):
            first.setdefault(event, p.name)
    return "\n".join([
        "NAMES = {", *names, "}",
        "REPLIES = {", *replies, "}",
        "PRE_TOOL = {", *(f"    {event!r}: {name!r}," for event, name in sorted(first.items())), "}",
        f"EVENT_KEYS = {tuple(sorted({p.event_key for p in REGISTERED}))!r}",
    ]) + "\n"
