"""The pieces of "who wrote it" on generated inputs: the comparison of a recorded file with a step's
own write (vacant/attribute/ownpart.py), a file tool's write rebuilt from its input
(vacant/attribute/toolwrites.py: Edit, MultiEdit, Write, apply_patch), and which command lines
read a terminal (vacant/attribute/rerun.py)."""

from __future__ import annotations

import difflib
import shlex
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vacant.attribute.ownpart import CLASH, FOREIGN, SAME, SPLIT, compare, has_line
from vacant.attribute.rerun import interactive
from vacant.attribute.toolwrites import patch_in_command, written

ROOT = Path("/ws")
lines = st.lists(st.sampled_from([f"line {n}" for n in range(6)] + ["", "x = 1"]), min_size=1, max_size=12)


def text(rows: list[str]) -> bytes:
    return "".join(row + "\n" for row in rows).encode()


@st.composite
def own_and_foreign(draw):
    """A file, the lines the step rewrites (its own write), and lines someone else inserts at
    other places; by construction the recorded file is own write plus foreign lines."""
    base = draw(lines)
    rewritten = draw(st.sets(st.integers(0, len(base) - 1), min_size=1))
    own = [f"own {n}" if n in rewritten else row for n, row in enumerate(base)]
    inserts = draw(st.dictionaries(st.integers(0, len(base)), st.just("person"), max_size=3))
    recorded: list[str] = []
    for n, row in enumerate(own):
        if n in inserts:
            recorded.append(f"person {n}")
        recorded.append(row)
    if len(own) in inserts:
        recorded.append("person end")
    return base, own, recorded, bool(inserts)


@settings(max_examples=100, deadline=None)
@given(case=own_and_foreign())
def test_someone_elses_lines_beside_the_own_write_are_split_never_a_clash(case):
    base, own, recorded, foreign = case
    assert compare(text(base), text(recorded), text(own)) == (SPLIT if foreign else SAME)


@settings(max_examples=100, deadline=None)
@given(case=own_and_foreign(), other=st.text(alphabet="abc", min_size=1, max_size=5))
def test_the_same_line_written_otherwise_is_a_clash(case, other):
    base, own, recorded, _foreign = case
    n = next(i for i, row in enumerate(recorded) if row.startswith("own "))
    recorded = [*recorded[:n], f"varies {other}", *recorded[n + 1:]]
    assert compare(text(base), text(recorded), text(own)) == CLASH


def test_files_that_the_own_write_did_not_touch_are_foreign_and_line_endings_do_not_count():
    assert compare(b"a\n", b"b\n", b"a\n") == FOREIGN
    assert compare(None, b"b\n", None) == FOREIGN
    assert compare(b"a\r\n", b"b\r\n", b"b\n") == SAME
    assert compare(b"\xff\x00", b"\xff\x01", b"\xff\x02") == CLASH  # not text: whole files
    assert has_line(b"a = 1\n  RATE = 2  \n", "RATE = 2") and not has_line(b"RATE = 22\n", "RATE = 2")


# -- file tools ---------------------------------------------------------------------------------


def before_of(files: dict[str, bytes]):
    return lambda rel: files.get(rel)


def test_an_edit_a_multiedit_and_a_write_rebuilt_from_their_input():
    old = {"a.py": b"x = 1\ny = 1\n"}
    edit = {"path": "/ws/a.py", "edits": [{"old_string": "1", "new_string": "2", "replace_all": False}]}
    assert written("edit", edit, ROOT, "/ws", before_of(old)).files == {"a.py": b"x = 2\ny = 1\n"}
    many = {"path": "a.py", "edits": [{"old_string": "1", "new_string": "3", "replace_all": True},
                                      {"old_string": "y", "new_string": "z"}]}
    assert written("edit", many, ROOT, "/ws", before_of(old)).files == {"a.py": b"x = 3\nz = 3\n"}
    create = {"path": "/ws/sub/n.py", "edits": [{"old_string": "", "new_string": "new\n"}]}
    assert written("edit", create, ROOT, "/ws", before_of({})).files == {"sub/n.py": b"new\n"}
    assert written("write", {"path": "b.txt", "content": "hi"}, ROOT, "/ws/sub", before_of({})).files == {
        "sub/b.txt": b"hi"}


