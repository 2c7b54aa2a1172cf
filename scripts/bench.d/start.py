#!/usr/bin/env python3
# Part 5 of scripts/bench, time to first audio: a generated tone, loud from its first sample,
# played from a local FLAC (tonearm play --output pulse --plain FILE vs mpv --no-video
# --no-config --ao=pulse FILE) and as an MP3 over HTTP from a server in this script on 127.0.0.1
# (tonearm play --output pulse URL vs mpv on the same URL), alternately, each process stopped at
# its first sound: from the process's start to the first sound at the monitor of a private
# PulseAudio null sink, as in part 4. mpv plays to that sink too (--ao=pulse), because --ao=null
# makes no sound to detect; for information only, the time until mpv --ao=null says it starts
# its output ("starting AO", read from its messages as they come).
#   scripts/bench start [--starts N]   (also: --start-only)
# SPDX-License-Identifier: GPL-3.0-or-later
import functools
import http.server
import os
import random
import shlex
import subprocess
import threading
import time

from common import children, log, print_goal_rows, run, stats, work
from pulse import MonitorWatch, PrivatePulse, need_pulse_tools, watch_monitor

NAME = "start"
TITLE = "time to first audio"
PEERS = ["mpv", "paplay"]
TOOLS = ["ffmpeg", "mpv"]
NEEDS_FLAC = False
ONLY_FLAG = "--start-only"


def add_arguments(ap) -> None:
    ap.add_argument("--starts", type=int, default=None,
                    help="runs of each player per case in part 5 (default 15, quick 5)")


def make_tone(flac: str, mp3: str, seconds: int = 10) -> None:
    # A 440 Hz tone at half of full scale, 48 kHz stereo (the sink's rate): loud from its first
    # sample, so that the first sound at the monitor is the start of playback.
    tone = "0.5*sin(2*PI*440*t)"
    run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"aevalsrc='{tone}|{tone}':s=48000:d={seconds}",
         "-c:a", "flac", "-sample_fmt", "s16", flac])
    run(["ffmpeg", "-v", "error", "-y", "-i", flac, "-c:a", "libmp3lame", "-b:a", "128k", mp3])


