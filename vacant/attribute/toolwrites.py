"""What a file tool wrote, rebuilt from its own input: a Write's content, an Edit's (or MultiEdit's)
replacements applied to the file as the step found it, an apply_patch's hunks (also apply_patch
run through the shell, as Codex does: the patch is the command's argument, not a program to run).

The input is the platform's canonical one (`intent`, vacant/core/calls.py TOOL_KINDS), recorded
with the step. Whatever cannot be rebuilt exactly (an old text the file as the step found it does
not hold, a hunk whose context is not there, text the step log redacted) is said in one sentence
instead: the Stop then knows the tool's input does not account for the change.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vacant.store.hasher import relative_to_root

REDACTED = re.compile(r"\[REDACTED:[a-z0-9-]{1,40}\]")
Before = Callable[[str], "bytes | None"]  # a workspace path -> its content before the step (None: none)


@dataclass(frozen=True)
class Written:
    """The files a tool's input says it wrote (path -> content; None: it removed the file), or
    `why` it cannot be rebuilt (then `files` is empty)."""

    files: dict[str, bytes | None] = field(default_factory=dict)
    why: str | None = None


class Unbuildable(Exception):
    """The input does not rebuild the file; the message says why, in one sentence."""


def written(kind: str, intent: dict[str, Any], root: Path, cwd: str, before: Before) -> Written:
    """What the tool of `kind` (write, edit, patch) wrote according to `intent`; `cwd` is the
    absolute directory its relative paths start from."""
    try:
        if REDACTED.search(repr(intent)):
            raise Unbuildable("its input held text the step log redacted (a secret), so what it wrote cannot be rebuilt")
        if kind == "patch":
            return Written(_patched(str(intent.get("patch") or ""), root, cwd, before))
        path = _rel(root, cwd, intent.get("path"))
        if kind == "write":
            return Written({path: _text(intent.get("content")).encode()})
        if kind == "edit":
            return Written({path: _edited(before(path), intent.get("edits") or [])})
        raise Unbuildable(f"vacant cannot rebuild what a {kind} tool writes")
    except Unbuildable as why:
        return Written(why=str(why))


def _rel(root: Path, cwd: str, path: object) -> str:
    if not isinstance(path, str) or not path:
        raise Unbuildable("its input names no file")
    rel = relative_to_root(root, os.path.join(cwd, os.path.expanduser(path)))
    if rel is None:
        raise Unbuildable(f"its file {path} lies outside the workspace")
    return rel


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise Unbuildable("its input holds no text to write")
    return value


def _edited(before: bytes | None, edits: list[Any]) -> bytes:
    """The file as the step found it with each replacement applied in turn (an Edit that creates
    a file replaces an empty old text in a file that is not there)."""
    try:
        text = "" if before is None else before.decode("utf-8")
    except UnicodeDecodeError:
        raise Unbuildable("the file it edited is not UTF-8 text") from None
    for edit in edits:
        old, new = _text(edit.get("old_string")), _text(edit.get("new_string"))
        if old == "" and not text:
            text = new
            continue
        if old not in text:
            raise Unbuildable("its old text is not in the file as the step found it")
        text = text.replace(old, new) if edit.get("replace_all") else text.replace(old, new, 1)
    return text.encode()


# -- apply_patch (Codex) ---------------------------------------------------------------------------

_FILE = re.compile(r"^\*\*\* (Add File|Update File|Delete File): (.+?)\s*$")
_MOVE = re.compile(r"^\*\*\* Move to: (.+?)\s*$")
END_OF_FILE = "*** End of File"  # a hunk that ends the file: matched at the end first
BEGIN, END = "*** Begin Patch", "*** End Patch"
PATCH_PROGRAMS = ("apply_patch", "applypatch")  # what Codex runs a patch through the shell as


def patch_in_command(command: str) -> str | None:
    """The patch of a shell command that is Codex's apply_patch run through the shell (its
    envelope as an argument or a here-document), else None."""
    words = command.lstrip().split(None, 1)
    if not words or words[0] not in PATCH_PROGRAMS:
        return None
    try:
        argv = shlex.split(command)
    except ValueError:
        argv = []
    if len(argv) == 2 and argv[1].lstrip().startswith(BEGIN):  # an argument (Codex's argv, joined)
        return argv[1]
    start, end = command.find(BEGIN), command.rfind(END)  # a here-document: the text as it stands
    return command[start:end + len(END)] if 0 <= start < end else None


def _patched(patch: str, root: Path, cwd: str, before: Before) -> dict[str, bytes | None]:
    """Each file of an apply_patch envelope as the patch leaves it."""
    files: dict[str, bytes | None] = {}
    for action, path, moved, body in _sections(patch.splitlines()):
        rel = _rel(root, cwd, path)
        if action == "Add File":
            files[rel] = "".join(line[1:] + "\n" for line in body if line.startswith("+")).encode()
        elif action == "Delete File":
            files[rel] = None
        else:
            current = files[rel] if rel in files else before(rel)
            content = _updated(current, body)
            if moved is not None:
                files[rel] = None
                rel = _rel(root, cwd, moved)
            files[rel] = content
    if not files:
        raise Unbuildable("its patch names no file")
    return files


def _sections(lines: list[str]) -> list[tuple[str, str, str | None, list[str]]]:
    """(action, path, moved to, body lines) for each file section of the patch."""
    sections: list[tuple[str, str, str | None, list[str]]] = []
    for line in lines:
        header = _FILE.match(line)
        move = _MOVE.match(line)
        if header:
            sections.append((header.group(1), header.group(2), None, []))
        elif move and sections and not sections[-1][3]:
            action, path, _moved, body = sections[-1]
            sections[-1] = (action, path, move.group(1), body)
        elif sections and (not line.startswith("*** ") or line.strip() == END_OF_FILE):
            sections[-1][3].append(line)
    return sections


def _updated(before: bytes | None, body: list[str]) -> bytes:
    """An Update File section applied to the file: each hunk's old lines (context and `-`) found
    from where the last hunk ended (exactly, else ignoring trailing then outer whitespace) and
    replaced by its new ones (context and `+`); an `@@ text` header first finds that line."""
    if before is None:
        raise Unbuildable("its patch updates a file that was not there")
    try:
        lines = before.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        raise Unbuildable("the file it patched is not UTF-8 text") from None
    if lines and lines[-1] == "":
        lines.pop()
    at = 0
    for header, hunk in _hunks(body):
        if header:
            at = _seek(lines, [header], at) + 1
        ends = bool(hunk) and hunk[-1].strip() == END_OF_FILE
        hunk = hunk[:-1] if ends else hunk
        old = [line[1:] for line in hunk if line[:1] in (" ", "-", "")]
        new = [line[1:] for line in hunk if line[:1] in (" ", "+", "")]
        start = _seek(lines, old, max(at, len(lines) - len(old)) if ends else at) if old else len(lines)
        lines[start:start + len(old)] = new
        at = start + len(new)
    return "".join(line + "\n" for line in lines).encode()


def _hunks(body: list[str]) -> list[tuple[str, list[str]]]:
    """(the `@@` header's text, its lines) for each hunk of a section; blank lines ending a hunk
    are the envelope's spacing, not context."""
    hunks: list[tuple[str, list[str]]] = []
    for line in body:
        if line.startswith("@@"):
            hunks.append((line[2:].strip(), []))
        elif not hunks:
            hunks.append(("", [line]))
        else:
            hunks[-1][1].append(line)
    for _header, hunk in hunks:
        while hunk and hunk[-1] == "":
            hunk.pop()
        if len(hunk) > 1 and hunk[-1].strip() == END_OF_FILE:
            while len(hunk) > 1 and hunk[-2] == "":
                hunk.pop(-2)
    return [(header, hunk) for header, hunk in hunks if hunk or header]


def _seek(lines: list[str], wanted: list[str], start: int) -> int:
    """Where `wanted` first occurs in `lines` from `start`: exactly, else with trailing, else
    outer whitespace ignored (apply_patch's own leniency)."""
    for norm in (lambda s: s, str.rstrip, str.strip):
        target = [norm(line) for line in wanted]
        for at in range(start, len(lines) - len(wanted) + 1):
            if [norm(line) for line in lines[at:at + len(wanted)]] == target:
                return at
    raise Unbuildable("a hunk of its patch does not match the file as the step found it")