def test_what_cannot_be_rebuilt_says_why():
    missing = {"path": "/ws/a.py", "edits": [{"old_string": "absent", "new_string": "2"}]}
    assert "not in the file" in written("edit", missing, ROOT, "/ws", before_of({"a.py": b"x\n"})).why
    secret = {"path": "/ws/a.py", "content": "KEY = '[REDACTED:aws-key]'"}
    assert "redacted" in written("write", secret, ROOT, "/ws", before_of({})).why
    assert "outside the workspace" in written("write", {"path": "/etc/x", "content": ""}, ROOT, "/ws",
                                              before_of({})).why
    assert "cannot rebuild" in written("notebook", {"path": "/ws/n.ipynb"}, ROOT, "/ws", before_of({})).why


def as_patch(path: str, old: list[str], new: list[str]) -> str:
    """An apply_patch envelope (Codex's format) for changing `old` into `new`, from a unified diff;
    a hunk that reaches the end of the file ends with `*** End of File`."""
    body = []
    for row in list(difflib.unified_diff(old, new, lineterm="", n=2))[2:]:
        if row.startswith("@@"):
            start, count = (int(n) for n in (row.split()[1][1:] + ",1").split(",")[:2])
            ends = start + count - (1 if count else 0) >= len(old)
            body.append("@@")
            body.append("\0" if ends else "")
        else:
            body.append(row)
    text = "\n".join(body)
    hunks = text.split("@@\n")
    hunks = [hunk[2:] + "\n*** End of File" if hunk.startswith("\0") else hunk.lstrip("\n") for hunk in hunks]
    return "*** Begin Patch\n*** Update File: " + path + "\n" + "@@\n".join(hunks) + "\n*** End Patch\n"


distinct = st.lists(st.integers(0, 30).map(lambda n: f"row {n}"), unique=True, max_size=12)


@settings(max_examples=100, deadline=None)
@given(old=distinct, new=distinct)
def test_an_apply_patch_update_rebuilds_the_new_file(old, new):
    """Lines distinct, so each hunk's context is found where the diff took it (a patch whose
    context occurs twice is applied at its first place, as apply_patch itself does)."""
    files = written("patch", {"patch": as_patch("src/m.py", old, new)}, ROOT, "/ws", before_of({"src/m.py": text(old)}))
    assert files.why is None and files.files == {"src/m.py": text(new)}


def test_a_hunk_at_the_end_of_the_file_is_matched_there():
    patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n x\n+end\n*** End of File\n*** End Patch\n"
    got = written("patch", {"patch": patch}, ROOT, "/ws", before_of({"a.txt": b"x\ny\nx\n"}))
    assert got.files == {"a.txt": b"x\ny\nx\nend\n"}


def test_an_apply_patch_adds_deletes_and_moves_files():
    patch = ("*** Begin Patch\n*** Add File: new.txt\n+one\n+two\n*** Delete File: gone.txt\n"
             "*** Update File: a.txt\n*** Move to: b.txt\n@@\n-x\n+y\n*** End Patch\n")
    got = written("patch", {"patch": patch}, ROOT, "/ws", before_of({"a.txt": b"x\n", "gone.txt": b"g\n"}))
    assert got.files == {"new.txt": b"one\ntwo\n", "gone.txt": None, "a.txt": None, "b.txt": b"y\n"}


def test_apply_patch_run_through_the_shell_is_a_patch():
    patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-it's\n+it is\n*** End Patch"
    assert patch_in_command(shlex.join(["apply_patch", patch])) == patch
    assert patch_in_command(f"apply_patch <<'EOF'\n{patch}\nEOF") == patch
    assert patch_in_command("sed -i s/a/b/ a.txt") is None and patch_in_command("apply_patch") is None
    assert written("patch", {"patch": patch}, ROOT, "/ws", before_of({"a.txt": b"it's\n"})).files == {"a.txt": b"it is\n"}


# -- commands that read a terminal ----------------------------------------------------------------


@pytest.mark.parametrize("command, program", [
    ("vim config.py", "vim"), ("cd src && less out.log", "less"), ("FOO=1 python3", "python3"),
    ("git rebase -i HEAD~2", "git rebase -i"), ("echo hi | sudo tee /etc/x", "sudo"), ("node", "node"),
    ("sed -i s/a/b/ f.txt", None), ("python3 -c 'print(1)'", None), ("python3 gen.py > out.txt", None),
    ("bash -c 'echo hi'", None), ("npm test 2>&1 | tail -5", None), ("echo 'unbalanced", None),
])
def test_a_command_that_reads_a_terminal_is_named(command, program):
    assert interactive(command) == program
