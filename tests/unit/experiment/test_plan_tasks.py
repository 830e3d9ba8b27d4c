"""Task loading and hashing, the preregistered plan (hash, refusal after the first run, cell
order), the arms' `vacant do` options, and the starter set: every task red at its seed and green
(contract and hidden) with its reference solution."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vacant.do.runner import Runner
from vacant.experiment import Request, run_experiment
from vacant.experiment.arms import ARMS, GENERIC_FEEDBACK, parse_arms
from vacant.experiment.files import fresh_copy
from vacant.experiment.plan import PlanChanged, cells, make_plan, plan_hash, register
from vacant.experiment.runner import (
    ExperimentError,
    Settings,
    done_cells,
    judge,
    read_journal,
    tokens,
)
from vacant.experiment.tasks import TaskError, content_hash, load_task, load_tasks
from vacant.platforms.driver import DoError

REPO = Path(__file__).resolve().parents[3]
STARTER = REPO / "fixtures" / "experiment"
SOLUTIONS = REPO / "fixtures" / "experiment-solutions"


def make_task(root: Path, name: str = "t1", family: str = "programming") -> Path:
    task = root / name
    (task / "seed").mkdir(parents=True)
    (task / "hidden").mkdir()
    (task / "task.toml").write_text(f'family = "{family}"\n')
    (task / "prompt.md").write_text("do it\n")
    (task / "vacant.toml").write_text('[[check]]\nname = "c"\ncommand = "test -f done"\n')
    (task / "hidden" / "checks.toml").write_text('[[check]]\nname = "h"\ncommand = "test -f done"\n')
    (task / "seed" / "a.txt").write_text("a\n")
    return task


def test_a_task_loads_and_its_hash_covers_every_file(tmp_path):
    task = make_task(tmp_path)
    loaded = load_task(task)
    assert (loaded.name, loaded.family, loaded.prompt) == ("t1", "programming", "do it")
    for rel in ("seed/a.txt", "prompt.md", "hidden/checks.toml", "vacant.toml", "task.toml"):
        before = content_hash(task)
        path = task / rel
        path.write_text(path.read_text() + "\n")
        assert content_hash(task) != before, rel


@pytest.mark.parametrize("breaks, says", [
    (lambda t: (t / "prompt.md").write_text("  \n"), "empty"),
    (lambda t: (t / "task.toml").write_text("x = 1\n"), "family"),
    (lambda t: shutil.rmtree(t / "seed"), "seed"),
    (lambda t: (t / "seed" / "vacant.toml").write_text(""), "vacant.toml"),
    (lambda t: (t / "hidden" / "checks.toml").unlink(), "missing"),
    (lambda t: (t / "vacant.toml").write_text('task_family = "x"\n'), "no [[check]]"),
    (lambda t: (t / "seed" / "link").symlink_to("/etc/passwd"), "symlink"),
])
def test_a_broken_task_is_refused_with_its_file_named(tmp_path, breaks, says):
    task = make_task(tmp_path)
    breaks(task)
    with pytest.raises(TaskError, match=None) as error:
        load_task(task)
    assert says in str(error.value)


def plan_for(tmp_path: Path, repeats: int = 1, arms=("rs", "rf", "rl")) -> dict:
    tasks = load_tasks(tmp_path / "tasks")
    return make_plan(tasks, list(arms), repeats, 3, "claude", None, [], 1, 60.0)


def test_the_plan_is_registered_once_and_refused_when_changed_after_the_first_run(tmp_path):
    make_task(tmp_path / "tasks")
    out = tmp_path / "out"
    out.mkdir()
    plan = plan_for(tmp_path)
    digest = register(out, plan, started=False)
    assert json.loads((out / "plan.json").read_text()) == {"sha256": digest, "plan": plan}
    assert register(out, plan, started=True) == digest  # the same plan resumes
    changed = plan_for(tmp_path, repeats=2)
    with pytest.raises(PlanChanged, match=r"\(repeats\)"):
        register(out, changed, started=True)
    assert json.loads((out / "plan.json").read_text())["sha256"] == digest  # untouched
    assert register(out, changed, started=False) == plan_hash(changed)  # nothing ran yet: replaced
    (tmp_path / "tasks" / "t1" / "seed" / "a.txt").write_text("edited\n")
    with pytest.raises(PlanChanged, match="task t1"):
        register(out, plan_for(tmp_path), started=True)


def test_a_hand_edited_plan_file_is_refused(tmp_path):
    make_task(tmp_path / "tasks")
    out = tmp_path / "out"
    out.mkdir()
    register(out, plan_for(tmp_path), started=False)
    stored = json.loads((out / "plan.json").read_text())
    stored["plan"]["rounds"] = 1
    (out / "plan.json").write_text(json.dumps(stored))
    with pytest.raises(PlanChanged, match="edited"):
        register(out, stored["plan"], started=True)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 4), st.integers(0, 10**6), st.sets(st.sampled_from(["rs", "rf", "rl"]), min_size=1))
def test_cells_are_every_task_arm_repeat_once(repeats, seed, arms):
    plan = {"seed": seed, "repeats": repeats, "arms": {a: "" for a in arms},
            "tasks": [{"name": f"t{i}"} for i in range(5)]}
    order = cells(plan)
    assert sorted(order) == sorted((f"t{i}", a, r) for i in range(5) for a in arms for r in range(1, repeats + 1))
    assert [r for _, _, r in order] == sorted(r for _, _, r in order)  # repeat by repeat
    assert cells(plan) == order  # the seed fixes it


def test_arms():
    assert parse_arms("rl, RS") == ["rs", "rl"]
    for bad in ("rx", "rl,rl", ""):
        with pytest.raises(ValueError):
            parse_arms(bad)
    assert ARMS["rs"].do_args(3) == ["--rounds", "0"] and ARMS["rs"].attempts(3) == 4
    assert ARMS["rf"].do_args(2) == ["--rounds", "2", "--feedback-text", GENERIC_FEEDBACK]
    assert ARMS["rl"].do_args(2) == ["--rounds", "2"] and ARMS["rl"].attempts(2) == 1
    assert not any(ch.isdigit() for ch in GENERIC_FEEDBACK) and ":" not in GENERIC_FEEDBACK  # names no place


def test_tokens_sums_top_level_usage_and_says_none_when_absent():
    out = "\n".join([
        json.dumps({"type": "result", "usage": {"input_tokens": 10, "cache_read_input_tokens": 5, "output_tokens": 3},
                    "modelUsage": {"m": {"usage": {"input_tokens": 999}}}}),
        "not json", "{broken",
        json.dumps({"type": "turn.completed", "usage": {"input_tokens": 1, "output_tokens": 2}}),
    ])
    assert tokens(out) == (16, 5)
    assert tokens("hello\n{}") == (None, None)


STARTER_TASKS = load_tasks(STARTER)


def test_the_starter_set_has_ten_programming_and_five_general_tasks():
    families = [t.family for t in STARTER_TASKS]
    assert families.count("programming") >= 10 and families.count("general") >= 5


@pytest.mark.slow
@pytest.mark.parametrize("task", STARTER_TASKS, ids=lambda t: t.name)
def test_each_starter_task_is_red_at_its_seed_and_green_with_its_solution(tmp_path, task):
    ws = fresh_copy(task.seed, tmp_path / "ws")
    shutil.copy(task.path / "vacant.toml", ws)
    assert judge(task, ws) == (False, False)
    shutil.copytree(SOLUTIONS / task.name, ws, dirs_exist_ok=True)
    assert judge(task, ws) == (True, True)
    assert not (ws / "_hidden").exists()  # the hidden checks ran on a copy


def test_a_torn_journal_line_is_skipped_and_its_cell_is_not_done(tmp_path):
    lines = [json.dumps({"event": "start", "cell": "a/rl/1"}), json.dumps({"event": "done", "cell": "a/rl/1"}),
             json.dumps({"event": "start", "cell": "b/rl/1"}), '{"event": "done", "cell": "b/r']
    (tmp_path / "journal.jsonl").write_text("\n".join(lines))
    assert set(done_cells(read_journal(tmp_path))) == {"a/rl/1"}


def test_vacant_do_refuses_an_empty_feedback_text(tmp_path):
    with pytest.raises(DoError, match="empty"):
        Runner(["claude", "-p", "x"], tmp_path, "claude", 1, feedback_text="  ")


def test_an_out_directory_holding_other_files_is_refused_and_left_alone(tmp_path):
    make_task(tmp_path / "tasks")
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.md").write_text("mine\n")
    settings = Settings(out, "claude", "claude", None, [], 60.0)
    with pytest.raises(ExperimentError, match="other files"):
        run_experiment(Request(tmp_path / "tasks", ["rl"], 1, 1, 1, settings), print)
    assert sorted(p.name for p in out.iterdir()) == ["summary.md"] and (out / "summary.md").read_text() == "mine\n"
