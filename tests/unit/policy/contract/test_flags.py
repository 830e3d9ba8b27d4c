"""Human flags: every refusal, the signature, and the states standing/resolved/withdrawn/tampered."""

from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path

import pytest

from vacant.core.keys import create_user_key

from vacant.core.locations import state_dir

from vacant.core.findings import finding_id
from vacant.policy.contract.flags import (
    audit,
    FlagError,
    add_flag,
    flags_dir,
    list_flags,
    locate,
    standing_flags,
    withdraw,
)

REPORT = "# Report\n\nTotal sales: 1250\nGrowth: 12%\n\nEnd.\n"


pytestmark = pytest.mark.usefixtures("isolated_home")


@pytest.fixture
def ws_files() -> dict:
    return {"report.md": REPORT}


def states(ws: Path) -> dict[str, str]:
    return {flag.id: state for flag, state in list_flags(ws)}


# -- filing -------------------------------------------------------------------------------------


def test_a_flag_records_hash_range_exact_text_time_and_note(ws):
    flag = add_flag(ws, "report.md:3-4", "  the total is wrong  ")
    stored = json.loads((flags_dir(ws) / f"{flag.id}.json").read_text())
    assert stored["sha256"] == hashlib.sha256((ws / "report.md").read_bytes()).hexdigest()
    assert (stored["path"], stored["start"], stored["end"]) == ("report.md", 3, 4)
    assert stored["text"] == "Total sales: 1250\nGrowth: 12%"
    assert stored["note"] == "the total is wrong"
    assert stored["at"][:2] == "20" and len(stored["signature"]) == 64
    assert state_dir(ws) not in ws.parents  # vacant's state is never inside the workspace

def test_single_line_whole_file_and_cwd_relative_specs(ws):
    (ws / "src").mkdir()
    (ws / "src" / "a.py").write_text("x = 1\ny = 2\n")
    one = add_flag(ws, "report.md:3", "wrong")
    assert (one.start, one.end, one.text) == (3, 3, "Total sales: 1250")
    whole = add_flag(ws, "src/a.py", "all of it")
    assert (whole.start, whole.end, whole.text) == (1, 2, "x = 1\ny = 2")
    relative = add_flag(ws, "a.py:2", "from a subdirectory", cwd=ws / "src")
    assert (relative.path, relative.text) == ("src/a.py", "y = 2")
    absolute = add_flag(ws, f"{ws}/report.md:1", "absolute path")
    assert absolute.path == "report.md"


