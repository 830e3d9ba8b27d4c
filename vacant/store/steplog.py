"""The append-only, hash-chained step log of one run (`runs/<run>/events.jsonl` in the state directory).

Any number of hook processes may append at once. Each append takes the run's lock (the chain
needs the previous record's hash), then writes the whole record with one `os.write` on an
`O_APPEND` descriptor, so lines never interleave. A small `head` file remembers the last
sequence number, hash and file size: appends stay O(1), and `verify` can tell that records were
cut off the end. Stdlib only (hot path).
"""

from __future__ import annotations

from vacant.core import leanjson as json  # not `import json`: 13 ms CPU of each hook call (vacant/hook/lean.py)
import os
import time
from pathlib import Path

from vacant.core.leanstd import namedtuple
from vacant.core.sha import sha256

from vacant.core import children, events
from vacant.core.filelock import file_lock
from vacant.core.redact import redact

TYPE_CHECKING = False  # typing's, without importing typing: that costs each hook call 15 ms CPU (hook/lean.py)
if TYPE_CHECKING:
    from contextlib import AbstractContextManager

LOG_NAME = "events.jsonl"
GENESIS = "0" * 64
TAIL_PROBE = 1 << 20


def canonical(record: dict[str, object]) -> bytes:
    return json.dumps(record, sort_keys=True, separators=(",", ":")).encode()


def chain_hash(record: dict[str, object]) -> str:
    """sha256 over the record without its own `hash` field (its `prev` is included)."""
    body = {key: value for key, value in record.items() if key != "hash"}
    return sha256(canonical(body)).hexdigest()


Head = namedtuple("Head", "seq hash size")  # the chain's tip and the log size it was written at


class StepLog:
    def __init__(self, run_dir: Path) -> None:
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / LOG_NAME
        self.head_path = self.run_dir / "head"
        self.lock_path = self.run_dir / "lock"

    @property
    def run_id(self) -> str:
        return self.run_dir.name

    def lock(self, timeout: float | None = None) -> AbstractContextManager[None]:
        """The chain's lock: held for one append (or a few), so a fair blocking wait is short."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        return file_lock(self.lock_path, timeout)

    def emit(self, event_type: str, **fields: object) -> dict[str, object]:
        """Validate against the vocabulary, redact secrets, chain and append one record."""
        body = events.make(event_type, fields)
        with children.deferred(), self.lock():  # an interrupt never parts a record from its head
            return self.append_locked(body)

    def append_locked(self, body: dict[str, object]) -> dict[str, object]:
        """Append while the caller holds `lock()` (so it can order several appends)."""
        head, torn_tail = self._current_head()
        redacted = redact(body)
        assert isinstance(redacted, dict)  # redact keeps a value's shape
        record = {"v": 1, "seq": head.seq + 1, "ts": time.time(), **redacted, "prev": head.hash}
        record["hash"] = chain_hash(record)
        line = json.dumps(record, separators=(",", ":")).encode() + b"\n"
        if torn_tail:
            line = b"\n" + line  # end the torn line so this record starts on its own line
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            written = os.write(fd, line)
            while written < len(line):  # a short write on a regular file: finish it
                written += os.write(fd, line[written:])
            size = os.fstat(fd).st_size
        finally:
            os.close(fd)
        self._write_head(Head(record["seq"], record["hash"], size))
        return record

    def read_head(self) -> Head | None:
        try:
            data = json.loads(self.head_path.read_bytes())
            return Head(int(data["seq"]), str(data["hash"]), int(data["size"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def _write_head(self, head: Head) -> None:
        data = json.dumps(head._asdict()).encode()
        fd = os.open(self.head_path, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            os.pwrite(fd, data, 0)  # overwrite in place, then cut: never an empty head file
            os.ftruncate(fd, len(data))
        finally:
            os.close(fd)

    def _current_head(self) -> tuple[Head, bool]:
        """The chain's tip, and whether the file ends in a torn line that must be terminated."""
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return Head(0, GENESIS, 0), False
        head = self.read_head()
        if head is not None and head.size == size:
            return head, False
        return self._recover_head(size)

    def _recover_head(self, size: int) -> tuple[Head, bool]:
        """Find the last complete record by reading the tail (after a killed writer)."""
        with open(self.path, "rb") as handle:
            handle.seek(max(0, size - TAIL_PROBE))
            tail = handle.read()
        torn = not tail.endswith(b"\n")
        for raw in reversed(tail.split(b"\n")):
            try:
                record = json.loads(raw)
                return Head(int(record["seq"]), str(record["hash"]), size), torn
            except (ValueError, KeyError, TypeError):
                continue
        if size > TAIL_PROBE:
            records = events.load(self.path)
            if records:
                return Head(records[-1]["seq"], records[-1]["hash"], size), torn
        return Head(0, GENESIS, size), torn

    def records(self) -> list[dict[str, object]]:
        return events.load(self.path) if self.path.exists() else []


class Problem(namedtuple("Problem", "line kind detail")):
    """kind: edited | deleted | inserted | reordered | torn | truncated"""

    @property
    def fatal(self) -> bool:
        return bool(self.kind != "torn")


def verify(log: StepLog) -> list[Problem]:
    """Every break in the hash chain, plus torn lines (reported, never fatal)."""
    problems: list[Problem] = []
    expected_prev: object = GENESIS  # the previous record's hash, as read
    expected_seq, last_line = 1, 0
    lines = list(events.iter_lines(log.path))
    present = sorted({seq for _n, _raw, r in lines if r is not None and isinstance(seq := r.get("seq"), int)})
    seen: set[int] = set()
    for number, _raw, record in lines:
        last_line = number
        if record is None:
            problems.append(Problem(number, "torn", "torn or unreadable line skipped"))
            continue
        seq = record.get("seq")
        if record.get("hash") != chain_hash(record):
            problems.append(Problem(number, "edited", f"record seq {seq} does not match its hash"))
        if not isinstance(seq, int):
            problems.append(Problem(number, "edited", "record has no sequence number"))
            continue
        if record.get("prev") != expected_prev or seq != expected_seq:
            problems.append(Problem(number, *_classify_break(seq, expected_seq, seen, present)))
        seen.add(seq)
        expected_prev, expected_seq = record.get("hash"), seq + 1
    head, top = log.read_head(), max(seen, default=0)
    if head is not None and head.seq > top:
        problems.append(Problem(last_line, "truncated", f"records {top + 1}..{head.seq} are missing at the end"))
    return problems


def _classify_break(seq: int, expected: int, seen: set[int], present: list[int]) -> tuple[str, str]:
    """Name a chain break by the whole file (`present`: its sorted seqs), not only the neighbour."""
    if seq in seen:
        return "inserted", f"seq {seq} appears a second time"
    if seq > expected:
        import bisect  # a broken chain only (verify)

        if bisect.bisect_left(present, seq) - bisect.bisect_left(present, expected) < seq - expected:
            return "deleted", f"record(s) {expected}..{seq - 1} are missing before seq {seq}"
        return "reordered", f"seq {seq} appears before seq(s) {expected}..{seq - 1}"
    if seq < expected:
        return "reordered", f"seq {seq} appears after seq {expected - 1}"
    return "edited", f"seq {seq} does not chain to the record before it (one of them was altered)"
