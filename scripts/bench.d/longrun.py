#!/usr/bin/env python3
# Part 7 of scripts/bench, the long run (issue 18; not in CI and not in the default set of parts:
# it runs only when named, `scripts/bench longrun` or `scripts/bench --long`, or alone as
# `scripts/bench.d/longrun.py`). 1,000 generated files of 3.6 s each — an hour of audio — in
# mixed formats (FLAC 16/24-bit, WAV, MP3 (LAME VBR, Xing/LAME header), AAC in M4A (with
# iTunSMPB), Ogg Vorbis, Ogg Opus), sample rates (22.05/44.1/48/96 kHz; Opus is always 48) and
# channels (mono/stereo), played as one gapless queue (an M3U playlist) by `tonearm play`:
#   1. --output null:untimed: the whole hour as fast as it decodes; memory (VmRSS, RssAnon), open
#      file descriptors and threads sampled every 0.5 s;
#   2. --output file:out.wav: the whole hour written (float32, bit-exact), then every join checked
#      (below); sampled as in 1;
#   3. --output pulse to a private PulseAudio server (pulse.py) in real time, for --long-realtime
#      seconds of the queue (its first files; default 600 s, quick 60), sampled every
#      --long-interval seconds (default 60) and the sink's monitor recorded: every stretch of
#      digital silence inside the played span is a dropout (an underrun of tonearm's renderer or
#      of the server's stream: `tonearm play` does not print an underrun count); the server runs
#      with --log-level=debug and its "end of underrun" lines are counted, for information only
#      (one comes with a stream's start; a 0.3 s SIGSTOP of tonearm added none).
# The signal: every file holds its 3.6 s of one continuous hour-long signal (left 220 + 331.7 Hz,
# right 277.2 + 415.3 Hz; a mono file holds the left one, which tonearm plays on both channels),
# so the queue played back is that signal unbroken. The queue's rate is its first file's
# (44.1 kHz stereo FLAC): each file is L = 158,760 output frames. Checks of out.wav:
#   - every file, bit for bit: its L frames in the output equal ffmpeg's decoding of it (ffmpeg's
#     gapless trimming: LAME header, MP4 edit list, Opus pre-skip, Ogg granules; cut at the
#     file's length, as ffmpeg does not trim an M4A's end, which iTunSMPB states), resampled to
#     44.1 kHz by libswresample with its defaults from a fresh state (`-af aresample`, as tonearm
#     resamples each item alone, flushing at its end), mono on both channels. Each file is found
#     by its first 256 frames (within ±4096 of where the one before ends), so its length in the
#     output is measured: exact = L frames. FFmpeg's AAC encoder codes noisy bands as noise (PNS),
#     which a decoder fills from its own random generator: an M4A that differs by less than 0.01
#     is counted apart (only a fresh decoder gives ffmpeg's noise);
#   - joins between lossless files (resampled or not): within 64 frames of the join the output is
#     nowhere further from the signal than its step (its largest change between two frames), and
#     the jump across the join is not larger than the signal's own by more than a step; joins
#     with a lossy file are shown (their codec's error at a file's edge is larger than a step);
#   - each file's level (the best-fit gain of the signal in its middle): 1 ± 1 % for a file that
#     is not bit-exact (mono at another rate was played at -3 dB before 457f24a);
#   - the total: frames written = 1,000 × L.
# Prints per run: samples first vs last quarter (flat/growing), dropouts, joins checked/failed,
# wall time, CPU, load average.
#   scripts/bench longrun [--quick] [--long-files N] [--long-realtime S] [--long-interval S]
#                         [--long-keep DIR] [--tonearm PATH] [--no-install]
# SPDX-License-Identifier: GPL-3.0-or-later
import concurrent.futures
import math
import mmap
import os
import random
import shutil
import struct
import subprocess
import sys
import threading
import time
from array import array

from common import children, log, run, work
from pulse import PrivatePulse, need_pulse_tools

NAME = "longrun"
TITLE = "long run: an hour of mixed files as one gapless queue"
PEERS = ["ffmpeg", "paplay"]
TOOLS = ["ffmpeg", "pulseaudio", "parec", "pactl"]
NEEDS_FLAC = False
ONLY_FLAG = "--long"
DEFAULT = False  # not in `scripts/bench` without parts

