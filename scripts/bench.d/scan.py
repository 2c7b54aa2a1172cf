#!/usr/bin/env python3
# Part 6 of scripts/bench, the media library scan: a generated tree of tagged FLACs (ffmpeg
# encodes a few 0.5 s tones once; this script writes every copy with its own VORBIS_COMMENT) in
# artist/album folders, at each size of --files (2,000 and 10,000; --quick 1,000).
#
# The comparison, with the files in the page cache (warm) and with the caches dropped before
# each run (cold, when permitted): `tonearm library scan TREE --db NEW --quiet` into a new
# database (the process's wall time and CPU from wait4, its start included) against a private
# MPD daemon asked to `mpc rescan --wait` (re-read every file; its wall time, and its CPU
# meanwhile as the run time of its threads from /proc/PID/task/*/schedstat, sampled every few
# milliseconds so the update thread, which ends with the update, is counted). Three runs of each
# (one with --quick), alternating, the median counts; CPU per file beside the wall time. The
# goal: tonearm's full scan at most half MPD's time, warm and cold, at every size.
#
# Then, on the largest tree: a no-change rescan of each, the songs each found, for information
# the time of a listing (tonearm library songs --artist and albums, processes included; mpc find
# artist and list album), and the listing queries inside the library (tonearm bench-library: one
# artist's songs, one album's tracks, every album, every artist), on the scanned library and on
# a copy ten times as large made by duplicating its rows with SQL.
#
# Instructions (valgrind's callgrind, which counts them repeatably on this noisy machine), on the
# first tree: tonearm's first scan into a new database and its scan of an empty folder (the
# process, the new database and nothing to read), against MPD run as `mpd --no-daemon` under
# callgrind, its counters dumped (`callgrind_control -d`) when it listens (its start), after
# `mpc update --wait` into its empty database (a first scan) and after `mpc rescan --wait`, and
# when it ends. Three ratios: the whole processes (tonearm's first scan against MPD's start,
# first update and exit), the scan's own work (tonearm's less its empty-folder run, against
# MPD's update alone), and tonearm's whole process against the rescan the wall figures use.
#   scripts/bench scan [--quick] [--files N[,N…]] [--scan-runs N] [--runs N] [--no-instructions]
#   (also: --library-only)
# SPDX-License-Identifier: GPL-3.0-or-later
import json
import os
import shutil
import signal
import subprocess
import threading
import time

from common import (log, median_timed, print_goal_rows, proc_cpu, proc_status, run, run_timed, spawn,
                    thread_times, work)
from players import Mpd

NAME = "scan"
TITLE = "media library scan"
PEERS = ["mpd"]
TOOLS = ["ffmpeg", "mpd", "mpc"]
NEEDS_FLAC = False
ONLY_FLAG = "--library-only"


def add_arguments(ap) -> None:
    ap.add_argument("--files", default=None,
                    help="tagged FLACs in part 6's trees, comma-separated sizes (default 2000,10000; quick 1000)")
    ap.add_argument("--scan-runs", type=int, default=None,
                    help="full scans of each program per size and cache state in part 6 (default 3, quick 1)")
    ap.add_argument("--no-instructions", action="store_true",
                    help="part 6 without the instruction counts (valgrind --tool=callgrind) of tonearm and MPD")


LIBRARY_GENRES = ["Rock", "Jazz", "Classical", "Electronic", "Folk", "Hip-Hop", "Blues", "Pop",
                  "Ambient", "Metal", "Soul", "Reggae"]


def flac_blocks(data: bytes) -> tuple[list[tuple[int, bytes]], int]:
    """The metadata blocks of a FLAC file as (type, body) and the offset of its first frame."""
    if data[:4] != b"fLaC":
        raise ValueError("not a FLAC file")
    pos, blocks = 4, []
    while True:
        header = data[pos]
        kind, last = header & 0x7F, header & 0x80
        length = int.from_bytes(data[pos + 1:pos + 4], "big")
        blocks.append((kind, data[pos + 4:pos + 4 + length]))
        pos += 4 + length
        if last:
            return blocks, pos


