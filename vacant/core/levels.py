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

# Re-running a shell step at Stop ("Who wrote it" below; vacant/attribute/rerun.py): its own cap is
# RERUN_FACTOR x the step's recorded duration + RERUN_MARGIN_S, at most RERUN_CAP_S; a step that ran
# longer than MAX_STEP_S is not re-run.
RERUN_FACTOR = 4.0
RERUN_MARGIN_S = 10.0
RERUN_CAP_S = 120.0
MAX_STEP_S = 60.0

LEVELS: dict[str, tuple[str, str]] = {
    PROVABLE: (
        "Re-run on reconstructed states, the finding flips from absent to present exactly at step k, "
        "the wrong value is in no pinned input and no observed read, and step k wrote the change that carries "
        "it: a file tool's input accounts for it, or a shell step's command, re-run on the state before it, "
        "writes what makes the finding show (\"Who wrote it\", below).",
        "record_review(cell of step k, 0, weight=1.0); nothing else.",
    ),
    LINEAGE_EXACT: (
        "The flip holds (step k wrote the change, as for `provable`), but the wrong value appears verbatim in a "
        "read whose origin is outside the run (a file the run did not write, a URL, the prompt).",
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
        "whose undoing clears it, and `unmasked_by`), a flip the final state does not need (still present "
        "there with the flip step's change undone), or a change whose writer cannot be told (a shell step not "
        "re-run: ACT, reads a terminal, in the background, over the cap, no wall; or its re-run ran otherwise, "
        "or its output varies where the finding is: \"Who wrote it\", below). Presence that is not monotone "
        "(broken, repaired, broken again) is graded at the last flip, the one the final state carries, after "
        "every later change that could have repaired it was re-checked.",
        "Report only.",
    ),
    FLAKY: (
        "The check (or the test) gave different answers on the same state when re-run: the flip is not "
        "reproducible.",
        "Reported, never attributed (no step, no actor) and never blocking.",
    ),
    GAP: (
        "The change came from no recorded step (an out-of-band change set, a platform that did not report), or "
        "was made while step k ran by someone other than step k (a person's save, a process started earlier): "
        "step k's input, or its command re-run, shows it did not write what carries the finding (`during_step`).",
        "Nobody is touched; one count under integration coverage for that platform (none for a change made "
        "during a step: the platform missed nothing). Never sent to the agent; the person sees it in the report.",
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
        "decides; the evidence names the step that changed it and the diff, and `ask` the card in the ask book "
        "(docs/CONTRACT.md, \"Questions for the person\"), asked once for that exact change.",
        "A question for the person: the agent is told the test waits on the person and it does not count as "
        "passing; never blocking, nobody's reputation is touched. Accepted (`vacant approve`), it is no longer a "
        "finding; rejected (`vacant decline`), the test as the person set it stands and its failure goes back to "
        "the agent, blocking (`heuristic`, evidence `method` `rejected_test`).",
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

WHO_WROTE_IT = (
    "A level that carries consequences (`provable`, `lineage_exact`, `lineage_internal`) needs evidence that "
    "the flip step wrote the change that carries the finding; that the file changed while the step ran is not "
    "evidence (a person's editor, a formatter on save, another session, a process an earlier step started in "
    "the background write then too). The evidence is the step's own write. A file tool's (Write, Edit, "
    "MultiEdit, apply_patch) is rebuilt from its recorded input on the file as the step found it; any other "
    "difference in that file is someone else's (a file it did not name is out of band already). A shell step's "
    "(Bash, the platform's shell tool) is what its recorded command writes when run again at the Stop on the "
    "recorded state just before it, behind the wall (docs/TRUST.md: a scratch copy at the workspace's own path, "
    "the live unrecorded paths read-only over it, no network, no key, stdin closed), in its recorded directory, "
    f"under a cap of its own: {RERUN_FACTOR:g} x the step's recorded duration + {RERUN_MARGIN_S:g} s, at most "
    f"{RERUN_CAP_S:g} s. Each file of the recorded change is then `same` as the own write, `foreign` (the own "
    "write left it as it was), `split` (the record is the own write plus lines it never wrote) or `clash` (they "
    "differ inside lines it wrote: its output varies, or someone wrote the same lines). The finding is checked "
    "on the recorded state with the step's files as its own write left them (the state before the step plus "
    "the reproduced part); a located finding whose line is not in its file there cannot show (its id holds the "
    "line's text). It shows, or the own write is the whole change: the step's, the level stands; a generator "
    "that stamps a date or a random value writes other bytes when re-run, yet what it writes still shows the "
    "finding, so it stays `provable` (a value that varies on the finding's own line cannot show again: "
    "`heuristic`). It does not show, and where the files the verdict rests on (a located finding's own file, "
    "else every file not reproduced) `clash`, the step always writes them so (a tool's input is exact; a "
    "command is re-run a second time and must leave them exactly as the first re-run did): the change was made "
    "during the step by someone else, `gap` with `during_step`, actor nobody. Otherwise `heuristic`, saying why in one "
    "sentence: the command is never re-run when the gate counts it ACT (or refuses it), it reads a person at a "
    "terminal (an editor, a pager, sudo, a REPL), it ran in the background, longer than "
    f"{MAX_STEP_S:g} s or outside the workspace, its command holds redacted text, the Stop's budget has less "
    "left than its cap, or the wall cannot run here (an agent's command is never re-run unwalled); its re-run "
    "exited otherwise than the step or hit its cap; it ran on a state without files vacant does not keep "
    "(`[store] exclude`, over the size cap) and did not write the whole change; its output varies there; or the "
    "check failed there for something else. For `lineage_internal` the producing step is held to the same rule "
    "when the value came from a file it wrote: its own write (its input, or its command re-run on the state "
    "before it) must hold the value in that file. It does: the grade stands. The value is in lines its own "
    "write did not put there: someone else wrote it while the step ran, a source outside the run, so "
    "`lineage_exact` at the flip step (the actor untouched). It cannot be told (not re-run, its output varies "
    "there): `heuristic`, saying why. Not covered yet: other steps that may write anything (a watched "
    "command's bursts, an unknown tool, a notebook edit) are not checked and keep the grade their flip gives; "
    "a value a producing step printed or a sub-agent replied (not a file it wrote) is the platform's record of "
    "that output, and the producing hops before the last are not checked."
)

RERUN_COST = (
    "What it costs: the record keeps each step's kind and directory, and for a shell or file tool step its "
    "canonical input (a Write's content is then in the step log twice). At the Stop, nothing for a finding "
    "below `provable`, or whose flip is no tool or shell step. A file tool: rebuilding its write from the "
    "input, and one check run on the constructed state unless its input is the whole change (or a located "
    "finding's line is absent there). A shell step: one re-run per step a consequence-carrying finding flipped "
    "at (shared by that step's findings, and by a `lineage_internal` grade whose producing step it is); a check run on the constructed state only when the re-run did not "
    "write the whole change; a second re-run only before lines inside what the first wrote are called someone "
    "else's. A re-run costs the command itself (capped), the wall's start (bench/bench_wall.py), and the "
    "state before the step in a scratch directory: rebuilt whole at the Stop's first re-run (as the replay's "
    "first state is), then put back from what each re-run changed on disk. bench/bench_rerun.py measures the "
    "Stop with it against the same Stop without it."
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
              "", "## Who wrote it: what a level needs of a step", "", WHO_WROTE_IT, "", RERUN_COST,
              "", "## read_coverage", "", "| state | meaning |", "|---|---|"]
    lines += [f"| `{name}` | {meaning} |" for name, meaning in COVERAGE.items()]
    return "\n".join(lines) + "\n"


DOC = GeneratedDoc('LEVELS.md', render_doc, ("vacant/core/levels.py",))
