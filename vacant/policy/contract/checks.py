"""Running checks: one shell line under a cap, its output parsed for locations, turned into findings.

A check runs as `bash -c COMMAND` in a new process group (the whole group is killed with SIGKILL
at its timeout, and whatever it left running is killed when it exits), with stdin closed,
stdout and stderr merged and capped (the head and the tail are kept), and `PATH` prefixed with
`<root>/.local/bin` so checks see the same tools the agent does.

A failing check yields one finding per location its output names (`path:line[:col]: message`,
pytest, ruff, mypy, flake8, Python tracebacks, tsc), or one finding without a location. A check
that fails because its tool is missing (exit 127/126 with a not-found / not-executable message)
yields a single `env/NAME` finding instead: editing code cannot fix it, and it is never blamed
on anyone.
"""

from __future__ import annotations

import os
import re
import selectors
import shutil
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from vacant.core import children, sandbox
from vacant.core.sandbox import Placement
from vacant.core.locations import user_data_dir
from vacant.core.wall import Wall, ensure_hidden_dirs, wall_for
from vacant.core.findings import Finding, finding_id, line_text, read_text_lines, test_finding_id
from vacant.policy.contract.runners import (
    Reads,
    Reported,
    Skip,
    plan_run,
    read_inputs,
    read_reads,
    read_reports,
    refused_options,
)
from vacant.policy.contract.testreport import assert_frame, frames, module_candidates

OUTPUT_HEAD = 256 * 1024  # bytes of output kept from the start
OUTPUT_TAIL = 256 * 1024  # and from the end
DRAIN_AFTER_EXIT_S = 2.0  # how long to wait for EOF once the group is gone
MESSAGE_WIDTH = 300


class CheckLike(Protocol):
    name: str
    command: str
    timeout: float


# -- where a check runs: behind the wall (vacant/core/sandbox.py) -------------------------------


@dataclass(frozen=True)
class Site:
    """A check's run behind the wall: the workspace's own path `root`, and the rebuilt state shown
    there (`state`, with the live `unrecorded` paths over it; None: the live workspace)."""

    wall: Wall
    root: Path
    state: Path | None = None
    unrecorded: tuple[str, ...] = ()
    cache: Path | None = None  # the checks' own cache directory (below), writable behind the wall

    def placement(self, network: bool) -> Placement:
        return Placement(self.root, self.state, self.unrecorded, network)

    def cache_env(self) -> dict[str, str]:
        """Tools' caches in the checks' own directory: the person's (~/.cache, GOCACHE) are
        read-only behind the wall, and a cache the agent's code could write is one the person's
        own builds would later trust."""
        if self.cache is None:
            return {}
        # each tool's own variable too: one the person's environment sets wins over XDG_CACHE_HOME
        return {"XDG_CACHE_HOME": str(self.cache), "GOCACHE": str(self.cache / "go-build"),
                "npm_config_cache": str(self.cache / "npm"), "UV_CACHE_DIR": str(self.cache / "uv"),
                "PIP_CACHE_DIR": str(self.cache / "pip"), "YARN_CACHE_FOLDER": str(self.cache / "yarn"),
                "PRE_COMMIT_HOME": str(self.cache / "pre-commit")}

    def seen_as(self, host_dir: Path) -> Path:
        """`host_dir` (the state's directory, or below it) as the command sees it."""
        if self.state is None:
            return Path(host_dir)
        return self.root / Path(host_dir).resolve().relative_to(Path(self.state).resolve())


def site_for(root: Path, state: Path | None = None, unrecorded: tuple[str, ...] = ()) -> Site | None:
    """The walled site of workspace `root` (showing `state` there when given), or None where
    bubblewrap cannot run (sandbox.unwalled_reason says why; the caller runs unwalled and says so)."""
    if sandbox.usable() is not None:
        return None
    root = Path(root).resolve()
    ensure_hidden_dirs(root)
    return Site(wall_for(root), root, None if state is None else Path(state).resolve(), unrecorded, check_cache(root))


def check_cache(root: Path) -> Path | None:
    """The walled checks' cache directory of workspace `root`: in vacant's data directory, which
    the agent's own commands may only read; only walled checks write it (None: it cannot be made)."""
    import hashlib

    directory = user_data_dir() / "check-cache" / hashlib.sha256(os.fsencode(root)).hexdigest()[:16]
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError:
        return None
    return directory


# -- running a command ---------------------------------------------------------------------------


