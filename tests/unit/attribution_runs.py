"""Generated runs for the attribution tests (issue 12): random runs with a planted wrong value
whose true origin the generator knows, fed through the real recorder (Claude hook payloads through
`vacant.hook.run`, Codex shell calls through `codex.command_reads` and the Recorder) and the real
Stop pipeline, compared with this module's own oracle on level, step and source.

A plan is a baseline (the deliverable, an external note, a pinned spec, decoys) and a list of
events; the planted value W appears in exactly one place the generator chose (a read, a pinned
input, the prompt, a command's output, a file another step wrote, a sub-agent's reply, an
out-of-band change, the baseline itself), or nowhere. Decoy values on neighbouring lines of a
multi-line write sit in other reads, so a value taken from the whole hunk would be misattributed.

The oracle follows the plan, not the step log: it knows each file's text after each event, which
observation showed W, and which event put W into a file. Its rules are the documented semantics
(docs/LEVELS.md): the latest observation of W before the introducing step decides; an observation
of a file the run wrote moves attribution to the step that put W there; a chain ends outside the
run (lineage_exact) or at a step that produced W itself (provable).

Used by test_differential.py (the generated runs) and test_attribution_classes.py (one planted
run per class of error).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import signal
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import strategies as st

from vacant.attribute import baseline_probe
from vacant.core.locations import mark_installed, state_dir
from vacant.hook import call as hook
from vacant.core.calls import HookCall
from vacant.platforms.codex import payloads as codex_payloads
from vacant.platforms.codex.platform import PLATFORM as CODEX
from vacant.policy.contract.flags import add_flag
from vacant.record.recorder import Recorder
from vacant.store.objects import ObjectStore

# Each run creates and removes a few hundred small files (workspace, object store, replay scratch):
# on tmpfs when the machine has one, which is ~25x faster than a disk-backed /tmp here.
FAST_TMP = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None

RATE_CHECK = ("awk '/^RATE = /{ if ($3 != \"0.08\") { print FILENAME \":\" FNR \": RATE is \" $3; bad=1 } } "
              "END { exit bad }' conf.txt")
DONE_CHECK = "grep -qx 'DONE = 1' status.txt"
ORIGINS = ("fresh", "read", "shell_cat", "shell_sed", "pinned", "pinned_read", "prompt", "command",
           "command_probe", "internal", "internal_chain", "subagent", "oob", "baseline", "unread")
NOISE = ("decoy_read", "decoy_shell", "other_write", "read_target", "shift")


@dataclass
class Plan:
    family: str  # rate: a located check on conf.txt's RATE line; done: an unlocated check on status.txt
    origin: str
    mode: str  # how the introducing step writes: write (whole multi-line file) | edit | bash
    prior: str  # none | correct | other: what the target line held before the planted step
    before: list[str]
    after: list[str]
    rebreak: bool  # fixed after the planted step, then broken again with the same value
    parallel: bool  # the planted step runs while a shell step is open
    flag: bool  # a person's flag on a line that was already there before the run
    rerun: bool  # also reproduce the Stop from its report (`vacant replay --stop 1`)
    seed: int

    @property
    def w(self) -> str:
        return f"0.9{self.seed:04d}"

    @property
    def good(self) -> str:
        """The value the check wants."""
        return "0.08" if self.family == "rate" else "1"

    @property
    def decoys(self) -> tuple[str, str]:
        return f"{100 + self.seed % 800}", f"0.7{self.seed:04d}"


@st.composite
def plans(draw, part: int = 0, parts: int = 1) -> Plan:
    """A plan; with `parts`, only those whose seed is `part` modulo `parts` (disjoint shares)."""
    family = draw(st.sampled_from(("rate", "rate", "done")))
    origin = draw(st.sampled_from(ORIGINS))
    mode = "edit" if family == "done" else draw(st.sampled_from(("write", "edit", "bash")))
    return Plan(
        family=family, origin=origin, mode=mode,
        prior=draw(st.sampled_from(("none", "correct", "other"))),
        before=draw(st.lists(st.sampled_from(NOISE), max_size=3)),
        after=draw(st.lists(st.sampled_from(NOISE), max_size=2)),
        rebreak=draw(st.booleans()),
        parallel=origin != "oob" and mode != "bash" and draw(st.integers(0, 4)) == 0,
        flag=draw(st.integers(0, 5)) == 0,
        rerun=draw(st.integers(0, 9)) == 0,
        seed=draw(st.integers(0, 10000 // parts - 1)) * parts + part,
    )


# -- the world: files after each event, observations, who put W where ----------------------------


@dataclass
class Seen:
    kind: str  # file | command | prompt | subagent
    ref: str
    producer: str | None = None  # file: the event key that put W there (None: it was there before)
    shown_by: str | None = None  # subagent: the Agent step's key


@dataclass
class World:
    plan: Plan
    files: dict[str, str]
    introduced: dict[str, str | None] = field(default_factory=dict)  # path -> key of the event that put W there
    seen: list[tuple[int, Seen]] = field(default_factory=list)  # (event number, observation holding W)
    keys: list[str] = field(default_factory=list)  # event keys in start order
    target_history: list[tuple[str | None, bool]] = field(default_factory=list)  # (key, finding present)

    def has_w(self, text: str) -> bool:
        return re.search(r"(?<![\w.])" + re.escape(self.plan.w) + r"(?![\w])", text) is not None


TARGET = {"rate": "conf.txt", "done": "status.txt"}


def baseline(plan: Plan) -> dict[str, str]:
    w, (count, date) = plan.w, plan.decoys
    target = TARGET[plan.family]
    files = {
        "vacant.toml": f'pinned = ["spec/*"]\n\n[[check]]\nname = "{plan.family}"\ncommand = "{_toml(RATE_CHECK if plan.family == "rate" else DONE_CHECK)}"\n',
        "notes/ext.txt": "an old memo\n" + (f"RATE = {w}\n" if plan.origin in ("read", "shell_cat", "shell_sed", "unread", "internal_chain") else "RATE = 0.5\n") + "end\n",
        "notes/count.txt": f"COUNT = {count}\n",
        "notes/date.txt": f"DATE = {date}\n",
        "notes/legacy.txt": "LEGACY = 0.5\n",
        "spec/rates.md": f"The rate is {w}.\n" if plan.origin in ("pinned", "pinned_read") else "The rate is 0.08.\n",
    }
    if plan.family == "rate":
        value = w if plan.origin == "baseline" else "0.08"
        files[target] = f"COUNT = 1\nRATE = {value}\nDATE = 2\n"
    else:
        files[target] = f"DONE = {w if plan.origin == 'baseline' else '0'}\n"
    return files


def _toml(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


# -- driving the real recorder --------------------------------------------------------------------


class Driver:
    def __init__(self, plan: Plan, root: Path) -> None:
        self.plan, self.root = plan, root
        self.session = uuid.uuid4().hex
        self.world = World(plan, baseline(plan))
        self.n = 0
        self.events = 0
        self.outputs: dict[str, list[str]] = {}  # command -> what it printed
        self.parallel_key: str | None = None  # the step written while a shell step was open

    # payload plumbing
    def claude(self, event: str, **fields) -> str:
        payload = {"session_id": self.session, "cwd": str(self.root), "hook_event_name": event,
                   "transcript_path": None, **fields}
        out, _ = hook.run("claude", json.dumps(payload).encode(), {"CLAUDE_PROJECT_DIR": str(self.root)})
        signal.alarm(0)
        return out

    def key(self) -> str:
        self.n += 1
        return f"toolu_{self.n:03d}"

    def write(self, rel: str, text: str, key: str | None) -> None:
        """A file effect; `key` is the event that made it (`oob`: an out-of-band change)."""
        (self.root / rel).parent.mkdir(parents=True, exist_ok=True)
        (self.root / rel).write_text(text)
        old = self.world.files.get(rel, "")
        self.world.files[rel] = text
        if self.world.has_w(text) and not self.world.has_w(old):
            self.world.introduced[rel] = key
        if rel == TARGET[self.plan.family]:
            self.world.target_history.append((key, self.present()))

    def present(self) -> bool:
        text = self.world.files[TARGET[self.plan.family]]
        if self.plan.family == "rate":
            return f"RATE = {self.plan.w}" in text.splitlines()
        return "DONE = 1" not in text.splitlines()

    def saw(self, seen: Seen, text: str) -> None:
        if self.world.has_w(text):
            self.world.seen.append((self.events, seen))

    def saw_file(self, rel: str) -> None:
        self.saw(Seen("file", rel, self.world.introduced.get(rel)), self.world.files.get(rel, ""))

    # tools
    def pre(self, tool: str, tool_input: dict, key: str) -> None:
        self.events += 1
        self.world.keys.append(key)
        self.claude("PreToolUse", tool_name=tool, tool_input=tool_input, tool_use_id=key)

    def post(self, tool: str, tool_input: dict, key: str, response: object) -> None:
        self.claude("PostToolUse", tool_name=tool, tool_input=tool_input, tool_use_id=key, tool_response=response)

    def tool_write(self, rel: str, text: str) -> str:
        key, args = self.key(), {"file_path": str(self.root / rel), "content": text}
        self.pre("Write", args, key)
        self.write(rel, text, key)
        self.post("Write", args, key, {"type": "create", "filePath": args["file_path"], "content": text})
        return key

    def tool_edit(self, rel: str, old: str, new: str) -> str:
        key, args = self.key(), {"file_path": str(self.root / rel), "old_string": old, "new_string": new}
        self.pre("Edit", args, key)
        self.write(rel, self.world.files[rel].replace(old, new, 1), key)
        self.post("Edit", args, key, {"filePath": args["file_path"]})
        return key

    def tool_read(self, rel: str) -> None:
        key, args = self.key(), {"file_path": str(self.root / rel)}
        self.pre("Read", args, key)
        self.saw_file(rel)
        text = self.world.files[rel]
        self.post("Read", args, key, {"type": "text", "file": {"filePath": args["file_path"], "content": text}})

    def bash(self, command: str, output: str, writes: dict[str, str] | None = None) -> str:
        key, args = self.key(), {"command": command}
        self.pre("Bash", args, key)
        for rel, text in (writes or {}).items():
            self.write(rel, text, key)
        self.saw(Seen("command", command, key), output)
        self.outputs.setdefault(command, []).append(output)
        self.post("Bash", args, key, {"stdout": output, "stderr": ""})
        return key

    def codex_shell(self, command: str, reads: list[str], output: str) -> str:
        """A Codex shell call whose parsed command read `reads` (the recorder resolves their bytes)."""
        key = self.key()
        self.events += 1
        self.world.keys.append(key)
        for rel in reads:
            self.saw_file(rel)
        self.saw(Seen("command", command, key), output)
        self.outputs.setdefault(command, []).append(output)
        item = {"cwd": str(self.root), "aggregated_output": output,
                "parsed_cmd": [{"type": "read", "path": rel} for rel in reads]}
        for kind, extra in (("tool_pre", {}), ("tool_post", {"outcome": "ok", "exit_code": 0,
                                                             "reads": codex_payloads.command_reads(item, command, output, str(self.root))})):
            kind_of, intent = CODEX.intent("Bash", {"command": command})
            call = HookCall(kind, self.session, self.root, tool="Bash", tool_input={"command": command}, key=key,
                            scope=None, tool_kind=kind_of, intent=intent, **extra)
            Recorder(self.root, self.session, CODEX).handle(call)
        return key

    def agent(self, reply: str) -> str:
        key, args = self.key(), {"description": "ask", "prompt": "SUBTASK", "subagent_type": "general-purpose"}
        agent_id = f"a{self.n:03d}"
        self.pre("Agent", args, key)
        self.claude("SubagentStart", agent_id=agent_id, agent_type="general-purpose")
        self.saw(Seen("subagent", agent_id, None, None), reply)
        self.claude("SubagentStop", agent_id=agent_id, agent_type="general-purpose", stop_hook_active=False,
                    last_assistant_message=reply)
        self.saw(Seen("subagent", agent_id, key, key), reply)
        self.post("Agent", args, key, {"status": "completed", "agentId": agent_id,
                                       "content": [{"type": "text", "text": reply}]})
        return key


# -- the plan, played ------------------------------------------------------------------------------


def play(plan: Plan, root: Path) -> Driver:
    d = Driver(plan, root)
    for rel, text in d.world.files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    if plan.flag:
        add_flag(root, "notes/legacy.txt:1", "the legacy rate is wrong")
    w, count = plan.w, plan.decoys[0]
    prompt = f"set the values; counts are {count}" + (f", the rate is {w}" if plan.origin == "prompt" else "")
    d.claude("SessionStart", source="startup")
    d.claude("UserPromptSubmit", prompt=prompt)
    if plan.origin == "prompt":
        d.world.seen.append((0, Seen("prompt", "user")))
    for noise in plan.before:
        play_noise(d, noise)
    if plan.prior != "none" and plan.origin != "baseline":
        set_target(d, plan.good if plan.prior == "correct" else f"0.6{plan.seed:04d}", "edit")
    if plan.origin != "baseline":
        play_origin(d)
        introduce(d)
    for noise in plan.after:
        play_noise(d, noise)
    if plan.rebreak:
        set_target(d, plan.good, "edit")
        set_target(d, w, "edit")
    return d


def play_origin(d: Driver) -> None:
    plan, w = d.plan, d.plan.w
    origin = plan.origin
    if origin == "read":
        d.tool_read("notes/ext.txt")
    elif origin == "shell_cat":
        d.codex_shell("cat notes/ext.txt", ["notes/ext.txt"], d.world.files["notes/ext.txt"])
    elif origin == "shell_sed":
        d.codex_shell("sed -n 2,3p notes/ext.txt", ["notes/ext.txt"], "".join(d.world.files["notes/ext.txt"].splitlines(True)[1:3]))
    elif origin == "pinned_read":
        d.tool_read("spec/rates.md")
    elif origin == "command":
        d.bash(f"python3 -c 'print({w})'", f"{w}\n")
    elif origin == "command_probe":  # Codex parsed a read of a file that does not hold W; the output does
        d.codex_shell(f"cat notes/legacy.txt; python3 -c 'print({w})'", ["notes/legacy.txt"],
                      d.world.files["notes/legacy.txt"] + f"{w}\n")
    elif origin in ("internal", "internal_chain"):
        if origin == "internal_chain":
            d.tool_read("notes/ext.txt")
        d.tool_write("notes/draft.txt", f"draft\nRATE = {w}\n")
        d.tool_read("notes/draft.txt")
    elif origin == "subagent":
        d.agent(f"The rate is {w}.")
    # fresh, pinned, unread, oob: nothing observed


def introduce(d: Driver) -> None:
    plan = d.plan
    if plan.mode == "write" and plan.origin not in ("oob",):
        # the decoy values the multi-line write puts on the neighbouring lines, seen in other reads
        d.tool_read("notes/count.txt")
        d.tool_read("notes/date.txt")
    if plan.origin == "oob":
        old = d.world.files[TARGET[plan.family]]
        d.write(TARGET[plan.family], _with_value(plan, old, plan.w), "oob")
        return
    key = set_target(d, plan.w, plan.mode, parallel=plan.parallel)
    if plan.parallel:
        d.parallel_key = key


def _with_value(plan: Plan, text: str, value: str) -> str:
    if plan.family == "done":
        return f"DONE = {value}\n"
    lines = [f"RATE = {value}" if line.startswith("RATE = ") else line for line in text.splitlines()]
    return "\n".join(lines) + "\n"


def set_target(d: Driver, value: str, mode: str, parallel: bool = False) -> str:
    plan = d.plan
    rel = TARGET[plan.family]
    old = d.world.files[rel]
    new = _with_value(plan, old, value)
    shell = None
    if parallel:
        shell = d.key()
        d.pre("Bash", {"command": "sleep 1"}, shell)
    if mode == "write":
        count, date = plan.decoys
        new = f"COUNT = {count}\nRATE = {value}\nDATE = {date}\n"
        key = d.tool_write(rel, new)
    elif mode == "edit":
        line = next(line for line in old.splitlines() if line.startswith(("RATE = ", "DONE = ")))
        key = d.tool_edit(rel, line, line.split(" = ")[0] + f" = {value}")
    else:
        key = d.bash(f"sed -i 's/^RATE = .*/RATE = {value}/' {rel}", "", {rel: new})
    if shell is not None:
        d.outputs.setdefault("sleep 1", []).append("")
        d.post("Bash", {"command": "sleep 1"}, shell, {"stdout": "", "stderr": ""})
    return key


def play_noise(d: Driver, noise: str) -> None:
    plan = d.plan
    if noise == "decoy_read":
        d.tool_read("notes/legacy.txt")
    elif noise == "decoy_shell":
        d.bash("date +%Y", "2026\n")
    elif noise == "other_write":
        d.tool_write("notes/other.txt", f"OTHER = 0.5{d.n}\n")
    elif noise == "read_target":
        d.tool_read(TARGET[plan.family])
    elif noise == "shift" and plan.family == "rate":
        rel = TARGET[plan.family]
        d.tool_write(rel, f"# note {d.n}\n" + d.world.files[rel])


# -- the oracle --------------------------------------------------------------------------------------


@dataclass
class Expected:
    source: str  # check | flag
    level: str
    step: str | None  # the event key (`oob` for an out-of-band change set)
    lineage: str | None = None
    final: str | None = None


def _event(world: World, key: str) -> int:
    return world.keys.index(key) + 1


def _latest(world: World, before: int) -> Seen | None:
    """The last observation of W before event `before` starts; a command that showed a file the
    platform reported read passes that file on."""
    found = [(i, s) for i, s in world.seen if i < before]
    if not found:
        return None
    index, seen = found[-1]
    if seen.kind == "command":
        shown = [s for i, s in found if i == index and s.kind == "file"]
        return shown[-1] if shown else seen
    return seen


def _classify(world: World, seen: Seen | None) -> tuple[str, str | None, str | None]:
    """(external | internal | none, description, producer key)."""
    if seen is None:
        if world.plan.origin in ("pinned", "pinned_read"):
            return "external", "pinned:spec/rates.md", None
        return "none", None, None
    if seen.kind == "prompt":
        return "external", "prompt:user", None
    if seen.kind == "file":
        if seen.producer is None:
            return "external", f"file:{seen.ref}", None
        if seen.producer == "oob":
            return "external", f"out-of-band:{seen.ref}", None
        return "internal", f"file:{seen.ref}", seen.producer
    if seen.kind == "command":
        return "internal", f"command:{seen.ref}", seen.producer
    return "internal", f"subagent:{seen.ref}", seen.shown_by  # the Agent step that carried the reply


def _lineage(world: World, flip: str) -> Expected:
    kind, description, producer = _classify(world, _latest(world, _event(world, flip)))
    if kind == "none":
        return Expected("check", "provable", flip)
    if kind == "external":
        return Expected("check", "lineage_exact", flip, description)
    first, hops, step = description, 0, flip
    while kind == "internal" and producer is not None and hops < 5:
        hops += 1
        step = producer
        if description.startswith("subagent:"):  # before the Agent's read: the sub-agent's own reply,
            kind = "internal"  # which no recorded step produced: the chain ends inside the run
            break
        kind, description, producer = _classify(world, _latest(world, _event(world, step)))
    final = "lineage_exact" if kind == "external" else "provable"
    return Expected("check", "lineage_internal", step, first, final)


def expect(driver: Driver) -> list[Expected]:
    world, plan = driver.world, driver.plan
    found = []
    if plan.flag:
        found.append(Expected("flag", "heuristic", None))
    at_baseline = plan.origin == "baseline" or plan.family == "done"
    history = [(None, at_baseline), *world.target_history]
    flips = [key for (_, was), (key, now) in itertools.pairwise(history) if now and not was]
    if not flips:
        level = "heuristic" if plan.family == "rate" else "incomplete"
        return found + [Expected("check", level, None)]
    flip = flips[-1]
    if flip == "oob":
        return found + [Expected("check", "gap", "oob")]
    if flip == driver.parallel_key:
        return found + [Expected("check", "heuristic", flip)]
    return found + [_lineage(world, flip)]


# -- the comparison ----------------------------------------------------------------------------------


def observed(root: Path, session: str) -> tuple[list[Expected], dict, list[dict]]:
    run_dir = state_dir(root) / "runs" / session
    report = json.loads((run_dir / "report.json").read_text())
    log = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    keys = {r["step"]: r["key"].split("/")[-1] for r in log if r["type"] == "step_start"}
    rows = []
    for item in report["findings"]:
        key = keys.get(item["step"]) if item["step"] is not None else None
        key = "oob" if key and key.startswith("oob-") else key
        final = item["final_level"] if item["level"] == "lineage_internal" else None
        lineage = item["lineage_source"] if item["level"] in ("lineage_exact", "lineage_internal") else None
        rows.append(Expected(item["source"], item["level"], key, lineage, final))
    return rows, report, log


def reads_hold_only_their_origin(root: Path, log: list[dict], driver: Driver) -> None:
    """A read never holds bytes its origin did not contain: a file read is that file at some
    recorded state; a command read is that command's output."""
    from vacant.attribute.replay import Timeline
    from vacant.store.run import RunView

    store = ObjectStore(state_dir(root) / "objects")
    timeline = Timeline.of(RunView.build(log), store)
    for read in (r for r in log if r["type"] == "read"):
        data = store.get(read["object"])
        if read["origin"] == "file":
            states = {store.get(s[read["ref"]][3]) for s in timeline.states if read["ref"] in s}
            assert data in states, f"file read of {read['ref']} holds bytes the file never had: {data!r}"
        elif read["origin"] == "command":
            assert data.decode() in driver.outputs[read["ref"]], f"command read of {read['ref']!r}: {data!r}"


