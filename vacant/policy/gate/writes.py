"""File-writing tools: which paths a Write, Edit or `apply_patch` call will write, and with what
text (predicted from the call's input before it runs), so the gate can read a new arm's mode line
and a new `[gate]` table. Stdlib only (hot path)."""

from __future__ import annotations

import os

from vacant.core.safeio import read_text_capped
from vacant.policy.gate.rules import parse_gate_table

EDIT_CAP = 16 << 20  # the gate works out an edit's result only for files up to this size

# -- file-writing tools ---------------------------------------------------------------------------


def patch_targets(patch: str, cwd: str) -> list[tuple[str, str | None]]:
    """(absolute path, resulting text or None when it cannot be worked out) for each file an
    apply_patch text adds, updates or moves to (deleted files are left out)."""
    import re  # an apply_patch call's only

    out: list[tuple[str, str | None]] = []
    lines = patch.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        add = re.match(r"^\*\*\* Add File: (.+?)\s*$", line)
        update = re.match(r"^\*\*\* Update File: (.+?)\s*$", line)
        i += 1
        if add:
            body = []
            while i < len(lines) and not lines[i].startswith("*** "):
                body.append(lines[i][1:] if lines[i].startswith("+") else lines[i])
                i += 1
            out.append((os.path.normpath(os.path.join(cwd, add.group(1))), "\n".join(body)))
        elif update:
            source = os.path.normpath(os.path.join(cwd, update.group(1)))
            target = source
            if i < len(lines):
                move = re.match(r"^\*\*\* Move to: (.+?)\s*$", lines[i])
                if move:
                    target = os.path.normpath(os.path.join(cwd, move.group(1)))
                    i += 1
            hunks: list[list[str]] = []
            while i < len(lines) and not (lines[i].startswith("*** ") and lines[i] != "*** End of File"):
                if lines[i].startswith("@@"):
                    hunks.append([])
                elif lines[i] != "*** End of File":
                    if not hunks:
                        hunks.append([])
                    hunks[-1].append(lines[i])
                i += 1
            out.append((target, _apply_hunks(source, hunks)))
    return out


def _apply_hunks(path: str, hunks: list[list[str]]) -> str | None:
    try:
        current = read_text_capped(path, EDIT_CAP).split("\n")
    except (OSError, ValueError):
        return None
    position = 0
    for hunk in hunks:
        old = [line[1:] for line in hunk if line[:1] in (" ", "-") or line == ""]
        new = [line[1:] for line in hunk if line[:1] in (" ", "+") or line == ""]
        if not old:
            current[position:position] = new
            position += len(new)
            continue
        for start in range(position, len(current) - len(old) + 1):
            if current[start : start + len(old)] == old:
                current[start : start + len(old)] = new
                position = start + len(new)
                break
        else:
            return None
    return "\n".join(current)


def _edit_result(path: str, edits: list[dict]) -> str | None:
    try:
        text = read_text_capped(path, EDIT_CAP)
    except FileNotFoundError:
        text = ""
    except (OSError, ValueError):  # a device, a FIFO, a file above the cap: its result is unknown
        return None
    for edit in edits:
        old, new = edit.get("old_string"), edit.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str):
            return None
        if old == "" and text == "":
            text = new
            continue
        if old not in text:
            return None
        text = text.replace(old, new) if edit.get("replace_all") else text.replace(old, new, 1)
    return text


def file_targets(kind: str | None, intent: dict, cwd: str) -> list[tuple[str, str | None]] | None:
    """What a file tool would leave at each path it writes; None when the tool writes no file.
    `kind` and `intent` are the platform's canonical reading of the call (vacant/core/calls.py)."""
    if kind == "patch":
        patch = intent.get("patch")
        return patch_targets(patch if isinstance(patch, str) else "", cwd)
    if kind not in ("write", "edit", "notebook"):
        return None
    path = intent.get("path")
    if not isinstance(path, str):
        return []
    path = os.path.normpath(os.path.join(cwd, path))
    if kind == "write":
        content = intent.get("content")
        return [(path, content if isinstance(content, str) else None)]
    if kind == "edit":
        edits = intent.get("edits")
        return [(path, _edit_result(path, edits if isinstance(edits, list) else []))]
    return [(path, None)]


def gate_table_of(text: str | None) -> object:
    if text is None:
        return ("unreadable",)
    table, error = parse_gate_table(text.encode("utf-8", "surrogateescape"))
    return ("invalid", error) if error else table


def contract_weakened(before: str, after: str | None) -> str | None:
    """What an edit of vacant.toml takes away from the person's contract: a check or guard
    removed, its command, timeout or kind changed (None: nothing, or only checks added). An
    unreadable result counts as weakened. tomllib only when vacant.toml is written."""
    old = _checks_of(before)
    if not old:
        return None
    new = _checks_of(after) if after is not None else None
    if new is None:
        return "the contract's checks (vacant could not read vacant.toml after this edit)"
    gone = sorted(name for name in old if name not in new)
    changed = sorted(name for name in old if name in new and new[name] != old[name])
    if not gone and not changed:
        return None
    parts = ([f"removes {', '.join(gone)}"] if gone else []) + ([f"changes {', '.join(changed)}"] if changed else [])
    return f"the contract's checks, which the person's acceptance rests on (this edit {'; '.join(parts)})"


def _checks_of(text: str | None) -> dict | None:
    if text is None:
        return None
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    try:
        raw = tomllib.loads(text)
    except ValueError:
        return None
    found = {}
    for kind in ("check", "checks", "guard", "guards", "precondition", "preconditions"):
        items = raw.get(kind, [])
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict):
                name = str(item.get("name", len(found)))
                found[name] = (kind.rstrip("s"), item.get("command"), item.get("timeout"), item.get("env"))
    return found