@dataclass
class CommandResult:
    exit_code: int | None  # None when it timed out; 128+N when killed by signal N
    output: str
    seconds: float
    timed_out: bool
    truncated: bool


def check_env(root: Path) -> dict[str, str]:
    """The environment a check runs in: the caller's, with `<root>/.local/bin` first on PATH."""
    env = dict(os.environ)
    local_bin = str(Path(root) / ".local" / "bin")
    env["PATH"] = local_bin + (os.pathsep + env["PATH"] if env.get("PATH") else "")
    return env


class _Capped:
    """Keeps the first `head` and the last `tail` bytes of a stream, and counts the rest."""

    def __init__(self, head: int, tail: int) -> None:
        self.head_cap, self.tail_cap = head, tail
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > 2 * self.tail_cap:  # trim in batches, not on every chunk
                del self.tail[: len(self.tail) - self.tail_cap]

    @property
    def truncated(self) -> bool:
        return self.total > len(self.head) + min(len(self.tail), self.tail_cap)

    def text(self) -> str:
        tail = bytes(self.tail[-self.tail_cap :]) if self.tail_cap else b""
        if not self.truncated:
            return (bytes(self.head) + tail).decode("utf-8", errors="replace")
        omitted = self.total - len(self.head) - len(tail)
        marker = f"\n[vacant: output truncated, {omitted} bytes omitted of {self.total}]\n"
        return bytes(self.head).decode("utf-8", errors="replace") + marker + tail.decode("utf-8", errors="replace")


def _exited(pid: int) -> bool:
    """Whether the child has exited, without reaping it (its pid keeps naming its group)."""
    try:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is not None and info.si_pid == pid


