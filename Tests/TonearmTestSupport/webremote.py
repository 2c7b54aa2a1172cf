#!/usr/bin/python3
# The daemon's web remote in a real browser: Debian's chromium, headless, driven by
# python3-selenium through chromium-driver. Run by WebRemoteBrowserTests against a daemon that
# plays two tagged songs ("Song One" by "Artist A", "Song Two" by "Artist B", in that order):
#   webremote.py URL SCREENSHOT_DIR        (MPD_HOST in the environment: the daemon's socket)
# Every wait is on the page's DOM or title, with a deadline; the daemon's state is read with mpc
# once the page shows that it changed (the page changes only when the daemon pushes its state).
# Prints one line per step; exits 1 with the failing step and the page's state.
# SPDX-License-Identifier: GPL-3.0-or-later
import os
import subprocess
import sys

from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

sys.dont_write_bytecode = True  # no __pycache__ in the source tree (SwiftPM would warn of it)
from browsersteps import Steps  # noqa: E402

url, shots = sys.argv[1], sys.argv[2]
DEADLINE = 10


def mpc(*args):
    r = subprocess.run(["mpc", *args], capture_output=True, text=True, timeout=DEADLINE)
    if r.returncode != 0:
        raise SystemExit(f"mpc {' '.join(args)} failed: {r.stderr}")
    return r.stdout


steps = Steps("webremote", DEADLINE)
driver = steps.driver
wait, check = steps.wait, steps.check


def button(name):
    """The button whose accessible name is `name` (as a screen reader would find it). A list the
    page redraws meanwhile (a push) is read again."""
    for _ in range(20):
        try:
            for b in driver.find_elements(By.TAG_NAME, "button"):
                if b.accessible_name == name:
                    return b
            break
        except StaleElementReferenceException:
            continue
    raise AssertionError(f"no button named {name!r}; buttons: {[b.accessible_name for b in driver.find_elements(By.TAG_NAME, 'button')]}")


