"""The wrong value's tokens and exact matching."""

from __future__ import annotations

import pytest

from vacant.attribute.lineage import contains, salient, tokens


def test_tokens_split_literals_from_identifiers():
    literal, identifiers = tokens('RATE = 0.0725  # "net rate" for region_eu, x = 4')
    assert literal == {"0.0725", "net rate", "4"}
    assert identifiers == {"RATE", "region_eu"}  # short names and keywords are not salient


def test_salient_prefers_new_literals_over_identifiers():
    assert salient("RATE = 0.09", "RATE = 0.08") == {"0.09"}
    assert salient("total = price_eur * quantity", "total = price_usd * quantity") == {"price_eur"}
    assert salient("return a - b", "return a + b") == set()  # nothing salient: no lineage possible


@pytest.mark.parametrize("content, found", [
    ("legacy: RATE = 0.0725 (2019)", True),
    ("the rate was 0.07255 once", False),  # exact, whole-token: no prefix match
    ("rate 10.0725", False),
    ("", False),
])
def test_contains_is_exact(content, found):
    assert contains(content, {"0.0725"}) is found


def test_contains_needs_every_token_and_a_non_empty_value():
    assert contains("a 12% rise and 40% fall", {"12%", "40%"})
    assert not contains("a 12% rise", {"12%", "40%"})
    assert not contains("anything", set())


def _reads_view(tmp_path, *reads):
    """A run with one step whose reads are (origin, ref, content), then a later step start."""
    from vacant.attribute.replay import Timeline
    from vacant.store.objects import ObjectStore
    from vacant.store.run import RunView

    store = ObjectStore(tmp_path / "objects")
    records = [{"type": "step_start", "step": 1, "key": "k1", "tool": "Bash", "input": None, "actor": None,
                "open_steps": [], "scope": None}]
    for origin, ref, content in reads:
        records.append({"type": "read", "origin": origin, "ref": ref, "object": store.put_bytes(content.encode()),
                        "step": 1, "size": len(content)})
    records.append({"type": "step_end", "step": 1, "key": "k1", "outcome": "ok"})
    view = RunView.build([{"seq": n, **r} for n, r in enumerate(records, start=1)])
    return view, Timeline([{}], []), store, len(records) + 1


def test_a_command_that_shows_a_file_passes_the_file_on(tmp_path):
    from vacant.attribute.lineage import find_source

    # Codex reports `cat notes.txt` as the file read (from its shell parser) and the command's output
    view, timeline, store, end = _reads_view(tmp_path, ("file", "notes.txt", "RATE = 0.0725\n"),
                                             ("command", "cat notes.txt", "RATE = 0.0725\n"))
    source = find_source(view, timeline, store, {"0.0725"}, end, [])
    assert (source.kind, source.describe()) == ("external", "file:notes.txt")


def test_a_command_output_with_no_file_behind_it_stays_internal(tmp_path):
    from vacant.attribute.lineage import find_source

    view, timeline, store, end = _reads_view(tmp_path, ("file", "other.txt", "nothing here\n"),
                                             ("command", "python3 -c 'print(0.0931)'", "0.0931\n"))
    source = find_source(view, timeline, store, {"0.0931"}, end, [])
    assert (source.kind, source.producer_step) == ("internal", 1)
    assert source.describe() == "command:python3 -c 'print(0.0931)'"