def run_command(
    command: str,
    cwd: Path,
    timeout: float,
    root: Path,
    head: int = OUTPUT_HEAD,
    tail: int = OUTPUT_TAIL,
    extra_env: dict[str, str] | None = None,
    site: Site | None = None,
    network: bool = False,
    writable: tuple[Path, ...] = (),
) -> CommandResult:
    """Run one shell line under `timeout` seconds; see the module docstring for the rules. With
    a `site`, behind the wall at the workspace's own path (`cwd` and `root` are the host's
    directories; `writable`: more host directories the command may write, at their own paths)."""
    import tempfile

    started = time.monotonic()
    argv, env, tmp = ["bash", "-c", command], {**check_env(root), **(extra_env or {})}, None
    if site is not None:
        tmp = Path(tempfile.mkdtemp(prefix="vacant-walled-"))
        env = {**check_env(site.seen_as(root)), **site.cache_env(), **(extra_env or {})}
        writable = (*writable, *([site.cache] if site.cache else []))
        argv = sandbox.wrap(argv, site.placement(network), site.wall, tmp, cwd=site.seen_as(cwd), writable=writable)
    try:
        proc = children.spawn(  # its own process group, killed by an interrupt too (vacant.core.children)
            argv, cwd=str(cwd), env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            result = _collect(proc, started, timeout, head, tail)
        finally:
            children.release(proc)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    if site is not None and site.state is not None:  # the state's paths as the host holds them, for parsing
        result.output = _as_host(result.output, site.root, site.state)
    return result


def _as_host(output: str, root: Path, state: Path) -> str:
    """`output` with the workspace's path (as a walled command saw it) replaced by the state's."""
    return _seen_root(root).sub(lambda _m: str(state), output)


def _seen_root(root: Path) -> re.Pattern[str]:
    return re.compile(r"(?<![\w.\-/])" + re.escape(str(root)) + r"(?=/|$|[^\w.\-])")


def _reports_as_host(reports: list[Path], root: Path, state: Path) -> None:
    """The runners' reports of a walled run on a state name the workspace's path where the host
    holds the state: rewritten in place (vacant's scratch files, or the state's own copy)."""
    for report in reports:
        try:
            text = report.read_text(errors="surrogateescape")
        except OSError:
            continue
        changed = _seen_root(root).sub(lambda _m: str(state), text)
        if changed != text:
            report.write_text(changed, errors="surrogateescape")


def _collect(proc: subprocess.Popen, started: float, timeout: float, head: int, tail: int) -> CommandResult:
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    os.set_blocking(fd, False)
    captured = _Capped(head, tail)
    deadline = started + timeout
    timed_out = False
    gone_at: float | None = None  # when the group was killed (exit or timeout)
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        eof = False
        while not eof:
            now = time.monotonic()
            if gone_at is None:
                if _exited(proc.pid):
                    children.kill_group(proc.pid)  # whatever the check left running goes with it
                    gone_at = now
                elif now >= deadline:
                    children.kill_group(proc.pid)
                    timed_out, gone_at = True, now
            elif now - gone_at > DRAIN_AFTER_EXIT_S:
                break  # something outside the group still holds the pipe: stop reading
            wait = 0.05 if gone_at is None else 0.2
            if gone_at is None:
                wait = max(0.0, min(wait, deadline - now))
            for _key, _mask in selector.select(wait):
                while True:
                    try:
                        chunk = os.read(fd, 1 << 16)
                    except BlockingIOError:
                        break
                    if not chunk:
                        eof = True
                        break
                    captured.add(chunk)
    proc.stdout.close()
    returncode = proc.wait()
    seconds = time.monotonic() - started
    if timed_out:
        exit_code: int | None = None
    elif returncode < 0:
        exit_code = 128 - returncode
    else:
        exit_code = returncode
    return CommandResult(exit_code, captured.text(), seconds, timed_out, captured.truncated)


# -- the missing-tool signature ------------------------------------------------------------------

_MISSING = re.compile(
    r"^(?:.*?: )?(?:line \d+: )?(?P<name>[^:\n]+?): "
    r"(?P<sig>command not found|No such file or directory|not found|Permission denied|"
    r"cannot execute[^\n]*|Is a directory)\s*$",
    re.MULTILINE,
)
_QUOTED = re.compile(r"['‘`\"]([^'’`\"]+)['’`\"]")


def missing_tool(exit_code: int | None, output: str, root: Path) -> str | None:
    """The tool's name when a 127/126 exit carries a not-found / not-executable message.

    A path inside the workspace (`./run.sh` not there yet, or not executable) is the work's own
    business, not the environment's: that returns None.
    """
    if exit_code not in (126, 127):
        return None
    for match in _MISSING.finditer(output):
        name = match.group("name").strip()
        quoted = _QUOTED.search(name)
        if quoted:
            name = quoted.group(1)
        elif " " in name:
            name = name.split()[-1]
        name = name.strip("'\"`‘’")
        if not name:
            continue
        if "/" in name:
            candidate = Path(os.path.normpath(name if os.path.isabs(name) else Path(root).absolute() / name))
            local_bin = Path(root).absolute() / ".local" / "bin"
            inside = _inside(candidate, Path(root).absolute()) or _inside(candidate, Path(root).resolve())
            if inside and not _inside(candidate, local_bin):
                return None
        return Path(name).name or name
    return None


def env_message(name: str, check_name: str, exit_code: int | None, root: Path) -> str:
    return (
        f"check {check_name!r} could not run: `{name}` was not found or is not executable (exit {exit_code}). "
        f"Editing code cannot fix this: provision the tool (install it and put it on PATH, "
        f"or place an executable at {Path(root) / '.local' / 'bin' / name})."
    )


def _inside(path: Path, parent: Path) -> bool:
    return path == parent or parent in path.parents


# -- locations in a check's output ---------------------------------------------------------------


@dataclass(frozen=True)
class Location:
    path: str  # workspace-relative, posix
    line: int | None
    col: int | None
    message: str


_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_GENERIC = re.compile(r"^\s*(?P<path>[^\s:][^:]*?):(?P<line>\d+)(?::(?P<col>\d+))?:(?:\s*(?P<msg>.*))?$")
_ARROW = re.compile(r"^\s*-->\s*(?P<path>[^\s:][^:]*?):(?P<line>\d+)(?::(?P<col>\d+))?\s*$")  # ruff, rustc
_TSC = re.compile(r"^\s*(?P<path>[^\s(][^(]*?)\((?P<line>\d+),(?P<col>\d+)\):\s*(?P<msg>.*)$")
_PYFRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.+))?\s*$')
_PYTEST_HEADER = re.compile(r"^_{2,} (?P<name>.+?) _{2,}$")
_SECTION = re.compile(r"^={3,}.*={3,}$")
_PYTEST_E = re.compile(r"^E\s+(?P<msg>\S.*)$")
_PYTEST_SUMMARY = re.compile(r"^(?:FAILED|ERROR) (?P<path>[^\s:]+?)(?:::(?P<test>\S+))?(?: - (?P<msg>.*))?\s*$")
_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Failure|Exit|Interrupt)\b(?::.*)?$")
_WEAK = re.compile(r"^(?:in \S+|[A-Za-z_][\w.]*(?:Error|Exception|Failure|Exit|Interrupt|Warning))?$")


