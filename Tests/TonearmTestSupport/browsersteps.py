# The browser tests' common part (webremote.py, webbuffered.py): Debian's chromium, headless,
# driven by python3-selenium through chromium-driver with a fresh profile, and steps that wait on
# the page with a deadline or check at once, each printed, the failing one remembered.
# SPDX-License-Identifier: GPL-3.0-or-later
import tempfile

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait


class Steps:
    """A headless chromium (`driver`, 375 × 812) and the step under way (`step`, for the failure)."""

    def __init__(self, prefix, deadline, describe=lambda: ""):
        options = Options()
        options.binary_location = "/usr/bin/chromium"
        for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=375,812",
                  "--no-first-run", "--disable-extensions", "--user-data-dir=" + tempfile.mkdtemp(prefix=prefix + "-chromium-")]:
            options.add_argument(a)
        self.driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        self.deadline = deadline
        self.describe = describe
        self.step = "start"

    def wait(self, what, condition):
        """Waits until `condition()` holds (polled every 50 ms, a redrawn element read again)."""
        self.step = what
        WebDriverWait(self.driver, self.deadline, poll_frequency=0.05,
                      ignored_exceptions=[StaleElementReferenceException]).until(lambda d: condition())
        print("ok:", what, self.describe(), flush=True)

    def check(self, what, ok):
        self.step = what
        if not ok:
            raise AssertionError(what)
        print("ok:", what, flush=True)
