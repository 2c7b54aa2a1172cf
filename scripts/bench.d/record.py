#!/usr/bin/env python3
# Part 11 of scripts/bench, recording (issue 22): `tonearm record` against `parecord` and
# `ffmpeg -f pulse`, all three recording the same source of a private PulseAudio server (a
# module-sine-source: a 440 Hz sine at 48 kHz) in one run:
# - time to the first sample: from the process's start to its record stream's creation on the
#   server (`pactl subscribe`: "new" on a source-output) and to its file's first audio bytes
#   (WAV, 10 starts each, alternating);
# - CPU per minute of recording to FLAC (the three at once for --record-window seconds, default
#   60, quick 10: user + system from wait4);
# - holes over --record-holes seconds (default 600, quick 30; the three at once, to WAV): the
#   recording is a pure sine, so every sample is predicted from the two before it
#   (x[n+1] = 2·cos(ω)·x[n] − x[n−1]); a gap of silence or a jump where samples were lost breaks
#   the prediction, and each run of broken predictions is one hole.
#   scripts/bench record [--record-window S] [--record-holes S]
# SPDX-License-Identifier: GPL-3.0-or-later
import math
import os
import select
import signal
import subprocess
import time
import wave
from array import array

from common import children, interrupt, log, print_goal_rows, stats, work
from pulse import PrivatePulse, need_pulse_tools

NAME = "record"
TITLE = "recording"
PEERS = []
TOOLS = ["ffmpeg", "parecord"]
NEEDS_FLAC = False

RATE = 48000
FREQ = 440.0
SOURCE = "bench_sine"


def add_arguments(ap) -> None:
    ap.add_argument("--record-window", type=float, default=None,
                    help="part record: seconds of the CPU measure (default 60, quick 10)")
    ap.add_argument("--record-holes", type=float, default=None,
                    help="part record: seconds of the holes measure (default 600, quick 30)")
    ap.add_argument("--record-starts", type=int, default=None,
                    help="part record: starts of each recorder for the first sample (default 10, quick 4)")


def commands(tonearm: str, path: str, seconds: float | None) -> dict:
    """The three recorders writing `path` (its extension chooses WAV or FLAC), 48 kHz stereo
    16-bit from the sine source; `seconds`: stop by themselves (parecord cannot: it is ended)."""
    flac = path.endswith(".flac")
    t = ["--duration", f"{seconds:g}"] if seconds else []
    f = ["-t", f"{seconds:g}"] if seconds else []
    return {
        "tonearm": [tonearm, "record", path, "--source", SOURCE, "--rate", str(RATE), "--channels", "2", "--bits", "16",
                    "--force", *t],
        "parecord": ["parecord", "-d", SOURCE, f"--rate={RATE}", "--channels=2", "--format=s16le",
                     f"--file-format={'flac' if flac else 'wav'}", path],
        "ffmpeg": ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "pulse", "-sample_rate", str(RATE), "-channels", "2",
                   "-i", SOURCE, *f, "-c:a", "flac" if flac else "pcm_s16le", path],
    }


def first_sample(pulse: PrivatePulse, name: str, cmd: list[str], path: str, timeout: float = 10) -> dict:
    """Seconds from the start of `cmd` to its source-output's creation and to its file's first
    audio bytes (past a WAV header)."""
    watch = subprocess.Popen(["pactl", "subscribe"], env=pulse.env, stdout=subprocess.PIPE, text=True)
    children.append(watch)
    try:
        if os.path.exists(path):
            os.remove(path)
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, env=pulse.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        children.appinterrupt(p)
        stream = data = None
        while (stream is None or data is None) and time.monotonic() - t0 < timeout:
            ready, _, _ = select.select([watch.stdout], [], [], 0.0005)
            if ready and stream is None:
                line = watch.stdout.readline()
                if "'new' on source-output" in line:
                    stream = time.monotonic() - t0
            if data is None:
                try:
                    if os.path.getsize(path) > 44 + 4:
                        data = time.monotonic() - t0
                except OSError:
                    pass
        interrupt(p)
        if stream is None or data is None:
            raise RuntimeError(f"{name}: no stream or no data within {timeout} s")
        return {"stream": stream, "data": data}
    finally:
        watch.terminate()
        watch.wait()


