"""The platform protocol, as the type checker sees it: what every registered platform is.

Pre-commit's `Language` is six members; a platform here is a narrow `Platform` of seven (parse a
payload, render a response, map a tool to a kind, install, uninstall, doctor, the files an
install writes), composed with two more protocols: `Facts` (names, events, environment, settings
paths, stop rounds: plain class attributes every platform states, with `PlatformBase`'s defaults)
and `Capabilities` (the optional parts: a `vacant do` driver, a headless command line, and the
transcript checks `settled`, `unhooked`, `unheard`, and `hook_runs_approved` (the hook runs an
approved line its wall would break), each None where the platform has none).

The registry (vacant/platforms/all_platforms.py) is typed `tuple[Platform, ...]`, so mypy checks
each platform against every member, signatures included; tests/unit/platforms/test_conformance.py
checks the same members at run time from these classes. The hook's hot path never imports this
module (it imports `typing`): vacant/platforms/base.py names its types only for the checker.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from vacant.core.calls import HookCall, Response
from vacant.platforms.base import Diagnosis
from vacant.platforms.capabilities import HookRuns, Settled, Unheard, Unhooked
from vacant.platforms.driver import Driver

@runtime_checkable
class Facts(Protocol):
    """What a platform is, as data (each member documented on vacant/platforms/base.py PlatformBase).
    Read-only: a platform states each as a plain class attribute, of this type or narrower."""

    @property
    def name(self) -> str: ...

    @property
    def cell_platform(self) -> str: ...

    @property
    def aliases(self) -> tuple[str, ...]: ...

    @property
    def program(self) -> str | None: ...

    @property
    def provider(self) -> str | None: ...

    @property
    def event_key(self) -> str: ...

    @property
    def events(self) -> dict[str, str]: ...

    @property
    def hook_env(self) -> tuple[str, ...]: ...

    @property
    def project_dir_env(self) -> tuple[str, ...]: ...

    @property
    def wall_refused(self) -> str | None: ...

    @property
    def sandbox_needs_every_package(self) -> bool: ...

    @property
    def own_sandbox(self) -> str | None: ...

    @property
    def settings_in_workspace(self) -> tuple[str, ...]: ...

    @property
    def settings_in_home(self) -> tuple[str, ...]: ...

    @property
    def scopes(self) -> tuple[str, ...]: ...

    @property
    def http_hooks(self) -> bool: ...

    @property
    def stop_rounds(self) -> int | None: ...

    def project_dir(self, env: Mapping[str, str]) -> str | None: ...

    def events_of(self, *kinds: str) -> tuple[str, ...]: ...


@runtime_checkable
class Capabilities(Protocol):
    """What a platform may have: each is None (or returns None) where it has none."""

    @property
    def driver(self) -> type[Driver] | None: ...

    @property
    def settled(self) -> Settled | None: ...

    @property
    def unhooked(self) -> Unhooked | None: ...

    @property
    def unheard(self) -> Unheard | None: ...

    @property
    def hook_runs_approved(self) -> HookRuns | None: ...

    def headless(self, binary: str, prompt: str, model: str | None, extra: list[str]) -> list[str] | None: ...


@runtime_checkable
class Platform(Facts, Capabilities, Protocol):
    """What every registered platform does: a hook call in, an answer out, and its install."""

    def parse(self, payload: dict[str, Any], env: dict[str, str]) -> HookCall: ...

    def render(self, call: HookCall, response: Response) -> tuple[str, int]: ...

    def intent(self, tool: str, tool_input: object) -> tuple[str | None, dict[str, Any]]: ...  # a TOOL_KIND and its input

    def install(self, root: Path, scope: str, hook_command: str) -> Path | None: ...

    def uninstall(self, root: Path, scope: str) -> Path | None: ...

    def doctor(self, root: Path, hook_command: str) -> list[Diagnosis]: ...

    def files(self, root: Path) -> list[Path]: ...  # every file an install may write, in every scope


PROTOCOLS = (Platform, Facts, Capabilities)  # the runtime conformance test walks each