class _Resolver:
    """Maps a path printed by a tool to a workspace-relative file, or None when it is not one."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.real_root = self.root.resolve()
        self.cache: dict[str, str | None] = {}

    def __call__(self, raw: str) -> str | None:
        raw = raw.strip()
        if raw not in self.cache:
            self.cache[raw] = self._resolve(raw)
        return self.cache[raw]

    def _resolve(self, raw: str) -> str | None:
        if not raw or "\0" in raw:
            return None
        full = Path(os.path.normpath(raw if os.path.isabs(raw) else self.root.absolute() / raw))
        try:
            real = full.resolve(strict=True)
            if not real.is_file():
                return None
            real.relative_to(self.real_root)  # the file itself is inside the workspace
        except (OSError, ValueError, RuntimeError):
            return None
        try:  # the path as the check printed it (a symlink stays the symlink's name)
            rel = full.relative_to(self.root.absolute())
        except ValueError:  # printed by another name of the workspace (its resolved path)
            rel = real.relative_to(self.real_root)
        if rel.parts and rel.parts[0] in (".git", ".vacant"):
            return None
        return rel.as_posix()


def _trim(message: str, width: int = MESSAGE_WIDTH) -> str:
    message = " ".join(message.split())
    return message if len(message) <= width else message[: width - 1] + "…"


def parse_locations(output: str, root: Path) -> list[Location]:
    """Every location inside the workspace that a check's output names, in order, without duplicates.

    Inside one pytest failure (or one Python traceback) only the innermost frame inside the
    workspace is kept, with the failure's own words (`E   ...`, the exception line) as message.
    pytest's `FAILED path::test - msg` lines give file-only locations when no traceback did.
    """
    reader = _LocationReader(root)
    for raw_line in _ANSI.sub("", output).splitlines():
        reader.feed(raw_line.rstrip())
    return reader.result()


class _LocationReader:
    """The line-by-line state of `parse_locations`: each `_on_*` step returns True when it
    consumed the line."""

    def __init__(self, root: Path) -> None:
        self.resolve = _Resolver(root)
        self.found: list[Location] = []
        self.summary: list[Location] = []
        self.block: dict[str, Any] | None = None  # the pytest failure or traceback being read
        self.previous = ""  # the last non-blank line: ruff's and rustc's `-->` follow their message

    def feed(self, line: str) -> None:
        for step in (self._on_block_boundary, self._on_frame, self._on_block_words, self._on_summary,
                     self._on_arrow, self._on_generic):
            if step(line):
                return
        if line.strip():
            self.previous = line.strip()

    def result(self) -> list[Location]:
        self.close_block()
        unique: list[Location] = []
        seen: set[Location] = set()
        for location in self.found or self.summary:
            if location not in seen:
                seen.add(location)
                unique.append(location)
        return unique

    def close_block(self) -> None:
        block, self.block = self.block, None
        if not block or not block["frames"]:
            return
        path, line, col, message = block["frames"][-1]
        words = block["message"]
        if words and (_WEAK.match(message) or block["kind"] == "traceback"):
            message = words
        if block.get("test") and words:
            message = f"{block['test']}: {message}"
        self.found.append(Location(path, line, col, _trim(message)))

    def _on_block_boundary(self, line: str) -> bool:
        header = _PYTEST_HEADER.match(line)
        if header:
            self.close_block()
            self.block = {"kind": "pytest", "test": header.group("name"), "frames": [], "message": ""}
            return True
        if _SECTION.match(line):
            self.close_block()
            return True
        if line.startswith("Traceback (most recent call last)"):
            if self.block is None or self.block["kind"] != "pytest":
                self.close_block()
                self.block = {"kind": "traceback", "test": None, "frames": [], "message": ""}
            return True
        return False

    def _on_frame(self, line: str) -> bool:
        frame = _PYFRAME.match(line)
        if not frame:
            return False
        path = self.resolve(frame.group("path"))
        if path:
            location = (path, int(frame.group("line")), None, f"in {frame.group('func') or '?'}")
            if self.block is not None:
                self.block["frames"].append(location)
            else:
                self.found.append(Location(*location))
        return True

    def _on_block_words(self, line: str) -> bool:
        block = self.block
        if block is None:
            return False
        e_line = _PYTEST_E.match(line)
        if e_line and block["kind"] == "pytest":
            block["message"] = block["message"] or e_line.group("msg")
            return True
        if block["kind"] == "pytest" and not block["message"] and _EXCEPTION_LINE.match(line):
            block["message"] = line  # --tb=native: the exception line closes the traceback
            return True
        if block["kind"] == "traceback" and line and not line[0].isspace():
            block["message"] = block["message"] or line
            self.close_block()
            return True
        return False

    def _on_summary(self, line: str) -> bool:
        pytest_summary = _PYTEST_SUMMARY.match(line)
        if not pytest_summary:
            return False
        path = self.resolve(pytest_summary.group("path"))
        if path:
            words = ": ".join(p for p in (pytest_summary.group("test"), pytest_summary.group("msg")) if p)
            self.summary.append(Location(path, None, None, _trim(words or line)))
        return True

    def _on_arrow(self, line: str) -> bool:
        arrow = _ARROW.match(line)
        if not arrow:
            return False
        path = self.resolve(arrow.group("path"))
        if path:
            col = int(arrow.group("col")) if arrow.group("col") else None
            self.found.append(Location(path, int(arrow.group("line")), col, _trim(self.previous)))
        return True

    def _on_generic(self, line: str) -> bool:
        match = _GENERIC.match(line) or _TSC.match(line)
        if not match:
            return False
        message = (match.group("msg") or "").strip()
        if message.startswith("note:"):
            return True  # mypy's notes explain an error printed on their own line
        path = self.resolve(match.group("path"))
        if not path:
            return True
        col = int(match.group("col")) if match.group("col") else None
        if self.block is not None and self.block["kind"] == "pytest":
            self.block["frames"].append((path, int(match.group("line")), col, message))
        else:
            self.found.append(Location(path, int(match.group("line")), col, _trim(message)))
        return True


# -- one check, and all the gates ----------------------------------------------------------------


@dataclass
class CheckResult:
    name: str
    passed: bool
    exit_code: int | None
    output: str
    seconds: float
    timed_out: bool
    env_missing: bool
    findings: list[Finding] = field(default_factory=list)
    truncated: bool = False
    command: str = ""
    precondition: bool = False
    tests: dict[str, str] = field(default_factory=dict)  # test id -> outcome, from the runner's report
    report_problem: str | None = None  # the runner's report could not be read (why)
    reads: Reads | None = None  # what a selected pytest run read (vacant.policy.contract.runners), if traced
    walled: bool = False  # ran behind the wall (vacant/core/sandbox.py); False: as the person, unwalled
    inputs: dict[str, Any] | None = None  # each test's inputs, raw, when recorded (vacant.attribute.testinputs)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["tests"] = len(self.tests)
        data.pop("reads")  # a replay's cache key, not a result
        data.pop("inputs")
        data["findings"] = [finding.to_json() for finding in self.findings]
        data["seconds"] = round(self.seconds, 4)
        return data


def own_words(output: str, width: int = 200) -> str:
    """The last non-blank lines of a check's output, trimmed: what it said when it failed."""
    lines = [line.strip() for line in _ANSI.sub("", output).splitlines() if line.strip()]
    words = ""
    for line in reversed(lines[-5:]):
        candidate = f"{line} / {words}" if words else line
        if len(candidate) > width:
            break
        words = candidate
    return _trim(words or (lines[-1] if lines else ""), width)


