"""Human flags: `vacant flag PATH[:A[-B]] "what is wrong"`, signed, bound to the file and its text.

A flag lives in `<state dir>/flags/<id>.json`. It records the file's sha256, the line range, the
flagged lines' exact text, the time and the note, and is signed with the user's key
(vacant.core.keys). It is a finding while its flagged text is still in the file (found again when the
lines moved), `resolved` once that text is gone, and `withdrawn` after `vacant unflag`. A flag
whose signature does not verify (edited by hand, or written by an agent into the state directory)
is `tampered`: ignored, with a warning naming it. People are never scored anywhere.

Every flag filed or withdrawn is also appended to a signed ledger (`flags/ledger.jsonl`,
vacant.core.ledger). A flag in the ledger whose file was deleted, edited or swapped still stands
(the ledger's signed copy is used) and the change is a record problem (`audit()`): the Stop report
lists it as a `record` finding for the person, never a silent pass.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import warnings
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from vacant.core.atomic import atomic_write
from vacant.core.findings import Finding, finding_id, read_text_lines, split_lines
from vacant.core.keys import key_path, sign, verify_signature
from vacant.core.ledger import Ledger
from vacant.core.locations import STATE_DIR_NAME, ensure_state_dir, state_dir
from vacant.core.safeio import TooLarge, read_capped

FLAG_FILE_CAP = 64 << 20
STATES = ("standing", "resolved", "withdrawn", "tampered")
_SPEC = re.compile(r"^(?P<path>.+?)(?::(?P<a>\d+)(?:-(?P<b>\d+))?)?$", re.DOTALL)
_ID = re.compile(r"^f-[0-9a-f]{8}$")


class FlagError(ValueError):
    """A flag could not be filed or withdrawn (one sentence saying what to do)."""


@dataclass
class Flag:
    id: str
    path: str  # workspace-relative, posix, symlinks resolved
    start: int
    end: int
    text: str  # the flagged lines, exactly, joined with '\n'
    sha256: str  # of the whole file when flagged
    note: str
    at: str  # ISO 8601, UTC
    withdrawn: str | None = None  # when `vacant unflag` withdrew it
    signature: str = ""

    def body(self) -> dict[str, Any]:
        """What the signature covers: every field but the signature itself."""
        data = asdict(self)
        data.pop("signature")
        return data

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def spec(self) -> str:
        return f"{self.path}:{self.start}" + (f"-{self.end}" if self.end != self.start else "")


def flags_dir(root: Path) -> Path:
    return state_dir(root) / "flags"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _inside(path: Path, parent: Path) -> bool:
    return path == parent or parent in path.parents


# -- filing a flag ---------------------------------------------------------------------------------


def parse_spec(spec: str) -> tuple[str, int | None, int | None]:
    match = _SPEC.match(spec or "")
    if not match:
        raise FlagError("give the location as PATH, PATH:LINE or PATH:FIRST-LAST")
    start = int(match.group("a")) if match.group("a") else None
    end = int(match.group("b")) if match.group("b") else start
    return match.group("path"), start, end


def _resolve_file(root: Path, raw: str, base: Path) -> tuple[str, Path]:
    """The workspace-relative path of the file `raw` names, refusing anything outside the workspace."""
    if ".." in Path(raw).parts:
        raise FlagError(f"{raw!r} contains '..': name a file inside the workspace without '..'")
    real_root = root.resolve()
    candidate = Path(raw) if os.path.isabs(raw) else base / raw
    lexical = Path(os.path.normpath(candidate.absolute()))
    if not (_inside(lexical, Path(os.path.normpath(root.absolute()))) or _inside(lexical, real_root)):
        raise FlagError(f"{raw} is outside the workspace {root}: flags are for files inside it")
    if not os.path.lexists(lexical):
        hint = " (a line range is written PATH:LINE or PATH:FIRST-LAST)" if ":" in raw else ""
        raise FlagError(f"no such file: {raw}{hint}")
    real = lexical.resolve()
    if not _inside(real, real_root):
        raise FlagError(f"{raw} is a symlink that leads outside the workspace (to {real}): flag the file inside it")
    if not real.is_file():
        raise FlagError(f"{raw} is not a regular file: flags point at lines of a text file")
    rel = real.relative_to(real_root)
    if rel.parts and rel.parts[0] in (STATE_DIR_NAME, ".git") or _inside(real, state_dir(root).resolve()):
        raise FlagError(f"{raw} is vacant's or git's own state: flag a file of the work instead")
    return rel.as_posix(), real


def _decode_text(raw: str, data: bytes) -> str:
    nul = data.find(b"\0")
    if nul >= 0:
        raise FlagError(f"{raw} is a binary file (a NUL byte at offset {nul}): flags need a text file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise FlagError(
            f"{raw} is not UTF-8 text (undecodable byte at offset {error.start}): "
            "flags need UTF-8 text; re-encode the file as UTF-8 or flag another file"
        ) from None


def add_flag(root: Path, spec: str, note: str, cwd: Path | None = None) -> Flag:
    """File a signed flag. A relative PATH is taken from `cwd` (default: the workspace root)."""
    root = Path(root)
    note = (note or "").strip()
    if not note:
        raise FlagError('say what is wrong: vacant flag PATH[:A[-B]] "what is wrong"')
    if _inside(key_path().absolute(), root.resolve()) or _inside(key_path().absolute(), root.absolute()):
        raise FlagError(f"the signing key {key_path()} would be inside the workspace: point XDG_CONFIG_HOME elsewhere")
    raw, start, end = parse_spec(spec)
    rel, real = _resolve_file(root, raw, Path(cwd) if cwd else root)
    try:
        data = read_capped(real, FLAG_FILE_CAP)
    except TooLarge:
        raise FlagError(f"{raw} is larger than {FLAG_FILE_CAP >> 20} MiB: flags are for text files a person reads") from None
    except OSError as error:
        raise FlagError(f"{raw} cannot be read ({error.strerror})") from None
    lines = split_lines(_decode_text(raw, data))
    if not lines:
        raise FlagError(f"{raw} is empty: there is no line to flag")
    if start is None or end is None:
        start, end = 1, len(lines)
    if start < 1:
        raise FlagError(f"line numbers start at 1 (got {start})")
    if end < start:
        raise FlagError(f"the range {start}-{end} runs backwards: write FIRST-LAST")
    if end > len(lines):
        past = end if start <= len(lines) else start
        raise FlagError(f"line {past} is past the end of {rel} (it has {len(lines)} lines)")
    directory = flags_dir(root)
    ensure_state_dir(root)
    directory.mkdir(parents=True, exist_ok=True)
    while True:
        flag_id = "f-" + secrets.token_hex(4)
        if not (directory / f"{flag_id}.json").exists():
            break
    flag = Flag(
        id=flag_id, path=rel, start=start, end=end, text="\n".join(lines[start - 1 : end]),
        sha256=hashlib.sha256(data).hexdigest(), note=note, at=_now(),
    )
    flag.signature = sign(flag.body())
    _write(directory / f"{flag_id}.json", flag)
    ledger(root).append({"op": "filed", "flag": flag.to_json()})
    return flag


def ledger(root: Path) -> Ledger:
    return Ledger(flags_dir(root) / "ledger.jsonl", root, "flags")


def _write(path: Path, flag: Flag) -> None:
    atomic_write(path, json.dumps(flag.to_json(), indent=2, ensure_ascii=False) + "\n")


# -- reading flags back ----------------------------------------------------------------------------


def _load(path: Path) -> tuple[Flag, bool]:
    """A flag file as a Flag, and whether it verifies (signed by this user's key, unaltered)."""
    stem = path.stem
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError("not an object")
        flag = Flag(
            id=data["id"], path=data["path"], start=data["start"], end=data["end"], text=data["text"],
            sha256=data["sha256"], note=data["note"], at=data["at"], withdrawn=data.get("withdrawn"),
            signature=data.get("signature", ""),
        )
        extra = set(data) - set(asdict(flag))
        types_ok = (
            all(isinstance(getattr(flag, name), str) for name in ("id", "path", "text", "sha256", "note", "at"))
            and all(isinstance(getattr(flag, name), int) and not isinstance(getattr(flag, name), bool) for name in ("start", "end"))
            and (flag.withdrawn is None or isinstance(flag.withdrawn, str))
        )
    except (OSError, ValueError, KeyError, TypeError):
        return Flag(stem, "?", 0, 0, "", "", "", "", None, ""), False
    valid = types_ok and not extra and flag.id == stem and verify_signature(flag.body(), flag.signature)
    return flag, bool(valid)


def _files(root: Path) -> list[Path]:
    directory = flags_dir(root)
    if not directory.is_dir():
        return []
    return sorted(path for path in directory.glob("*.json") if not path.name.startswith(".") and path.is_file())


def active_flags(root: Path, warn: bool = True) -> list[Flag]:
    """Signed flags not withdrawn, oldest first (the ledger's copy of a tampered one; an unsigned
    file is skipped). Each record problem is a warning."""
    flags, problems = audit(root)
    if warn:
        for problem in problems:
            warnings.warn(problem["detail"], stacklevel=2)
    return [flag for flag in flags if flag.withdrawn is None]


def nearest_block(lines: list[str], block: list[str], near: int) -> int | None:
    """The 0-based index of the exact occurrence of `block` in `lines` nearest to line `near`
    (1-based; the earlier one on a tie), or None. How a flag (and `vacant blame`) follows lines
    that moved."""
    size = len(block)
    hits = [index for index in range(len(lines) - size + 1) if lines[index : index + size] == block]
    if not hits:
        return None
    return min(hits, key=lambda hit: (abs(hit + 1 - near), hit))


def locate(flag: Flag, root: Path) -> Finding | None:
    """The flag's finding on the state at `root`, or None when its flagged text is gone."""
    lines = read_text_lines(Path(root) / flag.path)
    block = flag.text.split("\n")  # the flagged lines exactly (an empty last line included)
    if lines is None:
        return None
    index = nearest_block(lines, block, flag.start)
    if index is None:
        return None
    return Finding(
        id=finding_id("flag:" + flag.id, flag.path, flag.text), source="flag", name=flag.id, path=flag.path,
        line=index + 1, col=None, message=flag.note, text=block[0],
    )


def standing_flags(root: Path, state_root: Path | None = None) -> list[tuple[Flag, Finding]]:
    """Each signed, not-withdrawn flag whose text is still in its file, with its finding.

    `state_root` is the workspace holding the flags when `root` is a scratch copy of a state.
    """
    pairs = []
    for flag in active_flags(state_root or root):
        finding = locate(flag, root)
        if finding is not None:
            pairs.append((flag, finding))
    return pairs


def list_flags(root: Path, warn: bool = False) -> list[tuple[Flag, str]]:
    """Every flag with its state: standing, resolved, withdrawn or tampered; oldest first."""
    rows = []
    flags, problems = audit(root)
    tampered = {problem["flag"] for problem in problems if problem["kind"] == "flag-tampered"}
    for problem in problems:
        if warn:
            warnings.warn(problem["detail"], stacklevel=2)
        if problem["kind"] == "flag-unsigned":
            rows.append((Flag(problem["flag"], "?", 0, 0, "", "", "", "", None, ""), "tampered"))
    for flag in flags:
        if flag.id in tampered:  # its file was deleted or edited; the ledger's copy still counts
            state = "tampered"
        elif flag.withdrawn is not None:
            state = "withdrawn"
        else:
            state = "standing" if locate(flag, root) is not None else "resolved"
        rows.append((flag, state))
    return sorted(rows, key=lambda row: (row[0].at, row[0].id))


def withdraw(root: Path, flag_id: str) -> Flag:
    """Withdraw a flag (re-signed with the time of withdrawal); it stops being a finding."""
    flag_id = flag_id.strip()
    path = flags_dir(root) / f"{flag_id}.json"
    if not _ID.match(flag_id):
        raise FlagError(f"no flag {flag_id!r}: `vacant flags` lists them")
    on_record = {flag.id: flag for flag in audit(root)[0]}  # the ledger's copy when the file was altered
    if flag_id not in on_record:
        if path.is_file():
            raise FlagError(f"flag {flag_id} does not verify and the ledger does not know it, so it is already "
                            f"ignored: delete {path} to remove it")
        raise FlagError(f"no flag {flag_id!r}: `vacant flags` lists them")
    flag = on_record[flag_id]
    if flag.withdrawn is not None:
        raise FlagError(f"flag {flag_id} was already withdrawn at {flag.withdrawn}")
    flag.withdrawn = _now()
    flag.signature = sign(flag.body())
    _write(path, flag)
    ledger(root).append({"op": "withdrawn", "flag": flag.to_json()})
    return flag


# -- the audit: files against the signed ledger ----------------------------------------------------


def _from_json(data: object) -> Flag | None:
    try:
        flag = Flag(**data)  # type: ignore[arg-type]
    except TypeError:
        return None
    return flag if verify_signature(flag.body(), flag.signature) else None


def audit(root: Path) -> tuple[list[Flag], list[dict[str, str]]]:
    """Every flag that stands on record (files checked against the ledger), and the record
    problems found: {kind, flag, path, detail}. A flag the ledger holds is never lost to its file
    being deleted or edited: the ledger's signed copy is used and the problem reported."""
    files = {path.stem: _load(path) for path in _files(root) if path.stem != "ledger"}
    entries, ledger_problems = ledger(root).read()
    problems = [{"kind": "ledger-" + p.kind, "flag": None, "path": None, "detail": f"the flag ledger: {p.detail}"}
                for p in ledger_problems]
    latest: dict[str, Flag] = {}
    for entry in entries:
        flag = _from_json(entry.get("flag"))
        if flag is not None:
            latest[flag.id] = flag
    flags: list[Flag] = []
    for flag_id, recorded in latest.items():
        found = files.pop(flag_id, None)
        if found is None:
            problem = "was removed (its file is gone)"
        elif not found[1]:
            problem = "was altered (its file no longer verifies)"
        elif found[0].to_json() != recorded.to_json():
            problem = "was replaced by another version of itself"
        else:
            flags.append(found[0])
            continue
        flags.append(recorded)
        problems.append({"kind": "flag-tampered", "flag": flag_id, "path": recorded.path,
                         "detail": f"flag {flag_id} ({recorded.spec}: {recorded.note[:80]}) {problem}; "
                                   "the person's signed copy in the ledger still stands"})
    for flag_id, (flag, valid) in files.items():  # files the ledger does not know (filed before it)
        if valid:
            flags.append(flag)
        else:
            problems.append({"kind": "flag-unsigned", "flag": flag_id, "path": None,
                             "detail": f"flag file {flag_id}.json does not verify (edited by hand, or not written "
                                       "by `vacant flag`): ignored"})
    return sorted(flags, key=lambda flag: (flag.at, flag.id)), problems
