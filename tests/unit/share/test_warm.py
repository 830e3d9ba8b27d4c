"""The warm `vacant reputation` (vacant/share/warm.py): whatever happens to what the text comes from
(local reviews, the team's refs, trust at HEAD, the branch, the working directory, packed refs), a
warm answer is the text a fresh computation gives, and with nothing changed there is one; an input
changed within the racy window, a damaged, foreign or other inputs' warm file is never answered
from. Real git repositories, real signatures, the real local table."""

from __future__ import annotations

import hmac
import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
# `isolated` (autouse): each test its own HOME, XDG_CONFIG_HOME (the person's key) and data directory. Without it
# these tests read, and the `other key` case replaced, the key of the user running the suite, and a test on
# the other xdist worker saw its warm text sealed under a key that had just been replaced
from test_teamcache import PEOPLE, STRANGER, forged_commit, isolated, make_repo, publish, review, write_keys  # noqa: F401
from teamkit import git

from vacant.commands import reputation as command
from vacant.core import keys, locations
from vacant.share import warm
from vacant.store import reputation

LATER_NS = 10 * 10**9  # tests that are not about the racy rule look from 10 s on


@pytest.fixture(autouse=True)
def key_made_long_ago(isolated: None) -> None:  # noqa: F811 - after the imported `isolated`
    """The person's key as `vacant init` left it, an hour ago (not an input changed just now)."""
    an_hour_ago = time.time_ns() - 3600 * 10**9
    os.utime(keys.key_path(), ns=(an_hour_ago, an_hour_ago))


@pytest.fixture
def settled(monkeypatch):
    """The clock 10 s ahead: every input is past the racy window."""
    monkeypatch.setattr(warm, "time_ns", lambda: time.time_ns() + LATER_NS)


def computed(variant: str) -> str:
    return command._computed_text(variant.startswith("json"), variant.endswith("-local"))


def printed(variant: str) -> str:
    """What the command prints, which seals it."""
    return command.reputation_text(variant.startswith("json"), variant.endswith("-local"))


def warm_answer(variant: str) -> str | None:
    return warm.answer(variant, warm.time_ns())


# -- the stand-ins agree with what they stand for ------------------------------------------------

@settings(max_examples=60)
@given(key=st.binary(max_size=200), message=st.binary(max_size=300))
def test_hmac_is_the_standard_one(key: bytes, message: bytes) -> None:
    assert warm.hmac_sha256(key, message) == hmac.new(key, message, hashlib.sha256).hexdigest()


names = st.text(st.characters(codec="utf-8", exclude_characters="\0/"), min_size=1, max_size=12)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(home=names, data=st.none() | names, xdg_data=st.none() | names, xdg_config=st.none() | names, sub=names)
def test_the_paths_are_the_ones_vacant_uses(tmp_path, monkeypatch, home, data, xdg_data, xdg_config, sub) -> None:
    for name, value in (("HOME", home), ("VACANT_HOME", data), ("XDG_DATA_HOME", xdg_data),
                        ("XDG_CONFIG_HOME", xdg_config)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, str(tmp_path / value))
    assert warm.data_dir() == str(locations.user_data_dir())
    assert warm.key_file() == str(keys.key_path())
    assert warm.registry_file(str(tmp_path / sub)) == str(locations.registry_path(tmp_path / sub))


def test_the_variants_are_the_quick_answers_arguments() -> None:
    assert [warm.variant_of(a) for a in (["reputation"], ["reputation", "--local", "--json"], ["reputation", "--json"],
                                         ["reputation", "--json", "--json"], ["reputation", "--bogus"], ["route"])] \
        == ["text", "json-local", "json", None, None, None]


# -- generated: a warm answer is what a fresh computation gives -----------------------------------

OPERATIONS = st.sampled_from(["local", "publish", "forge", "stranger", "trust", "pack", "delete", "branch", "touch",
                              "subdir", "nothing"])


class World:
    """A repository, its team and the local table, changed one operation at a time."""

    def __init__(self, base: Path) -> None:
        self.store = make_repo(base, PEOPLE[:2])
        self.root = self.store.root
        self.count = 0
        (self.root / "sub").mkdir()

    def apply(self, operation: str, who: int) -> None:
        self.count += 1
        n = self.count
        if operation == "local":
            reputation.record_review({"platform": "claude-code", "agent_definition": "main", "model": f"model-{who}",
                                      "task_family": "family"}, float(n % 2), run=f"local-{n}")
        elif operation == "publish":
            publish(self.store, PEOPLE[who], [("review", review(n, who, float(n % 2), run=f"run-{n}"))])
        elif operation == "forge":
            forged_commit(self.store, PEOPLE[who], b"not a record")
        elif operation == "stranger":
            publish(self.store, STRANGER, [("review", review(n, who))])
        elif operation == "trust":
            write_keys(self.root, PEOPLE[: 1 + (n % 3)])
        elif operation == "pack":
            git(self.root, "pack-refs", "--all")
        elif operation == "delete":
            for ref in sorted(self.store.refs("refs/vacant/authors/"))[:1]:
                git(self.root, "update-ref", "-d", ref)
        elif operation == "branch":
            current = git(self.root, "branch", "--show-current").strip()
            git(self.root, "checkout", "-q", "-B" if current == "main" else "-f", "other" if current == "main" else "main")
        elif operation == "touch":
            table = locations.user_data_dir() / "reputation.sqlite"
            if table.exists():
                os.utime(table, ns=(time.time_ns(), time.time_ns()))
        elif operation == "subdir":
            os.chdir(self.root / "sub" if Path.cwd() == self.root else self.root)