def shown(plan: Plan, driver: Driver, log: list[dict]) -> str:
    lines = [f"plan: {plan}", "events:"]
    lines += [f"  {r['seq']:>3} {r['type']:<10} " + json.dumps({k: v for k, v in r.items() if k not in
              ('v', 'seq', 'ts', 'type', 'prev', 'hash')})[:160] for r in log]
    return "\n".join(lines)


# -- running one plan ----------------------------------------------------------------------------


@pytest.fixture
def fast_home(isolated_home, monkeypatch):
    """isolated_home, with the reputation table and the signing key on FAST_TMP too."""
    with tempfile.TemporaryDirectory(prefix="vacant-diff-home-", dir=FAST_TMP) as home:
        monkeypatch.setenv("XDG_CONFIG_HOME", os.path.join(home, "config"))
        monkeypatch.setenv("VACANT_HOME", os.path.join(home, "data"))
        from vacant.core.keys import create_user_key

        create_user_key()  # the person's, as isolated_home made it
        yield Path(home)


@contextmanager
def recorded(plan: Plan) -> Iterator[tuple[Driver, Path]]:
    """The plan played through the hooks and stopped once (the Stop pipeline ran); the workspace
    lives until the block ends. The baseline probe, a detached process that only warns about
    vacuous checks, is off."""
    with mock.patch.object(tempfile, "tempdir", FAST_TMP), \
            tempfile.TemporaryDirectory(prefix="vacant-diff-") as scratch, \
            mock.patch.object(baseline_probe, "start", lambda root, run_dir: None):
        root = Path(scratch) / "ws"
        root.mkdir()
        mark_installed(root)  # `vacant init`: hooks record only in an installed workspace
        driver = play(plan, root)
        driver.claude("Stop", stop_hook_active=False)
        yield driver, root