def vorbis_comment(vendor: bytes, tags: list[tuple[str, str]]) -> bytes:
    out = [len(vendor).to_bytes(4, "little"), vendor, len(tags).to_bytes(4, "little")]
    for key, value in tags:
        s = f"{key}={value}".encode("utf-8")
        out += [len(s).to_bytes(4, "little"), s]
    return b"".join(out)


def flac_with_tags(blocks: list[tuple[int, bytes]], frames: bytes, vendor: bytes,
                   tags: list[tuple[str, str]]) -> bytes:
    """The file again with its VORBIS_COMMENT replaced by `tags` (STREAMINFO first, the comment
    second, the other blocks but PADDING after it; the frames unchanged)."""
    kept = [(k, b) for k, b in blocks if k not in (1, 4)]  # no PADDING, no old comment
    ordered = [kept[0], (4, vorbis_comment(vendor, tags)), *kept[1:]]
    out = [b"fLaC"]
    for i, (kind, body) in enumerate(ordered):
        out += [bytes([kind | (0x80 if i == len(ordered) - 1 else 0)]), len(body).to_bytes(3, "big"), body]
    out.append(frames)
    return b"".join(out)


def make_library_tree(root: str, count: int, seeds: int = 16) -> dict:
    """`count` tagged FLACs in ROOT/Artist NNN/YEAR - Album NNN-NN/NN - Song N.flac, 10 tracks an
    album and 10 albums an artist. The audio is one of `seeds` 0.5 s tones (44.1 kHz stereo, a
    different pitch each) encoded once by ffmpeg; every copy gets its own VORBIS_COMMENT (TITLE,
    ARTIST, ALBUMARTIST, ALBUM, TRACKNUMBER, DATE, GENRE), written by this script."""
    seed_data = []
    for s in range(seeds):
        path = work(f"seed{s}.flac")
        hz = 220 * 2 ** (s / 12)
        run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
             f"aevalsrc='0.4*sin(2*PI*{hz:.3f}*t)|0.4*sin(2*PI*{hz * 1.5:.3f}*t)':s=44100:d=0.5",
             "-c:a", "flac", "-sample_fmt", "s16", path])
        with open(path, "rb") as f:
            data = f.read()
        blocks, first_frame = flac_blocks(data)
        comment = next((b for k, b in blocks if k == 4), None)
        vendor = comment[4:4 + int.from_bytes(comment[:4], "little")] if comment else b"tonearm bench"
        seed_data.append((blocks, data[first_frame:], vendor))
    total_bytes = 0
    for i in range(count):
        artist, album, track = i // 100, (i // 10) % 10, i % 10 + 1
        year = 1960 + (artist * 10 + album) % 60
        a_name, al_name = f"Artist {artist:03d}", f"Album {artist:03d}-{album:02d}"
        folder = os.path.join(root, a_name, f"{year} - {al_name}")
        if track == 1:
            os.makedirs(folder, exist_ok=True)
        tags = [("TITLE", f"Song {i}"), ("ARTIST", a_name), ("ALBUMARTIST", a_name), ("ALBUM", al_name),
                ("TRACKNUMBER", str(track)), ("DATE", str(year)),
                ("GENRE", LIBRARY_GENRES[(artist + album) % len(LIBRARY_GENRES)])]
        blocks, frames, vendor = seed_data[i % seeds]
        data = flac_with_tags(blocks, frames, vendor, tags)
        total_bytes += len(data)
        with open(os.path.join(folder, f"{track:02d} - Song {i}.flac"), "wb") as f:
            f.write(data)
    return {"files": count, "bytes": total_bytes, "seeds": seeds}




def drop_caches() -> bool:
    """Empties the page, dentry and inode caches (needs root); False when not permitted."""
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def read_tree(tree: str) -> None:
    """Reads every file once (warms the page cache)."""
    for dirpath, _, files in os.walk(tree):
        for name in files:
            with open(os.path.join(dirpath, name), "rb") as f:
                while f.read(1 << 20):
                    pass