def holes_in(path: str) -> dict:
    """The holes of a recording of the sine: runs of samples (left channel) that the two before
    them do not predict, counted once each, from 0.1 s in (a stream's first frames are not
    judged); and the seconds recorded."""
    with wave.open(path, "rb") as w:
        frames = w.getnframes()
        raw = array("h")
        raw.frombytes(w.readframes(frames))
    left = raw[0::2][RATE // 10:]
    if len(left) < RATE:
        return {"seconds": frames / RATE, "holes": -1, "amplitude": 0}
    c = 2 * math.cos(2 * math.pi * FREQ / RATE)
    amplitude = max(abs(min(left[:RATE])), abs(max(left[:RATE])))
    # 16-bit rounding of three samples puts the prediction a few units off; a hole (silence, or
    # the phase jump of lost samples) puts it off by a good part of the amplitude.
    limit = max(8.0, amplitude * 0.02)
    holes, inside = 0, False
    a, b = float(left[0]), float(left[1])
    for x in left[2:]:
        bad = abs(x - (c * b - a)) > limit
        if bad and not inside:
            holes += 1
        inside = bad
        a, b = b, float(x)
    return {"seconds": frames / RATE, "holes": holes, "amplitude": amplitude}


def bench(ctx) -> dict:
    need_pulse_tools()
    quick = ctx.quick
    a = ctx.args
    window = a.record_window or (10.0 if quick else 60.0)
    span = a.record_holes or (30.0 if quick else 600.0)
    starts = a.record_starts or (4 if quick else 10)
    pulse = PrivatePulse(work("record-pulse"))
    try:
        subprocess.run(["pactl", "load-module", "module-sine-source", f"source_name={SOURCE}", f"rate={RATE}",
                        f"frequency={FREQ:g}"], env=pulse.env, check=True, stdout=subprocess.DEVNULL)
        names = ["tonearm", "parecord", "ffmpeg"]
        # 1. The first sample, alternating.
        log(f"  record: first sample, {starts} starts each …")
        first = {n: [] for n in names}
        for _ in range(starts):
            for n in names:
                path = work(f"first-{n}.wav")
                first[n].append(first_sample(pulse, n, commands(ctx.tonearm, path, None)[n], path))
        # 2. CPU per minute to FLAC, the three at once.
        log(f"  record: CPU while recording {window:g} s to FLAC, the three at once …")
        cpu = {}
        procs = {n: subprocess.Popen(cmd, env=pulse.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
                 for n, cmd in ((n, commands(ctx.tonearm, work(f"cpu-{n}.flac"), None)[n]) for n in names)}
        children.extend(procs.values())
        time.sleep(window)  # the measured span itself
        for n, p in procs.items():
            p.send_signal(signal.SIGINT)
        for n, p in procs.items():
            _, status, ru = os.wait4(p.pid, 0)
            p.returncode = os.waitstatus_to_exitcode(status)
            cpu[n] = (ru.ru_utime + ru.ru_stime) / window * 60
        # 3. Holes, the three at once, to WAV.
        log(f"  record: holes over {span:g} s, the three at once …")
        procs = {n: subprocess.Popen(commands(ctx.tonearm, work(f"holes-{n}.wav"), None)[n], env=pulse.env,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                 for n in names}
        children.extend(procs.values())
        time.sleep(span)  # the measured span itself
        for p in procs.values():
            interrupt(p)
        holes = {n: holes_in(work(f"holes-{n}.wav")) for n in names}
        return {"starts": starts, "window": window, "span": span,
                "first_stream": {n: stats([r["stream"] for r in first[n]]) for n in names},
                "first_data": {n: stats([r["data"] for r in first[n]]) for n in names},
                "cpu_per_minute": cpu, "holes": holes}
    finally:
        pulse.stop()


def report(r: dict, ctx) -> bool:
    log("")
    log(f"11. Recording: a 440 Hz sine source of a private PulseAudio server, 48 kHz stereo 16-bit "
        f"(first sample: {r['starts']} starts each; CPU: {r['window']:g} s to FLAC; holes: {r['span']:g} s to WAV, the three at once)")
    log(f"{'recorder':<10} {'stream made (median/p95 ms)':>28} {'first bytes (median/p95 ms)':>28} {'CPU s/min':>10} {'holes':>6} {'recorded s':>11}")
    for n in ("tonearm", "parecord", "ffmpeg"):
        s, d, h = r["first_stream"][n], r["first_data"][n], r["holes"][n]
        log(f"{n:<10} {s['median'] * 1000:>18.1f} / {s['p95'] * 1000:<7.1f} {d['median'] * 1000:>18.1f} / {d['p95'] * 1000:<7.1f} "
            f"{r['cpu_per_minute'][n]:>10.3f} {h['holes']:>6} {h['seconds']:>11.2f}")
    t = r["first_stream"]["tonearm"]["median"]
    peers_first = min(r["first_stream"][n]["median"] for n in ("parecord", "ffmpeg"))
    cpu_t = r["cpu_per_minute"]["tonearm"]
    peers_cpu = min(r["cpu_per_minute"][n] for n in ("parecord", "ffmpeg"))
    rows = [
        ("record: stream made, median s", t, peers_first, "s", "< both", t < peers_first),
        ("record: CPU s per minute to FLAC", cpu_t, peers_cpu, "s", "< both", cpu_t < peers_cpu),
        ("record: holes", float(r["holes"]["tonearm"]["holes"]), None, "", "0", r["holes"]["tonearm"]["holes"] == 0),
    ]
    return print_goal_rows(rows)


if __name__ == "__main__":
    import driver
    driver.main([NAME])
