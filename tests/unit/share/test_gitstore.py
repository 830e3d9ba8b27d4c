"""git plumbing for shared records: CAS on refs, trees of any shape read back, the namespace guard;
and the union of the fold, against a plain multiset oracle."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from teamkit import GIT_ENV, git

from vacant.core.locations import mark_installed
from vacant.core import githead
from vacant.share.fold import union_rows
from vacant.share.gitstore import GitError, GitStore
from vacant.share.teamkey import repository_root
from vacant.store import reputation
from vacant.store.reputation import ReviewRow


@pytest.fixture
def repo(tmp_path, monkeypatch) -> GitStore:
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)
    git(tmp_path, "init", "-q", "repo")
    return GitStore(tmp_path / "repo")


hexes = st.text("0123456789abcdef", min_size=64, max_size=64)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.sets(hexes, max_size=40))
def test_trees_read_back_exactly(repo, names):
    oids = repo.write_blobs([name.encode() for name in sorted(names)])
    files = {f"reviews/{n[:2]}/{n[2:]}": oid for n, oid in zip(sorted(names), oids)}
    commit = repo.commit(repo.write_tree(files), [], "t")
    assert {e.path: e.oid for e in repo.list_tree(commit)} == files
    assert repo.read_blobs(list(files.values())) == {oid: n.encode() for n, oid in zip(sorted(names), oids)}



@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(contents=st.lists(st.binary(max_size=3000), max_size=12), absent=st.lists(hexes.map(lambda h: h[:40]), max_size=3),
       data=st.data())
def test_blobs_stream_back_exactly_in_the_order_asked(repo, contents, absent, data):
    """Any bytes (newlines, headers' look-alikes, empty), ids asked twice, missing ids and a tree
    asked among them: each blob given in the order asked, the others left out; the oracle is what
    was written."""
    oids = repo.write_blobs(contents)
    tree = repo.write_tree({})
    asked = data.draw(st.permutations(oids + oids[:1] + absent + [tree]))
    written = dict(zip(oids, contents))
    expected = [(oid, written[oid]) for oid in asked if oid in written]
    assert list(repo.stream_blobs(asked)) == expected
    assert repo.read_blobs(asked) == dict(expected)


def test_leaving_a_stream_early_ends_git(repo, monkeypatch):
    from vacant.core import children

    oids = repo.write_blobs([b"x" * 100_000, b"y" * 100_000, b"z"])  # more than a pipe holds: git is still writing
    spawned = []
    real = children.spawn
    monkeypatch.setattr(children, "spawn", lambda *a, **k: spawned.append(real(*a, **k)) or spawned[-1])
    for _ in repo.stream_blobs(oids):
        break
    assert len(spawned) == 1 and spawned[0].returncode is not None  # reaped, not left running


def test_update_ref_is_a_compare_and_swap(repo):
    one = repo.commit(repo.write_tree({}), [], "one")
    two = repo.commit(repo.write_tree({}), [one], "two")
    ref = "refs/vacant/authors/" + "a" * 32
    assert repo.update_ref(ref, one, None)
    assert not repo.update_ref(ref, two, None)  # it exists now
    assert not repo.update_ref(ref, two, two)  # wrong old value
    assert repo.refs(ref) == {ref: one}
    assert repo.update_ref(ref, two, one) and repo.refs(ref) == {ref: two}


@pytest.mark.parametrize("ref", ["refs/heads/main", "HEAD", "refs/vacant/../heads/main", "refs/vacant/a..b",
                                 "refs/vacant/x.lock", "refs/vacantx/y", "refs/vacant/", "refs/vacant/a b",
                                 "refs/vacant/-x", "refs/tags/vacant"])
def test_nothing_outside_refs_vacant_is_ever_written(repo, ref):
    one = repo.commit(repo.write_tree({}), [], "one")
    with pytest.raises(GitError, match="refusing"):
        repo.update_ref(ref, one, None)
    with pytest.raises(GitError, match="refusing"):
        repo.push("origin", {ref: one})
    assert repo.refs("refs/") == {}


def test_the_starting_commit_is_read_without_git(repo, tmp_path):
    assert githead.head_commit(repo.root) is None  # unborn branch
    (repo.root / "f").write_text("x")
    git(repo.root, "add", "f")
    git(repo.root, "commit", "-qm", "c")
    head = git(repo.root, "rev-parse", "HEAD").strip()
    (repo.root / "sub").mkdir()
    assert githead.head_commit(repo.root) == githead.head_commit(repo.root / "sub") == head
    git(repo.root, "pack-refs", "--all")
    assert githead.head_commit(repo.root) == head
    git(repo.root, "worktree", "add", "-q", str(tmp_path / "wt"), "-b", "other")
    assert githead.head_commit(tmp_path / "wt") == head
    git(repo.root, "checkout", "-q", "--detach")
    assert githead.head_commit(repo.root) == head
    assert githead.head_commit(tmp_path / "nowhere") is None


rows = st.builds(ReviewRow, st.sampled_from([("p", "d", "m", "t"), ("p", "d", "m2", "t")]), st.sampled_from([0.0, 1.0]),
                 st.just(1.0), st.sampled_from(["r1", "r2"]), st.sampled_from([None, "f1"]))


@given(local=st.lists(rows, max_size=8), team=st.lists(rows, max_size=8))
def test_union_counts_what_both_hold_once(local, team):
    merged, overlap = union_rows(local, team)
    mine, theirs = Counter(local), Counter(team)
    assert Counter(merged) == mine | theirs  # Counter's | is the multiset union (max)
    assert overlap == sum((mine & theirs).values())
    assert union_rows(merged, team)[0].__len__() == len(merged)  # folding again adds nothing


def test_aggregate_matches_the_tables_own_sums(tmp_path):
    path = tmp_path / "r.sqlite"
    for n in range(7):
        reputation.record_review({"platform": "p", "model": f"m{n % 2}"}, n % 3 == 0, 1.0 + n % 2, f"run{n}", None, path)
    assert reputation.aggregate(reputation.review_rows(path)) == reputation.cell_stats(path)


def test_a_stray_state_dir_above_a_checkout_never_hijacks_it(tmp_path):
    mark_installed(tmp_path)  # an enclosing workspace vacant was installed in
    git(tmp_path, "init", "-q", "repo")
    (tmp_path / "repo" / "sub").mkdir()
    (tmp_path / "plain").mkdir()
    assert repository_root(tmp_path / "repo" / "sub") == (tmp_path / "repo").resolve()
    assert repository_root(tmp_path / "plain") == tmp_path.resolve()  # no checkout: the state dir's workspace
