"""The HTML run view in real headless Chromium: a planted-error run recorded through the real
recorder and Stop pipeline, written by `vacant report --html`, opened from file://; and a
generated 1,000-step run. Screenshots are saved as test artifacts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from artifacts import artifacts_dir
from gen_run import generate
from recording import HOSTILE, cli, planted_run
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

pytestmark = pytest.mark.usefixtures("isolated_home")


def open_view(browser, page: Path) -> None:
    browser.get(page.as_uri())
    WebDriverWait(browser, 60).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")


def severe_logs(browser) -> list[dict]:
    return [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]


@pytest.mark.slow
def test_planted_run_view_shows_the_finding_its_step_and_diff(browser, ws, tmp_path):
    run = planted_run(ws)
    page = tmp_path / "view.html"
    proc = cli(["report", "--html", str(page), "--json"], ws)
    assert proc.returncode == 0, proc.stderr
    text = page.read_text()
    assert not re.search(r"<(script|link|img|iframe|object)[^>]*\s(src|href)\s*=", text), "no external resources"
    open_view(browser, page)
    card = browser.find_element(By.CSS_SELECTOR, ".finding")
    assert card.is_displayed()
    assert card.find_element(By.CSS_SELECTOR, ".badge").text == "provable"
    assert card.find_element(By.CSS_SELECTOR, ".loc").text == "config.py:3"
    link = card.find_element(By.CSS_SELECTOR, "button[data-step]")
    assert link.text == "step 2 (Write)" and link.is_displayed()
    marked = card.find_element(By.CSS_SELECTOR, "pre.diff .hl")
    assert marked.is_displayed() and marked.text == "+RATE = 0.5"
    assert "vacant replay s1" in card.text
    browser.save_screenshot(str(artifacts_dir() / "run-view-finding.png"))

    row = browser.find_element(By.CSS_SELECTOR, "#step-3 .row")  # the shell step: closed until clicked
    assert not browser.find_elements(By.CSS_SELECTOR, "#step-3 .detail")
    row.click()
    detail = browser.find_element(By.CSS_SELECTOR, "#step-3 .detail")
    assert detail.is_displayed() and HOSTILE in detail.text  # the markup-laden name shows as text
    assert "<b>bold</b></script><script>document.title='pwned'</script>" in detail.text
    browser.save_screenshot(str(artifacts_dir() / "run-view-step.png"))

    # nothing from the run became markup: no injected image or script ran
    assert browser.title == f"vacant run {run.session}"
    assert browser.find_elements(By.TAG_NAME, "img") == []
    assert len(browser.find_elements(By.TAG_NAME, "script")) == 2
    assert browser.find_elements(By.CSS_SELECTOR, "b") and all(
        b.text != "bold" for b in browser.find_elements(By.TAG_NAME, "b"))
    assert severe_logs(browser) == []


@pytest.mark.slow
def test_a_thousand_step_run_loads_collapsed_and_opens_any_step(browser, ws, tmp_path):
    generate(ws, steps=1000)
    page = tmp_path / "big.html"
    proc = cli(["report", "gen-1000", "--html", str(page)], ws)
    assert proc.returncode == 0, proc.stderr
    open_view(browser, page)
    timing = browser.execute_script("var t = performance.timing; return [t.loadEventEnd - t.navigationStart,"
                                    " +document.body.getAttribute('data-render-ms')]")
    print(f"1,000-step view: {page.stat().st_size} bytes, load {timing[0]} ms, script render {timing[1]} ms")
    rows = browser.find_elements(By.CSS_SELECTOR, ".step")
    assert 30 <= len(rows) <= 60, len(rows)  # head, tail and the finding's neighbourhood; the rest collapsed
    assert len(browser.find_elements(By.CSS_SELECTOR, ".tick")) == 1000
    assert {e.text for e in browser.find_elements(By.CSS_SELECTOR, ".lane-label")} >= {"main agent", "out-of-band"}
    browser.find_element(By.CSS_SELECTOR, ".finding button[data-step='790']").click()
    detail = browser.find_element(By.CSS_SELECTOR, "#step-790 .detail")
    assert detail.is_displayed() and "RATE = 0.79" in detail.text
    hidden = browser.find_element(By.CSS_SELECTOR, "button.more")  # a collapsed range opens 200 at a time
    before = len(browser.find_elements(By.CSS_SELECTOR, ".step"))
    hidden.click()
    after = len(browser.find_elements(By.CSS_SELECTOR, ".step"))
    assert 0 < after - before <= 200
    browser.find_element(By.CSS_SELECTOR, ".tick[data-step='500']").click()  # a timeline tick opens its step
    assert browser.find_element(By.CSS_SELECTOR, "#step-500 .detail").is_displayed()
    browser.save_screenshot(str(artifacts_dir() / "run-view-1000-steps.png"))
    assert severe_logs(browser) == []


@pytest.mark.slow
def test_a_run_green_after_feedback_opens_on_its_rounds(browser, ws, tmp_path):
    run = planted_run(ws)  # Stop 1 blocks on config.py:3
    fixed = (ws / "config.py").read_text().replace("RATE = 0.5", "RATE = 0.08")
    run.write("config.py", fixed)
    run.stop()  # Stop 2: green
    page = tmp_path / "view.html"
    assert cli(["report", "--html", str(page)], ws).returncode == 0
    open_view(browser, page)
    first = browser.find_element(By.CSS_SELECTOR, "main > section")
    assert first.get_attribute("id") == "rounds" and first.is_displayed()
    assert "Stop 1" in first.text and "1 finding(s), block" in first.text
    assert first.find_element(By.CSS_SELECTOR, ".badge").text == "provable"
    assert first.find_element(By.CSS_SELECTOR, ".loc").text == "config.py:3"
    assert "after 1 blocked Stop(s)" in browser.find_element(By.CSS_SELECTOR, "#findings").text
    assert severe_logs(browser) == []
    browser.save_screenshot(str(artifacts_dir() / "run-view-rounds.png"))
