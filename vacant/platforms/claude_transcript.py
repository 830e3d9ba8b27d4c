"""Claude's transcript read back at Stop: the tool calls that reached no hook, and (`unheard`)
the recorded calls the transcript does not hold.

Claude treats an unreachable `http` hook as a non-blocking error and carries on, so with the
daemon down a tool call can run with neither its Pre nor its Post recorded. At Stop the
transcript holds every `tool_use` of the turn and, for each one that ran, its `tool_result`
(written after the Post hooks; the Stop hook fires after them). `unhooked` returns the calls the
run never heard of, with the outcome the transcript shows. Reads only the last
TRANSCRIPT_TAIL bytes (a long session's earlier calls were reconciled by earlier Stops).
Stdlib only (hot path: Stop runs through the hook entry).
"""

from __future__ import annotations

from vacant.core import leanjson as json  # json without `import json` (hot path)

from vacant.core.calls import BatchCall

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hook path
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

TRANSCRIPT_TAIL = 8 * 1024 * 1024
CAUGHT_UP_TAIL = 1024 * 1024  # the last message is near the end: what follows it is a few hook lines


def _lines(path: str) -> Iterator[dict[str, Any]]:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(0, size - TRANSCRIPT_TAIL))
            data = handle.read()
    except OSError:
        return
    for raw in data.split(b"\n"):
        if b'"tool_use' not in raw and b'"tool_result' not in raw:
            continue
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        content = (line.get("message") or {}).get("content") if isinstance(line, dict) else None
        if isinstance(content, list):
            yield from (block for block in content if isinstance(block, dict))


def caught_up(transcript_path: str | None, text: str, within: float) -> bool:
    """Whether the transcript holds an assistant line whose text is `text` (the agent's last
    message), read again every 50 ms for up to `within` seconds: it is written behind the hooks."""
    if not transcript_path:
        return False
    import time

    needles = {json.dumps(text, ensure_ascii=flag)[1:-1].encode() for flag in (False, True)}
    deadline = time.monotonic() + within
    while True:
        tail = _tail(transcript_path, CAUGHT_UP_TAIL + 2 * len(text))
        if any(_says(raw, text) for raw in tail.split(b"\n") if any(needle in raw for needle in needles)):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def _says(raw: bytes, text: str) -> bool:
    """Whether this transcript line is the assistant's and one of its text blocks is `text`."""
    try:
        line = json.loads(raw)
    except ValueError:
        return False
    message = line.get("message") if isinstance(line, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(message, dict) or not isinstance(content, list) or message.get("role") != "assistant":
        return False
    return any(isinstance(block, dict) and block.get("type") == "text" and block.get("text") == text
               for block in content)


def _tail(path: str, size: int) -> bytes:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, 2)
            handle.seek(max(0, handle.tell() - size))
            return handle.read()
    except OSError:
        return b""


def _text(content: object) -> str:
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else json.dumps(content)


def unhooked(transcript_path: str | None, known: set[str]) -> list[tuple[BatchCall, str]]:
    """(call, outcome) for every tool_use in the transcript whose id is not in `known`; outcome
    is ok or failed from its tool_result, unknown when there is none yet."""
    if not transcript_path:
        return []
    uses: dict[str, BatchCall] = {}
    results: dict[str, tuple[str, str]] = {}
    for block in _lines(transcript_path):
        if block.get("type") == "tool_use" and isinstance(block.get("id"), str) and block["id"] not in known:
            uses.setdefault(block["id"], BatchCall(block["id"], str(block.get("name", "")), block.get("input"), ""))
        elif block.get("type") == "tool_result" and isinstance(block.get("tool_use_id"), str):
            results[block["tool_use_id"]] = ("failed" if block.get("is_error") else "ok", _text(block.get("content")))
    out = []
    for key, call in uses.items():
        outcome, text = results.get(key, ("unknown", ""))
        out.append((call._replace(response_text=text), outcome))
    return out


def unheard(transcript_path: str | None, recorded: dict[str, str]) -> list[tuple[str, str]] | None:
    """(tool_use_id, kind) for each recorded call (id -> recorded outcome) the transcript does not
    back: `call-unheard` when it holds no such tool_use, `close-forged` when the step was closed
    `ok` but its tool_result says it failed. None when the transcript cannot judge (absent, empty,
    or longer than the tail read): never an accusation from a partial view."""
    if not transcript_path:
        return None
    try:
        import os

        if os.path.getsize(transcript_path) > TRANSCRIPT_TAIL:
            return None
    except OSError:
        return None
    uses: set[str] = set()
    failed: set[str] = set()
    for block in _lines(transcript_path):
        if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
            uses.add(block["id"])
        elif block.get("type") == "tool_result" and block.get("is_error") and isinstance(block.get("tool_use_id"), str):
            failed.add(block["tool_use_id"])
    if not uses:
        return None
    out = []
    for key, outcome in recorded.items():
        if key not in uses:
            out.append((key, "call-unheard"))
        elif outcome == "ok" and key in failed:
            out.append((key, "close-forged"))
    return out
