"""`vacant blame` against an independent oracle: edits are made through the real recorder (tool
steps, shell steps, sub-agents, out-of-band edits, edits between runs) while the oracle tracks who
made each line by the edit operations themselves, never by diffing."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from recording import Recording, cli

from vacant.core.linecarry import carry
from vacant.show.blame import Author, blame_file
from vacant.store.run import RunView

TARGET = "src/file.txt"
WHO = ("write", "bash", "sub", "oob", "between")


@dataclass
class Oracle:
    """The file as a list of (text, label, period); a label is what the line's author must map to."""
    lines: list[tuple[str, tuple, float]] = field(default_factory=list)
    counter: int = 0

    def fresh(self, count: int) -> list[str]:
        self.counter += count
        return [f"line {self.counter - count + i} {'x' * ((self.counter + i) % 7)}" for i in range(count)]


op = st.tuples(
    st.sampled_from(("insert", "delete", "replace", "move")), st.sampled_from(WHO),
    st.floats(0, 1), st.floats(0, 1), st.integers(1, 4),
)


def apply(oracle: Oracle, kind: str, a: float, b: float, size: int, label: tuple, period: float) -> None:
    lines = oracle.lines
    at = int(a * len(lines))
    if kind == "insert" or not lines:
        lines[at:at] = [(text, label, period) for text in oracle.fresh(size)]
    elif kind == "delete":
        del lines[at:at + size]
    elif kind == "replace":
        lines[at:at + size] = [(text, label, period) for text in oracle.fresh(size)]
    else:  # move a block elsewhere: its lines keep their authors
        block = lines[at:at + size]
        del lines[at:at + size]
        to = int(b * len(lines))
        lines[to:to] = block


def label_of(author: Author, views: dict[str, RunView]) -> tuple:
    if author.origin == "step":
        return ("step", author.run, views[author.run].steps[author.step].input["n"])
    if author.origin == "out_of_band":
        return ("oob", author.run)
    return (author.origin,)


def record(ws: Path, ops: list[tuple], initial: int) -> tuple[Oracle, list[Path], list[float]]:
    oracle = Oracle()
    target = ws / TARGET
    target.parent.mkdir(parents=True, exist_ok=True)
    oracle.lines = [(text, ("baseline",), -1.0) for text in oracle.fresh(initial)]
    (ws / "other.txt").write_text("other\n")

    def dump() -> None:
        target.write_text("".join(text + "\n" for text, _, _ in oracle.lines))
    dump()
    runs, period = [Recording(ws, "run-0")], 0.0
    for number, (kind, who, a, b, size) in enumerate(ops):
        run = runs[-1]
        if who == "between":
            run.end()
            apply(oracle, kind, a, b, size, ("outside",), period + 0.5)
            dump()
            runs.append(Recording(ws, f"run-{len(runs)}"))
            period += 1
            continue
        if who == "oob":  # another process edits the file: the next scan records an out-of-band change set
            apply(oracle, kind, a, b, size, ("oob", run.session), period)
            dump()
            continue
        tag = f"op{number}"
        apply(oracle, kind, a, b, size, ("step", run.session, tag), period)
        if who == "bash":
            run.step("Bash", dump, None, tool_input={"command": "edit it", "n": tag})
        else:
            run.step("Write", dump, [str(target)], "agent-sub" if who == "sub" else None, {"file_path": str(target), "n": tag})
        (ws / "other.txt").write_text(f"other {number}\n")  # noise no blame of TARGET may pick up
    runs[-1].end()
    return oracle, [run.run_dir for run in runs], [float(i) for i in range(len(runs))]


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(op, max_size=10), initial=st.integers(0, 6))
def test_every_line_is_blamed_on_the_edit_that_made_it(tmp_path_factory, ops, initial):
    ws = tmp_path_factory.mktemp("ws")
    oracle, run_dirs, _ = record(ws, ops, initial)
    views = {d.name: RunView.load(d) for d in run_dirs}

    every = blame_file(ws, TARGET, run_dirs)
    assert [line.text for line in every.lines] == [text for text, _, _ in oracle.lines]
    assert [label_of(line.author, views) for line in every.lines] == [label for _, label, _ in oracle.lines]

    last = blame_file(ws, TARGET, run_dirs[-1:])  # one run: whatever predates it is its baseline
    start = len(run_dirs) - 1
    expected = [("baseline",) if period < start else label for _, label, period in oracle.lines]
    assert [label_of(line.author, views) for line in last.lines] == expected


@settings(max_examples=60, deadline=None)
@given(versions=st.lists(st.lists(st.sampled_from(["", "}", "a", "b", "return x"]), max_size=8), min_size=1, max_size=6))
def test_with_repeated_lines_each_author_wrote_that_text(versions):
    """Repeated lines make the diff's alignment a choice; whatever it picks, a line's author must
    be one of the versions that added a copy of that text (or the baseline that had it)."""
    authors = [Author("baseline")] * len(versions[0])
    adders: dict[str, set] = {text: {Author("baseline")} for text in versions[0]}
    for number, (old, new) in enumerate(zip(versions, versions[1:]), start=1):
        me = Author("step", "r", number, "Write")
        authors = carry(old, authors, new, me)
        for text in set(new):
            if new.count(text) > old.count(text):
                adders.setdefault(text, set()).add(me)
        assert len(authors) == len(new)
        for text, author in zip(new, authors):
            assert author in adders[text], (text, author)


@pytest.mark.slow
def test_blame_command_json_and_text(recording, ws):
    recording.write("notes.md", "alpha\nbeta\n")
    (ws / "notes.md").write_text("alpha\nbeta\ngamma\n")  # after the run: outside any run
    recording.end()
    proc = cli(["blame", "notes.md", "--json"], ws)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    origins = [(line["line"], line["origin"], line["step"], line["tool"]) for line in data["lines"]]
    # the out-of-band "gamma" is recorded by the session's final scan: inside the run, no actor
    assert origins == [(1, "step", 1, "Write"), (2, "step", 1, "Write"), (3, "out_of_band", 2, "oob")]
    text = cli(["blame", "notes.md"], ws)
    assert "step 1 Write" in text.stdout and "out-of-band" in text.stdout


@pytest.mark.slow
def test_blame_refuses_files_outside_and_state(recording, ws, tmp_path):
    recording.end()
    (tmp_path / "outside.txt").write_text("x\n")
    for name in ("../outside.txt", ".vacant/runs/s1/events.jsonl", "missing.txt"):
        proc = cli(["blame", name], ws)
        assert proc.returncode == 3 and proc.stderr.startswith("vacant: "), (name, proc.stderr)
