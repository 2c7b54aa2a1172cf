#!/usr/bin/env python3
# Part 2 of scripts/bench, playback cost: tonearm, MPD (null audio_output) and mpv (--ao=null,
# timed) play the benchmark FLAC to a real-time null output, together (or --sequential), for a
# window (60 s, 10 s with --quick). Per player: CPU from the request to play to the window's end
# (/proc/PID/stat), and over the steady span (from min(5 s, a quarter of the window) on) the run
# time of each thread from /proc/PID/task/*/schedstat and its wake-ups (context switches), as CPU
# seconds per minute and wake-ups per second; memory at the end. The cost of FLAC decoding alone
# is measured too (ffmpeg -threads 1 decoding 40 s and 4 s of the file, the difference scaled to
# a minute, which takes its start-up out), so that what each player adds above decoding is
# compared: the goal is tonearm adding at most half of what MPD adds.
#   scripts/bench playback [--quick] [--sequential] [--window S]
# SPDX-License-Identifier: GPL-3.0-or-later
import statistics

from common import log, print_goal_rows, run_timed
from players import Mpd, Mpv, Tonearm, play_players

NAME = "playback"
TITLE = "playback cost"
PEERS = ["mpd", "mpv", "ffmpeg"]
TOOLS = ["mpd", "mpc", "mpv", "ffmpeg"]
NEEDS_FLAC = True


def decode_per_minute(flac: str, runs: int = 5) -> float:
    """CPU seconds FFmpeg's FLAC decoder (-threads 1) spends per minute of this audio: 40 s and
    4 s decoded, `runs` times each alternately, the medians' difference scaled to 60 s."""
    def cpu(seconds: int) -> float:
        return run_timed(["ffmpeg", "-v", "error", "-threads", "1", "-t", str(seconds), "-i", flac,
                          "-f", "null", "-"])["cpu"]
    long, short = [], []
    for _ in range(runs):
        long.append(cpu(40))
        short.append(cpu(4))
    return max(0.0, statistics.median(long) - statistics.median(short)) * 60 / 36


def bench(ctx) -> dict:
    players = [Tonearm(ctx.tonearm, ctx.flac), Mpd(ctx.flac), Mpv(ctx.flac)]
    result = play_players(players, ctx.window, ctx.args.sequential)
    log("  playback: FFmpeg's FLAC decoding alone (ffmpeg -threads 1, 40 s and 4 s) …")
    return {"window": ctx.window, "sequential": ctx.args.sequential, "players": result,
            "decode_per_min": decode_per_minute(ctx.flac)}


def print_threads(name: str, r: dict) -> None:
    busy = sorted(r["threads"].items(), key=lambda kv: -kv[1]["run_s"])
    log(f"   {name}: per thread over the steady {r['steady_span']:.1f} s (schedstat run time; "
        "wake-ups = context switches)")
    for tname, t in busy:
        log(f"     {tname:<28} {t['per_min'] * 1000:9.1f} ms/min {t['wakeups_per_s']:8.1f} wake-ups/s")


def report(r: dict, ctx) -> bool:
    play, window, dec = r["players"], r["window"], r["decode_per_min"]
    log("")
    log(f"2. Playing to a real-time null output for a {window:.0f} s window "
        f"({'one after another' if r['sequential'] else 'the three at once'}); steady = from "
        f"{min(5.0, window / 4):.1f} s on, schedstat of every thread")
    log(f"   {'player':<8} {'CPU s':>7} {'steady s/min':>13} {'wake-ups/s':>11} {'VmHWM MB':>9} "
        f"{'RssAnon MB':>11} {'RssFile MB':>11} {'Pss MB':>7} {'threads':>8}")
    for name, v in play.items():
        log(f"   {name:<8} {v['cpu']:7.2f} {v['steady_per_min']:13.3f} {v['wakeups_per_s']:11.1f} "
            f"{v['VmHWM'] / 1024:9.1f} {v.get('RssAnon', 0) / 1024:11.1f} {v.get('RssFile', 0) / 1024:11.1f} "
            f"{v.get('Pss', 0) / 1024:7.1f} {v.get('Threads', 0):8d}")
    log(f"   FFmpeg's FLAC decoding alone (ffmpeg -threads 1, 40 s − 4 s, scaled): {dec:.3f} CPU-s per minute")
    for name in ("tonearm", "mpd"):
        print_threads(name, play[name])
    log("")
    tp, mpd, mpv = play["tonearm"], play["mpd"], play["mpv"]
    t_added, m_added = tp["steady_per_min"] - dec, mpd["steady_per_min"] - dec
    return print_goal_rows([
        ("playback CPU/min above decoding vs MPD", t_added, m_added, "s", "≤ 0.5×", t_added <= 0.5 * m_added),
        ("playback CPU/min, steady, vs MPD", tp["steady_per_min"], mpd["steady_per_min"], "s", "(info)", None),
        ("playback wake-ups/s vs MPD", tp["wakeups_per_s"], mpd["wakeups_per_s"], "/s", "(info)", None),
        ("playback CPU incl. start-up vs MPD", tp["cpu"], mpd["cpu"], "s", "(info)", None),
        ("playback CPU/min, steady, vs mpv", tp["steady_per_min"], mpv["steady_per_min"], "s", "(info)", None),
        ("peak memory (VmHWM) vs MPD", tp["VmHWM"] / 1024, mpd["VmHWM"] / 1024, "MB", "< 30 MB",
         tp["VmHWM"] / 1024 < 30),
        ("peak memory (VmHWM) vs mpv", tp["VmHWM"] / 1024, mpv["VmHWM"] / 1024, "MB", "(info)", None),
        ("private memory (RssAnon) vs MPD", tp["RssAnon"] / 1024, mpd["RssAnon"] / 1024, "MB", "(info)", None),
    ])


if __name__ == "__main__":
    import driver
    driver.main(["playback"])