class QuietFileHandler(http.server.SimpleHTTPRequestHandler):
    """Files with Content-Length over HTTP/1.1 (no Range), without a log line per request."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass


class FileServer(http.server.ThreadingHTTPServer):
    """Serves `directory` on 127.0.0.1 at an ephemeral port from a thread of this process."""

    def __init__(self, directory: str):
        super().__init__(("127.0.0.1", 0), functools.partial(QuietFileHandler, directory=directory))
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/{name}"

    def handle_error(self, request, client_address) -> None:
        pass  # a player stopped in the middle of the body

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


def end_player(p: subprocess.Popen) -> None:
    p.terminate()
    try:
        p.wait(timeout=5)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def first_audio(name: str, cmd: list[str], env: dict, watch: MonitorWatch, timeout: float = 10) -> float:
    """Milliseconds from just before the player's process starts to the first sound at the
    monitor (which has been silent for 0.15 s before); the player is stopped right after it."""
    watch.wait_silence(0.15)
    time.sleep(random.uniform(0, 0.02))  # pacing: no phase lock with the sink's blocks
    t0 = time.monotonic_ns()
    p = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    children.append(p)
    try:
        onset = watch.onset_after(t0, timeout)
    except RuntimeError:
        raise RuntimeError(f"{name}: no sound at the monitor within {timeout:.0f} s "
                           f"(exit status {p.poll()}): {shlex.join(cmd)}")
    finally:
        end_player(p)
    return (onset - t0) / 1e6


def mpv_null_start(target: str, env: dict) -> float | None:
    """For information: mpv --ao=null has nothing to hear, so this is when it says its audio
    output starts ("[ao/null] starting AO" with --msg-level=ao=v), timestamped as the line is
    read, in ms from just before its start; None if it never says so."""
    t0 = time.monotonic_ns()
    p = subprocess.Popen(["mpv", "--no-config", "--no-video", "--ao=null", "--msg-level=all=no,ao=v", target],
                         env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, bufsize=1)
    children.append(p)
    started = None
    try:
        for line in p.stdout:
            if "starting AO" in line:
                started = time.monotonic_ns()
                break
    finally:
        end_player(p)
        p.stdout.close()
    return None if started is None else (started - t0) / 1e6


def bench_start(tonearm: str, runs: int) -> dict:
    need_pulse_tools()
    flac, mp3 = work("tone.flac"), work("tone.mp3")
    make_tone(flac, mp3)
    server = FileServer(work())
    url = server.url("tone.mp3")
    pulse = PrivatePulse(work("pulse-start"))
    cases = {
        "local": {"tonearm": [tonearm, "play", "--output", "pulse", "--plain", flac],
                  "mpv": ["mpv", "--no-video", "--no-config", "--ao=pulse", flac], "target": flac},
        "HTTP": {"tonearm": [tonearm, "play", "--output", "pulse", url],
                 "mpv": ["mpv", "--no-video", "--no-config", "--ao=pulse", url], "target": url},
    }
    results: dict = {}
    try:
        watch = watch_monitor(pulse)
        for case, c in cases.items():
            log(f"  time to first audio, {case}: {runs} runs each after a warm-up, tonearm and mpv alternating …")
            first_audio("tonearm", c["tonearm"], pulse.env, watch)
            first_audio("mpv", c["mpv"], pulse.env, watch)
            mpv_null_start(c["target"], pulse.env)
            t, m, n = [], [], []
            for _ in range(runs):
                t.append(first_audio("tonearm", c["tonearm"], pulse.env, watch))
                m.append(first_audio("mpv", c["mpv"], pulse.env, watch))
                ms = mpv_null_start(c["target"], pulse.env)
                if ms is not None:
                    n.append(ms)
            def shown(cmd: list[str]) -> str:
                return shlex.join(os.path.basename(a) if a in (tonearm, flac) else a for a in cmd)
            results[case] = {"tonearm": stats(t), "mpv": stats(m), "mpv_null": stats(n) if n else None,
                             "tonearm_cmd": shown(c["tonearm"]), "mpv_cmd": shown(c["mpv"])}
        watch.proc.terminate()
    finally:
        pulse.stop()
        server.stop()
    return {"runs": runs, "cases": results}


def report_start(r: dict, m: dict) -> bool:
    log("")
    log(f"5. Time to first audio: a 10 s 440 Hz tone at half of full scale (48 kHz stereo), a local FLAC "
        f"and a 128 kbit/s MP3 over HTTP from 127.0.0.1, {r['runs']} runs each after a warm-up, tonearm and "
        "mpv alternating, from the process's start to the first sound at the monitor of a private "
        f"PulseAudio null sink (parec, 1 ms fragments; {m['paplay']}). Both play to that sink: mpv with "
        "--ao=pulse, since --ao=null makes no sound to detect.")
    log(f"   {'case':<6} {'player':<34} {'median ms':>10} {'p95 ms':>8} {'min ms':>8} {'max ms':>8}")
    for case, c in r["cases"].items():
        rows = [("tonearm", c["tonearm"]), ("mpv --ao=pulse", c["mpv"])]
        if c["mpv_null"]:
            rows.append(("mpv --ao=null: says 'starting AO'", c["mpv_null"]))
        for name, v in rows:
            log(f"   {case:<6} {name:<34} {v['median']:10.1f} {v['p95']:8.1f} {v['min']:8.1f} {v['max']:8.1f}")
    for case, c in r["cases"].items():
        log(f"   {case}: {c['tonearm_cmd']}")
        log(f"   {' ' * len(case)}  {c['mpv_cmd']}")
    log("   (mpv --ao=null, for information: when mpv prints that its null output starts, as read from its "
        "output; nothing is heard, so it is not comparable with the rows above)")
    log("")
    lo, ht = r["cases"]["local"], r["cases"]["HTTP"]
    rows = [
        ("first audio, local, vs mpv", lo["tonearm"]["median"], lo["mpv"]["median"], "ms", "≤ 1×",
         lo["tonearm"]["median"] <= lo["mpv"]["median"]),
        ("first audio, HTTP, vs mpv", ht["tonearm"]["median"], ht["mpv"]["median"], "ms", "≤ 1×",
         ht["tonearm"]["median"] <= ht["mpv"]["median"]),
        ("first audio, local, p95, vs mpv", lo["tonearm"]["p95"], lo["mpv"]["p95"], "ms", "(info)", None),
        ("first audio, HTTP, p95, vs mpv", ht["tonearm"]["p95"], ht["mpv"]["p95"], "ms", "(info)", None),
    ]
    return print_goal_rows(rows)


def bench(ctx) -> dict:
    return bench_start(ctx.tonearm, ctx.args.starts or (5 if ctx.quick else 15))


def report(r: dict, ctx) -> bool:
    return report_start(r, ctx.machine)


if __name__ == "__main__":
    import driver
    driver.main(["start"])
