"""The labelling page in a real headless browser (Chromium driven by Selenium).

``ragcourt label serve`` runs as a subprocess on a free loopback port over a small judged
project; the browser labels three items with the keyboard, the labels are checked on disk,
the page is reloaded and must resume at the first unlabelled item, and ``u`` undoes the last
label. Skipped, with the reason, when Selenium, Chromium or chromedriver is missing
(``apt-get install chromium chromium-driver``; ``pip install selenium``). Screenshots (an
answer item, then a passage item) are written to the test's tmp folder and, when
``RAGCOURT_SCREENSHOT_DIR`` is set, copied there.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import polars as pl
import pytest
from _browser import chromium  # skips this module without Selenium / Chromium
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from ragcourt.core import catalog
from ragcourt.core.io import write_parquet
from ragcourt.core.schemas import frame_schema

QUESTIONS = [
    ("q1", "What did the President propose for infrastructure?", "A $1 trillion plan."),
    ("q2", "Which treaty was mentioned <b>first</b> & why?", "The NATO treaty."),
    ("q3", "How many jobs were created last year?", "Over 6 million jobs."),
]
SYSTEMS = ["dense-c256", "hybrid-c512"]


def _table(name: str, rows: list[dict[str, Any]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=frame_schema(name))


def _write_project(root: Path) -> None:
    qa = _table(
        "qa",
        [
            {"question_id": q, "question": text, "reference_answers": [ref], "doc_id": "d"}
            for q, text, ref in QUESTIONS
        ],
    )
    answers, verdicts, corr = [], [], []
    for s in SYSTEMS:
        for j, (q, _, ref) in enumerate(QUESTIONS):
            ok = (j + len(s)) % 2 == 0
            answers.append(
                {
                    "system": s,
                    "question_id": q,
                    "answer": ref if ok else "I think it was <script>alert('x')</script> 1998.",
                    "abstained": False,
                    "retrieved": [
                        {
                            "chunk_id": f"{q}-c{r}",
                            "rank": r,
                            "score": 1.0 / r,
                            "doc_id": "d",
                            "char_start": 0,
                            "char_end": 10,
                            "text": f"Passage {r} for {q}: {ref} The speech went on at length.",
                        }
                        for r in (1, 2)
                    ],
                    "query_variants": [],
                    "model": "m",
                }
            )
            verdicts.append(
                {
                    "system": s,
                    "question_id": q,
                    "abstained": False,
                    "final_verdict": ok,
                    "resolution": "agreement",
                }
            )
            corr.append({"system": s, "question_id": q, "correctness": float(ok)})
    rel = [
        {"question_id": q, "chunk_id": f"{q}-c{r}", "relevance": (r + j) % 3}
        for j, (q, _, _) in enumerate(QUESTIONS)
        for r in (1, 2)
    ]
    for name, rows in (
        ("answers", answers),
        ("verdicts", verdicts),
        ("correctness", corr),
        ("relevance", rel),
    ):
        write_parquet(_table(name, rows), root / catalog.path(name), name)
    write_parquet(qa, root / catalog.path("qa"), "qa")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture()
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """``ragcourt label serve`` in a subprocess on a free 127.0.0.1 port; stopped after."""
    _write_project(tmp_path)
    port = _free_port()
    log = (tmp_path / "server.log").open("w")
    code = "from ragcourt.cli.label_cmd import app; app()"
    args = ["serve", "--port", str(port), "--labeler", "tester", "--answers", "6"]
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *args], cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(url + "api/state", timeout=1).raise_for_status()
                break
            except httpx.HTTPError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    pytest.fail(f"server did not start: {(tmp_path / 'server.log').read_text()}")
                time.sleep(0.2)
        yield url, tmp_path / "data" / "labels" / "tester.jsonl"
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        log.close()


@pytest.fixture()
def browser(tmp_path: Path) -> Iterator[Any]:
    with chromium(tmp_path / "chromium-profile", 1200, 950, "--disable-quic") as driver:
        yield driver


def _wait_progress(driver: Any, done: int, total: int) -> None:
    WebDriverWait(driver, 15).until(
        lambda d: d.find_element(By.ID, "progress").text == f"{done} / {total} labelled"
    )


def _wait_position(driver: Any, position: int) -> None:
    WebDriverWait(driver, 15).until(
        lambda d: (
            d.find_element(By.TAG_NAME, "body").get_attribute("data-position") == str(position)
        )
    )


def _press(driver: Any, key: str) -> None:
    driver.find_element(By.TAG_NAME, "body").send_keys(key)


def test_label_three_items_reload_resume_and_undo(
    server: tuple[str, Path], browser: Any, tmp_path: Path
) -> None:
    url, label_file = server
    total = httpx.get(url + "api/state").json()["total"]
    assert total == 6 + 6  # 3 questions x 2 systems, and all 6 graded passages (<= 60)
    ids = [httpx.get(url + f"api/item/{i}").json()["item"] for i in range(total)]

    browser.get(url)
    _wait_position(browser, 0)
    _wait_progress(browser, 0, total)
    pressed: list[tuple[str, str | int]] = []
    for i in range(3):
        _wait_position(browser, i)
        kind = browser.find_element(By.TAG_NAME, "body").get_attribute("data-kind")
        assert kind == ids[i]["kind"]
        # only the buttons and fields of this kind of item are visible
        shown = {
            g: browser.find_element(By.ID, g).is_displayed()
            for g in ("answer-buttons", "passage-buttons", "answer-block", "passage-block")
        }
        other = "passage" if kind == "answer" else "answer"
        assert shown[f"{kind}-buttons"] and shown[f"{kind}-block"], shown
        assert not shown[f"{other}-buttons"] and not shown[f"{other}-block"], shown
        keys_values: list[tuple[str, str | int]] = (
            [("1", "correct"), ("i", "incorrect"), ("t", "cant_tell")]
            if kind == "answer"
            else [("2", 2), ("0", 0), ("1", 1)]
        )
        key, value = keys_values[i]
        _press(browser, key)
        pressed.append((ids[i]["item_id"], value))
        _wait_progress(browser, i + 1, total)
    _wait_position(browser, 3)

    # on disk: three records, in order, with the values pressed, the system hidden on screen
    lines = [json.loads(x) for x in label_file.read_text().splitlines()]
    assert [(r["item_id"], r["value"]) for r in lines] == pressed
    assert all(r["labeler"] == "tester" and r["source"] == "web" for r in lines)
    page_text = browser.find_element(By.TAG_NAME, "body").text
    assert not any(s in page_text for s in SYSTEMS)

    # reload: resumes at the first unlabelled item with the progress kept
    browser.refresh()
    _wait_position(browser, 3)
    _wait_progress(browser, 3, total)

    # user text is shown as text, never parsed as HTML
    q2 = next(i for i, it in enumerate(ids) if "<b>" in it["question"])
    browser.find_element(By.ID, "next")  # navigation exists
    for _ in range(abs(q2 - 3)):
        _press(browser, "\ue014" if q2 > 3 else "\ue012")  # arrow right / left
    _wait_position(browser, q2)
    assert "<b>first</b> &" in browser.find_element(By.ID, "question").text
    assert browser.find_elements(By.CSS_SELECTOR, "#question b") == []
    assert browser.find_elements(By.CSS_SELECTOR, "#answer script") == []
    shots = [tmp_path / "label_page_answer.png"]
    assert browser.save_screenshot(str(shots[0]))

    # u: undo the last label (item 2), shown again as unlabelled
    _press(browser, "u")
    _wait_position(browser, 2)
    _wait_progress(browser, 2, total)
    assert browser.find_element(By.ID, "current").text == "Not labelled yet."
    assert json.loads(label_file.read_text().splitlines()[-1])["kind"] == "undo"
    # label it again and land on the next unlabelled item
    _press(browser, "2" if ids[2]["kind"] == "answer" else "1")
    _wait_progress(browser, 3, total)
    _wait_position(browser, 3)

    shots.append(tmp_path / "label_page.png")
    assert browser.save_screenshot(str(shots[-1]))
    out = os.environ.get("RAGCOURT_SCREENSHOT_DIR")
    for shot in shots:
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        if out:
            Path(out).mkdir(parents=True, exist_ok=True)
            shutil.copy(shot, Path(out) / shot.name)