def viewport(width, height, mobile):
    """A phone's or a desktop's viewport (Chrome's device emulation: a window cannot be that narrow)."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})


try:
    viewport(375, 812, True)
    driver.get(url)
    wait("the title shows the playing song", lambda: driver.title == "Song One — Artist A")
    check("the page shows title, artist and album",
          driver.find_element(By.ID, "title").text == "Song One" and driver.find_element(By.ID, "artist").text == "Artist A"
          and driver.find_element(By.ID, "album").text == "The Album")
    wait("the queue lists both songs", lambda: len(driver.find_elements(By.CSS_SELECTOR, "#queue li")) == 2)
    check("every control has an accessible name",
          all(b.accessible_name for b in driver.find_elements(By.TAG_NAME, "button")))
    widths = driver.execute_script("return [window.innerWidth, document.documentElement.scrollWidth]")
    check(f"nothing is wider than the phone's 375 px (viewport, content: {widths})", widths[0] == 375 and widths[1] <= 375)
    driver.save_screenshot(os.path.join(shots, "web-remote-375.png"))

    # The page drives the daemon.
    button("Next").click()
    wait("Next: the title follows", lambda: driver.title == "Song Two — Artist B")
    check("Next: mpc plays song 2", mpc("current").strip() == "Artist B - Song Two" and "[playing] #2/2" in mpc("status"))
    button("Pause").click()
    wait("Pause: the button becomes Play", lambda: any(b.accessible_name == "Play" for b in driver.find_elements(By.TAG_NAME, "button")))
    check("Pause: mpc says paused", "[paused]" in mpc("status"))
    driver.execute_script("const s = document.getElementById('seek'); s.value = 20; s.dispatchEvent(new Event('change'));")
    wait("Seek: the page shows 0:20", lambda: driver.find_element(By.ID, "elapsed").text == "0:20")
    check("Seek: mpc says 0:20", " 0:20/" in mpc("status"))

    # Changes made with mpc appear on the page, pushed.
    mpc("play")
    wait("mpc play: the button becomes Pause", lambda: any(b.accessible_name == "Pause" for b in driver.find_elements(By.TAG_NAME, "button")))
    mpc("prev")
    wait("mpc prev: the title follows", lambda: driver.title == "Song One — Artist A")
    # The queue: jump to a song, back with Previous (in order: shuffle is still off).
    button("Play Song Two — Artist B").click()
    wait("Jump: the title follows", lambda: driver.title == "Song Two — Artist B")
    check("Jump: mpc plays song 2", mpc("current").strip() == "Artist B - Song Two")
    wait("Jump: the queue marks song 2 as current",
         lambda: driver.find_element(By.CSS_SELECTOR, "#queue li[aria-current=true]").text.startswith("Song Two"))
    button("Previous").click()
    wait("Previous: the title follows", lambda: driver.title == "Song One — Artist A")
    check("Previous: mpc plays song 1", mpc("current").strip() == "Artist A - Song One")
    mpc("random", "on")
    wait("mpc random on: Shuffle is pressed", lambda: button("Shuffle").get_attribute("aria-pressed") == "true")
    mpc("volume", "35")
    wait("mpc volume 35: the slider follows", lambda: driver.find_element(By.ID, "volume").get_attribute("value") == "35")
    mpc("crossfade", "5")
    wait("mpc crossfade 5: the page shows 5 s", lambda: driver.find_element(By.ID, "crossfade").get_attribute("value") == "5")
    Select(driver.find_element(By.ID, "crossfade")).select_by_value("0")
    wait("Crossfade Off: mpc says 0", lambda: mpc("crossfade").strip() == "crossfade: 0")

    # The queue: remove the other song.
    button("Remove Song Two — Artist B").click()
    wait("Remove: the queue shows one song", lambda: len(driver.find_elements(By.CSS_SELECTOR, "#queue li")) == 1)
    check("Remove: mpc's queue has one song", mpc("-f", "%title%", "playlist") == "Song One\n")

    # The library: search in Chinese as you type, play next; move up by button (keyboard, phone).
    search = driver.find_element(By.ID, "search")
    search.send_keys("晴")
    wait("Search 晴: the library's search finds 晴天", lambda: any(b.accessible_name == "Play next: 晴天 — 周杰伦" for b in driver.find_elements(By.TAG_NAME, "button")))
    driver.save_screenshot(os.path.join(shots, "web-remote-375-search.png"))
    button("Play next: 晴天 — 周杰伦").click()
    wait("Play next: the queue shows two songs", lambda: len(driver.find_elements(By.CSS_SELECTOR, "#queue li")) == 2)
    check("Play next: mpc's queue has 晴天 after the current song", mpc("-f", "%title%", "playlist") == "Song One\n晴天\n")
    button("Move up 晴天 — 周杰伦").click()
    wait("Move up: 晴天 is first on the page", lambda: driver.find_element(By.CSS_SELECTOR, "#queue li").text.startswith("晴天"))
    check("Move up: mpc's queue follows", mpc("-f", "%title%", "playlist") == "晴天\nSong One\n")
    # Browse artists → albums → songs, add one.
    search.clear()
    search.send_keys(" ")
    wait("An emptied search shows the artists", lambda: any(b.accessible_name == "Artist Artist B" for b in driver.find_elements(By.TAG_NAME, "button")))
    button("Artist Artist B").click()
    wait("Artist B: the album is listed", lambda: any(b.accessible_name == "Album The Album" for b in driver.find_elements(By.TAG_NAME, "button")))
    button("Album The Album").click()
    wait("The Album: its song is listed", lambda: any(b.accessible_name == "Add Song Two — Artist B" for b in driver.find_elements(By.TAG_NAME, "button")))
    # Stars: the page's rating is the daemon's `rating` sticker (mpc reads it), and one set with mpc is pushed back.
    button("Rate 4 stars: Song Two — Artist B").click()
    wait("Rate 4 stars: four stars are pressed", lambda: button("Rate 4 stars: Song Two — Artist B").get_attribute("aria-pressed") == "true"
         and button("Rate 5 stars: Song Two — Artist B").get_attribute("aria-pressed") == "false")
    check("Rate: mpc reads the rating sticker", mpc("sticker", "two.flac", "get", "rating") == "rating=4\n")
    mpc("sticker", "two.flac", "set", "rating", "2")
    wait("A rating set with mpc is pushed: two stars", lambda: button("Rate 2 stars: Song Two — Artist B").get_attribute("aria-pressed") == "true"
         and button("Rate 3 stars: Song Two — Artist B").get_attribute("aria-pressed") == "false")
    button("Add Song Two — Artist B").click()
    wait("Add: the queue shows three songs", lambda: len(driver.find_elements(By.CSS_SELECTOR, "#queue li")) == 3)
    # Save as a playlist, clear, load it back.
    driver.find_element(By.ID, "save-name").send_keys("Web mix")
    button("Save queue").click()
    wait("Save: the playlist is listed", lambda: any(b.accessible_name == "Load playlist Web mix" for b in driver.find_elements(By.TAG_NAME, "button")))
    button("Clear queue").click()
    wait("Clear: the queue is empty", lambda: len(driver.find_elements(By.CSS_SELECTOR, "#queue li")) == 0)
    button("Load playlist Web mix").click()
    wait("Load: the queue shows three songs", lambda: len(driver.find_elements(By.CSS_SELECTOR, "#queue li")) == 3)
    check("Load: mpc's queue is the saved one", mpc("-f", "%title%", "playlist") == "晴天\nSong One\nSong Two\n")
    # Drag (a desktop's HTML5 drag and drop, its events dispatched as the browser sends them):
    # Song Two dropped on 晴天 takes its place.
    driver.execute_script("""
        const rows = document.querySelectorAll('#queue li'), from = rows[2], to = rows[0], data = new DataTransfer();
        from.dispatchEvent(new DragEvent('dragstart', { bubbles: true, dataTransfer: data }));
        to.dispatchEvent(new DragEvent('dragover', { bubbles: true, cancelable: true, dataTransfer: data }));
        to.dispatchEvent(new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer: data }));""")
    wait("Drag: Song Two is first on the page", lambda: driver.find_element(By.CSS_SELECTOR, "#queue li").text.startswith("Song Two"))
    check("Drag: mpc's queue follows", mpc("-f", "%title%", "playlist") == "Song Two\n晴天\nSong One\n")
    # Smart playlists: a song rated five stars with mpc is in Top Rated (its count pushed), shown
    # in the library's list, and added to the queue from there.
    mpc("sticker", "two.flac", "set", "rating", "5")
    wait("Top Rated: one song, pushed", lambda: button("Smart playlist Top Rated").text.replace("\n", " ").endswith("1 song"))
    button("Smart playlist Top Rated").click()
    wait("Top Rated shown: Song Two with five stars", lambda: any(b.accessible_name == "Add Song Two — Artist B" for b in driver.find_elements(By.TAG_NAME, "button"))
         and button("Rate 5 stars: Song Two — Artist B").get_attribute("aria-pressed") == "true")
    button("Add smart playlist Top Rated").click()
    wait("Add smart playlist: the queue shows four songs", lambda: len(driver.find_elements(By.CSS_SELECTOR, "#queue li")) == 4)
    check("Add smart playlist: mpc's queue ends with Song Two", mpc("-f", "%title%", "playlist") == "Song Two\n晴天\nSong One\nSong Two\n")
    # The equalizer: a preset chosen on the page is the daemon's (mpc shows the outputs' attribute).
    Select(driver.find_element(By.ID, "equalizer")).select_by_value("rock")
    wait("Equalizer rock: mpc's outputs show it", lambda: 'equalizer="rock"' in mpc("outputs"))
    # Outputs: the daemon's one (null) output, turned off and on.
    check("the output is listed, on", button("Output null").get_attribute("aria-pressed") == "true")
    button("Output null").click()
    wait("Output off: the button is no longer pressed", lambda: button("Output null").get_attribute("aria-pressed") == "false")
    check("Output off: mpc says disabled", "(null) is disabled" in mpc("outputs"))
    button("Output null").click()
    wait("Output on: the button is pressed again", lambda: button("Output null").get_attribute("aria-pressed") == "true")
    check("every control still has an accessible name", all(b.accessible_name for b in driver.find_elements(By.TAG_NAME, "button")))
    widths = driver.execute_script("return [window.innerWidth, document.documentElement.scrollWidth]")
    check(f"with the library shown, nothing is wider than 375 px ({widths})", widths[1] <= 375)
    viewport(1280, 800, False)
    driver.save_screenshot(os.path.join(shots, "web-remote-1280.png"))
    print("PASS", flush=True)
except (AssertionError, TimeoutException) as e:
    print(f"FAIL at {steps.step!r}: {e!r}\ntitle={driver.title!r}\n{driver.find_element(By.TAG_NAME, 'body').text}", flush=True)
    sys.exit(1)
finally:
    driver.quit()
