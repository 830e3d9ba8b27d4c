"""git's side of `vacant blame`: what `git blame --porcelain -w -M` says of each line (commit,
author, date, the line's original number and path), and the rule that puts it beside the
recorded steps.

Contract:
- git is the oracle for every line no recorded step wrote: its commit and author are given as
  git gives them, for the file at a commit (`vacant blame REV -- FILE`) or in the work tree
  (uncommitted lines: commit null, as git's "Not Committed Yet").
- A line a step is credited with keeps that credit only if git does not trace it to a commit
  the step's run started from or before (`merge-base --is-ancestor`): a line that was already
  committed when the run began is not the run's, whatever text the run later wrote (the line's
  author is then git's). A run whose starting commit this clone lacks is not checked.
- Renames are git's (`renames`: `git log --follow -M`, and a staged rename in the work tree);
  blame reads a run under the file's names as of the run's start (`name_at_start`).
- No git (not a repository, git missing, no commit yet, an untracked file): every line is
  uncommitted.

The porcelain (`--porcelain`) is git's, line by line, with vacant's keys (PORCELAIN_KEYS, in
vacant/show/shapes.py) after git's headers and before the line's TAB.
"""

from __future__ import annotations

import datetime as dt
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from vacant.core.cells import FIELDS as CELL_FIELDS
from vacant.core.cells import shown
from vacant.core.linecarry import NamesFor
from vacant.core.locations import WorkspaceError
from vacant.show.shapes import PORCELAIN_KEYS

GIT_TIMEOUT_S = 120
NOT_COMMITTED = "0" * 40
_HEADER = re.compile(r"^([0-9a-f]{40}|[0-9a-f]{64}) (\d+) (\d+)(?: (\d+))?$")


@dataclass(frozen=True)
class GitCommit:
    """A commit as git blame's porcelain describes it (`sha` NOT_COMMITTED for the work tree)."""
    sha: str
    author: str | None = None
    author_mail: str | None = None
    author_time: int | None = None
    author_tz: str | None = None
    committer: str | None = None
    committer_mail: str | None = None
    committer_time: int | None = None
    committer_tz: str | None = None
    summary: str | None = None
    boundary: bool = False

    @property
    def committed(self) -> bool:
        return self.sha != NOT_COMMITTED


@dataclass(frozen=True)
class GitLine:
    line: int  # in the file blamed (from 1)
    commit: GitCommit
    orig_line: int  # in the commit that brought it
    orig_path: str

    def to_json(self) -> dict[str, Any]:
        c = self.commit
        if not c.committed:
            return {"commit": None, "author": None, "author_mail": None, "author_time": None, "author_tz": None,
                    "summary": None, "boundary": False, "orig_line": self.orig_line, "orig_path": self.orig_path}
        return {"commit": c.sha, "author": c.author, "author_mail": c.author_mail, "author_time": c.author_time,
                "author_tz": c.author_tz, "summary": c.summary, "boundary": c.boundary,
                "orig_line": self.orig_line, "orig_path": self.orig_path}


class Credited(Protocol):
    """What the overlay needs of a line's recorded author (vacant.show.blame.Author, the team's)."""
    origin: str
    run: str | None

    def to_json(self) -> dict[str, Any]: ...

    def label(self) -> str: ...


@dataclass
class Row:
    """One line of the file blamed: git's word, the recorded author, the findings standing on it."""
    line: int
    text: str
    git: GitLine
    author: Credited
    findings: list[str]

    @property
    def agent(self) -> bool:
        """Whether a recorded agent step wrote it (one of several open steps counts)."""
        return self.author.origin in ("step", "group")

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "text": self.text, **self.git.to_json(), **self.author.to_json(),
                "findings": self.findings}


