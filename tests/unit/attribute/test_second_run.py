"""The re-check that catches a flaky test may be answered by another run on the same inputs
(vacant.attribute.samereads.SameReads.other), never by the run that gave the first answer, and
never by one that read a file outside the recorded state (where a flaky test keeps what it
remembers between runs). Generated states and reads; the oracle is the rule on plain sets."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from vacant.attribute.samereads import SameReads
from vacant.policy.contract.checks import CheckResult
from vacant.policy.contract.runners import Reads

PATHS = ("a.py", "b.txt", "tests/test_a.py", "pkg/m.py", "pkg/__pycache__/m.cpython-311.pyc", "left/over.txt")
PYC, SOURCE = "pkg/__pycache__/m.cpython-311.pyc", "pkg/m.py"  # a compiled module read stands for its source
SELECT = ("pytest::tests.test_a::test_one",)


def manifest(present: frozenset[str], version: int) -> dict:
    return {path: ("f", 1, 0, f"{path}@{version}", 0o644) for path in present}


def seen(reads: frozenset[str]) -> set[str]:
    return set(reads) | ({SOURCE} if PYC in reads else set())


def outside(reads: frozenset[str], present: frozenset[str]) -> bool:
    return any(path not in present and "__pycache__/" not in path for path in seen(reads))


def result(tag: str, files: frozenset[str]) -> CheckResult:
    return CheckResult(tag, False, 1, "", 0.1, False, False, tests={SELECT[0]: "failed"},
                       reads=Reads(files, frozenset(), False))


@given(present=st.frozensets(st.sampled_from(PATHS)), read_first=st.frozensets(st.sampled_from(PATHS)),
       read_second=st.frozensets(st.sampled_from(PATHS)), same_version=st.booleans())
def test_a_second_answer_is_another_run_on_recorded_inputs(present, read_first, read_second, same_version):
    state = manifest(present, 1)
    reads = SameReads()
    first, second = result("first", read_first), result("second", read_second)
    reads.note("suite", SELECT, state, first)
    reads.note("suite", SELECT, state if same_version else manifest(present, 2), second)
    asked = reads.other("suite", SELECT, state, first)
    changed = not same_version and bool(seen(read_second) & present)
    assert asked is (None if outside(read_second, present) or changed else second)
    assert reads.other("suite", SELECT, state, second) is (None if outside(read_first, present) else first)
