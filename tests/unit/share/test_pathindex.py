"""The path index of `vacant blame --team` (the paths each verified run verdict lists): for
generated record sets, blaming one file reads exactly the records that changed it, and answers
what reading every record answers (the oracle: the full scan), cold and from the sealed cache."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_teamcache import PEOPLE, isolated, make_repo, publish  # noqa: F401 - isolated: the autouse fixture

from vacant.share.gitstore import AUTHORS
from vacant.share.lines import digest_for, line_key
from vacant.share.records import Cell, Hunk, LineEdit, PathLines, ReadCoverage, RunRecord, StepEntry
from vacant.share.team import read_team, run_records
from vacant.share.teamblame import changed, team_runs

POOL = ["a.py", "b.py", "c/d.py", "e.txt"]
runs = st.lists(st.tuples(st.integers(0, 1), st.integers(0, 5), st.integers(1, 9),
                          st.lists(st.sampled_from(POOL), min_size=1, max_size=3, unique=True)), max_size=10)


def record(key: str, run: str, seq: int, paths: list[str], started: float) -> RunRecord:
    digest = digest_for(key)
    steps = [StepEntry(n, "Write", 0, "ok", [path]) for n, path in enumerate(paths, start=1)]
    lines = [PathLines(path, [], None, [LineEdit(n, [], [Hunk(0, 0, [digest(f"{run} {seq} {path}")])])], None)
             for n, path in enumerate(paths, start=1)]
    return RunRecord(run, "claude-code", None, started, seq, [Cell("claude-code", "main", "m", "f")], steps, 0,
                     ReadCoverage("none", "no reads"), [], key, sorted(lines, key=lambda item: item.path))


def blamed(blame) -> list:
    return [(a.origin, a.run, a.step, a.tool) for a in blame.authors], blame.to_json()


@pytest.mark.slow
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(made=runs)
def test_blaming_one_file_reads_only_its_records_and_answers_as_the_full_scan(tmp_path_factory, monkeypatch, made):
    base = tmp_path_factory.mktemp("index")
    monkeypatch.setenv("VACANT_STATE_DIR", str(base / "state"))  # this example's own caches
    store = make_repo(base, PEOPLE[:2])
    key = line_key(store)
    assert key is not None
    last: dict[str, str] = {}
    for number, (who, run, seq, paths) in enumerate(made):
        publish(store, PEOPLE[who], [("run", record(key, f"run-{run}", seq, paths, 1.8e9 + number))])
        for path in paths:
            last[path] = f"run-{run} {seq} {path}\n"
    for _ in range(2):  # cold, then from the sealed view cache
        view = read_team(store.root, store)
        everything = run_records(store, view)  # the oracle: every shown record, read whole
        for path in POOL:
            asked: list[str] = []
            real = store.read_blobs
            store.read_blobs = lambda oids: (asked.extend(oids), real(oids))[1]  # type: ignore[method-assign]
            try:
                indexed = run_records(store, view, path)
            finally:
                del store.read_blobs
            expected = [r for r in everything if changed(r, path)]
            assert indexed == expected and len(asked) == len(expected)
            current = last.get(path, "").encode()
            assert blamed(team_runs(store.root, store, [], only=path).blame(path, current)) == \
                blamed(team_runs(store.root, store, []).blame(path, current))
    assert set(store.refs(AUTHORS)) <= {AUTHORS + p.fingerprint for p in PEOPLE[:2]}
