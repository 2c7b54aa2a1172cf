#!/usr/bin/python3
# The browser half of scripts/bench's part 10 (web.py), run by Debian's /usr/bin/python3 (where
# python3-selenium is): opens URL in headless chromium RUNS times (fresh profile each, so the
# first load is measured), reads the page's weight and timings from the Performance API, then
# NEXTS times runs `mpc next` and takes when the page's title changed (a MutationObserver's
# timestamp, performance.timeOrigin + now(): the wall clock, as time.time() here) and when an
# MPD client idling on `player` on PORT heard of it. Prints one JSON line.
#   web_browser.py URL RUNS NEXTS MPD_PORT
# SPDX-License-Identifier: GPL-3.0-or-later
import json
import socket
import subprocess
import sys
import tempfile
import threading
import time

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

url, runs, nexts, port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])

# Installed before the page's own script: the title's changes with their wall-clock times.
WATCH = """
window.__titles = [];
new MutationObserver(() => { window.__titles.push([performance.timeOrigin + performance.now(), document.title]); })
  .observe(document, { subtree: true, childList: true, characterData: true });
"""


def browser():
    options = Options()
    options.binary_location = "/usr/bin/chromium"
    for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900",
              "--no-first-run", "--disable-extensions", "--user-data-dir=" + tempfile.mkdtemp(prefix="bench-web-")]:
        options.add_argument(a)
    d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    d.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": WATCH})
    return d


def song_shown(d):
    return d.execute_script("return window.__titles.find(t => t[1].includes(' — ')) || null")


result = {"load": [], "first_song": [], "push": [], "idle": [], "mpc": []}
driver = None
for k in range(runs):
    if driver:
        driver.quit()
    driver = browser()
    driver.get(url)
    WebDriverWait(driver, 20, poll_frequency=0.02).until(lambda d: song_shown(d))
    WebDriverWait(driver, 20, poll_frequency=0.02).until(
        lambda d: d.execute_script("const n = performance.getEntriesByType('navigation')[0]; return n && n.loadEventEnd > 0"))
    nav = driver.execute_script("const n = performance.getEntriesByType('navigation')[0]; "
                                "return [n.loadEventEnd, n.transferSize, n.decodedBodySize, performance.timeOrigin]")
    resources = driver.execute_script("return performance.getEntriesByType('resource')"
                                      ".map(r => [r.name.split('/').pop() || r.name, r.transferSize, r.decodedBodySize])")
    shown = song_shown(driver)
    result["load"].append(nav[0] / 1000)
    result["first_song"].append((shown[0] - nav[3]) / 1000)
    if k == 0:
        result["transfer"] = nav[1] + sum(r[1] for r in resources)
        result["decoded"] = nav[2] + sum(r[2] for r in resources)
        result["parts"] = [["page", nav[1]]] + [[r[0], r[1]] for r in resources]


def idle_client(heard: list, ready: threading.Event, stop: threading.Event) -> None:
    s = socket.create_connection(("127.0.0.1", port))
    s.recv(4096)  # greeting
    buf = b""
    while not stop.is_set():
        s.sendall(b"idle player\n")
        ready.set()
        while b"OK\n" not in buf:
            chunk = s.recv(4096)
            if not chunk:
                return
            buf += chunk
        heard.append(time.time())
        buf = b""
        ready.clear()


for _ in range(nexts):
    before = len(driver.execute_script("return window.__titles"))
    heard: list[float] = []
    ready, stop = threading.Event(), threading.Event()
    t = threading.Thread(target=idle_client, args=(heard, ready, stop), daemon=True)
    t.start()
    ready.wait(5)
    time.sleep(0.05)  # the idle request reaches the daemon (a measurement's set-up, not a wait for a state)
    start = time.time()
    subprocess.run(["mpc", "-q", "next"], check=True)
    result["mpc"].append(time.time() - start)
    WebDriverWait(driver, 10, poll_frequency=0.01).until(lambda d: len(d.execute_script("return window.__titles")) > before)
    changed = driver.execute_script("return window.__titles")[before][0] / 1000
    result["push"].append(changed - start)
    stop.set()
    deadline = time.time() + 5
    while not heard and time.time() < deadline:
        time.sleep(0.01)
    if heard:
        result["idle"].append(heard[0] - start)
    time.sleep(0.3)  # let the song settle before the next change
driver.quit()
print(json.dumps(result))
