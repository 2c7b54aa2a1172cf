#!/usr/bin/env python3
# Part 3 of scripts/bench, the equalizer (10 bands, +3,+2,0,-1,-2,-1,0,+2,+3,+4 dB at 31 Hz …
# 16 kHz): rendering the benchmark FLAC to a 32-bit float WAV through it (tonearm render vs sox
# and ffmpeg -filter_threads 1), the kernel alone on one core (tonearm bench-eq), and the CPU of
# real-time playback with it (tonearm play --eq vs mpv --af=lavfi=[equalizer…], each also
# without the EQ).
#   scripts/bench eq [--quick] [--runs N] [--sequential] [--window S]   (also: --eq-only)
# SPDX-License-Identifier: GPL-3.0-or-later
import os

from common import log, measure_command, print_goal_rows, run, work
from players import Mpv, Player, Tonearm, play_players

NAME = "eq"
TITLE = "the equalizer"
PEERS = ["ffmpeg", "sox", "mpv", "hyperfine"]
TOOLS = ["ffmpeg", "sox", "mpv"]
NEEDS_FLAC = True
ONLY_FLAG = "--eq-only"


EQ_BANDS = [(31, 3), (62, 2), (125, 0), (250, -1), (500, -2), (1000, -1), (2000, 0), (4000, 2),
            (8000, 3), (16000, 4)]


def eq_spec() -> str:
    def f(hz: int) -> str:
        return f"{hz // 1000}k" if hz >= 1000 else str(hz)
    return ",".join(f"{f(hz)}:{g:+d}".replace("+0", "0") for hz, g in EQ_BANDS)


def lavfi_equalizers() -> str:
    return ",".join(f"equalizer=f={hz}:t=o:w=1:g={g}" for hz, g in EQ_BANDS)


def bench_eq_render(tonearm: str, flac: str, runs: int) -> dict:
    sox_eq = [a for hz, g in EQ_BANDS for a in ("equalizer", str(hz), "1o", f"{g:+d}")]
    commands = {
        "tonearm render --eq": [tonearm, "render", flac, "-o", work("eq-tonearm.wav"),
                                "--force", "--eq", eq_spec()],
        "sox equalizer ×10": ["sox", "-D", flac, "-e", "floating-point", "-b", "32",
                              work("eq-sox.wav"), *sox_eq],
        "ffmpeg equalizer ×10": ["ffmpeg", "-v", "error", "-y", "-filter_threads", "1", "-i", flac,
                                 "-af", lavfi_equalizers(), "-c:a", "pcm_f32le",
                                 work("eq-ffmpeg.wav")],
    }
    results = {}
    for name, cmd in commands.items():
        log(f"  equalizer render: {name} …")
        results[name] = measure_command(cmd, runs)
    for f in ("eq-tonearm.wav", "eq-sox.wav", "eq-ffmpeg.wav"):
        path = work(f)
        results.setdefault("sizes", {})[f] = os.path.getsize(path) if os.path.exists(path) else 0
        if os.path.exists(path):
            os.remove(path)
    return results


def bench_eq_kernel(tonearm: str, seconds: int) -> dict:
    log(f"  equalizer kernel: tonearm bench-eq --seconds {seconds} …")
    out = run([tonearm, "bench-eq", "--seconds", str(seconds), "--eq", eq_spec()],
              capture_output=True, text=True).stdout
    lines = out.strip().splitlines()
    factor = float(lines[-1].split("×")[0])
    return {"factor": factor, "detail": lines[0] if lines else ""}


def bench_eq_playback(tonearm: str, flac: str, window: float, sequential: bool) -> dict:
    players: list[Player] = [
        Tonearm(tonearm, flac, eq_spec(), "tonearm --eq"), Tonearm(tonearm, flac, None, "tonearm"),
        Mpv(flac, f"lavfi=[{lavfi_equalizers()}]", "mpv --af"), Mpv(flac, None, "mpv"),
    ]
    return play_players(players, window, sequential)


