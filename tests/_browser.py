"""Headless Chromium driven by Selenium, for the page tests.

Importing this module skips the importing test module, with the reason, when Selenium,
Chromium or chromedriver is missing (``apt-get install chromium chromium-driver``;
``pip install selenium``). :func:`chromium` starts one driver with a profile in a temp folder.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
if CHROMIUM is None or CHROMEDRIVER is None:
    pytest.skip(
        "no chromium/chromedriver on PATH (apt-get install chromium chromium-driver)",
        allow_module_level=True,
    )

BASE_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)


@contextmanager
def chromium(profile_dir: Path, width: int, height: int, *flags: str) -> Iterator[Any]:
    """A headless Chromium WebDriver (:data:`BASE_FLAGS`, the window size, ``flags``, a profile
    in ``profile_dir``), quit on exit."""
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = str(CHROMIUM)
    for flag in (
        *BASE_FLAGS,
        *flags,
        f"--window-size={width},{height}",
        f"--user-data-dir={profile_dir}",
    ):
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=opts)
    try:
        yield driver
    finally:
        driver.quit()
