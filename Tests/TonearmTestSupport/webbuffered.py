#!/usr/bin/python3
# A stream's buffered part on the web remote's seek bar, in a real browser (Debian's chromium,
# headless, through python3-selenium and chromium-driver). Run by WebRemoteBrowserTests against a
# daemon that plays one network stream from the test HTTP server (httpd.py), throttled by its
# server-wide rate:
#   webbuffered.py URL SCREENSHOT_DIR SERVER_URL FASTER_RATE
# Waits (deadlines, on the page's DOM) until the line under the seek bar shows a part from the
# start that is short of the end; then sets the server's rate to FASTER_RATE bytes/s and waits
# for a longer part; then lifts the throttle and waits for all of the song. Each part is drawn
# as wide as the part the daemon pushed, and its accessible name says it in minutes and seconds.
# Prints one line per step; exits 1 with the failing step and what the page showed.
# SPDX-License-Identifier: GPL-3.0-or-later
import os
import sys
import urllib.request

from selenium.common.exceptions import TimeoutException

sys.dont_write_bytecode = True  # no __pycache__ in the source tree (SwiftPM would warn of it)
from browsersteps import Steps  # noqa: E402

url, shots, server, faster = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
DEADLINE = 30


# The buffered parts as drawn: each span's left and width in percent of the bar, the label.
READ = """
const b = document.getElementById("buffered");
return {hidden: b.hidden, label: b.getAttribute("aria-label"),
        parts: [...b.children].map((s) => [parseFloat(s.style.left), parseFloat(s.style.width)]),
        barWidth: b.getBoundingClientRect().width, spanWidths: [...b.children].map((s) => s.getBoundingClientRect().width)};
"""


def drawn():
    return driver.execute_script(READ)


steps = Steps("webbuffered", DEADLINE, describe=lambda: drawn())
driver = steps.driver
wait, check = steps.wait, steps.check


def server_rate(value):
    """The test server's throttle for the bodies under way (httpd.py's /_control/rate)."""
    with urllib.request.urlopen(f"{server}/_control/rate?value={value}", timeout=10) as r:
        r.read()


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
    server_rate(faster)
    wait("a longer part, pushed as more arrives", lambda: one_part(first + 5, 99.5))
    server_rate("none")
    wait("the whole song once it has all arrived", lambda: one_part(99.9, 100.1))
    d = drawn()
    check(f"the whole bar's width ({d['spanWidths'][0]:.1f} of {d['barWidth']:.1f} px)", abs(d["spanWidths"][0] - d["barWidth"]) < 1)
    check("labelled 0:00 to the song's end", d["label"] == "Buffered 0:00–0:24")
    driver.save_screenshot(os.path.join(shots, "web-remote-buffered-375.png"))
    print("PASS", flush=True)
except (AssertionError, TimeoutException) as e:
    print(f"FAIL at {steps.step!r}: {e!r}\ntitle={driver.title!r}\nbuffered={drawn()!r}", flush=True)
    sys.exit(1)
finally:
    driver.quit()