def test_a_flag_on_a_binary_file_is_refused(ws):
    (ws / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(FlagError, match="binary file"):
        add_flag(ws, "image.png:1", "bad image")


def test_a_flag_on_a_non_utf8_file_is_refused(ws):
    (ws / "latin1.txt").write_bytes("café au lait\n".encode("latin-1"))
    with pytest.raises(FlagError, match="not UTF-8 text.*offset 3"):
        add_flag(ws, "latin1.txt:1", "encoding")


@pytest.mark.parametrize("spec, expected", [
    ("report.md:7", "line 7 is past the end of report.md (it has 6 lines)"),
    ("report.md:5-9", "line 9 is past the end"),
    ("report.md:0", "start at 1"),
    ("report.md:4-3", "runs backwards"),
])
def test_lines_must_exist(ws, spec, expected):
    with pytest.raises(FlagError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        add_flag(ws, spec, "wrong")


def test_a_flag_path_through_a_symlink_out_of_the_workspace_is_refused(ws, tmp_path):
    secret = tmp_path / "outside.txt"
    secret.write_text("outside\n")
    (ws / "link.txt").symlink_to(secret)
    (ws / "linkdir").symlink_to(tmp_path)
    with pytest.raises(FlagError, match="symlink that leads outside"):
        add_flag(ws, "link.txt:1", "escape")
    with pytest.raises(FlagError, match="symlink that leads outside"):
        add_flag(ws, "linkdir/outside.txt:1", "escape through a directory")
    assert not flags_dir(ws).exists() or list(flags_dir(ws).iterdir()) == []


def test_a_symlink_inside_the_workspace_flags_its_target(ws):
    (ws / "alias.md").symlink_to(ws / "report.md")
    assert add_flag(ws, "alias.md:3", "via alias").path == "report.md"


@pytest.mark.parametrize("spec, expected", [
    ("../outside.txt:1", "contains '..'"),
    ("sub/../report.md:1", "contains '..'"),
    ("/etc/hostname:1", "outside the workspace"),
    ("missing.md:1", "no such file"),
    (".", "not a regular file"),
])
def test_paths_must_name_a_file_inside_the_workspace(ws, tmp_path, spec, expected):
    (tmp_path / "outside.txt").write_text("x\n")
    with pytest.raises(FlagError, match=expected):
        add_flag(ws, spec, "wrong")


def test_empty_note_empty_file_and_vacant_state_are_refused(ws):
    with pytest.raises(FlagError, match="say what is wrong"):
        add_flag(ws, "report.md:1", "   ")
    (ws / "empty.txt").write_text("")
    with pytest.raises(FlagError, match="empty"):
        add_flag(ws, "empty.txt", "nothing here")
    add_flag(ws, "report.md:1", "creates the state dir")
    (state_dir(ws) / "note.txt").write_text("x\n")
    with pytest.raises(FlagError, match="outside the workspace"):
        add_flag(ws, f"{state_dir(ws)}/note.txt:1", "nope")
    (ws / ".vacant").mkdir()  # a legacy state directory is vacant's own too
    (ws / ".vacant" / "note.txt").write_text("x\n")
    with pytest.raises(FlagError, match="vacant's or git's own state"):
        add_flag(ws, ".vacant/note.txt:1", "nope")


def test_the_key_must_not_live_inside_the_workspace(ws, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(ws / "config"))
    with pytest.raises(FlagError, match="inside the workspace"):
        add_flag(ws, "report.md:1", "wrong")


# -- states -------------------------------------------------------------------------------------


def test_a_standing_flag_is_a_finding_and_is_found_again_when_lines_move(ws):
    flag = add_flag(ws, "report.md:3-4", "the total is wrong")
    [(same, finding)] = standing_flags(ws)
    assert same.id == flag.id
    assert (finding.source, finding.name, finding.path, finding.line) == ("flag", flag.id, "report.md", 3)
    assert finding.text == "Total sales: 1250" and finding.message == "the total is wrong"
    assert finding.id == finding_id("flag:" + flag.id, "report.md", "Total sales: 1250\nGrowth: 12%")
    (ws / "report.md").write_text("Preface.\n\n\n" + REPORT)
    [(_, moved)] = standing_flags(ws)
    assert moved.line == 6 and moved.id == finding.id
    assert states(ws) == {flag.id: "standing"}


def test_the_nearest_copy_of_repeated_text_is_the_one_found(ws):
    (ws / "r.txt").write_text("x\nbad\ny\nbad\nz\n")
    flag = add_flag(ws, "r.txt:4", "second bad")
    assert locate(flag, ws).line == 4
    (ws / "r.txt").write_text("x\nbad\ny\nz\nbad\n")
    assert locate(flag, ws).line == 5


def test_a_flag_is_resolved_when_its_text_is_gone(ws):
    flag = add_flag(ws, "report.md:3-4", "wrong")
    (ws / "report.md").write_text(REPORT.replace("Growth: 12%", "Growth: 15%"))  # half the block changed
    assert standing_flags(ws) == []
    assert states(ws) == {flag.id: "resolved"}
    (ws / "report.md").write_text(REPORT)  # broken again: standing again, same finding id
    assert states(ws) == {flag.id: "standing"}
    (ws / "report.md").unlink()
    assert states(ws) == {flag.id: "resolved"}


def test_withdrawn_flags_stop_being_findings(ws):
    flag = add_flag(ws, "report.md:3", "wrong")
    other = add_flag(ws, "report.md:4", "also wrong")
    withdraw(ws, flag.id)
    assert [f.id for f, _ in standing_flags(ws)] == [other.id]
    assert states(ws) == {flag.id: "withdrawn", other.id: "standing"}
    with pytest.raises(FlagError, match="already withdrawn"):
        withdraw(ws, flag.id)
    with pytest.raises(FlagError, match="no flag"):
        withdraw(ws, "f-00000000")
    with pytest.raises(FlagError, match="no flag"):
        withdraw(ws, "../../etc/passwd")


def tamper(ws: Path, flag_id: str, **changes) -> None:
    path = flags_dir(ws) / f"{flag_id}.json"
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("changes", [
    {"note": "harmless, says the agent"},
    {"withdrawn": "2030-01-01T00:00:00+00:00"},
    {"start": 4, "end": 4, "text": "Growth: 12%"},
    {"signature": ""},
    {"extra": "field"},
])
def test_a_tampered_flag_still_stands_from_the_signed_ledger(ws, changes):
    flag = add_flag(ws, "report.md:3", "wrong")
    tamper(ws, flag.id, **changes)
    with pytest.warns(UserWarning, match=flag.id):
        [(standing, _finding)] = standing_flags(ws)
    assert standing.to_json() == flag.to_json()  # the person's own words, not the edited file's
    assert states(ws) == {flag.id: "tampered"}
    [problem] = audit(ws)[1]
    assert problem["kind"] == "flag-tampered" and problem["flag"] == flag.id
    withdraw(ws, flag.id)  # the person can still withdraw it: the file is rewritten, signed
    assert audit(ws)[1] == [] and states(ws) == {flag.id: "withdrawn"}


def test_unparseable_renamed_and_foreign_flags_are_tampered(ws, tmp_path, monkeypatch):
    flag = add_flag(ws, "report.md:3", "wrong")
    (flags_dir(ws) / "f-deadbeef.json").write_text("{not json")
    (flags_dir(ws) / f"{flag.id}.json").rename(flags_dir(ws) / "f-0badf00d.json")
    assert set(states(ws).values()) == {"tampered"}
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "someone-else"))
    create_user_key()  # someone else's own key
    forged = add_flag(ws, "report.md:4", "written with another key")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    assert states(ws)[forged.id] == "tampered"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert [f.id for f, _ in standing_flags(ws)] == [flag.id]  # the renamed one stands from the ledger
    kinds = sorted(problem["kind"] for problem in audit(ws)[1])
    assert kinds == ["flag-tampered", "flag-unsigned", "flag-unsigned", "flag-unsigned", "ledger-altered"]
    assert len(caught) == 5


def test_flags_of_the_live_workspace_evaluated_on_a_scratch_copy(ws, tmp_path):
    flag = add_flag(ws, "report.md:3", "wrong")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "report.md").write_text("Total sales: 1250\n")
    [(_, finding)] = standing_flags(scratch, state_root=ws)
    assert finding.line == 1 and finding.id == finding_id("flag:" + flag.id, "report.md", "Total sales: 1250")
    (scratch / "report.md").write_text("Total sales: 1300\n")
    assert standing_flags(scratch, state_root=ws) == []
