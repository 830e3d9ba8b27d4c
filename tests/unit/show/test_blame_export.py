"""One line authorship for `vacant blame` and the Agent Trace export (issue 24): over generated
runs recorded through the real recorder (inserts, replacements, deletions, re-indents, moves and
reverts to the baseline's text), the export's line ranges name exactly the steps blame names, and
no line whose text the baseline had (and the run wrote back) is claimed as the agent's."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from recording import Recording

from vacant.export import authorship
from vacant.export import model as run_model
from vacant.show.blame import blame_file
from vacant.store.states import store_for

pytestmark = pytest.mark.usefixtures("isolated_home")
TARGET = "f.txt"
BASE = [f"base line {n}" for n in range(5)]
op = st.tuples(st.sampled_from(("insert", "replace", "delete", "indent", "move", "revert")),
               st.floats(0, 1), st.floats(0, 1), st.integers(1, 3))


def edit(lines: list[str], kind: str, a: float, b: float, size: int, fresh: str) -> list[str]:
    lines = list(lines)
    at = int(a * len(lines))
    if kind == "insert" or not lines:
        lines[at:at] = [f"{fresh} {i}" for i in range(size)]
    elif kind == "replace":
        lines[at:at + size] = [f"{fresh} {i}" for i in range(size)]
    elif kind == "delete":
        del lines[at:at + size]
    elif kind == "indent":
        lines[at:at + size] = ["  " + line for line in lines[at:at + size]]
    elif kind == "revert":  # a baseline line the run removed, written back
        missing = [line for line in BASE if line not in {text.strip() for text in lines}]
        if missing:
            lines.insert(at, missing[int(b * len(missing)) % len(missing)])
    else:
        block = lines[at:at + size]
        del lines[at:at + size]
        to = int(b * len(lines))
        lines[to:to] = block
    return lines


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(op, min_size=1, max_size=8))
def test_the_export_names_the_steps_blame_names(tmp_path_factory, ops):
    ws = tmp_path_factory.mktemp("ws")
    (ws / TARGET).write_text("".join(line + "\n" for line in BASE))
    run = Recording(ws, "run-1")
    lines = list(BASE)
    for number, (kind, a, b, size) in enumerate(ops, start=1):
        lines = edit(lines, kind, a, b, size, f"written by step {number}")
        run.write(TARGET, "".join(line + "\n" for line in lines))
    run.end()

    blamed = blame_file(ws, TARGET, [run.run_dir])
    by_blame = [line.author.step if line.author.origin == "step" else None for line in blamed.lines]
    files, _ = authorship.authors(run_model.load(run.run_dir), store_for(ws))
    by_export = [None] * len(lines)
    for authored in files:
        for span in authored.spans:
            by_export[span.start - 1:span.end] = [span.step] * (span.end - span.start + 1)
    assert by_export == by_blame
    for text, step in zip(lines, by_export):
        if text.strip() in BASE:
            assert step is None, text  # the baseline's text is not the agent's, however it came back
