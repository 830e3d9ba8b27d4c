"""Who wrote it (issue 40): a step is never graded `provable` or `lineage_*` for a change it did not
make. A file tool's input says what it wrote (vacant/attribute/toolwrites.py): a person's save to
the same file while an Edit or a Write runs is out of band during the step (`gap`, actor nobody);
the tool's own line stays `provable`. Real recorder, real Stop pipeline."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from step_histories import Session

from vacant.attribute.stop import Pipeline
from vacant.core.locations import mark_installed
from vacant.policy.contract.contract import load_contract

pytestmark = pytest.mark.usefixtures("isolated_home")

GOOD = "RATE = 0.08\nNAME = 'a'\nLIMIT = 10\n"
GUARD = "grep -qx 'RATE = 0.08' config.py && grep -qx 'LIMIT = 10' config.py"
# a located check: each line holding BAD is a finding at its line
LINT = "! grep -Hn BAD config.py"


def workspace(base: Path, command: str = GUARD, kind: str = "guard") -> Path:
    root = base / "ws"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    mark_installed(root)
    (root / "config.py").write_text(GOOD)
    (root / "vacant.toml").write_text(f'[[{kind}]]\nname = "rate"\ncommand = "{command}"\n')
    return root


def save(root: Path, old: str, new: str, by_rename: bool = False) -> None:
    """The person's editor saves config.py with `old` replaced (as an editor does: in place, or a
    temporary file renamed over it)."""
    text = (root / "config.py").read_text().replace(old, new)
    if not by_rename:
        (root / "config.py").write_text(text)
        return
    temporary = root / ".config.py.swp~"
    temporary.write_text(text)
    os.replace(temporary, root / "config.py")


def graded(root: Path, session: Session) -> list[dict]:
    return Pipeline(root, session.run_dir, load_contract(root), budget_s=600).run()["findings"]


def only(findings: list[dict]) -> dict:
    assert len(findings) == 1, findings
    return findings[0]


# -- file tools: their input says what they wrote ----------------------------------------------


def test_an_edit_owns_what_its_input_wrote_and_not_the_persons_save_to_the_same_file(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    session = Session(root)
    session.edit("config.py", "NAME = 'a'", "NAME = 'b'", during=lambda: save(root, "LIMIT = 10", "LIMIT = 99"))
    finding = only(graded(root, session))
    assert (finding["level"], finding["actor"], finding["step"]) == ("gap", None, 1), finding
    assert finding["evidence"]["authorship"]["input"]["files"] == {"config.py": "split"}


def test_an_edit_that_breaks_it_stays_provable_with_the_persons_save_beside_it(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    session = Session(root)
    session.edit("config.py", "RATE = 0.08", "RATE = 0.09", during=lambda: save(root, "NAME = 'a'", "NAME = 'c'"))
    finding = only(graded(root, session))
    assert (finding["level"], finding["step"]) == ("provable", 1), finding


def test_a_persons_save_over_what_a_write_just_wrote_is_the_persons(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    session = Session(root)
    session.write("config.py", GOOD.replace("'a'", "'w'"), during=lambda: save(root, "RATE = 0.08", "RATE = 0.07", True))
    finding = only(graded(root, session))
    assert (finding["level"], finding["actor"]) == ("gap", None), finding


def test_a_write_whose_input_is_the_whole_change_stays_provable(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    session = Session(root)
    session.write("config.py", GOOD.replace("0.08", "0.09"))
    finding = only(graded(root, session))
    assert finding["level"] == "provable"
    assert finding["evidence"]["authorship"]["why"] == "its input accounts for the whole change"
