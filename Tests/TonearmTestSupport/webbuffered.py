#!/usr/bin/python3
# A stream's buffered part on the web remote's seek bar, in a real browser (Debian's chromium,
# headless, through python3-selenium and chromium-driver). Run by WebRemoteBrowserTests against a
# daemon that plays one network stream that a throttled server sends slower than it plays:
#   webbuffered.py URL SCREENSHOT_DIR
# Waits (deadlines, on the page's DOM) until the line under the seek bar shows a part from the
# start that is short of the end, then a longer one, then all of the song; each is the width of
# the part the daemon pushed, and its accessible name says it in minutes and seconds.
# Prints one line per step; exits 1 with the failing step and what the page showed.
# SPDX-License-Identifier: GPL-3.0-or-later
import os
import sys
import tempfile

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

url, shots = sys.argv[1], sys.argv[2]
DEADLINE = 30

options = Options()
options.binary_location = "/usr/bin/chromium"
for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=375,812",
          "--no-first-run", "--disable-extensions", "--user-data-dir=" + tempfile.mkdtemp(prefix="webbuffered-chromium-")]:
    options.add_argument(a)
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
step = "start"

# The buffered parts as drawn: each span's left and width in percent of the bar, the label.
READ = """
const b = document.getElementById("buffered");
return {hidden: b.hidden, label: b.getAttribute("aria-label"),
        parts: [...b.children].map((s) => [parseFloat(s.style.left), parseFloat(s.style.width)]),
        barWidth: b.getBoundingClientRect().width, spanWidths: [...b.children].map((s) => s.getBoundingClientRect().width)};
"""


def drawn():
    return driver.execute_script(READ)


def wait(what, condition):
    global step
    step = what
    WebDriverWait(driver, DEADLINE, poll_frequency=0.05, ignored_exceptions=[StaleElementReferenceException]).until(lambda d: condition())
    print("ok:", what, drawn(), flush=True)


def check(what, ok):
    global step
    step = what
    if not ok:
        raise AssertionError(what)
    print("ok:", what, flush=True)


def one_part(low, high):
    d = drawn()
    return not d["hidden"] and len(d["parts"]) == 1 and d["parts"][0][0] == 0 and low < d["parts"][0][1] < high


try:
    driver.get(url)
    wait("the page shows the stream", lambda: driver.title != "Tonearm")
    wait("a part from the start, short of the end, under the seek bar", lambda: one_part(0.5, 60))
    first = drawn()["parts"][0][1]
    check("it is labelled from 0:00", drawn()["label"].startswith("Buffered 0:00–"))
    check("it is drawn (a visible width)", drawn()["spanWidths"][0] > 0)
    wait("a longer part, pushed as more arrives", lambda: one_part(first + 5, 99.5))
    wait("the whole song once it has all arrived", lambda: one_part(99.9, 100.1))
    d = drawn()
    check(f"the whole bar's width ({d['spanWidths'][0]:.1f} of {d['barWidth']:.1f} px)", abs(d["spanWidths"][0] - d["barWidth"]) < 1)
    check("labelled 0:00 to the song's end", d["label"] == "Buffered 0:00–0:24")
    driver.save_screenshot(os.path.join(shots, "web-remote-buffered-375.png"))
    print("PASS", flush=True)
except (AssertionError, TimeoutException) as e:
    print(f"FAIL at {step!r}: {e!r}\ntitle={driver.title!r}\nbuffered={drawn()!r}", flush=True)
    sys.exit(1)
finally:
    driver.quit()
