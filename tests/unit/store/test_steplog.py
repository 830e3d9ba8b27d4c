"""The step log: concurrent appends, killed writers and torn tails, tamper evidence."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import pytest

from vacant.core import events
from vacant.store.steplog import GENESIS, StepLog, chain_hash, verify

REPO = Path(__file__).resolve().parents[3]


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def spawn(code: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def fill(log: StepLog, count: int, start: int = 0) -> list[dict]:
    return [log.emit("stop", agent_id=f"agent-{start + i}", stop_hook_active=False) for i in range(count)]


def read_quietly(reader):
    """Run a reader, returning (result, warning messages)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = reader()
    return result, [str(w.message) for w in caught]


def fatal(problems):
    return [problem for problem in problems if problem.fatal]


def assert_chain(records: list[dict]) -> None:
    """Checked here independently of `verify`: seqs 1..n, each prev is the hash before it."""
    prev = GENESIS
    for number, record in enumerate(records, start=1):
        assert record["seq"] == number
        assert record["prev"] == prev
        assert record["hash"] == chain_hash(record)
        prev = record["hash"]


# -- appends -------------------------------------------------------------------------------


def test_emit_chains_records_and_validates_the_vocabulary(tmp_path):
    log = StepLog(tmp_path / "run-1")
    written = fill(log, 3)
    on_disk = [json.loads(line) for line in log.path.read_bytes().splitlines()]
    assert on_disk == written == log.records() == events.load(log.path)
    assert_chain(on_disk)
    assert [record["agent_id"] for record in on_disk] == ["agent-0", "agent-1", "agent-2"]
    assert verify(log) == []
    assert log.read_head() == (3, on_disk[-1]["hash"], log.path.stat().st_size)
    with pytest.raises(events.VocabularyError):
        log.emit("no_such_event", x=1)
    with pytest.raises(events.VocabularyError):
        log.emit("stop", agent_id="a")  # missing stop_hook_active
    with pytest.raises(events.VocabularyError):
        log.emit("run_end", reason="x", seq=99)  # envelope fields are the log's, not the caller's
    assert log.records() == written  # nothing written by the refused emits


def test_append_recovers_when_the_head_file_is_lost(tmp_path):
    log = StepLog(tmp_path / "run")
    fill(log, 4)
    log.head_path.unlink()
    fill(log, 1, start=4)
    log.head_path.write_text("not json")
    fill(log, 1, start=5)
    records = log.records()
    assert len(records) == 6
    assert_chain(records)
    assert verify(log) == []


CONCURRENT_WRITER = """
    import sys
    from pathlib import Path
    from vacant.store.steplog import StepLog
    log = StepLog(Path(sys.argv[1]))
    worker = int(sys.argv[2])
    sys.stdin.read()  # wait for the start signal so all writers really overlap
    for i in range(200):
        log.emit("stop", agent_id=f"w{worker}-{i}", stop_hook_active=bool(i % 2))
"""


@pytest.mark.slow
def test_fifty_processes_append_two_hundred_records_each(tmp_path):
    run_dir = tmp_path / "run"
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(CONCURRENT_WRITER), str(run_dir), str(n)],
            env=child_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for n in range(50)
    ]
    time.sleep(0.5)  # let the interpreters start
    for writer in writers:
        writer.stdin.close()  # go
    for writer in writers:
        assert writer.wait(timeout=120) == 0, writer.stderr.read().decode()
        writer.stderr.close()

    lines = (run_dir / "events.jsonl").read_bytes().split(b"\n")
    assert lines[-1] == b""  # the file ends with a newline
    parsed = [json.loads(line) for line in lines[:-1]]  # every line parses on its own
    assert len(parsed) == 10_000
    assert sorted(record["seq"] for record in parsed) == list(range(1, 10_001))
    assert [record["seq"] for record in parsed] == list(range(1, 10_001))  # in file order too
    expected = {f"w{n}-{i}" for n in range(50) for i in range(200)}
    assert sorted(record["agent_id"] for record in parsed) == sorted(expected)  # none lost or doubled
    for n in range(50):  # each writer's own records keep their order
        mine = [int(r["agent_id"].split("-")[1]) for r in parsed if r["agent_id"].startswith(f"w{n}-")]
        assert mine == list(range(200))
    assert_chain(parsed)
    assert verify(StepLog(run_dir)) == []


# -- killed writers and torn tails ----------------------------------------------------------

TORN_WRITER = """
    import os, signal, sys
    fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
    os.write(fd, bytes.fromhex(sys.argv[2]))
    os.kill(os.getpid(), signal.SIGKILL)
"""


def write_torn_tail(log: StepLog, fragment: str) -> None:
    child = spawn(TORN_WRITER, str(log.path), fragment.encode().hex())
    child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL


