"""A pytest plugin (loaded by the suite's addopts): `xdist_group` marks that hold under pytest 9.

pytest-xdist's `--dist loadgroup` sends all tests of one `xdist_group` to one worker by giving
each test's node id the suffix `@<group>`, and it does that by setting the item's `_nodeid`.
pytest 9 keeps a node's id in `_id` (a structured NodeId), so that assignment changes nothing:
every group is split across the workers without a word, and a fixture a group shares (one wheel,
one recorded run) is built once per worker instead of once. This plugin adds the suffix the way
pytest 9 stores it, after xdist's own hook, and only where it is missing (with a pytest whose
`_nodeid` still works, xdist's suffix is already there and nothing changes).
tests/unit/suite/test_suite_groups.py runs a generated suite under `-n 2` to show the groups hold."""

from __future__ import annotations

import pytest


def group_suffix(item: pytest.Item) -> str | None:
    """`@name` (sorted and joined by `_`, as xdist names it) for an item's xdist_group marks."""
    names = {str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
             for mark in item.iter_markers("xdist_group")}
    return "@" + "_".join(sorted(names)) if names else None


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not getattr(config.option, "loadgroup", False):  # set on each xdist worker under --dist loadgroup
        return
    for item in items:
        suffix = group_suffix(item)
        if suffix is None or item.nodeid.endswith(suffix):
            continue
        if hasattr(item, "_id"):  # pytest >= 9
            from _pytest.nodeid import coerce_node_id

            item._id = coerce_node_id(item.nodeid + suffix)
        else:
            item._nodeid = item.nodeid + suffix