def git(repo: Path, *args: str, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[bytes] | None:
    """git in `repo`; None when git is missing or exits otherwise than `ok`."""
    try:
        proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, timeout=GIT_TIMEOUT_S,
                              check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc if proc.returncode in ok else None


def repository(start: Path) -> Path | None:
    """The work tree's top directory holding `start`, or None outside a git repository."""
    proc = git(start, "rev-parse", "--show-toplevel")
    return Path(proc.stdout.decode().strip()) if proc else None


def file_at(repo: Path, rev: str, path: str) -> bytes:
    """The bytes of `path` (repository-relative) at commit `rev`, or a clear error."""
    if git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}") is None:
        raise WorkspaceError(f"{rev} is not a commit of this repository")
    proc = git(repo, "cat-file", "blob", f"{rev}:{path}")
    if proc is None:
        raise WorkspaceError(f"{path} is not a file at {rev}")
    return proc.stdout


def parse_porcelain(data: bytes) -> list[GitLine]:
    """`git blame --porcelain`'s output, one GitLine per line, in order."""
    heads: list[tuple[str, int, int]] = []
    infos: dict[str, dict[str, Any]] = {}
    current: tuple[str, int, int] | None = None
    for raw in data.split(b"\n"):
        if raw.startswith(b"\t"):
            if current is not None:
                heads.append(current)
            current = None
            continue
        text = raw.decode("utf-8", errors="replace")
        header = _HEADER.match(text) if current is None else None
        if header:
            current = (header.group(1), int(header.group(2)), int(header.group(3)))
            infos.setdefault(header.group(1), {})
        elif current is not None:
            key, _, value = text.partition(" ")
            infos[current[0]][key] = value if key != "boundary" else True
    commits = {sha: _commit(sha, info) for sha, info in infos.items()}
    return [GitLine(final, commits[sha], orig, infos[sha].get("filename", "")) for sha, orig, final in heads]


def _commit(sha: str, info: dict[str, Any]) -> GitCommit:
    def number(key: str) -> int | None:
        value = info.get(key)
        return int(value) if isinstance(value, str) and value.lstrip("-").isdigit() else None
    return GitCommit(sha, info.get("author"), info.get("author-mail"), number("author-time"), info.get("author-tz"),
                     info.get("committer"), info.get("committer-mail"), number("committer-time"),
                     info.get("committer-tz"), info.get("summary"), bool(info.get("boundary")))


def blame_lines(repo: Path | None, path: str, rev: str | None, count: int) -> list[GitLine]:
    """git's word on each of the `count` lines of `path` (repository-relative) at `rev` (None: the
    work tree), with `-w -M`; lines git cannot speak for are uncommitted."""
    found: list[GitLine] = []
    if repo is not None:
        proc = git(repo, "blame", "--porcelain", "-w", "-M", *([rev] if rev else []), "--", path)
        found = parse_porcelain(proc.stdout) if proc else []
    by_line = {item.line: item for item in found}
    uncommitted = GitCommit(NOT_COMMITTED)
    return [by_line.get(n) or GitLine(n, uncommitted, n, path) for n in range(1, count + 1)]


@dataclass(frozen=True)
class Rename:
    """`old` became `new` in `commit` (NOT_COMMITTED: a rename staged in the work tree)."""
    old: str
    new: str
    commit: str


def renames(repo: Path | None, path: str, rev: str | None) -> list[Rename]:
    """The renames that brought `path` (repository-relative) to its name at `rev` (None: the work
    tree, a staged `git mv` included), newest first, as git follows them (`git log --follow -M`,
    the rule `git blame` uses); empty without git or history."""
    if repo is None:
        return []
    found: list[Rename] = []
    current = path
    if rev is None:
        staged = git(repo, "diff", "--cached", "-M", "--name-status", "-z", "HEAD")
        for status, names in _name_status(staged.stdout if staged else b""):
            if status.startswith("R") and names[1] == current:
                found.append(Rename(names[0], current, NOT_COMMITTED))
                current = names[0]
    proc = git(repo, "log", "--follow", "-M", "--name-status", "-z", "--format=%x01%H", rev or "HEAD", "--", current)
    for chunk in (proc.stdout if proc else b"").split(b"\x01")[1:]:
        commit, _, rest = chunk.partition(b"\0")
        for status, names in _name_status(rest):
            if status.startswith("R") and names[1] == current:
                found.append(Rename(names[0], current, commit.decode().strip()))
                current = names[0]
    return found


