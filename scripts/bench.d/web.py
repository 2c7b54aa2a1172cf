#!/usr/bin/env python3
# Part 10 of scripts/bench, the daemon's web remote (issue 21): `tonearm daemon --http` with a
# null output playing a queue of three generated songs, the page opened in Debian's headless
# chromium (python3-selenium and chromium-driver, run by /usr/bin/python3: web_browser.py beside
# this file):
#   - the page's weight (the document and every resource it loads, bytes sent and decoded) and
#     its load time (navigation start to the load event) and time to the first song shown (the
#     tab's title set from the first pushed state), median of --runs fresh loads;
#   - push latency: the time from `mpc next` (the command's start) to the page's title showing
#     the next song, beside the time an MPD client idling on `player` on the same daemon hears
#     of it (the daemon's own notification: the floor the page is measured against) and
#     mpc's own run time (process start and round trip). 20 nexts (quick 8).
# Goals (issue 21): the first load under 150 KB; a change appears "within a fraction of a
# second" — p95 of the push latency under 250 ms — and the page adds little above the
# protocol's own idle (ratio shown, for information). There is no peer: myMPD and Iris are not
# in Debian.
#   scripts/bench web [--quick] [--runs N]
# SPDX-License-Identifier: GPL-3.0-or-later
import json
import os
import subprocess
import time

from common import free_port, log, print_goal_rows, stats, work
from daemon import TonearmDaemon

NAME = "web"
TITLE = "the daemon's web remote in chromium: weight, load, push latency"
PEERS: list[str] = []
TOOLS = ["ffmpeg", "mpc", "chromium", "chromedriver"]
NEEDS_FLAC = False
BROWSER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "web_browser.py")


def bench(ctx) -> dict:
    tree = work("web-music")
    os.makedirs(tree)
    for i, (title, artist) in enumerate([("Song One", "Artist A"), ("Song Two", "Artist B"), ("晴天", "周杰伦")]):
        subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", f"sine=frequency={440 + 110 * i}:duration=600",
                        "-metadata", f"title={title}", "-metadata", f"artist={artist}", "-metadata", "album=Web",
                        "-c:a", "flac", os.path.join(tree, f"{i}.flac")], check=True)
    daemon = TonearmDaemon(ctx.tonearm, tree, name="web")
    http = free_port()
    daemon.cmd += ["--http", f"127.0.0.1:{http}"]
    daemon.start()
    env = dict(os.environ, MPD_HOST="127.0.0.1", MPD_PORT=str(daemon.port))
    for i in range(3):
        subprocess.run(["mpc", "-q", "add", f"{i}.flac"], env=env, check=True)
    subprocess.run(["mpc", "-q", "repeat", "on"], env=env, check=True)
    subprocess.run(["mpc", "-q", "play"], env=env, check=True)
    nexts = 8 if ctx.quick else 20
    out = subprocess.run(["/usr/bin/python3", BROWSER, f"http://127.0.0.1:{http}/", str(ctx.runs), str(nexts), str(daemon.port)],
                         env=env, capture_output=True, text=True, timeout=600)
    daemon.stop()
    if out.returncode != 0:
        raise RuntimeError(f"web_browser.py failed: {out.stdout[-2000:]}\n{out.stderr[-3000:]}")
    r = json.loads(out.stdout.strip().splitlines()[-1])
    r["push_s"] = stats(r["push"])
    r["idle_s"] = stats(r["idle"])
    r["mpc_s"] = stats(r["mpc"])
    r["load_s"] = stats(r["load"])
    r["first_song_s"] = stats(r["first_song"])
    return r


def report(r: dict, ctx) -> bool:
    log("")
    log("10. The web remote (tonearm daemon --http, headless chromium)")
    log(f"   page weight, first load: {r['transfer'] / 1024:.1f} KB sent, {r['decoded'] / 1024:.1f} KB decoded "
        f"({', '.join(f'{n} {b / 1024:.1f} KB' for n, b in r['parts'])})")
    log(f"   load event: median {r['load_s']['median'] * 1000:.0f} ms; first song shown: median "
        f"{r['first_song_s']['median'] * 1000:.0f} ms ({r['load_s']['n']} loads)")
    log(f"   mpc next → page title: median {r['push_s']['median'] * 1000:.1f} ms, p95 {r['push_s']['p95'] * 1000:.1f} ms; "
        f"→ an idling MPD client: median {r['idle_s']['median'] * 1000:.1f} ms; mpc's own run: median "
        f"{r['mpc_s']['median'] * 1000:.1f} ms ({r['push_s']['n']} nexts)")
    rows = [
        ("first load weight (KB)", r["transfer"] / 1024, None, "KB", "< 150", r["transfer"] < 150 * 1024),
        ("push latency p95 (s)", r["push_s"]["p95"], None, "s", "< 0.25", r["push_s"]["p95"] < 0.25),
        ("push latency vs idle client, median", r["push_s"]["median"], r["idle_s"]["median"], "s", "info", None),
        ("first song shown (s)", r["first_song_s"]["median"], None, "s", "info", None),
    ]
    return print_goal_rows(rows)


if __name__ == "__main__":
    import driver
    driver.main(["web"])
