"""Real headless Chromium (Debian's `chromium` + `chromium-driver`, installed by scripts/setup)
driven through Selenium. A missing browser fails the test; nothing is downloaded. Screenshots go
to $VACANT_TEST_ARTIFACTS (default: .test-artifacts/ at the repository root)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
_UNIT_SHOW = str(Path(__file__).resolve().parents[1] / "unit" / "show")
if _UNIT_SHOW not in sys.path:  # the in-process Recording helper
    sys.path.insert(0, _UNIT_SHOW)

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1280,1000")


@pytest.fixture
def browser(tmp_path):
    for binary in (CHROMIUM, CHROMEDRIVER):
        assert Path(binary).exists() or shutil.which(Path(binary).name), (
            f"{binary} is missing: scripts/setup installs Debian's chromium and chromium-driver")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path / 'chromium-profile'}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER if Path(CHROMEDRIVER).exists() else shutil.which("chromedriver")),
                              options=options)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def isolated_home(tmp_path, monkeypatch) -> Path:
    """As in tests/unit/conftest.py: the test's own HOME, signing key and reputation table."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("VACANT_HOME", str(tmp_path / "data"))
    for name in ("VACANT_STATE_DIR", "VACANT_DO"):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def ws(tmp_path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root