class ThreadClock:
    """The CPU time of a process's threads over a span, from /proc/PID/task/*/schedstat, sampled
    every `interval` seconds on a thread of this script so that threads which end within the
    span (MPD's update thread) count with their last reading; at most `interval` of such a
    thread's run time is missed. Also /proc/PID/stat's ticks over the span, for comparison."""

    def __init__(self, pid: int, interval: float = 0.002):
        self.pid, self.interval = pid, interval
        self.start = {tid: t["run_ns"] for tid, t in thread_times(pid).items()}
        self.last = dict(self.start)
        self.ticks0 = proc_cpu(pid)
        self.stop_flag = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()

    def _sample(self) -> None:
        while not self.stop_flag.is_set():
            for tid, t in thread_times(self.pid).items():
                self.last[tid] = t["run_ns"]
            self.stop_flag.wait(self.interval)  # a sampling period, not synchronisation

    def stop(self) -> dict:
        self.stop_flag.set()
        self.thread.join()
        for tid, t in thread_times(self.pid).items():
            self.last[tid] = t["run_ns"]
        run_ns = sum(v - self.start.get(tid, 0) for tid, v in self.last.items())
        return {"cpu": run_ns / 1e9, "cpu_ticks": proc_cpu(self.pid) - self.ticks0}


