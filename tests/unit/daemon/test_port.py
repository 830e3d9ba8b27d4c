"""The workspace's daemon port is kept for the life of its install, so it is chosen below the
kernel's ephemeral range: outgoing connections of every program take their local ports from that
range (read here from /proc, independently of the code)."""

from __future__ import annotations

import socket
from pathlib import Path

from vacant.daemon import lifecycle


def _range() -> tuple[int, int]:
    low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
    return int(low), int(high)


def test_kept_ports_are_below_the_ephemeral_range_and_free(tmp_path):
    low, _ = _range()
    for n in range(20):
        root = tmp_path / f"ws{n}"
        root.mkdir()
        port = lifecycle.ensure_config(root)["port"]
        assert lifecycle.PORT_FLOOR <= port < low
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", port))  # free when chosen
        assert lifecycle.ensure_config(root)["port"] == port  # kept


def test_a_taken_port_is_never_chosen(monkeypatch):
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        taken = held.getsockname()[1]
        draws = iter([taken - lifecycle.PORT_FLOOR] * 3 + [0])
        monkeypatch.setattr(lifecycle, "_ephemeral_low", lambda: taken + 2000)
        monkeypatch.setattr(lifecycle.secrets, "randbelow", lambda bound: next(draws))
        assert lifecycle._free_port() == lifecycle.PORT_FLOOR


def test_without_a_known_range_the_kernel_chooses(monkeypatch, tmp_path):
    monkeypatch.setattr(lifecycle, "EPHEMERAL", str(tmp_path / "missing"))
    port = lifecycle._free_port()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", port))