def _name_status(data: bytes) -> list[tuple[str, list[str]]]:
    """`--name-status -z` output: (status, [path] or [old, new] for a rename or copy)."""
    tokens = [token.decode(errors="replace") for token in data.split(b"\0")]
    out: list[tuple[str, list[str]]] = []
    at = 0
    while at < len(tokens):
        status = tokens[at].strip()
        if not status:
            at += 1
            continue
        width = 2 if status[0] in "RC" else 1
        names = tokens[at + 1:at + 1 + width]
        if len(names) == width:
            out.append((status, names))
        at += 1 + width
    return out


def name_at_start(path: str, moves: list[Rename], start: str | None, ancestry: "Ancestry") -> list[str]:
    """The names the file `path` may have had when a run that started at commit `start` ran,
    oldest first: each rename its start does not already hold is undone (a run whose start is
    unknown gets every earlier name); the caller keeps the ones the run recorded."""
    names = [path]
    for move in moves:  # newest first
        if start and move.commit != NOT_COMMITTED and ancestry.before(move.commit, start):
            break  # the run started after this rename: it knew the file by its later name
        names.insert(0, move.old)
    return names


def names_along(repo: Path | None, path: str, rev: str | None, ancestry: "Ancestry",
                prefix: str = "") -> tuple[NamesFor | None, tuple[str, ...]]:
    """What blame needs of git's renames of `path` (repository-relative): the names the file may
    have had when a run started, and every earlier name; names outside `prefix` (the workspace's
    directory in the repository) are dropped, the others made relative to it. (None, ()) when
    git knows of no rename."""
    moves = renames(repo, path, rev)
    if not moves:
        return None, ()

    def local(names: list[str]) -> list[str]:
        return [name[len(prefix):] for name in names if name.startswith(prefix)]

    return (lambda start: local(name_at_start(path, moves, start, ancestry))), tuple(local([m.old for m in moves]))


class Ancestry:
    """Whether a commit is an ancestor of (or is) another, memoised; one `git rev-list` per
    starting commit answers for every candidate at once (`rev-list C1 C2 … --not S` lists the
    candidates that are not ancestors of S)."""

    def __init__(self, repo: Path | None) -> None:
        self.repo = repo
        self.memo: dict[tuple[str, str], bool] = {}

    def learn(self, candidates: set[str], start: str) -> None:
        """Answer for every candidate against `start` in one git call."""
        asked = sorted(c for c in candidates if c != NOT_COMMITTED and (c, start) not in self.memo)
        if self.repo is None or not asked:
            return
        proc = _git_input(self.repo, "\n".join([*asked, f"^{start}"]) + "\n", "rev-list", "--stdin")
        # git fails when this clone lacks the run's starting commit: then nothing is checked
        later = set(proc.split()) if proc is not None else set(asked)
        self.memo.update(((c, start), c not in later) for c in asked)

    def before(self, commit: str, start: str) -> bool:
        """Whether `commit` is `start` or one of its ancestors (False when either is unknown)."""
        if self.repo is None or commit == NOT_COMMITTED:
            return False
        if (commit, start) not in self.memo:
            self.learn({commit}, start)
        return self.memo[(commit, start)]