SECONDS = 3.6
QUEUE_RATE = 44100
L = round(SECONDS * QUEUE_RATE)  # output frames per file
# (amplitude, frequency) of each channel's tones.
LEFT = [(0.4, 220.0), (0.2, 331.7)]
RIGHT = [(0.4, 277.2), (0.2, 415.3)]
# The largest step between two samples of each channel at the queue's rate.
STEP = [2 * math.pi * sum(a * f for a, f in tones) / QUEUE_RATE for tones in (LEFT, RIGHT)]
RATES = {"flac": [22050, 44100, 48000, 96000], "wav": [22050, 44100, 48000, 96000],
         "mp3": [22050, 44100, 48000], "m4a": [22050, 44100, 48000, 96000],
         "ogg": [22050, 44100, 48000, 96000], "opus": [48000]}
LOSSLESS = ("flac", "wav")
EDGE = 64  # frames each side of a join looked at
PNS_TOLERANCE = 0.01  # an AAC file's largest difference from ffmpeg's decoding put down to PNS


def add_arguments(ap) -> None:
    ap.add_argument("--long-files", type=int, default=None, help="part longrun: files (default 1000, quick 100)")
    ap.add_argument("--long-realtime", type=float, default=None,
                    help="part longrun: seconds of the queue played in real time through PulseAudio "
                         "(default 600, quick 60; 0: none)")
    ap.add_argument("--long-interval", type=float, default=60.0,
                    help="part longrun: seconds between samples of the real-time run (default 60)")
    ap.add_argument("--long-keep", metavar="DIR", help="part longrun: keep the files, outputs and samples in DIR")


# MARK: the files

def expr(tones, k: int) -> str:
    t0 = f"{k * SECONDS:.1f}"
    return "+".join(f"{a}*sin(2*PI*{f}*(t+{t0}))" for a, f in tones)


def model(tones, k: int, j0: int, n: int) -> list[float]:
    """The signal of one channel at output frames j0…j0+n−1 of file k (queue rate)."""
    base = k * L
    return [sum(a * math.sin(2 * math.pi * f * ((base + j) / QUEUE_RATE)) for a, f in tones)
            for j in range(j0, j0 + n)]


def plan(count: int) -> list[dict]:
    """The queue: file 0 is a 44.1 kHz stereo FLAC (it sets the queue's format), the others a
    seeded random mix of format, rate and channels."""
    rnd = random.Random(18)
    files = []
    for k in range(count):
        if k == 0:
            fmt, rate, ch = "flac", QUEUE_RATE, 2
        else:
            fmt = rnd.choice(sorted(RATES))
            rate = rnd.choice(RATES[fmt])
            ch = rnd.choice([1, 2])
        bits = 24 if fmt == "flac" and rate == 96000 else 16
        files.append({"k": k, "fmt": fmt, "rate": rate, "ch": ch, "bits": bits,
                      "frames": round(SECONDS * rate), "name": f"{k:04d}-{fmt}-{rate}-{ch}ch.{fmt}"})
    return files


def encode_args(f: dict) -> list[str]:
    fmt, rate = f["fmt"], f["rate"]
    if fmt == "flac":
        return ["-c:a", "flac", "-sample_fmt", "s32" if f["bits"] == 24 else "s16"]
    if fmt == "wav":
        return ["-c:a", "pcm_s16le"]
    if fmt == "mp3":
        return ["-c:a", "libmp3lame", "-q:a", "2"]
    if fmt == "ogg":
        return ["-c:a", "libvorbis", "-q:a", "5"]
    if fmt == "opus":
        return ["-c:a", "libopus", "-b:a", "128k"]
    # FFmpeg's AAC encoder primes 1024 frames; its MP4 muxer writes an edit list that skips
    # them but leaves the last frame's padding: iTunSMPB says the length, as iTunes writes it.
    frames = f["frames"]
    packets = -(-(frames + 1024) // 1024)
    smpb = f" 00000000 00000400 {packets * 1024 - 1024 - frames:08X} {frames:016X} 00000000 00000000"
    return ["-c:a", "aac", "-b:a", "160k", "-movflags", "use_metadata_tags", "-metadata", f"iTunSMPB={smpb}"]


def make_file(folder: str, f: dict) -> None:
    chans = expr(LEFT, f["k"]) + ("|" + expr(RIGHT, f["k"]) if f["ch"] == 2 else "")
    run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
         f"aevalsrc='{chans}':s={f['rate']}:d={SECONDS}", *encode_args(f), os.path.join(folder, f["name"])])


