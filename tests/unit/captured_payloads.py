"""The payloads captured from each platform's real binary (fixtures/payloads/), for the tests that
run every registered platform through the same contract (tests/unit/platforms/test_conformance.py,
test_deny.py)."""

from __future__ import annotations

import json
from pathlib import Path

PAYLOADS = Path(__file__).resolve().parents[2] / "fixtures" / "payloads"
# Platforms with no payloads of the platform's own to capture, and why (any other must have some).
NO_CAPTURED_PAYLOADS = {
    "command": "no agent sends anything: `vacant do` builds its payloads from a watcher",
    "opencode": "OpenCode has no hooks: vacant's own plugin builds the payloads (tests/e2e/test_opencode.py)",
}


def captured(platform) -> list[dict]:
    """Every payload captured from the platform's real binary (fixtures/payloads/)."""
    found: list[dict] = []
    for path in [PAYLOADS / f"{platform.cell_platform}-hook_payloads.json", *sorted((PAYLOADS / platform.name).glob(
            "*.json"))]:
        if not path.exists():
            continue
        data = json.loads(path.read_text())
        items = data.get("payloads", data) if isinstance(data, dict) else data
        items = items.values() if isinstance(items, dict) else items
        found += [item.get("stdin", item) for item in items if isinstance(item, dict)]
    return [item for item in found if isinstance(item, dict) and platform.event_key in item]


def in_workspace(payload: dict, workspace: Path) -> bytes:
    """The payload as its platform sends it in `workspace` (the captures' placeholders filled in)."""
    return json.dumps(payload).replace("<ws>", str(workspace)).replace("<home>", str(workspace)).encode()
