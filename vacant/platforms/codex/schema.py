"""Codex's `hooks.json`: where it lives per scope, the block vacant writes into it, and the schema
checked before vacant writes a file Codex would refuse to load."""

from __future__ import annotations

import re
from pathlib import Path

from vacant.platforms import settings_file
from vacant.platforms.codex.payloads import (
    DEFAULT_TIMEOUT,
    HOOK_TYPES,
    INSTALL_EVENTS,
    TIMEOUTS,
)
from vacant.platforms.codex.trust import codex_home

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any


def validate_hooks(settings: dict[str, object]) -> list[str]:
    """Every way the file breaks Codex's hooks.json schema."""
    return settings_file.hook_problems(settings, _group_problems, _handler_problems)


def _group_problems(where: str, group: dict[str, object]) -> list[str]:
    matcher = group.get("matcher")
    if matcher is None or matcher == "*":
        return []
    if not isinstance(matcher, str):
        return [f"{where}.matcher must be a regex string"]
    try:
        re.compile(matcher)
    except re.error as error:
        return [f"{where}.matcher is not a valid regex ({error})"]
    return []


def _handler_problems(where: str, handler: object) -> list[str]:
    if not isinstance(handler, dict):
        return [f"{where} must be an object"]
    problems = []
    if handler.get("type") not in HOOK_TYPES:
        problems.append(f"{where}.type is {handler.get('type')!r}; allowed: {', '.join(HOOK_TYPES)}")
    if handler.get("type") == "command" and not isinstance(handler.get("command"), str):
        problems.append(f"{where}.command must be a string")
    timeout = handler.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int) or timeout <= 0):
        problems.append(f"{where}.timeout must be a positive whole number of seconds")
    if "async" in handler and not isinstance(handler["async"], bool):
        problems.append(f"{where}.async must be true or false")
    if "statusMessage" in handler and not isinstance(handler["statusMessage"], str):
        problems.append(f"{where}.statusMessage must be a string")
    return problems


def hooks_path(root: Path, scope: str) -> Path:
    if scope in ("project", "local"):
        return Path(root).resolve() / ".codex" / "hooks.json"
    if scope == "user":
        return codex_home().resolve() / "hooks.json"  # Codex keys its trust by the real path
    raise ValueError(f"unknown scope {scope!r}: use project (or local) or user")


def hooks_block(hook_command: str) -> dict[str, list[dict[str, Any]]]:
    return {
        event: [{"hooks": [{"type": "command", "command": hook_command,
                            "timeout": TIMEOUTS.get(event, DEFAULT_TIMEOUT)}]}]
        for event in INSTALL_EVENTS
    }