def test_findings(name: str, reported: Reported, root: Path) -> list[Finding]:
    """One finding per failing test the runner reported, keyed by its test id, located at the
    line its failure points at (testreport: the assert line in the test's own file)."""
    resolve = _Resolver(root)
    files: dict[str, list[str] | None] = {}
    found: dict[str, Finding] = {}
    for result in reported.results:
        if not result.broken:
            continue
        located = [(path, line) for path, line in ((_in_dirs(resolve, p, result.dirs), n)
                                                   for p, n in frames(result.details)) if path]
        test_file = next((path for path in map(resolve, module_candidates(result)) if path), None)
        path, line = assert_frame(located, test_file) or (test_file, None)
        if path is not None and path not in files:
            files[path] = read_text_lines(Path(root) / path)
        text = line_text(files.get(path), line)
        message = _trim(("error: " if result.outcome == "error" else "") + (result.message or result.outcome))
        ident = test_finding_id(name, result.id)
        found[ident] = Finding(ident, "check", name, path, line, None, message, text, test=result.id)
    return list(found.values())


def _in_dirs(resolve: _Resolver, raw: str, dirs: tuple[str, ...]) -> str | None:
    """A frame's file: under the first of `dirs` that holds it (a Go package's directory), else
    as printed."""
    if not os.path.isabs(raw):
        for directory in dirs:
            found = resolve(f"{directory}/{raw}") if directory else None
            if found:
                return found
    return resolve(raw)


