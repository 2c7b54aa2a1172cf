#!/usr/bin/env python3
# Part 4 of scripts/bench, system sound latency: a 0.2 s click played by a warm SystemSound
# (tonearm bench-sound) and by paplay, alternately, to a private PulseAudio server's null sink
# whose monitor is recorded with 1 ms fragments: from play() (paplay: its start) to the first
# sound at the monitor, and tonearm's from play() to the first samples handed to the server.
#   scripts/bench sound [--sounds N]   (also: --sound-only)
# SPDX-License-Identifier: GPL-3.0-or-later
import random
import subprocess
import time

from common import children, log, print_goal_rows, run, stats, work
from pulse import PrivatePulse, need_pulse_tools, watch_monitor

NAME = "sound"
TITLE = "system sound latency"
PEERS = ["paplay"]
TOOLS = ["ffmpeg"]
NEEDS_FLAC = False
ONLY_FLAG = "--sound-only"


def add_arguments(ap) -> None:
    ap.add_argument("--sounds", type=int, default=None, help="plays of each in part 4 (default 100, quick 20)")


def make_click(path: str) -> None:
    # A 0.2 s 1 kHz click, decaying (-26 dB at its end), 48 kHz stereo 16-bit: loud from its
    # first sample, so that its start is unambiguous in the recording.
    click = "0.5*cos(2*PI*1000*t)*exp(-15*t)"
    run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"aevalsrc='{click}|{click}':s=48000:d=0.2",
         "-c:a", "pcm_s16le", path])


def bench_sound(tonearm: str, count: int) -> dict:
    need_pulse_tools()
    click = work("click.wav")
    make_click(click)
    pulse = PrivatePulse(work("pulse"))
    try:
        watch = watch_monitor(pulse)
        bench = subprocess.Popen([tonearm, "bench-sound", click], env=pulse.env, stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
        children.append(bench)
        if bench.stdout.readline().strip() != "ready":
            raise RuntimeError("tonearm bench-sound did not start")
        handed, queued, t_heard, p_heard = [], [], [], []
        log(f"  system sound latency: {count} plays each, tonearm and paplay alternating …")
        for _ in range(count):
            # tonearm: play() on the warm SystemSound.
            watch.wait_silence(0.15)
            time.sleep(random.uniform(0, 0.02))  # no phase lock with the stream's requests
            mark = time.monotonic_ns()
            bench.stdin.write("play\n")
            bench.stdin.flush()
            fields = bench.stdout.readline().split()
            if len(fields) != 4 or fields[0] != "played":
                raise RuntimeError(f"tonearm bench-sound: unexpected output {fields}")
            t0, first = int(fields[1]), int(fields[2])
            onset = watch.onset_after(mark)
            if first:
                handed.append((first - t0) / 1e6)
                queued.append((onset - first) / 1e6)
            t_heard.append((onset - t0) / 1e6)
            # paplay of the same file.
            watch.wait_silence(0.15)
            time.sleep(random.uniform(0, 0.02))
            t0 = time.monotonic_ns()
            p = subprocess.Popen(["paplay", click], env=pulse.env, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            onset = watch.onset_after(t0)
            p.wait(timeout=10)
            p_heard.append((onset - t0) / 1e6)
        bench.stdin.close()
        bench.wait(timeout=10)
        watch.proc.terminate()
        server = subprocess.run(["pulseaudio", "--version"], capture_output=True, text=True).stdout.strip()
    finally:
        pulse.stop()

    return {"count": count, "handed": stats(handed), "queued": stats(queued), "tonearm_heard": stats(t_heard),
            "paplay_heard": stats(p_heard), "missing_handed": count - len(handed), "server": server}


def report_sound(r: dict, m: dict) -> bool:
    log("")
    log(f"4. System sound latency: a 0.2 s click (48 kHz stereo 16-bit WAV), {r['count']} plays each, "
        "tonearm and paplay alternating, to a private PulseAudio null sink whose monitor parec records "
        f"with 1 ms fragments ({m['paplay']}, {r['server']})")
    log(f"   {'from → to':<46} {'median ms':>10} {'p95 ms':>8} {'min ms':>8} {'max ms':>8}")
    for label, key in (("tonearm play() → first samples to the server", "handed"),
                       ("tonearm first samples to the server → heard", "queued"),
                       ("tonearm play() → heard at the monitor", "tonearm_heard"),
                       ("paplay start → heard at the monitor", "paplay_heard")):
        v = r[key]
        log(f"   {label:<46} {v['median']:10.2f} {v['p95']:8.2f} {v['min']:8.2f} {v['max']:8.2f}")
    if r["missing_handed"]:
        log(f"   ({r['missing_handed']} plays never showed non-silent samples to the probe)")
    log("")
    h, t, p = r["handed"], r["tonearm_heard"], r["paplay_heard"]
    rows = [
        ("sound play() → server, median", h["median"], 20.0, "ms", "< 20 ms", h["median"] < 20),
        ("sound play() → server, p95", h["p95"], 20.0, "ms", "< 20 ms", h["p95"] < 20),
        ("sound heard, median, vs paplay", t["median"], p["median"], "ms", "(info)", None),
        ("sound heard, p95, vs paplay", t["p95"], p["p95"], "ms", "(info)", None),
    ]
    return print_goal_rows(rows)


def bench(ctx) -> dict:
    return bench_sound(ctx.tonearm, ctx.args.sounds or (20 if ctx.quick else 100))


def report(r: dict, ctx) -> bool:
    return report_sound(r, ctx.machine)


if __name__ == "__main__":
    import driver
    driver.main(["sound"])