def report_eq(minutes: int, render: dict, kernel: dict, play: dict, window: float,
              sequential: bool) -> bool:
    seconds = minutes * 60
    timed = {k: v for k, v in render.items() if k != "sizes"}
    r0 = next(iter(timed.values()))
    log("")
    log(f"3. Equalizer: 10 one-octave bands {eq_spec()}")
    log(f"   a. rendering the {minutes}-minute FLAC to a 32-bit float WAV through it "
        f"(median wall of {r0['runs']} runs after a warm-up, {r0['tool']})")
    log(f"   {'command':<22} {'wall s':>8} {'CPU s':>8} {'× real time':>12}")
    for name, r in timed.items():
        log(f"   {name:<22} {r['wall']:8.3f} {r['cpu']:8.3f} {seconds / r['wall']:11.0f}×")
    log("   output sizes: " + ", ".join(f"{k} {v / 1e6:.1f} MB" for k, v in render["sizes"].items()))
    log(f"   b. the kernel alone, stereo, one core: {kernel['factor']:.0f}× real time ({kernel['detail']})")
    log(f"   c. playing to a real-time null output for a {window:.0f} s window "
        f"({'one after another' if sequential else 'the four at once'})")
    log(f"   {'player':<14} {'CPU s':>7} {'steady s/min':>13} {'VmHWM MB':>9}")
    for name, r in play.items():
        log(f"   {name:<14} {r['cpu']:7.2f} {r['steady_per_min']:13.3f} {r['VmHWM'] / 1024:9.1f}")
    log("")
    t = timed["tonearm render --eq"]
    sox, ff = timed["sox equalizer ×10"], timed["ffmpeg equalizer ×10"]
    faster = sox if sox["wall"] <= ff["wall"] else ff
    faster_name = "sox" if faster is sox else "ffmpeg"
    te, tn, me, mn = play["tonearm --eq"], play["tonearm"], play["mpv --af"], play["mpv"]
    rows = [
        (f"EQ render wall vs faster ({faster_name})", t["wall"], faster["wall"], "s", "< 0.5×",
         t["wall"] < 0.5 * faster["wall"]),
        ("EQ render wall vs sox", t["wall"], sox["wall"], "s", "(info)", None),
        ("EQ render wall vs ffmpeg", t["wall"], ff["wall"], "s", "(info)", None),
        ("EQ render CPU vs faster", t["cpu"], faster["cpu"], "s", "(info)", None),
        ("EQ kernel × real time (goal)", kernel["factor"], 3000.0, "×", "> 3000×", kernel["factor"] > 3000),
        ("EQ playback CPU/min steady vs mpv", te["steady_per_min"], me["steady_per_min"], "s", "(info)", None),
        ("EQ playback CPU incl. start vs mpv", te["cpu"], me["cpu"], "s", "(info)", None),
        ("tonearm CPU/min: EQ vs no EQ", te["steady_per_min"], tn["steady_per_min"], "s", "(info)", None),
        ("mpv CPU/min: EQ vs no EQ", me["steady_per_min"], mn["steady_per_min"], "s", "(info)", None),
    ]
    return print_goal_rows(rows)


def bench(ctx) -> dict:
    return {"minutes": ctx.minutes, "window": ctx.window, "sequential": ctx.args.sequential,
            "render": bench_eq_render(ctx.tonearm, ctx.flac, ctx.runs),
            "kernel": bench_eq_kernel(ctx.tonearm, ctx.minutes * 60),
            "playback": bench_eq_playback(ctx.tonearm, ctx.flac, ctx.window, ctx.args.sequential)}


def report(r: dict, ctx) -> bool:
    return report_eq(r["minutes"], r["render"], r["kernel"], r["playback"], r["window"], r["sequential"])


if __name__ == "__main__":
    import driver
    driver.main(["eq"])
