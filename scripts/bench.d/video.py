#!/usr/bin/env python3
# Part 8 of scripts/bench, video playback: tonearm against mpv and ffplay playing the same clips.
#
# The clips (made once by ffmpeg and kept in .build-bench/video/, reused by later runs): a minute
# of 1080p30 H.264 (testsrc2 with moving noise, x264 veryfast at 8 Mbit/s, AAC stereo; 10 s
# encoded and repeated six times by stream copy) and a minute of 720p30 VP9 (the same picture,
# libvpx-vp9 at 3 Mbit/s, Opus); and for the time to first frame, 5 s of one flat colour at
# 1080p30 H.264 with AAC.
#
# CPU and dropped frames: each player alone (one after another, so that none starves another
# on a small machine), for a window of --window seconds (default 50, quick 10) of each clip:
#   null     tonearm play --output null --video-output null  vs  mpv --vo=null --ao=null
#   window   on a private Xvfb (1920×1080, its own per run, so that its CPU is the drawing's) with
#            the sound to a private PulseAudio null sink: tonearm play --output pulse (its SDL
#            window)  vs  mpv --vo=x11 --ao=pulse, mpv --vo=gpu (Mesa's llvmpipe: no GPU here)
#            and ffplay -autoexit (SDL, audio by SDL's pulseaudio driver)
# CPU is the run time of every thread of the player from /proc/PID/task/*/schedstat over the
# window's steady span (from 3 s on), in CPU seconds per minute; for the windows, the X server's
# CPU over the same span is added (x11 and SDL's software renderer have the server draw). Dropped
# frames as each player counts them: tonearm's closing line ("Video: N frames shown, M dropped",
# after SIGINT), mpv's frame-drop-count + decoder-frame-drop-count (read over its IPC socket at
# the window's end), ffplay's status line (fd=, its early and late drops).
#
# Time to first frame: on a private Xvfb, one pixel of the screen's centre is read every
# millisecond (Tests/TonearmTestSupport/xsampler.py, XGetImage round trips stamped with
# CLOCK_MONOTONIC); from just before the player's process starts to the first reading of the
# clip's colour there — the same measure for every player, nothing taken from their messages.
# tonearm, mpv --vo=x11 and ffplay alternate, --first-frames runs each (default 10, quick 3)
# after a warm-up; the sound goes to the private PulseAudio sink.
#
#   scripts/bench video [--quick] [--window S] [--first-frames N]
# SPDX-License-Identifier: GPL-3.0-or-later
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time

from common import ROOT, SCRATCH, children, interrupt, log, print_goal_rows, stats, thread_times, work
from pulse import PrivatePulse, need_pulse_tools

NAME = "video"
TITLE = "video playback: CPU, dropped frames, time to first frame"
PEERS = ["mpv", "ffmpeg"]
TOOLS = ["ffmpeg", "ffplay", "mpv", "Xvfb", "python3"]
NEEDS_FLAC = False

SAMPLER = os.path.join(ROOT, "Tests", "TonearmTestSupport", "xsampler.py")
SCREEN = (1920, 1080)
FIRST_COLOR = (0xC8, 0x3C, 0x78)  # the first-frame clip's colour
STEADY_FROM = 3.0


def add_arguments(ap) -> None:
    ap.add_argument("--first-frames", type=int, default=None,
                    help="runs of each player for the time to first frame in part video (default 10, quick 3)")
    ap.add_argument("--first-only", action="store_true",
                    help="part video: only the time to first frame (no CPU runs); with --base-tonearm PATH "
                         "that build runs too, in the same alternation")


# MARK: the clips

def clip_dir() -> str:
    d = os.path.join(SCRATCH, "video")
    os.makedirs(d, exist_ok=True)
    return d


