"""Fixtures of the browser tests: a running preview and headless Chromium (selenium)."""
import os
import shutil
import sys
import tempfile

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "preview"))
from pvserver import Preview  # noqa: E402


def chromium_path():
    for p in ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"):
        if os.path.exists(p):
            return p
    pytest.skip("no chromium installed (scripts/install-deps.sh installs it)")


@pytest.fixture(scope="session")
def chromium():
    profile = tempfile.mkdtemp(prefix="tp-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium_path()
    for a in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
              "--disable-background-networking", "--disable-component-update", "--disable-sync",
              "--disable-dev-shm-usage", "--window-size=1100,860", "--user-data-dir=" + profile,
              "--hide-scrollbars"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    d = webdriver.Chrome(service=Service(drv), options=opts)
    d.set_page_load_timeout(30)
    d.set_script_timeout(30)
    yield d
    d.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def browser(chromium):
    """One Chromium for the session (it takes seconds to start); each test gets it on a
    blank page with the console log read out."""
    chromium.get("about:blank")
    chromium.get_log("browser")
    yield chromium
    chromium.get("about:blank")


@pytest.fixture
def preview():
    p = Preview("pond.json")
    yield p
    p.stop()