class LibraryMpd(Mpd):
    """A private MPD whose music_directory is a tree to scan (db_file in the work directory,
    127.0.0.1 on a free port, null output, no auto-update). It builds its database when it
    starts (it has none); each measured run is `mpc rescan --wait`, which reads every file
    again."""

    def __init__(self, tree: str, folder: str):
        super().__init__(tree, folder)
        self.name = "mpd (library)"
        self.tree = tree

    def mpc_out(self, *args: str) -> str:
        return run(["mpc", "-h", "127.0.0.1", "-p", str(self.port), *args],
                   capture_output=True, text=True, timeout=600).stdout

    def wait_idle(self) -> None:
        deadline = time.monotonic() + 600
        while "Updating DB" in self.mpc_out("status"):
            if time.monotonic() > deadline:
                raise RuntimeError("mpd is still updating its database")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=30)

    def start(self) -> None:
        os.makedirs(os.path.join(self.dir, "playlists"))
        conf = os.path.join(self.dir, "mpd.conf")
        self.write_conf(conf, self.tree)
        self.proc = spawn(["mpd", "--no-daemon", conf])
        self.wait_listening()
        self.mpc("update", "--wait")
        self.wait_idle()

    def update(self, command: str = "rescan") -> dict:
        """Wall time of `mpc COMMAND --wait` and MPD's CPU meanwhile (ThreadClock)."""
        clock = ThreadClock(self.proc.pid)
        t0 = time.monotonic()
        run(["mpc", "-q", "-h", "127.0.0.1", "-p", str(self.port), command, "--wait"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=1800)
        wall = time.monotonic() - t0
        return {"wall": wall, **clock.stop()}

    def songs(self) -> int:
        for line in self.mpc_out("stats").splitlines():
            if line.startswith("Songs:"):
                return int(line.split()[1])
        raise RuntimeError("mpc stats printed no Songs: line")


def scan_counts(output: str) -> dict:
    """The counts of tonearm library scan's summary line."""
    line = next((l for l in output.splitlines() if l.startswith("Scanned in")), None)
    if line is None:
        raise RuntimeError(f"tonearm library scan printed no summary: {output[-500:]}")
    counts = {}
    for part in line.split(":", 1)[1].split(","):
        n, word = part.split()
        counts[word] = int(n)
    counts["seconds_inside"] = float(line.split()[2])
    return counts


def duplicate_library(db: str, copies: int) -> dict:
    """Makes the scanned library at `db` `copies` times as large in place, with SQL: each copy
    of every row gets a new id and path and its artist, album artist and album (and their
    folded keys) suffixed " #K", so the copies are distinct artists and albums. The full-text
    index follows through the schema's triggers. Returns the counts."""
    import sqlite3
    con = sqlite3.connect(db, isolation_level=None)
    cols = [r[1] for r in con.execute("PRAGMA table_info(item)")]
    t0 = time.monotonic()
    con.execute("BEGIN")
    con.execute("CREATE TEMP TABLE original AS SELECT id FROM item")
    for k in range(1, copies):
        exprs = []
        for c in cols:
            if c == "id":
                exprs.append(f"((id & 0x0003FFFFFFFFFFFF) << 4) + {k}")
            elif c == "path":
                exprs.append(f"path || '#{k}'")
            elif c in ("artist", "albumArtist", "album"):
                exprs.append(f"{c} || ' #{k}'")
            elif c in ("artistKey", "albumArtistKey", "albumKey"):
                exprs.append(f"CASE WHEN {c} = '' THEN '' ELSE {c} || ' #{k}' END")
            else:
                exprs.append(c)
        con.execute(f"INSERT INTO item ({', '.join(cols)}) SELECT {', '.join(exprs)} FROM item "
                    "WHERE id IN (SELECT id FROM temp.original)")
    con.execute("COMMIT")
    tracks, artists, albums = con.execute(
        "SELECT count(*), count(DISTINCT artistKey), count(DISTINCT albumKey) FROM item").fetchone()
    con.close()
    return {"tracks": tracks, "artists": artists, "albums": albums, "seconds": time.monotonic() - t0}


def bench_listing(tonearm: str, db: str, artist: str, album: str, runs: int) -> dict:
    """`tonearm bench-library`: each listing query timed in-process (median of `runs` after a
    warm-up); one JSON object per query."""
    out = run([tonearm, "bench-library", "--db", db, "--artist", artist, "--album", album, "--runs", str(runs)],
              capture_output=True, text=True, timeout=600).stdout
    return {r["query"]: r for r in (json.loads(line) for line in out.splitlines() if line.startswith("{"))}




def callgrind_total(path: str) -> int:
    """The instructions a callgrind output file counted (its `totals:` line)."""
    with open(path) as f:
        for line in f:
            if line.startswith("totals:") or line.startswith("summary:"):
                return int(line.split()[1])
    raise RuntimeError(f"{path} has no totals line")


def callgrind_binary(tonearm: str) -> str:
    """A copy of `tonearm` without its debug sections (valgrind cannot read the static binary's
    DWARF and stops); the binary itself when `strip` is missing or fails."""
    stripped = work("tonearm-callgrind")
    try:
        run(["strip", "--strip-debug", "-o", stripped, tonearm], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return stripped
    except (OSError, subprocess.CalledProcessError):
        return tonearm


def tonearm_instructions(tonearm: str, tree: str) -> dict:
    """Instructions of `tonearm library scan FOLDER --db NEW --quiet` under callgrind, whole
    process: of `tree` (a first scan) and of an empty folder (start, new database, exit)."""
    binary = callgrind_binary(tonearm)
    empty = work("empty-folder")
    os.makedirs(empty, exist_ok=True)
    counts = {}
    for label, folder in (("scan", tree), ("empty", empty)):
        db, out = work(f"callgrind-{label}.sqlite"), work(f"callgrind.tonearm.{label}")
        remove_db(db)
        log(f"  media library: tonearm library scan under callgrind ({label}) …")
        run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", binary, "library", "scan", folder,
             "--db", db, "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=1800)
        counts[label] = callgrind_total(out)
        remove_db(db)
    return counts


class CallgrindMpd(LibraryMpd):
    """A LibraryMpd run under `valgrind --tool=callgrind` in a process group of its own (the
    `valgrind` command is a shell script whose child is the tool), whose counters are dumped
    by name (`callgrind_control -d`, which also zeroes them)."""

    def __init__(self, tree: str, folder: str):
        super().__init__(tree, folder)
        self.out = os.path.join(self.dir, "callgrind.mpd")
        self.tool_pid = 0

    def start(self) -> None:
        os.makedirs(os.path.join(self.dir, "playlists"))
        conf = os.path.join(self.dir, "mpd.conf")
        self.write_conf(conf, self.tree)
        self.proc = spawn(["valgrind", "--tool=callgrind", f"--callgrind-out-file={self.out}", "mpd", "--no-daemon", conf],
                          start_new_session=True)
        self.wait_listening(timeout=300)  # (valgrind's MPD starts in seconds)
        children_of = subprocess.run(["pgrep", "-P", str(self.proc.pid)], capture_output=True, text=True).stdout.split()
        self.tool_pid = int(children_of[0]) if children_of else self.proc.pid

    def dump(self, name: str) -> None:
        run(["callgrind_control", "-d", name, str(self.tool_pid)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=120)

    def counts(self) -> dict:
        """start, update, rescan (the dumps, in that order) and exit (the rest, at the end)."""
        return {"start": callgrind_total(self.out + ".1"), "update": callgrind_total(self.out + ".2"),
                "rescan": callgrind_total(self.out + ".3"), "exit": callgrind_total(self.out)}


def mpd_instructions(tree: str, count: int) -> dict:
    """MPD's instructions under callgrind: its start (to listening), a first `mpc update --wait`
    of `tree` into its empty database, a `mpc rescan --wait`, and its exit (SIGTERM)."""
    mpd = CallgrindMpd(tree, f"mpd-callgrind-{count}")
    try:
        log("  media library: mpd --no-daemon under callgrind: start …")
        mpd.start()
        mpd.dump("start")
        log("  media library: mpd under callgrind: mpc update --wait …")
        mpd.mpc_out("update", "--wait")
        mpd.wait_idle()
        mpd.dump("update")
        songs = mpd.songs()
        log("  media library: mpd under callgrind: mpc rescan --wait …")
        mpd.mpc_out("rescan", "--wait")
        mpd.wait_idle()
        mpd.dump("rescan")
    finally:
        mpd.stop()
    return {**mpd.counts(), "songs": songs}


def remove_db(db: str) -> None:
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)


def median_run(runs: list[dict]) -> dict:
    return sorted(runs, key=lambda v: v["wall"])[len(runs) // 2]


def full_scans(tonearm: str, tree: str, db: str, mpd: LibraryMpd, count: int, cold: bool, runs: int) -> dict:
    """`runs` full scans of each, alternating, tonearm into a new database and MPD's rescan;
    caches dropped before each when `cold`, else the tree read once first."""
    if not cold:
        read_tree(tree)
    t_runs, m_runs = [], []
    state = "cold" if cold else "warm"
    for i in range(runs):
        remove_db(db)
        if cold:
            drop_caches()
        log(f"  media library, {count} files, {state}: tonearm library scan ({i + 1} of {runs}) …")
        t = run_timed([tonearm, "library", "scan", tree, "--db", db, "--quiet"])
        t["counts"] = scan_counts(t.pop("output"))
        t_runs.append(t)
        if cold:
            drop_caches()
        log(f"  media library, {count} files, {state}: mpc rescan --wait ({i + 1} of {runs}) …")
        m_runs.append(mpd.update("rescan"))
    return {"tonearm": median_run(t_runs), "mpd": median_run(m_runs),
            "tonearm_walls": [v["wall"] for v in t_runs], "mpd_walls": [v["wall"] for v in m_runs],
            "tonearm_cpus": [v["cpu"] for v in t_runs], "mpd_cpus": [v["cpu"] for v in m_runs],
            "tonearm_peak_kb": sorted(v["maxrss_kb"] for v in t_runs)[len(t_runs) // 2]}


def bench_size(tonearm: str, count: int, runs: int, scan_runs: int, can_drop: bool, extras: bool,
               instructions: bool = False) -> dict:
    tree = work(f"library-{count}")
    log(f"  media library: generating {count} tagged FLACs …")
    t0 = time.monotonic()
    gen = make_library_tree(tree, count)
    gen["seconds"] = time.monotonic() - t0
    log(f"  media library: {count} files ({gen['bytes'] / 1e6:.1f} MB) in {gen['seconds']:.1f} s")
    db = work(f"library-{count}.sqlite")
    r: dict = {"generation": gen, "files": count}
    if instructions:
        r["instructions"] = {"tonearm": tonearm_instructions(tonearm, tree), "mpd": mpd_instructions(tree, count)}
    mpd = LibraryMpd(tree, f"mpd-library-{count}")
    try:
        mpd.start()
        r["mpd_songs"] = mpd.songs()
        r["warm"] = full_scans(tonearm, tree, db, mpd, count, False, scan_runs)
        if can_drop:
            r["cold"] = full_scans(tonearm, tree, db, mpd, count, True, scan_runs)
        if extras:
            extra(tonearm, tree, db, mpd, count, runs, can_drop, r)
    finally:
        mpd.stop()
    shutil.rmtree(tree, ignore_errors=True)
    return r


def extra(tonearm: str, tree: str, db: str, mpd: LibraryMpd, count: int, runs: int, can_drop: bool, r: dict) -> None:
    """No-change rescans, the songs found, listings (on the database of the last full scan)."""
    scan = [tonearm, "library", "scan", tree, "--db", db, "--quiet"]
    # A first scan leaves its indexes to the next command that opens the library: that
    # command's time, shown beside the scan's (the work moved, not removed).
    log("  media library: tonearm library stats (the first use after the scan: makes its indexes) …")
    r["tonearm_first_use"] = run_timed([tonearm, "library", "stats", "--db", db])
    r["tonearm_first_use"].pop("output")
    log("  media library: tonearm library scan (no change) …")
    t = run_timed(scan)
    r["tonearm_rescan"] = {**t, "counts": scan_counts(t.pop("output"))}
    log("  media library: mpc update --wait (no change) …")
    r["mpd_rescan"] = mpd.update("update")
    if can_drop:
        drop_caches()
        log("  media library: tonearm library scan (no change, caches dropped) …")
        t = run_timed(scan)
        r["tonearm_rescan_cold"] = {**t, "counts": scan_counts(t.pop("output"))}
        drop_caches()
        log("  media library: mpc update --wait (no change, caches dropped) …")
        r["mpd_rescan_cold"] = mpd.update("update")
    r["mpd_songs_after"] = mpd.songs()
    artist = f"Artist {min(42, (count - 1) // 100):03d}"
    r["artist"] = artist
    log(f"  media library: listings ({runs} runs each after a warm-up) …")
    r["songs_artist"] = median_timed([tonearm, "library", "songs", "--artist", artist, "--db", db], runs)
    r["albums"] = median_timed([tonearm, "library", "albums", "--db", db], runs)
    r["launch"] = median_timed([tonearm, "--version"], runs)
    base = ["mpc", "-h", "127.0.0.1", "-p", str(mpd.port)]
    r["mpc_find"] = median_timed([*base, "find", "artist", artist], runs)
    r["mpc_albums"] = median_timed([*base, "list", "album"], runs)
    r["mpd_rss_kb"] = proc_status(mpd.proc.pid).get("VmHWM", 0)
    r["db_bytes"] = os.path.getsize(db)
    # Listing queries inside the library (no process start): on the scanned library, then on a
    # copy made ten times as large with SQL (100,000 tracks for 10,000 files).
    album = f"Album {min(42, (count - 1) // 100):03d}-03"
    log(f"  media library: listing queries in-process ({runs * 2 + 1} runs each) …")
    r["listing"] = bench_listing(tonearm, db, artist, album, runs * 2 + 1)
    big = work("library-x10.sqlite")
    shutil.copy(db, big)
    if os.path.exists(db + "-wal"):  # (no process has it open: SQLite applies the log when it opens the copy)
        shutil.copy(db + "-wal", big + "-wal")
    log("  media library: a library ten times as large, by copying rows with SQL …")
    r["big"] = duplicate_library(big, 10)
    log(f"  media library: {r['big']['tracks']} tracks in {r['big']['seconds']:.1f} s; listing queries …")
    r["listing_big"] = bench_listing(tonearm, big, artist + " #3", album + " #3", runs * 2 + 1)


def bench(ctx) -> dict:
    sizes = [int(n) for n in (ctx.args.files or ("1000" if ctx.quick else "2000,10000")).split(",")]
    scan_runs = ctx.args.scan_runs or (1 if ctx.quick else 3)
    can_drop = drop_caches()
    instructions = not ctx.args.no_instructions and bool(shutil.which("valgrind"))
    if not instructions and not ctx.args.no_instructions:
        log("  media library: valgrind is not installed: no instruction counts")
    if not can_drop:
        log("  media library: cannot drop the caches (not root?): warm figures only")
    return {"cold_permitted": can_drop, "scan_runs": scan_runs,
            "sizes": {str(n): bench_size(ctx.tonearm, n, ctx.runs, scan_runs, can_drop, n == max(sizes),
                                         instructions and n == sizes[0])
                      for n in sizes}}


def report(r: dict, ctx) -> bool:
    log("")
    log("6. Media library scan: tagged FLACs (0.5 s, 44.1 kHz stereo, 16 distinct tones, tags distinct per "
        "file) in artist/album folders. tonearm: `library scan TREE --db NEW --quiet`, wall and CPU "
        "(user + system, wait4) of the process, its start included; MPD: a running daemon asked to "
        "`mpc rescan --wait` (every file read again), wall, and MPD's CPU meanwhile (its threads' "
        f"schedstat). {r['scan_runs']} full scan(s) of each per row, alternating, the median counts. "
        + ("Warm: every file read first; cold: caches dropped before each run."
           if r["cold_permitted"] else "WARM ONLY: the caches could not be dropped."))
    log(f"   {'files':>6} {'cache':<5} {'program':<22} {'wall s':>8} {'CPU s':>8} {'CPU µs/file':>12} {'files/s':>9}")
    rows, all_same = [], True
    for size, s in r["sizes"].items():
        n = s["files"]
        for state in ("warm", "cold"):
            if state not in s:
                continue
            f = s[state]
            for name, key in (("tonearm library scan", "tonearm"), ("mpc rescan --wait", "mpd")):
                v = f[key]
                log(f"   {n:>6} {state:<5} {name:<22} {v['wall']:8.3f} {v['cpu']:8.3f} "
                    f"{v['cpu'] / n * 1e6:12.1f} {n / v['wall']:9.0f}")
            walls = lambda k: ", ".join(f"{w:.3f}" for w in f[k])
            log(f"   {'':>6} {'':<5} (walls: tonearm {walls('tonearm_walls')}; MPD {walls('mpd_walls')})")
            t, m = f["tonearm"], f["mpd"]
            rows.append((f"scan wall, {n} files, {state}, vs MPD", t["wall"], m["wall"], "s", "≤ 0.5×",
                         t["wall"] <= 0.5 * m["wall"]))
            rows.append((f"scan CPU/file, {n}, {state}, vs MPD", t["cpu"] / n * 1e6, m["cpu"] / n * 1e6, "µs",
                         "(info)", None))
            if state == "warm" and "tonearm_peak_kb" in f:
                # The scan process's peak resident memory (wait4's ru_maxrss = VmHWM), median run.
                peak = f["tonearm_peak_kb"] / 1024
                rows.append((f"scan peak memory, {n} files", peak, None, "MB", "< 30 MB", peak < 30))
            added = t["counts"]["added"]
            same = added == s["mpd_songs"] == n
            all_same = all_same and same
        log(f"   {n} files: tonearm added {added}, MPD has {s['mpd_songs']} songs: "
            f"{'the same' if same else 'NOT THE SAME'}")
    for s in r["sizes"].values():
        if "instructions" in s:
            rows += report_instructions(s)
    big = next((s for s in r["sizes"].values() if "tonearm_rescan" in s), None)
    if big:
        report_extra(big)
    log("")
    rows.append(("songs found, every size (= files)", 1.0 if all_same else 0.0, 1.0, "", "= 1×", all_same))
    if big:
        n = big["files"]
        judged = n >= 10000
        rows.append((f"no-change rescan, {n} files", big["tonearm_rescan"]["wall"], big["mpd_rescan"]["wall"], "s",
                     "< 0.5 s" if judged else "(info)", big["tonearm_rescan"]["wall"] < 0.5 if judged else None))
        lb, b = big["listing_big"], big["big"]
        judged_big = b["tracks"] >= 100000
        for q, label in (("songs by artist", "songs of an artist"), ("album tracks", "an album's tracks")):
            ms = lb[q]["median_ms"]
            rows.append((f"{label}, {b['tracks']} tracks", ms, None, "ms", "< 10 ms" if judged_big else "(info)",
                         ms < 10 if judged_big else None))
    return print_goal_rows(rows)


def report_instructions(s: dict) -> list:
    """Prints the callgrind counts of a size and returns their goal rows (millions)."""
    n, t, m = s["files"], s["instructions"]["tonearm"], s["instructions"]["mpd"]
    whole_mpd = m["start"] + m["update"] + m["exit"]
    log(f"   instructions (callgrind), {n} files, warm: tonearm's first scan {t['scan'] / 1e6:.1f}M "
        f"(an empty folder: {t['empty'] / 1e6:.1f}M, so the scan's own work {(t['scan'] - t['empty']) / 1e6:.1f}M, "
        f"{(t['scan'] - t['empty']) / n / 1e3:.1f}k a file); mpd --no-daemon: start {m['start'] / 1e6:.1f}M, first "
        f"update {m['update'] / 1e6:.1f}M ({m['update'] / n / 1e3:.1f}k a file, {m['songs']} songs), rescan "
        f"{m['rescan'] / 1e6:.1f}M, exit {m['exit'] / 1e6:.1f}M")
    return [
        (f"instr. {n}: process vs MPD process", t["scan"] / 1e6, whole_mpd / 1e6, "M", "≤ 0.5×",
         t["scan"] <= 0.5 * whole_mpd),
        (f"instr. {n}: scan work vs MPD update", (t["scan"] - t["empty"]) / 1e6, m["update"] / 1e6, "M", "≤ 0.5×",
         t["scan"] - t["empty"] <= 0.5 * m["update"]),
        (f"instr. {n}: process vs MPD rescan", t["scan"] / 1e6, m["rescan"] / 1e6, "M", "(info)", None),
    ]


def report_extra(r: dict) -> None:
    n = r["files"]
    log(f"   on the {n}-file tree:")
    for label, key in (("tonearm library stats, first use after a scan", "tonearm_first_use"),
                       ("tonearm library scan, no change", "tonearm_rescan"),
                       ("tonearm library scan, no change, cold", "tonearm_rescan_cold"),
                       ("mpc update --wait, no change", "mpd_rescan"),
                       ("mpc update --wait, no change, cold", "mpd_rescan_cold")):
        if key in r:
            v = r[key]
            log(f"   {label:<44} {v['wall']:8.3f} s wall {v['cpu']:8.3f} s CPU")
    rc = r["tonearm_rescan"]["counts"]
    log(f"   tonearm no change: {rc['unchanged']} unchanged, {rc['added']} added, {rc['updated']} updated "
        f"({rc['seconds_inside']:.3f} s by its own clock); database {r['db_bytes'] / 1e6:.1f} MB; "
        f"MPD songs after: {r['mpd_songs_after']}")
    log(f"   listings, '{r['artist']}' ({r['songs_artist']['runs']} runs each after a warm-up, median wall, "
        "process start included; for information):")
    for label, key in (("tonearm library songs --artist", "songs_artist"), ("tonearm library albums", "albums"),
                       ("mpc find artist", "mpc_find"), ("mpc list album", "mpc_albums"),
                       ("tonearm --version (the process alone)", "launch")):
        v = r[key]
        log(f"   {label:<44} {v['wall'] * 1000:8.1f} ms ({v['lines']} lines)")
    big = r["big"]
    log(f"   listing queries in-process (`tonearm bench-library`, median of "
        f"{r['listing']['songs by artist']['runs']} runs after a warm-up, no process start):")
    log(f"   {'query':<44} {n:>7} files {big['tracks']:>7} tracks")
    for q in ("songs by artist", "album tracks", "albums (summaries)", "artists (summaries)"):
        a, b = r["listing"][q], r["listing_big"][q]
        log(f"   {q:<44} {a['median_ms']:8.2f} ms {b['median_ms']:8.2f} ms  ({a['rows']} / {b['rows']} rows)")
    log(f"   (the large library: the scanned one with every row copied {big['tracks'] // n - 1} times by SQL "
        f"with its artist and album renamed: {big['tracks']} tracks, made in {big['seconds']:.1f} s, not measured)")


if __name__ == "__main__":
    import driver
    driver.main(["scan"])
