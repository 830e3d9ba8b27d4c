"""The Stop report's JSON shape, in one place: the fields the pipeline writes, what each means,
and a checker that a report holds exactly these fields. `docs/REPORT.md` is generated from it
(`python -m vacant.gendocs --write`), and a test runs the checker on reports the real pipeline
wrote, so a field added to the pipeline and not here fails the suite.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from vacant.core.docgen import GeneratedDoc
from vacant.core.levels import LEVELS

# why a recorded test ran in a Stop's final run (`selection.why`; vacant.attribute.testinputs for
# pytest, vacant.attribute.relatedtests for jest and vitest, in the same words)
CHANGED = "an input changed"
UNKNOWN_INPUTS = "started a process or opened a socket"
NOT_PASSED = "did not pass on the baseline"
SETS_STATE = "its run or its fixture changed the process"
SESSION = "a session-wide input changed"
ENVIRONMENT = "the environment changed"
# the final run found a test or test file whose inputs changed now changing the process: what the
# baseline's answers stood on no longer holds, so every test ran
CHANGED_SETS = "a changed test or test file changed the process"
RAN_BECAUSE = (CHANGED, SESSION, ENVIRONMENT, UNKNOWN_INPUTS, SETS_STATE, NOT_PASSED, CHANGED_SETS)


class Field(NamedTuple):
    name: str
    json_type: str
    meaning: str
    always: bool = True  # False: present only in some reports (say when in `meaning`)


REPORT_FIELDS = (
    Field("run", "string", "the run id (the agent's session id)"),
    Field("stop", "int", "which Stop of the run this is (1, 2, …)"),
    Field("agent_id", "string|null", "null: the main agent's Stop; else the sub-agent's SubagentStop"),
    Field("at", "number", "unix time of the report"),
    Field("upto", "int", "the last step-log record (seq) this Stop saw: `vacant replay RUN --stop N` replays the "
                         "run up to it"),
    Field("read_coverage", "object", "`state` (complete, partial, none) and `why`: what the hooks saw of the reads"),
    Field("checks", "array", "each guard, then each acceptance check, on the final state: `name`, `kind` "
                             "(`guard`: must stay green; `check`: acceptance), `passed`, `exit_code`, `seconds`, "
                             "`timed_out`"),
    Field("contract_error", "object|null", "vacant.toml could not be read at this Stop: `path`, `line`, `key` "
                                           "(when known) and `message`; nothing was verified, and the Stop blocked "
                                           "(or told the person); null when it read"),
    Field("findings", "array", "one object per finding (below)"),
    Field("record_problems", "array", "what is wrong with vacant's own record (vacant.attribute.recordaudit): "
                                      "`kind`, `detail`, `path`; all but the notes (torn lines, dangling steps) are "
                                      "also `record` findings"),
    Field("check_runs", "int", "real check executions this Stop (final state plus replay)"),
    Field("reruns", "object", "shell steps re-run behind the wall to see what they write (docs/LEVELS.md, \"Who "
                              "wrote it\"): `runs` and `seconds` spent"),
    Field("walled", "object", "whether the checks and their replays ran behind the wall, each state at the "
                              "workspace's own path (docs/TRUST.md): `walled` (bool) and `why` (null when walled; "
                              "else why not: bubblewrap missing or unable to start here, and then they ran as the "
                              "person)"),
    Field("states", "int", "recorded states (the baseline plus one per change delta)"),
    Field("budget_s", "number", "the Stop pipeline's time budget"),
    Field("seconds", "number", "how long this Stop's pipeline took"),
    Field("faithful", "object", "whether the replay saw what the check in the workspace sees: `faithful` (bool) "
                                "and `why` (null when faithful). Checked when a finding was found present at the "
                                "baseline: the rebuilt baseline must answer as the probe did (the person's at "
                                "`contract add`, when no recorded file changed since, or the run's baseline probe), "
                                "and the check on the workspace as on its rebuilt final state; "
                                "where it does not, those findings are graded `heuristic` (evidence `method`: "
                                "`unfaithful`) and nobody is told they predate the work"),
    Field("nothing_to_verify", "bool", "no acceptance check and no flag at all, and no finding (guards alone "
                                       "verify nothing about the work): never a pass"),
    Field("vacuous", "array", "acceptance checks that already passed on the run's baseline (they cannot measure "
                              "the work)"),
    Field("no_review", "string|null", "why this Stop reviewed no agent cell although it ended green (every "
                                      "acceptance check was vacuous: it proved nothing), else null"),
    Field("reused", "int|null", "the Stop whose checks and findings this one repeats: nothing they stand on changed "
                                "since (the recorded changes, the contract, the standing flags), so no check ran "
                                "(`check_runs` 0); null when this Stop ran them"),
    Field("split", "object", "where this Stop's time went: for each part that ran (`selection` (which tests "
                             "the final run leaves out), `final state`, `bisection`, "
                             "`verification` (the counterfactuals), `faithfulness`, `changed tests`, `baseline`, `workspace`), "
                             "its `seconds` and `check_runs`; empty when the answers were reused"),
    Field("questions", "array", "what this Stop asked the person in the ask book (docs/CONTRACT.md, \"Questions for "
                                "the person\"): a guard's test the agent changed so that it passes (`kind` "
                                "`changed_test`), a check or guard the agent added, edited or removed (`kind` "
                                "`contract`). Each: `ask` (the card, `ask#N`; null when a replayed Stop found none), "
                                "`fate` (`awaiting-human`, `approved`: accepted, `declined`: rejected), `step` (the "
                                "agent's step that made the change), `about` (the test or the item's name), `what` "
                                "(the question in one sentence), `diff` (the test's change), `proposed` (the item as "
                                "the agent wrote it, TOML; null: removed, or a test)"),
    Field("selection", "object", "for each check whose tests' inputs the baseline probe recorded "
                                 ": `recorded` tests, how many "
                                 "the final run `reused` (their inputs unchanged since they passed on the baseline) "
                                 "and `ran`, how many test files it left `uncollected` (each of whose tests was "
                                 "reused and whose collection on the baseline changed nothing the other tests' "
                                 "process sees), `why` they ran (a count for each of: "
                                 + ", ".join(f"`{reason}`" for reason in RAN_BECAUSE)
                                 + "), `example`: the first input behind each reason, and `tests`: the first "
                                 "ids that ran for each reason; a test not in the record "
                                 "always runs; empty when no check had a record. A plain jest or vitest check's "
                                 "final run is its runner's related-tests run (vacant/attribute/relatedtests.py): "
                                 "a test `reused` is one of a test file that run did not reach, `uncollected` counts "
                                 "those files, and a test that ran did so because `an input changed` (its module "
                                 "graph holds a changed module, or one that reads what the graph does not see) or "
                                 "it `did not pass on the baseline`; any change the graph may not see runs every "
                                 "test, as `a session-wide input changed` or `the environment changed`"),
    Field("workspace", "object|null", "what the live workspace holds that this run's record does not (another "
                                      "session's changes, or the person's that another session saw), null when "
                                      "nothing (or on a replay): `changes` (each `path`, `change` (`added`, "
                                      "`changed`, `removed`) and `by`, who is known to have written it: `who` "
                                      "(`session`: another run's step, with `run`, `platform`, `step`, `tool`, "
                                      "`agent`; `out_of_band`: another run saw it between its steps, the person or a "
                                      "process; `unknown`) and `why`); `checks`: each check that answers otherwise on "
                                      "the workspace (run there, walled) than on this run's final state: `name`, "
                                      "`kind`, `passed` (this run's state), `passed_live` (the workspace), `new` (how "
                                      "many findings only the workspace shows) and the first `findings` (`id`, `path`, "
                                      "`line`, `message`, `test`); `checks_why`: why the checks did not run there "
                                      "(null when they did). Never blocking, never the agent's to fix: the agent's "
                                      "feedback and the person's message say it"),
    Field("pending_guards", "array", "guards this Stop did not run because their probe had not finished when the "
                                     "run started (a background probe at `vacant contract add`; docs/CONTRACT.md): "
                                     "each `name` and `why` (still being probed, with its progress, or finished "
                                     "after the run started); a Stop cannot block on a probe it does not have"),
    Field("left_out", "object|null", "what the Stop's time budget did not reach, null when nothing: `checks` (each "
                                     "`name`, `kind`, `why`: cut before it finished or not started, `tests`: how "
                                     "many tests that run was to run when the selection knew, else null for its "
                                     "whole run, `first_tests`: the first ids), `ungraded` (findings left "
                                     "`not_replayed`), `parts` (parts of the Stop not done) and `sentence` (what the "
                                     "agent and the person are told); they run at the next Stop, which never reuses "
                                     "this one's answers"),
    Field("round", "int", "feedback rounds used so far (for this agent)"),
    Field("rounds", "int", "the round budget (the contract's `[stop] rounds`, or `vacant do --rounds`)"),
    Field("decision", "string", "`block`: the agent was sent the feedback; `stop`: it may stop"),
)

FINDING_FIELDS = (
    Field("id", "string", "stable across rounds: a hash of (check or flag, path, offending text)"),
    Field("source", "string", "`check`, `flag`, or `record` (vacant's own record was altered: a flag removed, "
                              "a chain broken; for the person, never blocking the agent)"),
    Field("name", "string", "the check's name, or the flag's id"),
    Field("path", "string|null", "the file, when the check or flag gives one"),
    Field("line", "int|null", "the line, when known"),
    Field("message", "string", "the check's own words (or the flag's note)"),
    Field("text", "string|null", "the offending line's text"),
    Field("level", "string", "the grade: " + ", ".join(f"`{name}`" for name in LEVELS) + " (docs/LEVELS.md)"),
    Field("final_level", "string|null", "lineage_internal only: the grade at the producing step"),
    Field("step", "int|null", "the step blamed (after lineage hops), or null"),
    Field("flip_step", "int|null", "the step where the finding appeared on replay, or null"),
    Field("tool", "string|null", "the blamed step's tool"),
    Field("agent_id", "string|null", "the blamed step's sub-agent id, if any"),
    Field("actor", "object|null", "the blamed step's cell (`platform`, `agent_definition`, `model`, "
                                  "`task_family`; shown as `unknown` where nobody reported it): for people only, "
                                  "never sent to the agent"),
    Field("lineage_source", "string|null", "where the wrong value was copied from (`file:…`, `url:…`, `prompt:user`, "
                                           "`subagent:<id>`, `command:<cmd>`, `pinned:<path>`)"),
    Field("origin_source", "string|null", "the source outside the run, if the value came from one"),
    Field("evidence", "object", "how the grade was reached (below)"),
    Field("test", "string|null", "the failing test's id (its suites, class name and name from the runner's JUnit "
                                 "report, joined by `::`; `go::PACKAGE::TestName/subtest` from `go test -json`, "
                                 "`jest::FILE::full name` from jest's `--json`, `vitest::FILE::full name` from vitest's "
                                 "JSON reporter, `cargo::CRATE::SOURCE::path::test` from `cargo test`), when the check's runner reported per "
                                 "test; `path` and `line` are then its assert line (the failure's line)"),
    Field("diff", "string|null", "what the change that broke it changed (a short unified diff rebuilt from the "
                                 "recorded states): the hunk at the finding's location first when that change "
                                 "touched its file, then the other files it touched; null only when no flip "
                                 "was found"),
    Field("changed", "array", "the files the change shown in `diff` touched (empty when no flip was found)"),
    Field("blocking", "bool", "whether the finding holds the agent back (env, gap and record findings never do)"),
)

EVIDENCE_FIELDS = (
    Field("why", "string", "why the grade is not `provable` (present at baseline, failed on every state "
                           "evaluated (which), flaky, parallel writers, out-of-band change, a change the flip step "
                           "did not write or was not shown to write, missing tool, the time budget)", always=False),
    Field("value", "array", "the wrong value: the salient tokens the flip step introduced on the finding's own "
                            "line (its changed block only when that line has none)", always=False),
    Field("value_lines", "array", "the lines (on the flip step's state) the value was taken from; empty: the "
                                  "whole change (a finding without a line)", always=False),
    Field("method", "string", "how the flip was found: `bisection`, `linear` (the last absent-to-present "
                              "transition, scanning back from the end), `baseline`, `baseline-partial`, "
                              "`unfaithful` (not graded: the replay did not see what the workspace's check sees), or "
                              "`rejected_test` (the person rejected the agent's change to this test: it fails as "
                              "they set it, and goes back to the agent)",
          always=False),
    Field("flaky", "bool", "the check gave different answers on the same state", always=False),
    Field("states_evaluated", "array", "the states the check actually ran on", always=False),
    Field("rerun", "string", "the command that gives back this finding, level and step on the recorded run "
                             "(`vacant replay RUN --stop N`)", always=False),
    Field("hops", "array", "lineage hops from the flip step to the producing step", always=False),
    Field("group", "array", "the steps open together when the change was seen", always=False),
    Field("needed", "bool", "the counterfactual on the final state: with only the flip step's change undone, the "
                            "finding was gone (false: another change causes it too; graded `heuristic`)",
          always=False),
    Field("unmasked_by", "int|null", "a masked flip: the step whose change only let the finding show (the state "
                                     "before it never ran the check or the test cleanly)", always=False),
    Field("broken_by", "int|null", "a masked flip: the earlier step whose change undone clears the finding (null: "
                                   "none of those tried)", always=False),
    Field("authorship", "object", "whether the flip step wrote the change that carries the finding (docs/LEVELS.md, "
                                  "\"Who wrote it\"): `verdict` (`own`, `not_own`, `unknown`), `why`; for a shell "
                                  "step `rerun` (`exit_code`, `timed_out`, `seconds`, `cap_s`, `files`: each file of the "
                                  "change `same`, `foreign`, `split` or `clash` against the re-run; or `refused`: why it "
                                  "was not re-run), for a file tool `input` (`files`, the same against what its input "
                                  "wrote); `own_write_shows_it`: the finding's status on the state before the step "
                                  "plus the step's own write", always=False),
    Field("ask", "string", "a `changed_test` finding, or a rejected one: the card the person answers it on "
                           "(`ask#N`; empty when a replayed Stop found none)", always=False),
    Field("producer_authorship", "object", "a `lineage_internal` grade whose value came from a file the producing "
                                           "step wrote: whether that step's own write put it there (docs/LEVELS.md, "
                                           "\"Who wrote it\"): `verdict`, `step`, `why`, `path`, `files` (that file "
                                           "`same`, `foreign`, `split` or `clash` against the own write)",
          always=False),
    Field("unseen", "object", "the flip step is a Write (the whole file) and another session changed that file "
                              "after this run last recorded it and before the step ran (this run's state before "
                              "the step lacks it, and the Write's input carries it): `path` and who (`who`, `run`, "
                              "`step`, `tool`, ...); the grade is `heuristic`",
          always=False),
    Field("during_step", "int", "a `gap` made while this step ran by someone other than the step (a person's save, "
                                "a process started earlier): never sent to the agent", always=False),
    Field("written_by", "object", "a `gap` made during a step: who is known to have written it, from the records: "
                                  "`who` (`session`: another run's step open then that names the file, or its shell "
                                  "step, with `run`, `platform`, `step`, `tool`, `agent`; `background`: a process an "
                                  "earlier `step` of this run left running; `unknown`: the person, an editor or a "
                                  "process) and `why`", always=False),
)


def problems(report: Mapping[str, Any]) -> list[str]:
    """Every way `report` differs from the documented shape (unknown or missing fields)."""
    found = _compare("report", report, REPORT_FIELDS)
    for index, finding in enumerate(report.get("findings") or []):
        found += _compare(f"findings[{index}]", finding, FINDING_FIELDS)
        evidence = finding.get("evidence") if isinstance(finding, Mapping) else None
        if isinstance(evidence, Mapping):
            found += _compare(f"findings[{index}].evidence", evidence, EVIDENCE_FIELDS)
    return found


def _compare(where: str, data: object, fields: tuple[Field, ...]) -> list[str]:
    if not isinstance(data, Mapping):
        return [f"{where} is not an object"]
    names = {field.name for field in fields}
    unknown = [f"{where}.{key} is not documented" for key in data if key not in names]
    missing = [f"{where}.{field.name} is missing" for field in fields if field.always and field.name not in data]
    return unknown + missing


def _table(fields: tuple[Field, ...]) -> list[str]:
    lines = ["| field | type | meaning |", "|---|---|---|"]
    lines += [f"| `{f.name}` | {f.json_type} | {f.meaning}{'' if f.always else ' (when it applies)'} |" for f in fields]
    return lines


def render_doc() -> str:
    lines = [
        "# The Stop report (`vacant report --json`)",
        "",
        DOC.header(),
        "",
        "Each Stop writes one report: `runs/<run>/reports/NNNN.json` in the state directory (the N-th Stop of",
        "the run) and `report.json` (the latest). `vacant report [RUN] [--stop N] [--json]` prints them;",
        "`vacant replay [RUN] [--stop N] [--json]` recomputes one without telling the agent anything (`--stop N`:",
        "on the run as it stood at its N-th Stop, the step log up to that report's `upto`). Levels are defined",
        "in [LEVELS.md](LEVELS.md). A finding the budget did not reach is reported with level `not_replayed`,",
        "never dropped.",
        "",
        "## The report",
        "",
        *_table(REPORT_FIELDS),
        "",
        "## A finding",
        "",
        *_table(FINDING_FIELDS),
        "",
        "## Evidence",
        "",
        *_table(EVIDENCE_FIELDS),
    ]
    return "\n".join(lines) + "\n"


DOC = GeneratedDoc("REPORT.md", render_doc, ("vacant/attribute/report_shape.py",))
