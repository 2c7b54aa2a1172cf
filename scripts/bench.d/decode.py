#!/usr/bin/env python3
# Part 1 of scripts/bench, decoding speed: tonearm to the untimed null output (and to a WAV
# file, for reference) vs ffmpeg -threads 1, ffmpeg (default threading) and sox, on the
# benchmark FLAC; median wall of N runs after a warm-up (hyperfine when it is there).
#   scripts/bench decode [--quick] [--runs N]
# SPDX-License-Identifier: GPL-3.0-or-later
import os

from common import log, measure_command, print_goal_rows, work

NAME = "decode"
TITLE = "decoding speed"
PEERS = ["ffmpeg", "sox", "hyperfine"]
TOOLS = ["ffmpeg", "sox"]
NEEDS_FLAC = True


def bench(ctx) -> dict:
    wav = work("out.wav")
    t = ctx.tonearm
    commands = {
        "tonearm null:untimed": [t, "play", "--plain", "--output", "null:untimed", ctx.flac],
        "tonearm file:WAV": [t, "play", "--plain", "--force", "--output", f"file:{wav}", ctx.flac],
        "ffmpeg -threads 1": ["ffmpeg", "-v", "error", "-threads", "1", "-i", ctx.flac, "-f", "null", "-"],
        "ffmpeg": ["ffmpeg", "-v", "error", "-i", ctx.flac, "-f", "null", "-"],
        "sox -n": ["sox", ctx.flac, "-n"],
    }
    results = {}
    for name, cmd in commands.items():
        log(f"  decoding: {name} …")
        results[name] = measure_command(cmd, ctx.runs)
        if os.path.exists(wav):
            os.remove(wav)
    return {"minutes": ctx.minutes, "commands": results}


def report(r: dict, ctx) -> bool:
    dec, minutes = r["commands"], r["minutes"]
    runs = next(iter(dec.values()))
    log("")
    log(f"1. Decoding a {minutes}-minute 44.1 kHz stereo FLAC "
        f"(median wall of {runs['runs']} runs after a warm-up, {runs['tool']}; CPU = user + system, "
        f"{'mean' if runs['tool'] == 'hyperfine' else 'median'})")
    log(f"   {'command':<22} {'wall s':>8} {'CPU s':>8} {'× real time':>12}")
    for name, v in dec.items():
        log(f"   {name:<22} {v['wall']:8.3f} {v['cpu']:8.3f} {minutes * 60 / v['wall']:11.0f}×")
    log("")
    t, f1, ff = dec["tonearm null:untimed"], dec["ffmpeg -threads 1"], dec["ffmpeg"]
    return print_goal_rows([
        ("decode wall vs ffmpeg -threads 1", t["wall"], f1["wall"], "s", "≤ 1.1×", t["wall"] / f1["wall"] <= 1.1),
        ("decode CPU vs ffmpeg -threads 1", t["cpu"], f1["cpu"], "s", "(info)", None),
        ("decode wall vs ffmpeg (threads)", t["wall"], ff["wall"], "s", "(info)", None),
        ("decode wall vs sox", t["wall"], dec["sox -n"]["wall"], "s", "(info)", None),
    ])


if __name__ == "__main__":
    import driver
    driver.main(["decode"])
