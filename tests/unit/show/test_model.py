"""The run view's data: the diff hunk shown at a finding's location."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from vacant.show.model import file_diff, hunk_at


@given(size=st.integers(20, 200), edits=st.lists(st.integers(0, 199), min_size=1, max_size=6, unique=True),
       pick=st.integers(0, 5))
def test_the_hunk_shown_holds_the_line_asked_for(size, edits, pick):
    old = [f"line {i}" for i in range(size)]
    new = list(old)
    changed = sorted(i for i in edits if i < size) or [0]
    for i in changed:
        new[i] = f"CHANGED {i}"
    target = changed[pick % len(changed)]
    hunk = hunk_at(file_diff(old, new, "f.txt"), target + 1)
    assert hunk[:2] == ["--- a/f.txt", "+++ b/f.txt"] and hunk[2].startswith("@@")
    assert f"+CHANGED {target}" in hunk
    assert sum(1 for line in hunk if line.startswith("@@")) == 1