def make_files(folder: str, files: list[dict]) -> None:
    os.makedirs(folder, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for _ in pool.map(lambda f: make_file(folder, f), files):
            pass
    with open(os.path.join(folder, "queue.m3u"), "w") as out:
        out.write("#EXTM3U\n" + "".join(f["name"] + "\n" for f in files))


# MARK: a run, sampled

def sample(pid: int, t0: float) -> dict | None:
    s = {"t": time.monotonic() - t0, "load": os.getloadavg()[0]}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "RssAnon", "Threads"):
                    s[key] = int(value.split()[0])
        s["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None  # it ended
    return s


def play_sampled(cmd: list[str], env: dict, interval: float, out_path: str) -> dict:
    """Runs `cmd` to its end, sampling it every `interval` seconds; wall, CPU (wait4), the
    samples, load averages and what it printed."""
    load0 = os.getloadavg()
    out = open(out_path, "w")
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    children.append(p)
    done = threading.Event()
    result = {}

    def reap() -> None:
        _, status, ru = os.wait4(p.pid, 0)
        result.update(wall=time.monotonic() - t0, cpu=ru.ru_utime + ru.ru_stime, maxrss_kb=ru.ru_maxrss,
                      status=os.waitstatus_to_exitcode(status))
        p.returncode = result["status"]
        done.set()

    threading.Thread(target=reap, daemon=True).start()
    samples = []
    n = 1
    while not done.wait(max(0.0, t0 + n * interval - time.monotonic())):
        s = sample(p.pid, t0)
        if s:
            samples.append(s)
        n += 1
    out.close()
    with open(out_path) as f:
        text = f.read()
    return {**result, "samples": samples, "load_before": load0, "load_after": os.getloadavg(),
            "output": text[-2000:]}


def trend(samples: list[dict]) -> dict:
    """First vs last quarter of the samples, per measure: means, maxima, and whether it grew."""
    out = {}
    q = max(1, len(samples) // 4)
    for key in ("VmRSS", "RssAnon", "fds", "Threads"):
        v = [s[key] for s in samples if key in s]
        if not v:
            continue
        first, last = v[:q], v[-q:]
        f_mean, l_mean = sum(first) / len(first), sum(last) / len(last)
        if key in ("VmRSS", "RssAnon"):  # kB: flat within 2 MB or 5 %
            grew = l_mean - f_mean > max(2048, 0.05 * f_mean)
        else:  # counts go up and down as files open and threads come and go: by a whole one
            grew = l_mean - f_mean >= 1
        out[key] = {"first": f_mean, "last": l_mean, "min": min(v), "max": max(v), "grew": grew}
    return out


def isolated_env(base: dict, home: str) -> dict:
    """tonearm's state, config and data in `home` (the remembered volume, the queue, the library
    are not the user's)."""
    for sub in ("state", "config", "data", "cache"):
        os.makedirs(os.path.join(home, sub), exist_ok=True)
    return {**base, "HOME": home, "XDG_STATE_HOME": f"{home}/state", "XDG_CONFIG_HOME": f"{home}/config",
            "XDG_DATA_HOME": f"{home}/data", "XDG_CACHE_HOME": f"{home}/cache", "LC_ALL": "C",
            "DBUS_SESSION_BUS_ADDRESS": "disabled:"}


# MARK: checking out.wav

def wav_data(path: str) -> tuple[mmap.mmap, int, int, int]:
    """The mapped file, the data's offset and length in bytes, and the channel count (float32)."""
    f = open(path, "rb")
    m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    if m[:4] != b"RIFF" or m[8:12] != b"WAVE":
        raise RuntimeError(f"{path} is not a WAV file")
    pos, channels, fmt_tag, bits = 12, 0, 0, 0
    while pos + 8 <= len(m):
        cid, size = m[pos:pos + 4], struct.unpack("<I", m[pos + 4:pos + 8])[0]
        if cid == b"fmt ":
            fmt_tag, channels, _, _, _, bits = struct.unpack("<HHIIHH", m[pos + 8:pos + 24])
        if cid == b"data":
            if fmt_tag != 3 or bits != 32:
                raise RuntimeError(f"{path}: not float32 (format {fmt_tag}, {bits} bits)")
            return m, pos + 8, min(size, len(m) - pos - 8), channels
        pos += 8 + size + (size & 1)
    raise RuntimeError(f"{path} has no data chunk")


class Output:
    def __init__(self, path: str):
        self.map, self.off, size, self.ch = wav_data(path)
        self.frames = size // (4 * self.ch)

    def read(self, start: int, n: int) -> array:
        start, end = max(0, start), min(self.frames, start + n)
        a = array("f")
        if end > start:
            a.frombytes(self.map[self.off + start * 4 * self.ch:self.off + end * 4 * self.ch])
        if sys.byteorder == "big":
            a.byteswap()
        return a

    def raw(self, start: int, n: int) -> bytes:
        return self.map[self.off + start * 4 * self.ch:self.off + (start + n) * 4 * self.ch]


def fit(y: array, m: list[float]) -> tuple[float, float]:
    """The gain g that fits g·m to y best (least squares) and the sum of squares left."""
    ym = sum(a * b for a, b in zip(y, m))
    mm = sum(b * b for b in m)
    yy = sum(a * a for a in y)
    g = ym / mm if mm else 0.0
    return g, max(0.0, yy - g * ym)


def locate(out: Output, e: int, head: bytes) -> int | None:
    """Where the output holds `head` (a file's first frames), nearest to frame `e`."""
    if out.raw(e, len(head) // (4 * out.ch)) == head:
        return e
    n = len(head) // (4 * out.ch)
    for d in range(1, 4097):
        for s in (e + d, e - d):
            if s >= 0 and out.raw(s, n) == head:
                return s
    return None


def reference(path: str, f: dict) -> bytes:
    """What tonearm should play of file f: ffmpeg's decoding (its gapless trimming at the start;
    cut at the file's length, as ffmpeg does not trim an M4A's end), as float32, resampled to
    the queue's rate by libswresample with its defaults from a fresh state (tonearm resamples
    each file alone, flushing at its end), mono on both channels."""
    af = f"atrim=end_sample={f['frames']},aformat=sample_fmts=flt,aresample={QUEUE_RATE}"
    data = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-af", af, "-f", "f32le", "-c:a", "pcm_f32le", "-"],
                          check=True, capture_output=True).stdout
    if f["ch"] == 1:
        mono = as_floats(data)
        st = array("f", bytes(len(mono) * 8))
        st[0::2] = mono
        st[1::2] = mono
        if sys.byteorder == "big":
            st.byteswap()
        data = st.tobytes()
    return data


def as_floats(b: bytes) -> array:
    a = array("f")
    a.frombytes(b)
    if sys.byteorder == "big":
        a.byteswap()
    return a


def references(folder: str, files: list[dict]):
    """reference() of each file in order, made a few ahead on the processors."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        ahead = []
        for f in files + [None] * 8:
            if f is not None:
                ahead.append(pool.submit(reference, os.path.join(folder, f["name"]), f))
            if len(ahead) > 8 or (f is None and ahead):
                yield ahead.pop(0).result()


def join_class(a: dict, b: dict) -> str:
    """lossless: both files lossless (one or both may be resampled): judged against the signal;
    lossy: one or both lossy (their codec's own error at a file's edge is larger than the
    signal's step: for information; the files themselves are compared with ffmpeg's decoding)."""
    return "lossless" if a["fmt"] in LOSSLESS and b["fmt"] in LOSSLESS else "lossy"


def check_output(path: str, folder: str, files: list[dict]) -> dict:
    out = Output(path)
    if out.ch != 2:
        raise RuntimeError(f"{path} has {out.ch} channels, not 2")
    starts, ref_frames = [], []
    exact_files = 0
    inexact: list[str] = []
    pns_files: list[str] = []
    lost: list[str] = []
    for f, ref in zip(files, references(folder, files)):
        n = len(ref) // 8
        ref_frames.append(n)
        e = starts[-1] + ref_frames[-2] if starts else 0
        s = locate(out, e, ref[:256 * 8])
        if s is None:
            lost.append(f"{f['name']}: its first 256 frames are nowhere within 4096 frames of {e}")
            s = e
        starts.append(s)
        seg = out.raw(s, n)
        if seg == ref:
            exact_files += 1
            continue
        a, b = as_floats(seg), as_floats(ref)
        diffs = [i for i in range(min(len(a), len(b))) if a[i] != b[i]]
        worst = max((abs(a[i] - b[i]) for i in diffs), default=0.0)
        if f["fmt"] == "m4a" and len(a) == len(b) and worst < PNS_TOLERANCE:
            # FFmpeg's AAC encoder codes noisy bands as noise (PNS), which a decoder fills from
            # its own random generator: two decodings agree only from the same decoder state
            # (a fresh one; tonearm's has decoded the file's end to find its length first).
            pns_files.append(f"{f['name']}: {len(diffs)} samples differ (largest {worst:.2e}, "
                             f"first at frame {diffs[0] // 2} of {n})")
            continue
        inexact.append(f"{f['name']}: {len(diffs)} samples differ from ffmpeg's (largest {worst:.2e}; "
                       f"first at frame {diffs[0] // 2 if diffs else '-'} of {n})"
                       + (f"; output {len(a) // 2} frames, reference {n}" if len(a) != len(b) else ""))
    ends = starts[1:] + [out.frames]
    lengths = [b - a for a, b in zip(starts, ends)]
    # each file's level (best-fit gain of the model, each channel) and error in its interior
    interior, gains = [], []
    for k, f in enumerate(files):
        y = out.read(starts[k] + L // 2 - 512, 1024)
        worst, g = 0.0, []
        for c in range(2):
            m = model(LEFT if (c == 0 or f["ch"] == 1) else RIGHT, k, L // 2 - 512, 1024)
            ys = y[c::2]
            g.append(fit(ys, m)[0])
            worst = max(worst, max((abs(a - b) for a, b in zip(ys, m)), default=0.0))
        interior.append(worst)
        gains.append(g)
    joins = []
    for k in range(1, len(files)):
        prev, f, s = files[k - 1], files[k], starts[k]
        y = out.read(s - EDGE, 2 * EDGE)
        worst, at, jump = 0.0, 0, 0.0
        for c in range(2):
            ys = y[c::2]
            m = (model(LEFT if (c == 0 or prev["ch"] == 1) else RIGHT, k - 1, L - EDGE, EDGE)
                 + model(LEFT if (c == 0 or f["ch"] == 1) else RIGHT, k, 0, EDGE))
            for i, (a, b) in enumerate(zip(ys, m)):
                if abs(a - b) > worst:
                    worst, at = abs(a - b), i - EDGE
            if len(ys) > EDGE:
                # the jump across the join, less the signal's own step there
                jump = max(jump, abs((ys[EDGE] - ys[EDGE - 1]) - (m[EDGE] - m[EDGE - 1])))
        joins.append({"k": k, "len_err": lengths[k - 1] - L, "edge_err": worst, "at": at, "jump": jump,
                      "class": join_class(prev, f)})
    # A discontinuity: more than the signal's step (its largest change from one frame to the
    # next) off it within EDGE frames of a join between lossless files, or a jump across the
    # join more than a step beyond the signal's own. (A resampled file's first and last output
    # frames are interpolated against silence beyond the file: within a step.)
    limit = min(STEP)
    bad_edge = [j for j in joins if j["class"] == "lossless" and (j["edge_err"] > limit or j["jump"] > limit)]
    bad_len = [j for j in joins if j["len_err"] != 0]
    # a level off by more than 1 % in a file that is not bit-exact (a lossy file's own level may
    # differ by that much: it is judged by the comparison with ffmpeg's decoding)
    inexact_names = {line.split(":")[0] for line in inexact}
    bad_level = [k for k in range(len(files)) if files[k]["name"] in inexact_names
                 and any(abs(g - 1) > 0.01 for g in gains[k])]
    by_class = {}
    for j in joins:
        d = by_class.setdefault(j["class"], {"joins": 0, "len_err": 0, "edge": 0, "worst_edge": 0.0,
                                             "worst_jump": 0.0, "edge_errs": []})
        d["joins"] += 1
        d["len_err"] += j["len_err"] != 0
        d["edge"] += j in bad_edge
        d["worst_edge"] = max(d["worst_edge"], j["edge_err"])
        d["worst_jump"] = max(d["worst_jump"], j["jump"])
        d["edge_errs"].append(j["edge_err"])
    for d in by_class.values():
        v = sorted(d.pop("edge_errs"))
        d["median_edge"] = v[len(v) // 2]
    failures = []
    for j in bad_len[:20]:
        a, b = files[j["k"] - 1], files[j["k"]]
        failures.append(f"join {j['k']} ({a['name']} → {b['name']}): {a['name']} is {lengths[j['k'] - 1]} "
                        f"frames, {j['len_err']:+d} from {L}")
    if lengths[-1] != L:
        failures.append(f"the last file, {files[-1]['name']}, is {lengths[-1]} frames, {lengths[-1] - L:+d} from {L}")
    for k in bad_level[:10]:
        f = files[k]
        failures.append(f"{f['name']}: level {gains[k][0]:.4f} / {gains[k][1]:.4f} of the file's "
                        f"({20 * math.log10(max(1e-9, gains[k][0])):+.2f} dB)")
    per_format = {}
    for k, f in enumerate(files):
        key = f"{f['fmt']} {f['rate'] / 1000:g} kHz"
        d = per_format.setdefault(key, {"files": 0, "len_err": 0, "interior": 0.0, "head": 0.0,
                                        "gain_min": 9.0, "gain_max": 0.0})
        d["files"] += 1
        d["len_err"] += lengths[k] != L
        d["interior"] = max(d["interior"], interior[k])
        d["gain_min"] = min(d["gain_min"], *gains[k])
        d["gain_max"] = max(d["gain_max"], *gains[k])
        if k > 0:
            d["head"] = max(d["head"], joins[k - 1]["edge_err"])
    return {"frames": out.frames, "expected_frames": L * len(files), "joins": len(joins),
            "len_failed": len(bad_len) + (lengths[-1] != L), "edge_failed": len(bad_edge),
            "level_failed": len(bad_level), "exact_files": exact_files, "inexact_files": len(inexact),
            "pns_files": len(pns_files), "pns": pns_files[:5],
            "inexact": inexact[:20], "failures": failures, "by_class": by_class, "per_format": per_format,
            "length_errors": sorted({j["len_err"] for j in bad_len}),
            "edge_examples": [f"join {j['k']} ({files[j['k'] - 1]['name']} → {files[j['k']]['name']}): "
                              f"{j['edge_err']:.4f} off the signal {j['at']:+d} frames from the join (interior "
                              f"{interior[j['k'] - 1]:.5f} / {interior[j['k']]:.5f}), jump {j['jump']:.4f}"
                              for j in sorted(bad_edge, key=lambda j: -j["edge_err"])[:10]],
            "ref_not_L": [files[k]["name"] for k, n in enumerate(ref_frames) if n != L], "lost": lost}


# MARK: the monitor (real-time run)

def dropouts(path: str, rate: int = 48000, min_frames: int = 32) -> dict:
    """Stretches of digital silence (both channels exactly 0, s16le stereo) of at least
    `min_frames` inside the sound of a monitor recording: the queue's signal is never 0 on both
    channels for more than a frame, so each is a dropout."""
    with open(path, "rb") as f:
        data = f.read()
    zero = bytes(4 * min_frames)
    first = next((i for i in range(0, len(data) - 3, 4) if data[i:i + 4] != b"\0\0\0\0"), None)
    if first is None:
        return {"recorded_s": len(data) / 4 / rate, "sound_s": 0.0, "dropouts": [], "silent": True}
    last = len(data) - 4
    while last > first and data[last:last + 4] == b"\0\0\0\0":
        last -= 4
    drops = []
    pos = first
    while True:
        i = data.find(zero, pos, last)
        if i < 0:
            break
        i -= i % 4
        j = i
        while j < last and data[j:j + 4] == b"\0\0\0\0":
            j += 4
        if j - i >= len(zero):
            drops.append(((i - first) / 4 / rate, (j - i) / 4 / rate))
        pos = max(j, i + 4)
    return {"recorded_s": len(data) / 4 / rate, "sound_s": (last - first) / 4 / rate, "dropouts": drops,
            "silent": False}


# MARK: the part

def bench(ctx) -> dict:
    count = ctx.args.long_files or (100 if ctx.quick else 1000)
    realtime = ctx.args.long_realtime if ctx.args.long_realtime is not None else (60.0 if ctx.quick else 600.0)
    base = os.path.abspath(ctx.args.long_keep) if ctx.args.long_keep else work("longrun")
    folder = os.path.join(base, "media")
    os.makedirs(base, exist_ok=True)
    files = plan(count)
    log(f"  longrun: generating {count} files of {SECONDS} s ({count * SECONDS / 60:.1f} min of audio)…")
    t = time.monotonic()
    if not (os.path.exists(os.path.join(folder, "queue.m3u"))
            and all(os.path.exists(os.path.join(folder, f["name"])) for f in files)):
        make_files(folder, files)
    else:
        with open(os.path.join(folder, "queue.m3u"), "w") as out:
            out.write("#EXTM3U\n" + "".join(f["name"] + "\n" for f in files))
    gen_s = time.monotonic() - t
    mix = {}
    for f in files:
        mix[f["fmt"]] = mix.get(f["fmt"], 0) + 1
    env = isolated_env(os.environ, os.path.join(base, "home"))
    playlist = os.path.join(folder, "queue.m3u")
    result = {"files": count, "seconds": SECONDS, "generate_s": gen_s, "mix": mix,
              "rates": {r: sum(f["rate"] == r for f in files) for r in (22050, 44100, 48000, 96000)},
              "mono": sum(f["ch"] == 1 for f in files), "runs": {}}

    log("  longrun: --output null:untimed (the whole queue, sampled every 0.5 s)…")
    r = play_sampled([ctx.tonearm, "play", "--plain", "--volume", "100", "--output", "null:untimed", playlist],
                     env, 0.5, os.path.join(base, "untimed.txt"))
    result["runs"]["null:untimed"] = r

    wav = os.path.join(base, "out.wav")
    if os.path.exists(wav):
        os.remove(wav)  # an earlier run's (--long-keep): tonearm does not overwrite it
    log("  longrun: --output file:out.wav (the whole queue, sampled every 0.5 s)…")
    r = play_sampled([ctx.tonearm, "play", "--plain", "--volume", "100", "--output", f"file:{wav}", playlist],
                     env, 0.5, os.path.join(base, "file.txt"))
    result["runs"]["file"] = r
    log("  longrun: checking every join of out.wav…")
    t = time.monotonic()
    result["check"] = check_output(wav, folder, files)
    result["check"]["check_s"] = time.monotonic() - t
    if not ctx.args.long_keep:
        os.remove(wav)

    if realtime > 0:
        need_pulse_tools()
        n = min(count, math.ceil(realtime / SECONDS))
        part = os.path.join(folder, "realtime.m3u")
        with open(part, "w") as out:
            out.write("#EXTM3U\n" + "".join(f["name"] + "\n" for f in files[:n]))
        pdir = os.path.join(base, "pulse")
        if os.path.exists(os.path.join(pdir, "pulse.log")):
            os.remove(os.path.join(pdir, "pulse.log"))
        # debug: the server logs each underrun of tonearm's stream ("end of underrun")
        pulse = PrivatePulse(pdir, log_level="debug")
        rec = os.path.join(base, "monitor.raw")
        recf = open(rec, "wb")
        parec = subprocess.Popen(["parec", "--raw", "--format=s16le", "--rate=48000", "--channels=2",
                                  "-d", f"{PrivatePulse.SINK}.monitor"],
                                 env=pulse.env, stdin=subprocess.DEVNULL, stdout=recf, stderr=subprocess.DEVNULL)
        children.append(parec)
        log(f"  longrun: --output pulse, {n} files ({n * SECONDS / 60:.1f} min) in real time, "
            f"sampled every {ctx.args.long_interval:g} s…")
        try:
            r = play_sampled([ctx.tonearm, "play", "--plain", "--volume", "100", "--output", "pulse", part],
                             {**env, **{k: pulse.env[k] for k in ("PULSE_SERVER", "PULSE_RUNTIME_PATH")}},
                             ctx.args.long_interval, os.path.join(base, "pulse.txt"))
        finally:
            time.sleep(0.5)  # what the sink still renders reaches the monitor
            parec.terminate()
            parec.wait(timeout=10)
            recf.close()
            pulse.stop()
        r["files"] = n
        r["monitor"] = dropouts(rec)
        with open(os.path.join(pdir, "pulse.log"), errors="replace") as f:
            log_text = f.read()
        r["server_underruns"] = log_text.count("end of underrun")
        # the playback stream's ("… = sink + 2*minreq + …"; the recorder's has no "2*")
        r["stream_latency"] = next((line.split("Final latency", 1)[1].strip() for line in log_text.splitlines()
                                    if "Final latency" in line and "2*" in line), "?")
        if not ctx.args.long_keep:
            os.remove(rec)
        result["runs"]["pulse"] = r
    return result


def report(r: dict, ctx) -> bool:
    log("")
    log(f"7. Long run: {r['files']} files × {r['seconds']} s = {r['files'] * r['seconds'] / 60:.1f} min of audio, "
        f"one gapless queue; generated in {r['generate_s']:.0f} s")
    log("   formats: " + ", ".join(f"{k} {v}" for k, v in sorted(r["mix"].items()))
        + "; rates: " + ", ".join(f"{k / 1000:g} kHz {v}" for k, v in r["rates"].items())
        + f"; mono {r['mono']}")
    ok = True
    for name, run_ in r["runs"].items():
        s = run_["samples"]
        tr = trend(s)
        la, lb = run_["load_before"], run_["load_after"]
        done = next((line for line in run_["output"].splitlines() if line.startswith("Done:")), "(no summary)")
        log(f"   {name}: wall {run_['wall']:.1f} s, CPU {run_['cpu']:.1f} s, exit {run_['status']}, "
            f"{len(s)} samples; load average {la[0]:.2f} before, {lb[0]:.2f} after; \"{done}\"")
        for key, unit, div in (("VmRSS", "MB", 1024), ("RssAnon", "MB", 1024), ("fds", "", 1), ("Threads", "", 1)):
            if key in tr:
                v = tr[key]
                log(f"     {key:<8} first quarter {v['first'] / div:8.1f}{unit}  last quarter {v['last'] / div:8.1f}{unit}"
                    f"  min {v['min'] / div:7.1f}  max {v['max'] / div:7.1f}  {'GROWING' if v['grew'] else 'flat'}")
                ok = ok and not v["grew"]
        expected_played = run_.get("files", r["files"])
        if run_["status"] != 0 or f"Done: {expected_played} played, 0 failed" not in run_["output"]:
            ok = False
            log(f"     NOT all {expected_played} played: {run_['output'][-500:]!r}")
        loads = [x["load"] for x in s if "load" in x]
        if loads:
            log(f"     load average (1 min) while it ran: {min(loads):.2f}–{max(loads):.2f}, "
                f"median {sorted(loads)[len(loads) // 2]:.2f}")
        if "monitor" in run_:
            m = run_["monitor"]
            log(f"     stream buffer {run_.get('stream_latency', '?')}; \"end of underrun\" in the server's "
                f"debug log: {run_.get('server_underruns', '?')} (for information: one comes with a stream's "
                "start, and a 0.3 s SIGSTOP of tonearm added none; the monitor is the measure)")
            # dropouts per sampling interval beside the load average at its end
            per = []
            for i, x in enumerate(s):
                t0 = s[i - 1]["t"] if i else 0.0
                drops = [b for a, b in m["dropouts"] if t0 <= a < x["t"]]
                per.append(f"{x.get('load', 0):.1f}:{len(drops)}/{sum(drops) * 1000:.0f}ms")
            log("     per interval, load average : dropouts/silence — " + "  ".join(per))
            log(f"     monitor: {m['sound_s']:.1f} s of sound in {m['recorded_s']:.1f} s recorded; "
                f"dropouts (≥ 32 frames of digital silence): {len(m['dropouts'])}, "
                f"{sum(b for _, b in m['dropouts']) * 1000:.0f} ms in all"
                + "".join(f"\n       at {a:.3f} s, {b * 1000:.1f} ms" for a, b in m["dropouts"][:20]))
            ok = ok and not m["dropouts"] and not m["silent"]
    c = r.get("check")
    if c:
        log(f"   joins of out.wav (checked in {c['check_s']:.0f} s): {c['frames']} frames written, "
            f"{c['expected_frames']} expected ({c['frames'] - c['expected_frames']:+d})")
        log(f"     file lengths: {c['joins']} joins, {c['len_failed']} files not exactly {L} frames; "
            f"bit-exact against ffmpeg's decoding (and resampling): {c['exact_files']} files, "
            f"{c['pns_files']} M4A within AAC's noise substitution (< {PNS_TOLERANCE}), {c['inexact_files']} not; "
            f"discontinuities at joins: {c['edge_failed']}; files not at their level: {c['level_failed']}"
            + (f"; length errors seen: {c['length_errors']}" if c["length_errors"] else ""))
        for kind, d in c["by_class"].items():
            log(f"     {kind} joins: {d['joins']}, length wrong {d['len_err']}, discontinuous {d['edge']}; error "
                f"near the join median {d['median_edge']:.4f}, worst {d['worst_edge']:.4f}; worst extra jump "
                f"{d['worst_jump']:.4f} (the signal's step {min(STEP):.4f}–{max(STEP):.4f})")
        log(f"     {'format':<16} {'files':>5} {'length wrong':>12} {'interior err':>12} {'err at start':>12} {'level':>15}")
        for key, d in sorted(c["per_format"].items()):
            log(f"     {key:<16} {d['files']:5d} {d['len_err']:12d} {d['interior']:12.5f} {d['head']:12.5f} "
                f"{d['gain_min']:7.4f}–{d['gain_max']:.4f}")
        for line in c["lost"][:10] + c["failures"] + c["inexact"] + c["edge_examples"]:
            log("     " + line)
        if c["pns"]:
            log("     M4A files whose noise-substituted bands differ from ffmpeg's fresh decoding, e.g.:")
            for line in c["pns"]:
                log("       " + line)
        if c["ref_not_L"]:
            log(f"     ffmpeg's reference is not {L} frames for {len(c['ref_not_L'])} files, e.g. {c['ref_not_L'][:3]}")
        ok = ok and c["frames"] == c["expected_frames"] and c["len_failed"] == 0 and c["inexact_files"] == 0 \
            and not c["lost"] and not c["ref_not_L"] \
            and c["edge_failed"] == 0 and c["level_failed"] == 0
    log("   long run: " + ("flat, no dropout, every join exact" if ok else "SOMETHING FAILED (above)"))
    return ok


if __name__ == "__main__":
    import driver
    driver.main(["longrun"])