def _git_input(repo: Path, text: str, *args: str) -> str | None:
    try:
        proc = subprocess.run(["git", "-C", str(repo), *args], input=text.encode(), capture_output=True,
                              timeout=GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.decode() if proc.returncode == 0 else None


def predates(author: Credited, line: GitLine, starts: dict[str, str | None], ancestry: Ancestry) -> bool:
    """Whether git puts the line in a commit the author's run started from or before: then the
    run did not write it."""
    start = _start(author, starts)
    return bool(start) and ancestry.before(line.commit.sha, str(start))


def _start(author: Credited, starts: dict[str, str | None]) -> str | None:
    if author.origin not in ("step", "group", "out_of_band") or author.run is None:
        return None
    return starts.get(author.run)


def parse_ranges(specs: list[str], count: int) -> list[tuple[int, int]]:
    """`-L` ranges as git blame takes them (`N,M`, `N,+K`, `N,-K`, `N`, `N,`, `,M`, and an empty
    side for the file's first or last line), 1-based inclusive, read as git reads them: a range
    given end first is swapped, an end past the file is cut at its last line, a start past the
    file or an empty range (`+0`, `-0`) is an error."""
    found = []
    for spec in specs:
        match = re.fullmatch(r"\s*(\d*)\s*(?:,\s*([+-]?)(\d*))?\s*", spec)
        if not match or (match.group(2) and not match.group(3)):  # a sign needs its count
            raise WorkspaceError(f"-L {spec}: give a line range as N,M or N,+K (git blame's form)")
        start, end = _range_ends(spec, match.group(1), match.group(2) or "", match.group(3) or "", count)
        if start < 1 or end < 1:
            raise WorkspaceError(f"-L {spec}: line numbers start at 1")
        start, end = min(start, end), max(start, end)
        if start > max(count, 1):
            raise WorkspaceError(f"-L {spec}: the file has {count} line(s)")
        found.append((start, min(end, count)))
    return found


def _range_ends(spec: str, first: str, sign: str, number: str, count: int) -> tuple[int, int]:
    """A range's two ends before git's swap and cut. As git does, `,+K` without a start counts
    from line 0, and an end of 0 there means the file's last line; an empty end is the last line
    and is never swapped."""
    start = int(first) if first else 1
    if not number:
        if start > max(count, 1):
            raise WorkspaceError(f"-L {spec}: the file has {count} line(s)")
        return start, max(start, count)
    if sign and int(number) == 0:
        raise WorkspaceError(f"-L {spec}: an empty range")
    if sign == "+":
        end = (start if first else 0) + int(number) - 1
        return start, end if first or end > 0 else count
    if sign == "-":
        return max(1, start - int(number) + 1), start
    return start, int(number)


def in_ranges(line: int, ranges: list[tuple[int, int]]) -> bool:
    return not ranges or any(start <= line <= end for start, end in ranges)


def rows(texts: list[str], authors: list[Any], git_lines: list[GitLine], findings: dict[int, list[str]],
         starts: dict[str, str | None], ancestry: Ancestry, plain: Any) -> list[Row]:
    """The file's lines with git's word and the recorded authors; an author whose run started
    after git's commit for the line is replaced by `plain` (no step wrote it)."""
    asked: dict[str, set[str]] = {}
    for author, line in zip(authors, git_lines):
        start = _start(author, starts)
        if start:
            asked.setdefault(start, set()).add(line.commit.sha)
    for start, candidates in asked.items():
        ancestry.learn(candidates, start)
    found = []
    for n, (text, author, line) in enumerate(zip(texts, authors, git_lines), start=1):
        if predates(author, line, starts, ancestry):
            author = plain
        found.append(Row(n, text, line, author, findings.get(n, [])))
    return found


def porcelain(rows: list[Row]) -> str:
    """`git blame --porcelain`'s form: per line git's header, the commit's headers the first time
    it appears, vacant's keys (PORCELAIN_KEYS) that have a value, then the line after a TAB."""
    out: list[str] = []
    seen: set[str] = set()
    for row in rows:
        c = row.git.commit
        out.append(f"{c.sha} {row.git.orig_line} {row.line} 1")
        if c.sha not in seen:
            seen.add(c.sha)
            out += _commit_headers(c, row.git.orig_path)
        out += vacant_keys(row)
        out.append("\t" + row.text)
    return "\n".join(out) + ("\n" if out else "")


def _commit_headers(c: GitCommit, path: str) -> list[str]:
    if not c.committed:
        return ["author Not Committed Yet", "author-mail <not.committed.yet>", "summary Version of the work tree",
                f"filename {path}"]
    pairs = [("author", c.author), ("author-mail", c.author_mail), ("author-time", c.author_time),
             ("author-tz", c.author_tz), ("committer", c.committer), ("committer-mail", c.committer_mail),
             ("committer-time", c.committer_time), ("committer-tz", c.committer_tz), ("summary", c.summary)]
    lines = [f"{key} {value}" for key, value in pairs if value is not None]
    return lines + (["boundary"] if c.boundary else []) + [f"filename {path}"]


def git_column(line: GitLine, width: int, abbrev: int = 7) -> str:
    """git blame's default prefix: the commit abbreviated as git blame does (one digit more than
    the repository's `abbrev`; ^ and `abbrev` digits on a boundary), (author date line)."""
    c = line.commit
    if not c.committed:
        return f"{'0' * (abbrev + 1)} ({'Not Committed Yet':<{width}} {'':<25}"
    when = _date(c.author_time, c.author_tz)
    commit = f"^{c.sha[:abbrev]}" if c.boundary else c.sha[:abbrev + 1]
    return f"{commit} ({(c.author or ''):<{width}} {when:<25}"


def abbrev_of(repo: Path | None) -> int:
    """How many digits git abbreviates a commit id to in this repository (core.abbrev, or the
    length git picks for its object count: `git rev-parse --short`); 7 without git."""
    proc = git(repo, "rev-parse", "--short", "HEAD") if repo is not None else None
    found = len(proc.stdout.strip()) if proc is not None else 0
    return found if 4 <= found <= 64 else 7


def _date(stamp: int | None, tz: str | None) -> str:
    if stamp is None:
        return ""
    offset = 0
    if tz and re.fullmatch(r"[+-]\d{4}", tz):
        offset = (1 if tz[0] == "+" else -1) * (int(tz[1:3]) * 60 + int(tz[3:5]))
    moment = dt.datetime.fromtimestamp(stamp, dt.timezone(dt.timedelta(minutes=offset)))
    return moment.strftime("%Y-%m-%d %H:%M:%S ") + (tz or "+0000")


def render(rows: list[Row], path: str | None = None, abbrev: int = 7) -> str:
    """Text like git blame's, with the recorded author (run, step, tool, cell) after git's column
    and the findings standing on a line at its end. As git does, each line's original file name
    follows its commit when some line came from a file of another name (`path`: the file blamed,
    repository-relative); `abbrev`: `abbrev_of` the repository."""
    width = max((len(row.git.commit.author or "") if row.git.commit.committed else 17 for row in rows), default=0)
    names = path is not None and any(row.git.orig_path != path for row in rows)
    name_width = max((len(row.git.orig_path) for row in rows), default=0) if names else 0
    labels = [row.author.label() if row.author.origin not in ("baseline", "outside") else "" for row in rows]
    label_width = max((len(label) for label in labels), default=0)
    digits = len(str(rows[-1].line)) if rows else 1
    out = []
    for row, label in zip(rows, labels):
        marks = f" [{','.join(row.findings)}]" if row.findings else ""
        who = f" {label:<{label_width}} |" if label_width else ""
        column = git_column(row.git, width, abbrev)
        if names:  # git's filename column: after the commit, before the parenthesis
            commit, _, rest = column.partition(" (")
            column = f"{commit} {row.git.orig_path:<{name_width}} ({rest}"
        out.append(f"{column} {row.line:>{digits}}){who} {row.text}{marks}")
    return "\n".join(out)


def vacant_keys(row: Row) -> list[str]:
    """vacant's porcelain headers for one line: each PORCELAIN_KEYS entry whose JSON field has a
    value (lists give one header per item; the cell is platform/agent_definition/model/task_family)."""
    data = {**row.author.to_json(), "findings": row.findings}
    out = []
    for key, field_name, _ in PORCELAIN_KEYS:
        value = data.get(field_name)
        if field_name == "actor" and isinstance(value, dict):
            value = "/".join(shown(value, k) for k in CELL_FIELDS)
        for item in value if isinstance(value, list) else [value]:
            if item is not None and item != "":
                out.append(f"{key} {item}")
    return out
