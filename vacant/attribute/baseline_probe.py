"""The baseline probe: the acceptance checks on the run's baseline, behind the wall.

Started detached when a run starts (`start`, which the hook call hands the recorder: the agent
does not wait for it). The baseline is rebuilt in a scratch directory, so the probe sees the workspace exactly as it was before any work, whatever
the agent does meanwhile. A check that is already green there is vacuous: a warning in the Stop
report, never a refusal.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

RESULT = "vacuous.json"
# The probe's process loads the platform registry first, as every process that walls a command does
# (the wall names each platform's settings files); this layer may not import it, so the entry does.
ENTRY = ("import sys, vacant.platforms.all_platforms; from pathlib import Path; "
         "from vacant.attribute.baseline_probe import probe; probe(Path(sys.argv[1]), Path(sys.argv[2]))")


def start(root: Path, run_dir: Path) -> None:
    """The probe of a run that just started, detached: its own isolated interpreter (like every one
    vacant starts from a hook, vacant/core/trustenv.py), in its own session, output discarded.
    Cheap to import: the hook's session start calls it; the probe's own imports load there."""
    import subprocess

    from vacant.core.trustenv import for_child

    subprocess.Popen([sys.executable, "-I", "-c", ENTRY, str(root), str(run_dir)], env=for_child(os.environ),
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     start_new_session=True)


def probe(root: Path, run_dir: Path) -> list[str]:
    import shutil
    import tempfile
    import time

    from vacant.core.sandbox import unrecorded_paths
    from vacant.store.hasher import leaves_out
    from vacant.policy.contract.checks import site_for
    from vacant.policy.contract.red_first import probe_vacuous
    from vacant.store.run import RunView
    from vacant.store.states import load_manifest, materialize, store_for

    start = next(r for r in RunView.load(run_dir).records if r["type"] == "run_start")
    store = store_for(root)
    scratch = Path(tempfile.mkdtemp(prefix="vacant-probe-"))
    try:
        baseline = load_manifest(store, start["baseline"])
        materialize(baseline, scratch, store, live=root)
        # the baseline at the workspace's own path, behind the wall, as the Stop's replays see it
        site = site_for(root, scratch, unrecorded_paths(root, leaves_out(root)) or ())
        vacuous = probe_vacuous(scratch, site=site)
        (run_dir / RESULT).write_text(json.dumps({"vacuous": vacuous, "at": time.time()}))
        record_inputs(root, run_dir, scratch, start["baseline"], site)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return vacuous


def record_inputs(root: Path, run_dir: Path, scratch: Path, baseline: str, site) -> None:
    """Each test's inputs on the baseline, for every check that is one plain pytest or
    `python -m unittest` run (vacant.attribute.testinputs), and the tests of a plain jest or vitest
    run (vacant.attribute.relatedtests): the Stop leaves out the tests a change cannot affect."""
    from vacant.attribute import relatedtests, testinputs
    from vacant.policy.contract.checks import run_check
    from vacant.policy.contract.contract import ContractError, load_contract

    try:
        contract = load_contract(root)
    except ContractError:
        return
    for check, _guard in contract.all_checks() if contract else []:
        if relatedtests.selectable(check.command):
            _record_related(check, root, run_dir, scratch, baseline, site)
            continue
        if not testinputs.selectable(check.command):
            continue
        result = run_check(check, scratch, site=site, inputs=True)
        if result.inputs is None or result.timed_out:
            continue
        try:
            record = testinputs.record_of(check.name, check.command, baseline, os.environ, result.inputs,
                                          result.tests, root, site.unrecorded if site else ())
        except (ValueError, KeyError, TypeError, AttributeError):
            continue  # a record the plugin did not finish: the check runs whole
        testinputs.save(run_dir, record)


def _record_related(check, root: Path, run_dir: Path, scratch: Path, baseline: str, site) -> None:
    """A plain jest or vitest check's tests on the baseline (vacant.attribute.relatedtests): the
    Stop runs only the test files related to what changed."""
    from vacant.attribute import relatedtests
    from vacant.policy.contract.checks import run_check

    result = run_check(check, scratch, site=site)
    if result.timed_out:
        return
    try:
        record = relatedtests.record_of(check.name, check.command, baseline, os.environ, result.tests, root,
                                        site.unrecorded if site else ())
    except ValueError:
        return  # no test reported: the check runs whole
    relatedtests.save(run_dir, record)


def read(run_dir: Path) -> list[str]:
    return result(run_dir) or []


def result(run_dir: Path) -> list[str] | None:
    """The probe's verdict, or None while it has not written one (still running, or never ran)."""
    try:
        return list(json.loads((run_dir / RESULT).read_text())["vacuous"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