def make_clip(name: str, args: list[str], loops: int = 1) -> str:
    """The clip `name` in .build-bench/video/, made by `ffmpeg args` when it is not there yet
    (written under another name and renamed at the end: an interrupted run leaves no half clip).
    With `loops`, what `args` make is repeated that many times by stream copy (key frames at
    each start), so that a minute costs the encoding of a fraction of it on a busy machine while
    every frame still has to be decoded."""
    path = os.path.join(clip_dir(), name)
    if not os.path.exists(path):
        log(f"  video: making {name} (once; kept in {clip_dir()}) …")
        root, ext = os.path.splitext(path)
        part, segment = f"{root}.part{ext}", f"{root}.segment{ext}"
        if loops > 1:
            subprocess.run(["ffmpeg", "-v", "error", "-y", *args, segment], check=True)
            subprocess.run(["ffmpeg", "-v", "error", "-y", "-stream_loop", str(loops - 1), "-i", segment,
                            "-c", "copy", part], check=True)
            os.remove(segment)
        else:
            subprocess.run(["ffmpeg", "-v", "error", "-y", *args, part], check=True)
        os.replace(part, path)
    return path


def clips(first_only: bool = False) -> dict:
    """The clips, made when missing; with `first_only` only the first-frame clip (the minute-long
    ones take long to encode on a loaded machine and --first-only does not play them)."""
    r, g, b = FIRST_COLOR
    first = make_clip("first-1080p30.mp4", [
        "-f", "lavfi", "-i", f"color=c=0x{r:02x}{g:02x}{b:02x}:size=1920x1080:rate=30:d=5",
        "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=5",
        "-c:v", "libx264", "-preset", "veryfast", "-g", "60", "-pix_fmt", "yuv420p", "-c:a", "aac", "-ac", "2"])
    if first_only:
        return {"first": first}
    # Ten seconds (five 2-second GOPs) of testsrc2 with moving noise, repeated six times: a minute.
    noise = "noise=alls=12:allf=t"
    tone = ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=10"]
    h264 = make_clip("h264-1080p30.mp4", [
        "-f", "lavfi", "-i", f"testsrc2=size=1920x1080:rate=30:d=10,{noise}", *tone,
        "-c:v", "libx264", "-preset", "veryfast", "-b:v", "8M", "-maxrate", "10M", "-bufsize", "16M", "-g", "60",
        "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "128k", "-ac", "2"], loops=6)
    vp9 = make_clip("vp9-720p30.webm", [
        "-f", "lavfi", "-i", f"testsrc2=size=1280x720:rate=30:d=10,{noise}", *tone,
        "-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-row-mt", "1", "-b:v", "3M", "-g", "60",
        "-pix_fmt", "yuv420p", "-c:a", "libopus", "-b:a", "128k", "-ac", "2"], loops=6)
    return {"H.264 1080p30": h264, "VP9 720p30": vp9, "first": first}


# MARK: a private X server and a pixel on it

class PrivateX:
    """Xvfb on a display number it picks itself (-displayfd), 24-bit, black root (-br), no TCP."""

    def __init__(self, size: tuple[int, int] = SCREEN):
        r, w = os.pipe()
        self.proc = subprocess.Popen(["Xvfb", "-displayfd", str(w), "-nolisten", "tcp", "-br",
                                      "-screen", "0", f"{size[0]}x{size[1]}x24"],
                                     pass_fds=(w,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        children.append(self.proc)
        os.close(w)
        with os.fdopen(r) as f:
            number = f.readline().strip()  # written once Xvfb accepts clients
        if not number:
            raise RuntimeError("Xvfb did not start")
        self.display = f":{number}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)


class PixelWatch:
    """xsampler.py reading the pixel (x, y) of the display every millisecond; a thread follows
    its changes of colour, each with its CLOCK_MONOTONIC time."""

    def __init__(self, display: str, x: int, y: int):
        self.proc = subprocess.Popen(["python3", SAMPLER, display, str(x), str(y), "-"], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
        children.append(self.proc)
        self.changes: list[tuple[int, tuple[int, int, int]]] = []
        self.cond = threading.Condition()
        self.ready = False
        threading.Thread(target=self._follow, daemon=True).start()
        with self.cond:
            if not self.cond.wait_for(lambda: self.ready, timeout=10):
                raise RuntimeError("xsampler.py did not start")

    def _follow(self) -> None:
        for line in self.proc.stdout:
            parts = line.split()
            with self.cond:
                if parts == ["sampling"]:
                    self.ready = True
                elif len(parts) == 3:
                    v = int(parts[1], 16)
                    self.changes.append((int(parts[0]), (v >> 16, (v >> 8) & 0xFF, v & 0xFF)))
                self.cond.notify_all()
        with self.cond:
            self.ready = True
            self.cond.notify_all()

    def wait_for(self, predicate, after_ns: int, timeout: float) -> int | None:
        """The time (ns) of the first change after `after_ns` to a colour for which `predicate`
        holds, waiting up to `timeout` seconds for it; None if there is none."""
        def found():
            return next((t for t, c in self.changes if t > after_ns and predicate(c)), None)
        with self.cond:
            self.cond.wait_for(lambda: found() is not None or self.proc.poll() is not None, timeout=timeout)
            return found()

    def current(self) -> tuple[int, int, int] | None:
        with self.cond:
            return self.changes[-1][1] if self.changes else None

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(timeout=10)


def close_to(c, target, tolerance: int = 40) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(c, target))


# MARK: the players

def tonearm_env(name: str) -> dict:
    d = work(f"tonearm-{name}")
    return {"XDG_DATA_HOME": f"{d}/data", "XDG_STATE_HOME": f"{d}/state", "XDG_CONFIG_HOME": f"{d}/config",
            "DBUS_SESSION_BUS_ADDRESS": f"unix:path={d}/no-bus"}


def mpv_ipc(path: str, prop: str) -> float | None:
    """A property of a running mpv, read over its IPC socket; None when it cannot be read."""
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(5)
            s.connect(path)
            s.sendall(json.dumps({"command": ["get_property", prop], "request_id": 1}).encode() + b"\n")
            buf = b""
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    return None
                buf += chunk
                for line in buf.split(b"\n"):
                    if not line.strip():
                        continue
                    msg = json.loads(line)
                    if msg.get("request_id") == 1:
                        return msg.get("data")
    except (OSError, ValueError):
        return None


def commands(tonearm: str, clip: str, ipc: str) -> dict:
    """Each configuration: (player, output, command, whether it needs a display)."""
    mpv = ["mpv", "--no-config", "--really-quiet", f"--input-ipc-server={ipc}"]
    return {
        "tonearm null": ([tonearm, "play", "--plain", "--output", "null", "--video-output", "null", clip], False),
        "mpv --vo=null": ([*mpv, "--vo=null", "--ao=null", clip], False),
        "tonearm window": ([tonearm, "play", "--plain", "--output", "pulse", clip], True),
        "mpv --vo=x11": ([*mpv, "--vo=x11", "--ao=pulse", clip], True),
        "mpv --vo=gpu": ([*mpv, "--vo=gpu", "--gpu-context=x11egl", "--ao=pulse", clip], True),
        "ffplay": (["ffplay", "-autoexit", "-loglevel", "info", clip], True),
    }


def run_config(name: str, cmd: list[str], needs_x: bool, pulse: PrivatePulse, window: float, ipc: str) -> dict:
    x = PrivateX() if needs_x else None
    env = {**pulse.env, **tonearm_env(name.replace(" ", "-"))}
    if x:
        env.update({"DISPLAY": x.display, "WAYLAND_DISPLAY": "", "SDL_VIDEODRIVER": "x11", "SDL_AUDIODRIVER": "pulseaudio"})
    else:
        env.pop("DISPLAY", None)
    out_path = work(f"out-{name.replace(' ', '-')}.txt")
    try:
        with open(out_path, "w+b") as out:
            p = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
            children.append(p)
            time.sleep(STEADY_FROM)  # a measurement window, not synchronisation
            if p.poll() is not None:
                out.seek(0)
                raise RuntimeError(f"{name} ended at its start (status {p.returncode}): "
                                   f"{out.read().decode('utf-8', 'replace')[-1500:]}")
            t0 = time.monotonic()
            threads0 = thread_times(p.pid)
            x0 = sum(t["run_ns"] for t in thread_times(x.proc.pid).values()) if x else 0
            time.sleep(window - STEADY_FROM)
            if p.poll() is not None:
                raise RuntimeError(f"{name} ended before the window's end (status {p.returncode})")
            threads1 = thread_times(p.pid)
            x1 = sum(t["run_ns"] for t in thread_times(x.proc.pid).values()) if x else 0
            span = time.monotonic() - t0
            mpv_drops = None
            if name.startswith("mpv"):
                a, b = mpv_ipc(ipc, "frame-drop-count"), mpv_ipc(ipc, "decoder-frame-drop-count")
                mpv_drops = None if a is None and b is None else int(a or 0) + int(b or 0)
            interrupt(p)
            out.seek(0)
            text = out.read().decode("utf-8", "replace")
    finally:
        if x:
            x.stop()
    run_s = sum(t1["run_ns"] - threads0.get(tid, {"run_ns": 0})["run_ns"] for tid, t1 in threads1.items()) / 1e9
    dropped = None
    if name.startswith("tonearm"):
        m = re.findall(r"Video: (\d+) frames shown, (\d+) dropped", text)
        dropped = int(m[-1][1]) if m else None
        shown = int(m[-1][0]) if m else None
    elif name.startswith("mpv"):
        dropped, shown = mpv_drops, None
    else:
        m = re.findall(r"fd=\s*(\d+)", text)
        dropped, shown = (int(m[-1]) if m else None), None
    return {"cpu_per_min": run_s * 60 / span, "x_per_min": (x1 - x0) / 1e9 * 60 / span if x else 0.0,
            "span": span, "dropped": dropped, "shown": shown, "threads": len(threads1),
            "tail": text[-600:] if dropped is None else ""}


def bench_cpu(tonearm: str, clip: str, pulse: PrivatePulse, window: float) -> dict:
    ipc = work("mpv.sock")
    results = {}
    for name, (cmd, needs_x) in commands(tonearm, clip, ipc).items():
        log(f"    {name} for {window:.0f} s …")
        results[name] = run_config(name, cmd, needs_x, pulse, window, ipc)
    return results


def first_frame(name: str, cmd: list[str], env: dict, watch: PixelWatch, timeout: float = 30) -> float:
    """Milliseconds from just before the player's process starts to the clip's colour on the
    screen; the player is stopped then, and its window gone before this returns."""
    t0 = time.monotonic_ns()
    p = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    children.append(p)
    try:
        seen = watch.wait_for(lambda c: close_to(c, FIRST_COLOR), t0, timeout)
        if seen is None:
            raise RuntimeError(f"{name}: its first frame was not seen within {timeout:.0f} s (status {p.poll()})")
    finally:
        p.terminate()
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    # The window is gone when the pixel is something else again.
    if close_to(watch.current() or (0, 0, 0), FIRST_COLOR):
        watch.wait_for(lambda c: not close_to(c, FIRST_COLOR), seen, 10)
    return (seen - t0) / 1e6


def bench_first(tonearm: str, clip: str, pulse: PrivatePulse, runs: int, base: str | None = None) -> dict:
    x = PrivateX()
    watch = PixelWatch(x.display, SCREEN[0] // 2, SCREEN[1] // 2)
    env = {**pulse.env, **tonearm_env("first"), "DISPLAY": x.display, "WAYLAND_DISPLAY": "",
           "SDL_VIDEODRIVER": "x11", "SDL_AUDIODRIVER": "pulseaudio"}
    players = {
        "tonearm": [tonearm, "play", "--plain", "--output", "pulse", clip],
        **({"tonearm base": [base, "play", "--plain", "--output", "pulse", clip]} if base else {}),
        "mpv --vo=x11": ["mpv", "--no-config", "--really-quiet", "--vo=x11", "--ao=pulse", clip],
        "ffplay": ["ffplay", "-autoexit", "-loglevel", "quiet", clip],
    }
    times: dict[str, list[float]] = {n: [] for n in players}
    try:
        for n, cmd in players.items():
            first_frame(n, cmd, env, watch)  # warm-up: the files and libraries in the page cache
        for _ in range(runs):
            for n, cmd in players.items():
                times[n].append(first_frame(n, cmd, env, watch))
    finally:
        watch.stop()
        x.stop()
    return {n: stats(v) for n, v in times.items()}


def bench(ctx) -> dict:
    need_pulse_tools()
    c = clips(ctx.args.first_only)
    window = min(ctx.args.window or (10.0 if ctx.quick else 50.0), 55.0)
    runs = ctx.args.first_frames or (3 if ctx.quick else 10)
    pulse = PrivatePulse(work("pulse-video"))
    out: dict = {"window": window, "clips": {}}
    base = getattr(ctx.args, "base_tonearm", None)
    try:
        for label in ("H.264 1080p30", "VP9 720p30") if not ctx.args.first_only else ():
            log(f"  video: {label}, each player alone …")
            out["clips"][label] = bench_cpu(ctx.tonearm, c[label], pulse, window)
        log(f"  video: time to first frame, {runs} runs each after a warm-up, alternating …")
        out["first"] = bench_first(ctx.tonearm, c["first"], pulse, runs, os.path.abspath(base) if base else None)
        out["first_runs"] = runs
    finally:
        pulse.stop()
    out["load_after"] = os.getloadavg()
    return out


def report(r: dict, ctx) -> bool:
    log("")
    log(f"8. Video: each player alone for a {r['window']:.0f} s window of each clip (a minute of 1080p30 H.264 at "
        "8 Mbit/s, a minute of 720p30 VP9 at 3 Mbit/s); CPU of every thread over the steady span (from "
        f"{STEADY_FROM:.0f} s on, schedstat) in CPU-s per minute; X = the private Xvfb's CPU over the same span; "
        "dropped frames as each player counts them")
    log(f"   {'clip':<14} {'player':<16} {'CPU s/min':>10} {'X s/min':>8} {'total':>7} {'dropped':>8} {'shown':>6}")
    for label, res in r["clips"].items():
        for name, v in res.items():
            total = v["cpu_per_min"] + v["x_per_min"]
            drops = "?" if v["dropped"] is None else str(v["dropped"])
            shown = "" if v["shown"] is None else str(v["shown"])
            log(f"   {label:<14} {name:<16} {v['cpu_per_min']:10.2f} {v['x_per_min']:8.2f} {total:7.2f} {drops:>8} {shown:>6}")
            if v.get("tail"):
                log(f"     ({name} did not say how many frames it dropped: …{v['tail'][-200:]!r})")
    log(f"   Time to first frame: from the process's start to the clip's colour at the screen's centre "
        f"(xsampler.py, a 1 ms XGetImage sampler), {r['first_runs']} runs each after a warm-up, alternating; "
        "the sound to a private PulseAudio null sink")
    log(f"   {'player':<16} {'median ms':>10} {'p95 ms':>8} {'min ms':>8} {'max ms':>8}")
    for n, v in r["first"].items():
        log(f"   {n:<16} {v['median']:10.1f} {v['p95']:8.1f} {v['min']:8.1f} {v['max']:8.1f}")
    la = r["load_after"]
    log(f"   load average after the part: {la[0]:.2f} {la[1]:.2f} {la[2]:.2f}")
    log("")
    rows = []
    for label, res in r.get("clips", {}).items():
        def total(n):
            return res[n]["cpu_per_min"] + res[n]["x_per_min"]
        tn, mn = res["tonearm null"]["cpu_per_min"], res["mpv --vo=null"]["cpu_per_min"]
        rows.append((f"{label} CPU/min, null, vs mpv", tn, mn, "s", "≤ 1×", tn <= mn))
        rows.append((f"{label} CPU/min, window+X, vs mpv x11", total("tonearm window"), total("mpv --vo=x11"), "s",
                     "≤ 1×", total("tonearm window") <= total("mpv --vo=x11")))
        rows.append((f"{label} CPU/min, window+X, vs mpv gpu", total("tonearm window"), total("mpv --vo=gpu"), "s",
                     "(info)", None))
        rows.append((f"{label} CPU/min, window+X, vs ffplay", total("tonearm window"), total("ffplay"), "s",
                     "(info)", None))
        for mode in ("null", "window"):
            d = res[f"tonearm {mode}"]["dropped"]
            rows.append((f"{label} dropped frames, {mode}", float(d if d is not None else -1), None, "", "0", d == 0))
    f = r["first"]
    rows.append(("first frame vs mpv --vo=x11", f["tonearm"]["median"], f["mpv --vo=x11"]["median"], "ms", "≤ 0.5×",
                 f["tonearm"]["median"] <= 0.5 * f["mpv --vo=x11"]["median"]))
    rows.append(("first frame vs ffplay", f["tonearm"]["median"], f["ffplay"]["median"], "ms", "(info)", None))
    if "tonearm base" in f:
        rows.append(("first frame vs the base build", f["tonearm"]["median"], f["tonearm base"]["median"], "ms",
                     "(info)", None))
    return print_goal_rows(rows)


if __name__ == "__main__":
    import driver
    driver.main(["video"])