@pytest.mark.parametrize(
    "fragment",
    ['{"v":1,"seq":', '{"v":1,"seq":99,"ts":1.0,"type":"stop","agent_id":"x"', "\x00\x00garbage"],
)
def test_torn_tail_is_skipped_with_a_warning_and_reported(tmp_path, fragment):
    log = StepLog(tmp_path / "run")
    before = fill(log, 5)
    size_before = log.path.stat().st_size
    write_torn_tail(log, fragment)
    assert log.path.stat().st_size == size_before + len(fragment.encode())

    for reader in (log.records, lambda: events.load(log.path)):
        records, caught = read_quietly(reader)
        assert records == before  # no earlier record lost
        assert len(caught) == 1 and "torn" in caught[0]
    with pytest.warns(UserWarning, match="torn"):
        events.load(log.path)
    assert events.tally(read_quietly(log.records)[0])["stop"] == 5

    problems = verify(log)
    assert [(problem.line, problem.kind, problem.fatal) for problem in problems] == [(6, "torn", False)]

    # A later append still works: it starts on its own line and chains to the last whole record.
    after = log.emit("run_end", reason="done")
    assert after["seq"] == 6 and after["prev"] == before[-1]["hash"]
    records, caught = read_quietly(log.records)
    assert records == before + [after]
    assert len(caught) == 1  # the torn line, now in the middle, is still skipped
    assert_chain(records)
    problems = verify(log)
    assert [(problem.line, problem.kind) for problem in problems] == [(6, "torn")]
    assert fatal(problems) == []
    raw_lines = log.path.read_bytes().split(b"\n")
    assert raw_lines[5] == fragment.encode() and json.loads(raw_lines[6]) == after


def test_torn_tail_on_an_empty_log_then_append(tmp_path):
    log = StepLog(tmp_path / "run")
    log.run_dir.mkdir(parents=True)
    log.path.touch()
    write_torn_tail(log, '{"v":1,"se')
    records, caught = read_quietly(log.records)
    assert records == [] and len(caught) == 1
    first = log.emit("run_end", reason="x")
    assert first["seq"] == 1 and first["prev"] == GENESIS
    assert [problem.kind for problem in verify(log)] == ["torn"]


KILLED_INSIDE_WRITE = """
    import os, signal, sys
    from pathlib import Path
    from vacant.store import steplog
    real_write = os.write
    def write_half_then_die(fd, data):
        real_write(fd, data[: len(data) // 2])  # the kernel took part of the record...
        os.kill(os.getpid(), signal.SIGKILL)    # ...when the writer was killed
    steplog.os.write = write_half_then_die
    steplog.StepLog(Path(sys.argv[1])).emit("run_end", reason="never finished " + "y" * 5000)
"""


def test_writer_killed_inside_the_append_write(tmp_path):
    """The real append path, cut in the middle of its one `os.write`."""
    log = StepLog(tmp_path / "run")
    before = fill(log, 3)
    head_before = log.read_head()
    child = spawn(KILLED_INSIDE_WRITE, str(log.run_dir))
    child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL, child.stderr.read().decode()
    assert log.path.stat().st_size > head_before.size + 2000  # half a record did land
    assert log.read_head() == head_before  # the writer died before updating the head

    records, caught = read_quietly(log.records)
    assert records == before and len(caught) == 1
    assert [(problem.line, problem.kind, problem.fatal) for problem in verify(log)] == [(4, "torn", False)]

    again = fill(log, 2, start=3)
    assert again[0]["seq"] == 4 and again[0]["prev"] == before[-1]["hash"]
    records, caught = read_quietly(log.records)
    assert records == before + again and len(caught) == 1
    assert_chain(records)
    assert [(problem.line, problem.kind) for problem in verify(log)] == [(4, "torn")]


LOOPING_WRITER = """
    import sys
    from pathlib import Path
    from vacant.store.steplog import StepLog
    log = StepLog(Path(sys.argv[1]))
    round_ = sys.argv[2]
    i = 0
    while True:
        # Mostly small records, some of several MiB so a kill can land inside the write itself.
        size = 6_000_000 if i % 5 == 4 else 10
        log.emit("run_end", reason=f"{round_}-{i}-" + "x" * size)
        i += 1
"""


@pytest.mark.slow
def test_writer_killed_at_random_moments_loses_nothing(tmp_path):
    rng = random.Random(20240607)
    log = StepLog(tmp_path / "run")
    seen: list[dict] = []
    torn_seen = 0
    for round_ in range(8):
        child = spawn(LOOPING_WRITER, str(log.run_dir), str(round_))
        deadline = time.monotonic() + 30
        while (not log.path.exists() or log.path.stat().st_size == 0) and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(rng.uniform(0.05, 0.6))
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        assert child.returncode == -signal.SIGKILL, child.stderr.read().decode()

        for reader in (log.records, lambda: events.load(log.path)):
            records, caught = read_quietly(reader)
            assert records[: len(seen)] == seen  # no earlier record lost
            assert_chain(records)
        problems = verify(log)
        assert fatal(problems) == []
        assert len(caught) == sum(problem.kind == "torn" for problem in problems)
        torn_seen = len(caught)

        # The parent appends too: the chain continues from the last whole record.
        mine = log.emit("run_end", reason=f"parent-{round_}")
        assert mine["seq"] == len(records) + 1
        assert mine["prev"] == (records[-1]["hash"] if records else GENESIS)
        seen = records + [mine]
        records, _ = read_quietly(log.records)
        assert records == seen
        assert fatal(verify(log)) == []
    assert len(seen) > 8
    print(f"{len(seen)} records, {torn_seen} torn line(s) left by real kills")


