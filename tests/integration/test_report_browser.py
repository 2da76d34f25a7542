"""The report page in a real headless browser (Chromium driven by Selenium).

The report is rendered from the synthetic artifacts of ``tests/_report_data.py`` and opened as
a file: the headline section must be the first thing on the page, its four lead sentences
visible in the first screen, and every embedded plot must decode (natural width > 0). A
screenshot of the first screen and one of the whole headline are written to the test's tmp
folder and, when ``RAGCOURT_SCREENSHOT_DIR`` is set, copied there. Skipped, with the reason,
when Selenium, Chromium or chromedriver is missing (``apt-get install chromium
chromium-driver``; ``pip install selenium``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _browser import chromium  # skips this module without Selenium / Chromium
from _report_data import write_artifacts
from selenium.webdriver.common.by import By

from ragcourt.orchestration.params import Params
from ragcourt.reporting.stage import build

WIDTH, HEIGHT = 1280, 1000


@pytest.fixture()
def browser(tmp_path: Path) -> Iterator[Any]:
    with chromium(tmp_path / "chromium-profile", WIDTH, HEIGHT, "--hide-scrollbars") as driver:
        yield driver


def _report(root: Path) -> Path:
    write_artifacts(root)
    chunkings = {"c256": {"size": 256, "overlap": 32}}
    params = Params.model_validate(
        {"chunkings": chunkings, "qagen": {"reference_chunking": "c256"}}
    )
    html, _, _ = build(params, root)
    page = root / "report.html"
    page.write_text(html, encoding="utf-8")
    return page


def test_report_headline_is_first_and_visible(browser: Any, tmp_path: Path) -> None:
    browser.get(_report(tmp_path).as_uri())
    sections = browser.find_elements(By.TAG_NAME, "section")
    assert sections[0].get_attribute("id") == "headline"
    head = sections[0]
    leads = head.find_elements(By.CSS_SELECTOR, "p.lead")
    assert len(leads) == 4
    for lead in leads:  # all four sentences on the first screen, not scrolled to
        assert lead.is_displayed()
        assert lead.location["y"] + lead.size["height"] <= HEIGHT
    assert leads[0].text.startswith("Best system: dense-k5, ahead of the runner-up bm25-k5")
    assert "significantly better" in leads[0].text
    assert "tone-good" in (leads[0].get_attribute("class") or "")
    assert "Discrimination check" in leads[2].text and "Judge agreement" in leads[3].text
    # the two headline plots, and every plot of the page, decode as images
    assert len(head.find_elements(By.TAG_NAME, "img")) == 2
    widths = browser.execute_script(
        "return Array.from(document.images).map(i => i.complete ? i.naturalWidth : 0);"
    )
    assert widths and all(w > 0 for w in widths), widths
    shots = [tmp_path / "report_first_screen.png", tmp_path / "report_headline.png"]
    assert browser.save_screenshot(str(shots[0]))
    # a window as tall as the page, so the element screenshot holds the whole headline
    height = browser.execute_script("return document.documentElement.scrollHeight;")
    browser.set_window_size(WIDTH, min(int(height), 8000))
    assert head.screenshot(str(shots[1]))
    out = os.environ.get("RAGCOURT_SCREENSHOT_DIR")
    for shot in shots:
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        if out:
            Path(out).mkdir(parents=True, exist_ok=True)
            shutil.copy(shot, Path(out) / shot.name)
