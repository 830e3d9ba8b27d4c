"""The closed list of attribution levels (and read_coverage states): one source, generated docs.

`python -m vacant.gendocs --write` regenerates docs/LEVELS.md.
"""

from __future__ import annotations

from vacant.core.docgen import GeneratedDoc

PROVABLE = "provable"
LINEAGE_EXACT = "lineage_exact"
LINEAGE_INTERNAL = "lineage_internal"
HEURISTIC = "heuristic"
GAP = "gap"
FLAKY = "flaky"
INCOMPLETE = "incomplete"
ENV = "env"
NOT_REPLAYED = "not_replayed"
RECORD = "record"
CHANGED_TEST = "changed_test"

LEVELS: dict[str, tuple[str, str]] = {
    PROVABLE: (
        "Re-run on reconstructed states, the finding flips from absent to present exactly at step k, and the "
        "wrong value is in no pinned input and no observed read.",
        "record_review(cell of step k, 0, weight=1.0); nothing else.",
    ),
    LINEAGE_EXACT: (
        "The flip holds, but the wrong value appears verbatim in a read whose origin is outside the run "
        "(a file the run did not write, a URL, the prompt).",
        "The actor is untouched; one count against the source.",
    ),
    LINEAGE_INTERNAL: (
        "The wrong value appears in a read the run itself produced (a file written by step j, a sub-agent's "
        "reply, an earlier command's output): attribution moves to step j and is graded again there.",
        "Whatever the grade at step j says (this level names the hop).",
    ),
    HEURISTIC: (
        "No flip that singles out one step: present at baseline (nobody's doing: no step, no actor), an "
        "unreconstructible file, a change made while several writers were open (a pointer at most), a masked "
        "flip (the flip step's change only let an earlier change show: the state before it never ran the check "
        "or the test cleanly, and the change alone does not cause it; the evidence names `broken_by`, the change "
        "whose undoing clears it, and `unmasked_by`), or a flip the final state does not need (still present "
        "there with the flip step's change undone). Presence that is not monotone (broken, repaired, broken "
        "again) is graded at the last flip, the one the final state carries, after every later change that could "
        "have repaired it was re-checked.",
        "Report only.",
    ),
    FLAKY: (
        "The check (or the test) gave different answers on the same state when re-run: the flip is not "
        "reproducible.",
        "Reported, never attributed (no step, no actor) and never blocking.",
    ),
    GAP: (
        "The change came from no recorded step (an out-of-band change set, a platform that did not report).",
        "Nobody is touched; one count under integration coverage for that platform.",
    ),
    INCOMPLETE: (
        "A check without a location that failed on every state evaluated (the evidence lists them): the "
        "work was simply not done.",
        "Report only; nobody's fault.",
    ),
    ENV: (
        "The check's tool is missing (exit 126/127 not-found): editing code cannot fix it.",
        "Report only; never attributed.",
    ),
    NOT_REPLAYED: (
        "The Stop pipeline's time budget ran out before this finding was replayed.",
        "Report only; never silently dropped.",
    ),
    RECORD: (
        "vacant's own record was altered: a flag the person filed was removed or edited, a ledger was cut, "
        "the step log chain broke, hooks vanished mid-run. Not the agent's to fix (it cannot sign); the person looks.",
        "The run is not green (exit code FAILED); the person is told; nobody's reputation is touched.",
    ),
    CHANGED_TEST: (
        "A guard's test the run changed (the test, a fixture or conftest, the runner's configuration, the guard's "
        "command) fails as the person set it (its baseline version, on the final code) but passes as the run "
        "left it: it may have been changed so that it passes. Changing a test can be the task, so the person "
        "decides; the evidence names the step that changed it and the diff.",
        "A question for the person: the agent is told the test waits on the person and it does not count as "
        "passing; never blocking, nobody's reputation is touched.",
    ),
}

# Editing code cannot fix these (a missing tool, a change nobody recorded, vacant's own record
# altered): reported, never blocking the agent; a `record` finding still keeps the run from green.
NON_BLOCKING_LEVELS = (ENV, GAP, RECORD, FLAKY, CHANGED_TEST)

# How a guard's and a failing test's findings are graded: the same table, said for those cases.
TESTS_AND_GUARDS = (
    "A guard (`[[guard]]`, docs/CONTRACT.md: a check that held before the work and must still hold) is "
    "graded like any check. Each failing test of a test runner is its own finding, keyed by its test id, and "
    "replayed by running that test alone. A flip counts against one step only when the state before it ran "
    "the test cleanly (it passed there, or its check passed). A masked flip -- the state before never reached "
    "the test (a guard's `A && B` stopped at `A`, a collection error, a runner stopping at the first "
    "failure) -- is verified by counterfactual: the baseline with only the flip step's change applied, then "
    "that state with each earlier change undone, nearest first; it is `heuristic`, naming `broken_by` (the "
    "change whose undoing clears it) and `unmasked_by` (the flip step), never `provable` against the "
    "unmasking step. Presence that is not monotone (broken, repaired, broken again, also where no step "
    "changes the test's own file) is graded at the last flip, after every later state where a change could "
    "have repaired it was re-checked; a bisection whose probes fell in an earlier broken stretch does not "
    "stand. The final state with only the flip step's change undone must lose the finding, else "
    "`heuristic`. A test that answers differently when re-run on the same state is `flaky`."
)

COVERAGE: dict[str, str] = {
    "complete": "Every step's inputs were seen by the hooks (file reads, searches, fetches, replies).",
    "partial": "Some inputs were invisible: files read inside shell commands, what was already in the model's "
    "context, hosted tools. 'No source found' is then a lower bound.",
    "none": "No reads were recorded at all (a wrapped command without hooks).",
}


def render_doc() -> str:
    lines = [
        "# Attribution levels and read coverage",
        "",
        DOC.header(),
        "",
        "| level | when | consequence |",
        "|---|---|---|",
    ]
    lines += [f"| `{name}` | {when} | {then} |" for name, (when, then) in LEVELS.items()]
    blocking = [name for name in LEVELS if name not in NON_BLOCKING_LEVELS]
    lines += ["", "Findings at these levels block a Stop (while rounds are left): "
              + ", ".join(f"`{name}`" for name in blocking) + ". "
              + " and ".join(f"`{name}`" for name in NON_BLOCKING_LEVELS) + " findings are reported only.",
              "", "## Guards and failing tests", "", TESTS_AND_GUARDS,
              "", "## read_coverage", "", "| state | meaning |", "|---|---|"]
    lines += [f"| `{name}` | {meaning} |" for name, meaning in COVERAGE.items()]
    return "\n".join(lines) + "\n"


DOC = GeneratedDoc('LEVELS.md', render_doc, ("vacant/core/levels.py",))