@pytest.mark.slow
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.tuples(OPERATIONS, st.integers(0, 1)), min_size=1, max_size=10),
       variant=st.sampled_from(["json", "text", "json-local", "text-local"]))
def test_a_warm_answer_is_always_a_fresh_computations(tmp_path_factory, monkeypatch, settled, steps, variant) -> None:
    world = World(tmp_path_factory.mktemp("warm"))
    monkeypatch.chdir(world.root)
    assert warm_answer(variant) is None  # nothing kept yet
    printed(variant)  # the first reading creates the local table: what it sealed is stale at once
    for operation, who in steps:
        before = printed(variant)
        assert warm_answer(variant) == before  # nothing changed since: answered warm
        world.apply(operation, who)
        now = computed(variant)
        kept = warm_answer(variant)
        assert kept is None or kept == now, f"after {operation}: the warm text is stale"
        if now != before:
            assert kept is None


# -- the racy rule, and files that are not ours --------------------------------------------------

def one_review() -> None:
    reputation.record_review({"platform": "p", "agent_definition": "a", "model": "m", "task_family": "f"}, 1.0)


def test_an_input_changed_within_the_racy_window_is_never_answered_from(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    one_review()
    assert warm.described_now("text-local") is None  # just written: it could change again unseen
    printed("text-local")
    assert warm_answer("text-local") is None
    time.sleep(warm.RACY_NS / 1e9 + 0.05)
    text = printed("text-local")
    assert warm_answer("text-local") == text
    one_review()
    assert warm_answer("text-local") is None  # changed (and racy again)


def test_a_whole_second_file_system_waits_longer(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    one_review()
    table = locations.user_data_dir() / "reputation.sqlite"
    whole = (time.time_ns() // 10**9 - 1) * 10**9  # one second ago, on a whole second
    os.utime(table, ns=(whole, whole))
    assert warm.described_now("text-local") is None
    later = (time.time_ns() // 10**9 - 3) * 10**9
    os.utime(table, ns=(later, later))
    assert warm.described_now("text-local") is not None


@pytest.mark.parametrize("damage", ["edited text", "edited inputs", "truncated", "garbage", "empty", "other key",
                                    "other directory"])
def test_a_damaged_or_foreign_warm_file_is_not_answered_from(tmp_path, monkeypatch, settled, damage) -> None:
    store = make_repo(tmp_path, PEOPLE[:1])
    publish(store, PEOPLE[0], [("review", review(1))])
    monkeypatch.chdir(store.root)
    printed("json")  # the first reading creates the local table: what it sealed is stale at once
    text = printed("json")
    path = Path(warm.warm_path("json"))
    assert warm_answer("json") == text
    data = path.read_bytes()
    if damage == "edited text":
        path.write_bytes(data.replace(b'"team": 1', b'"team": 9'))
    elif damage == "edited inputs":
        path.write_bytes(data.replace(str(store.root).encode(), str(tmp_path).encode(), 1))
    elif damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        path.write_bytes(os.urandom(len(data)))
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "other key":
        keys.key_path().unlink()
        keys.create_user_key()
    elif damage == "other directory":
        (store.root / "sub").mkdir()
        monkeypatch.chdir(store.root / "sub")
        os.makedirs(os.path.dirname(warm.warm_path("json")), exist_ok=True)
        Path(warm.warm_path("json")).write_bytes(data)  # another directory's file, copied over
    assert warm_answer("json") is None
    assert printed("json") == computed("json")


def test_a_linked_worktree_is_never_answered_warm(tmp_path, monkeypatch, settled) -> None:
    store = make_repo(tmp_path, PEOPLE[:1])
    git(store.root, "worktree", "add", "-q", str(tmp_path / "linked"))
    monkeypatch.chdir(tmp_path / "linked")
    printed("text")
    assert warm_answer("text") is None


def test_the_command_answers_warm_with_the_same_bytes_and_imports_almost_nothing(tmp_path) -> None:
    store = make_repo(tmp_path, PEOPLE[:1])
    publish(store, PEOPLE[0], [("review", review(n, n % 3, float(n % 2))) for n in range(5)])
    vacant = [str(Path(sys.executable).parent / "vacant"), "reputation", "--json"]
    subprocess.run(vacant, cwd=store.root, capture_output=True, timeout=120, check=True)  # creates the local table
    time.sleep(warm.RACY_NS / 1e9 + 0.05)
    first = subprocess.run(vacant, cwd=store.root, capture_output=True, text=True, timeout=120)
    probe = ("import runpy, sys; sys.argv = ['vacant', 'reputation', '--json']\n"
             "try:\n    runpy.run_module('vacant', run_name='__main__')\nexcept SystemExit:\n    pass\n"
             "print(sorted(m for m in sys.modules if m.startswith('vacant') or m in ('json', 'sqlite3', 'hashlib',"
             " 'subprocess', 'pathlib', 'typer')), file=sys.stderr)")
    second = subprocess.run([sys.executable, "-c", probe], cwd=store.root, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0 and second.stdout == first.stdout and '"team": 5' in first.stdout
    assert second.stderr.strip() == str(sorted(["vacant", "vacant.core", "vacant.core.sha",
                                                "vacant.share", "vacant.share.warm"]))