def findings_from(name: str, result: CommandResult, root: Path, timeout: float,
                  reported: Reported | None = None) -> tuple[list[Finding], bool]:
    """The findings of one failed run of check `name`, and whether its tool was missing: one per
    failing test when its runner reported them, else read from its output."""
    if result.timed_out:
        message = f"timed out after {timeout:g} s (its process group was killed)"
        return [Finding(finding_id(name, None, ""), "check", name, None, None, None, message, "")], False
    tool = missing_tool(result.exit_code, result.output, root)
    if tool is not None:
        env_name = f"env/{tool}"
        message = env_message(tool, name, result.exit_code, root)
        return [Finding(finding_id(env_name, None, ""), "check", env_name, None, None, None, message, "", env=True)], True
    tests = test_findings(name, reported, root) if reported is not None else []
    if tests:
        return tests, False
    findings: dict[str, Finding] = {}
    files: dict[str, list[str] | None] = {}
    for location in parse_locations(result.output, root):
        if location.path not in files:
            files[location.path] = read_text_lines(Path(root) / location.path)
        text = line_text(files[location.path], location.line)
        ident = finding_id(name, location.path, text)
        message = location.message or own_words(result.output)
        if ident in findings:  # the same text twice (two codes on one line, or a repeated line)
            known = findings[ident]
            if message and message not in known.message:
                known.message = _trim(f"{known.message}; {message}")
            continue
        findings[ident] = Finding(ident, "check", name, location.path, location.line, location.col, message, text)
    if not findings:
        words = own_words(result.output)
        message = f"exit {result.exit_code}" + (f": {words}" if words else "")
        return [Finding(finding_id(name, None, ""), "check", name, None, None, None, message, "")], False
    return list(findings.values()), False


def run_check(check: CheckLike, root: Path, timeout: float | None = None, precondition: bool = False,
              select: tuple[str, ...] = (), site: Site | None = None, inputs: bool = False,
              skip: Skip | None = None) -> CheckResult:
    """Run one check on the workspace state at `root` (the live one, or a scratch copy); with
    `select`, only those tests where the runner can select them (vacant.policy.contract.runners);
    with a `site`, behind the wall at the workspace's own path (`root` is then where the host
    holds the state: the state's directory, or the live workspace); `inputs` records each test's
    inputs, `skip` leaves tests out (vacant.attribute.testinputs)."""
    cap = check.timeout if timeout is None else min(timeout, check.timeout)
    plan = plan_run(check.command, Path(root), getattr(check, "junit", None), select, inputs=inputs, skip=skip)
    path = check_env(site.seen_as(Path(root)) if site else Path(root)).get("PATH", "")
    walled = {"site": site, "network": bool(getattr(check, "network", False)), "writable": (plan.scratch,)}
    try:
        result = run_command(plan.command, Path(root), cap, Path(root), extra_env=plan.environment(path), **walled)
        if refused_options(result.exit_code, result.output):
            plan = plan.plain()
            result = run_command(plan.command, Path(root), cap, Path(root), extra_env=plan.environment(path),
                                 **walled)
        if site is not None and site.state is not None:
            _reports_as_host(plan.reports, site.root, site.state)
        reported = read_reports(plan)
        reads = read_reads(plan)
        recorded = read_inputs(plan)
    finally:
        plan.cleanup()
    passed = result.exit_code == 0 and not result.timed_out
    findings: list[Finding] = []
    env_missing = False
    if not passed:
        findings, env_missing = findings_from(check.name, result, Path(root), cap, reported)
    return CheckResult(
        name=check.name, passed=passed, exit_code=result.exit_code, output=result.output, seconds=result.seconds,
        timed_out=result.timed_out, env_missing=env_missing, findings=findings, truncated=result.truncated,
        command=check.command, precondition=precondition, tests=reported.outcomes() if reported else {},
        report_problem=reported.problem if reported else None, reads=reads, walled=site is not None,
        inputs=recorded,
    )