# -- tampering ------------------------------------------------------------------------------


def make_log(tmp_path: Path, count: int = 6) -> tuple[StepLog, list[bytes]]:
    log = StepLog(tmp_path / "run")
    fill(log, count)
    lines = log.path.read_bytes().splitlines(keepends=True)
    assert verify(log) == []
    return log, lines


def rewrite(log: StepLog, lines: list[bytes]) -> None:
    log.path.write_bytes(b"".join(lines))


def encode(record: dict) -> bytes:
    return json.dumps(record, separators=(",", ":")).encode() + b"\n"


def kinds(problems) -> list[tuple[int, str]]:
    return [(problem.line, problem.kind) for problem in problems]


def test_editing_a_field_is_detected(tmp_path):
    log, lines = make_log(tmp_path)
    record = json.loads(lines[2])
    record["agent_id"] = "someone-else"
    lines[2] = encode(record)
    rewrite(log, lines)
    problems = verify(log)
    assert kinds(problems) == [(3, "edited")]
    assert all(problem.fatal for problem in problems)


def test_editing_a_field_and_rehashing_it_is_detected(tmp_path):
    """A forger who recomputes the edited record's hash still breaks the next record's link."""
    log, lines = make_log(tmp_path)
    record = json.loads(lines[2])
    record["agent_id"] = "someone-else"
    record["hash"] = chain_hash(record)
    lines[2] = encode(record)
    rewrite(log, lines)
    problems = verify(log)
    assert kinds(problems) == [(4, "edited")]
    assert problems[0].fatal


def test_deleting_a_middle_record_is_detected(tmp_path):
    log, lines = make_log(tmp_path)
    del lines[3]
    rewrite(log, lines)
    problems = verify(log)
    assert kinds(problems) == [(4, "deleted")]
    assert problems[0].fatal and "4" in problems[0].detail


def test_deleting_the_first_record_is_detected(tmp_path):
    log, lines = make_log(tmp_path)
    del lines[0]
    rewrite(log, lines)
    assert kinds(verify(log)) == [(1, "deleted")]


@pytest.mark.parametrize("cut", [1, 2, 6])
def test_deleting_the_last_records_is_detected_by_the_head(tmp_path, cut):
    log, lines = make_log(tmp_path)
    rewrite(log, lines[:-cut])
    problems = verify(log)
    assert [problem.kind for problem in problems] == ["truncated"]
    assert problems[0].fatal
    assert f"{7 - cut}..6" in problems[0].detail


def test_inserting_a_forged_record_is_detected(tmp_path):
    """The forger chains the record to its predecessor and hashes it correctly."""
    log, lines = make_log(tmp_path)
    previous = json.loads(lines[2])
    forged = {"v": 1, "seq": previous["seq"] + 1, "ts": previous["ts"] + 0.001, "type": "run_end",
              "reason": "forged", "prev": previous["hash"]}
    forged["hash"] = chain_hash(forged)
    lines.insert(3, encode(forged))
    rewrite(log, lines)
    problems = verify(log)
    assert kinds(problems) == [(5, "inserted")]
    assert problems[0].fatal


def test_inserting_a_naive_forgery_is_detected(tmp_path):
    """A copy of a real record with one field changed and its old hash kept."""
    log, lines = make_log(tmp_path)
    forged = json.loads(lines[2])
    forged["agent_id"] = "forged"
    lines.insert(3, encode(forged))
    rewrite(log, lines)
    problems = verify(log)
    assert fatal(problems) == problems and problems
    assert (4, "edited") in kinds(problems)


def test_swapping_two_records_is_detected(tmp_path):
    log, lines = make_log(tmp_path)
    lines[2], lines[3] = lines[3], lines[2]
    rewrite(log, lines)
    problems = verify(log)
    assert problems and all(problem.fatal for problem in problems)
    assert {problem.kind for problem in problems} == {"reordered"}  # nothing is missing
    assert 3 in [problem.line for problem in problems]


def test_moving_the_last_record_to_the_front_is_detected(tmp_path):
    log, lines = make_log(tmp_path)
    lines.insert(0, lines.pop())
    rewrite(log, lines)
    problems = verify(log)
    assert problems and {problem.kind for problem in problems} == {"reordered"}


def test_a_duplicated_record_is_detected(tmp_path):
    log, lines = make_log(tmp_path)
    lines.insert(4, lines[3])
    rewrite(log, lines)
    assert kinds(verify(log)) == [(5, "inserted")]


def test_problems_are_not_reported_on_an_untouched_log(tmp_path):
    """The control for every tampering test above: the same log, unmodified, verifies clean."""
    log, lines = make_log(tmp_path)
    rewrite(log, lines)
    assert verify(log) == []
