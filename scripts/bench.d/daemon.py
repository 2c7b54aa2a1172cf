#!/usr/bin/env python3
# Part 9 of scripts/bench, the daemon (issue 20): `tonearm daemon` against Debian's MPD in one
# run, both serving the same generated music folder (part 6's tree of tagged 0.5 s FLACs: 100
# artists, 1,000 albums, 10,000 songs; --quick 1,000) over TCP on loopback, both with a null
# audio output (tonearm `--output null`, MPD `type "null"`: real time, nothing heard) and a
# private state folder. Each is asked over one connection by this script's own small client
# (standard library only; it sends a command and reads to its `OK`/`ACK` line):
#   - 1,000 `status` round trips on one connection (wall time of all, per round trip);
#   - `playlistinfo` of the queue after every song is added (10,000), median of --runs;
#   - `list album group albumartist` on the whole database, median of --runs;
#   - idle: nothing playing, the queue stopped, over a window (10 s; quick 5 s) with no client
#     connected and with one client waiting in `idle` — CPU (schedstat of every thread) and
#     wake-ups per second (voluntary + involuntary context switches of every thread, from
#     /proc/PID/task/*/status), with the threads that woke named;
#   - private memory (Private_Clean + Private_Dirty of /proc/PID/smaps_rollup) idle with the
#     queue loaded, and while playing it (5 s after `play`).
# The goals (issue 20): every round trip at most MPD's time, zero wake-ups when idle, private
# memory below MPD's. The timed requests alternate between the two daemons.
#   scripts/bench daemon [--quick] [--runs N] [--daemon-songs N] [--idle-window S] [--base-tonearm PATH]
# --base-tonearm: a second tonearm binary (an earlier commit's) run beside the first and MPD, in the
# same alternation and idle windows, so that a change is measured against its base in one run.
# SPDX-License-Identifier: GPL-3.0-or-later
import os
import socket
import statistics
import threading
import time

from common import free_port, log, print_goal_rows, process_runtime, spawn, thread_delta, thread_times, work
from scan import LibraryMpd, make_library_tree

NAME = "daemon"
TITLE = "the MPD-protocol daemon vs MPD"
PEERS = ["mpd"]
TOOLS = ["ffmpeg", "mpd", "mpc"]
NEEDS_FLAC = False


def add_arguments(ap) -> None:
    ap.add_argument("--daemon-songs", type=int, default=None,
                    help="songs in part 9's music folder and queue (default 10000, quick 1000)")
    ap.add_argument("--idle-window", type=float, default=None,
                    help="seconds each idle daemon is watched in part 9 (default 10, quick 5)")
    ap.add_argument("--base-tonearm", default=None,
                    help="part 9: also run this tonearm binary (a base to compare with), alternating with the others")


class Client:
    """One MPD-protocol connection: `ask` sends a command and returns the answer up to and
    including its OK or ACK line (bytes)."""

    def __init__(self, port: int, timeout: float = 120):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        greeting = self._line()
        if not greeting.startswith(b"OK MPD "):
            raise RuntimeError(f"not an MPD server: {greeting!r}")

    def _line(self) -> bytes:
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise RuntimeError("the server closed the connection")
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line

    def ask(self, command: str) -> bytes:
        self.sock.sendall(command.encode() + b"\n")
        parts = []
        data = self.buf
        self.buf = b""
        while True:
            # The answer ends with "OK\n" or an "ACK …\n" line (no binary commands here).
            if data.endswith(b"OK\n") and (len(data) == 3 or data[-4:-3] == b"\n"):
                parts.append(data)
                return b"".join(parts)
            i = data.rfind(b"\nACK ")
            if (data.startswith(b"ACK ") or i >= 0) and data.endswith(b"\n"):
                parts.append(data)
                answer = b"".join(parts)
                raise RuntimeError(f"{command!r}: {answer[-200:].decode(errors='replace').strip()}")
            # Keep the last few bytes in `data` so that a terminator split across reads is seen.
            if len(data) > 8:
                parts.append(data[:-8])
                data = data[-8:]
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise RuntimeError(f"{command!r}: the server closed the connection")
            data += chunk

    def send(self, command: str) -> None:
        self.sock.sendall(command.encode() + b"\n")

    def close(self) -> None:
        self.sock.close()


class TonearmDaemon:
    """`tonearm daemon` on a free TCP port of 127.0.0.1, its socket, lock and state in the work
    folder, the tree as its music folder, a null output, no session bus (no MPRIS: MPD has
    none)."""

    def __init__(self, binary: str, tree: str, name: str = "tonearm"):
        self.name = name
        self.port = free_port()
        self.dir = work(f"{name}-daemon")
        self.cmd = [binary, "daemon", "--music", tree, "--listen", f"127.0.0.1:{self.port}", "--output", "null",
                    "--runtime-dir", os.path.join(self.dir, "run"), "--state-dir", os.path.join(self.dir, "state")]
        self.proc = None

    def start(self) -> None:
        os.makedirs(self.dir)
        env = {k: v for k, v in os.environ.items() if k != "DBUS_SESSION_BUS_ADDRESS"}
        env["XDG_RUNTIME_DIR"] = os.path.join(self.dir, "xdg")
        os.makedirs(env["XDG_RUNTIME_DIR"], mode=0o700)
        self.proc = spawn(self.cmd, env=env)
        deadline = time.monotonic() + 900  # it scans the music folder before it listens
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"tonearm daemon ended with status {self.proc.returncode}")
                if time.monotonic() > deadline:
                    raise RuntimeError("tonearm daemon did not start listening")
                time.sleep(0.1)  # polling the port's readiness, not synchronisation

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=30)


def private_kb(pid: int) -> int:
    """Private_Clean + Private_Dirty of the process, kB (/proc/PID/smaps_rollup)."""
    m = memory_kb(pid)
    return m["Private_Clean"] + m["Private_Dirty"]


def memory_kb(pid: int) -> dict:
    """Private_Clean, Private_Dirty and Anonymous of /proc/PID/smaps_rollup, kB: a static
    binary's own text pages that no other process maps are Private_Clean; shared libraries
    that other processes also map are not private."""
    out = {"Private_Clean": 0, "Private_Dirty": 0, "Anonymous": 0}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            key = line.split(":", 1)[0]
            if key in out:
                out[key] = int(line.split()[1])
    return out


def watch_idle(pid: int, window: float) -> dict:
    """CPU and wake-ups of every thread of `pid` over `window` seconds."""
    before = thread_times(pid)
    t0 = time.monotonic()
    time.sleep(window)  # a measurement window, not synchronisation
    span = time.monotonic() - t0
    threads = thread_delta(before, thread_times(pid))
    run_s = sum(t["run_s"] for t in threads.values())
    switches = sum(t["switches"] for t in threads.values())
    return {"span": span, "cpu_s": run_s, "cpu_ms_per_min": run_s * 60_000 / span, "wakeups_per_s": switches / span,
            "threads": {k: {"wakeups_per_s": v["switches"] / span, "cpu_ms": v["run_s"] * 1000}
                        for k, v in threads.items() if v["switches"] or v["run_s"]}}


def wait_quiet(pid: int, name: str, deadline_s: float = 900) -> float:
    """Waits until the process uses under 2 ms of CPU in each of three seconds in a row (tonearm's folder watch
    takes a first look at the whole tree after the daemon listens); returns the seconds it took."""
    t0 = time.monotonic()
    last = process_runtime(pid)
    quiet = 0
    while True:
        time.sleep(1.0)  # a sampling period of the CPU clock, not synchronisation
        now = process_runtime(pid)
        quiet = quiet + 1 if now - last < 0.002 else 0
        if quiet == 3:  # three quiet seconds in a row
            return time.monotonic() - t0 - 3
        if time.monotonic() - t0 > deadline_s:
            raise RuntimeError(f"{name} was still busy after {deadline_s:.0f} s")
        last = now


def timed(client: Client, command: str) -> tuple[float, int]:
    t0 = time.perf_counter()
    answer = client.ask(command)
    return time.perf_counter() - t0, answer.count(b"\n")


def bench(ctx) -> dict:
    songs = ctx.args.daemon_songs or (1000 if ctx.quick else 10000)
    window = ctx.args.idle_window or (5.0 if ctx.quick else 10.0)
    runs = ctx.runs
    tree = work("daemon-music")
    log(f"  daemon: generating {songs} tagged FLACs …")
    make_library_tree(tree, songs)
    mpd = LibraryMpd(tree, "daemon-mpd")
    log("  daemon: starting MPD (its database update) …")
    mpd.start()
    tonearm = TonearmDaemon(ctx.tonearm, tree)
    log("  daemon: starting tonearm daemon (its start-up scan) …")
    t0 = time.monotonic()
    tonearm.start()
    tonearm_start = time.monotonic() - t0
    daemons = {"tonearm": tonearm, "mpd": mpd}
    base = None
    if getattr(ctx.args, "base_tonearm", None):
        base = TonearmDaemon(os.path.abspath(ctx.args.base_tonearm), tree, "base")
        log("  daemon: starting the base tonearm daemon …")
        base.start()
        daemons = {"base": base, "tonearm": tonearm, "mpd": mpd}
    r = {"songs": songs, "window": window, "runs": runs, "tonearm_start_s": tonearm_start}
    r["tonearm_settle_s"] = wait_quiet(tonearm.proc.pid, "tonearm daemon")
    if base:
        wait_quiet(base.proc.pid, "base tonearm daemon")
    wait_quiet(mpd.proc.pid, "mpd")
    try:
        clients = {n: Client(d.port) for n, d in daemons.items()}
        artists = sorted(os.listdir(tree))
        for n, c in clients.items():
            c.ask("clear")
            c.ask("command_list_begin\n" + "\n".join(f'add "{a}"' for a in artists) + "\ncommand_list_end")
            length = next(int(l.split()[1]) for l in c.ask("status").decode().splitlines() if l.startswith("playlistlength:"))
            if length != songs:
                raise RuntimeError(f"{n}: {length} songs in the queue after adding {songs}")
        log("  daemon: 1,000 status round trips, playlistinfo, list album group albumartist …")
        per = {n: {"status": [], "playlistinfo": [], "list": []} for n in daemons}
        lines = {n: {} for n in daemons}
        for _ in range(runs):
            for n, c in clients.items():
                c.ask("status")  # warm
                t0 = time.perf_counter()
                for _ in range(1000):
                    c.ask("status")
                per[n]["status"].append(time.perf_counter() - t0)
            for n, c in clients.items():
                s, lines[n]["playlistinfo"] = timed(c, "playlistinfo")
                per[n]["playlistinfo"].append(s)
            for n, c in clients.items():
                s, lines[n]["list"] = timed(c, "list album group albumartist")
                per[n]["list"].append(s)
        for n in daemons:
            r[n] = {"status_1000_s": statistics.median(per[n]["status"]),
                    "playlistinfo_s": statistics.median(per[n]["playlistinfo"]),
                    "list_s": statistics.median(per[n]["list"]),
                    "all": per[n], "lines": lines[n]}
        for c in clients.values():
            c.close()
        log(f"  daemon: idle, no client, {window:.0f} s each (both at once) …")
        for n, d in daemons.items():
            wait_quiet(d.proc.pid, n)
        # Both are watched in the same window: what one does cannot shift the other's figures.
        idle = {}
        ts = [threading.Thread(target=lambda n=n, d=d: idle.__setitem__(n, watch_idle(d.proc.pid, window)))
              for n, d in daemons.items()]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        for n in daemons:
            r[n]["idle"] = idle[n]
            r[n]["private_idle_kb"] = private_kb(daemons[n].proc.pid)
            r[n]["memory_idle"] = memory_kb(daemons[n].proc.pid)
        log(f"  daemon: idle, one client in `idle`, {window:.0f} s …")
        waiting = {n: Client(d.port) for n, d in daemons.items()}
        for c in waiting.values():
            c.send("idle")
        idle = {}
        ts = [threading.Thread(target=lambda n=n, d=d: idle.__setitem__(n, watch_idle(d.proc.pid, window)))
              for n, d in daemons.items()]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        for n in daemons:
            r[n]["idle_client"] = idle[n]
        log("  daemon: playing the queue to a null output …")
        ctl = {n: Client(d.port) for n, d in daemons.items()}
        for c in ctl.values():
            c.ask("play")
        time.sleep(5.0)  # a playing span before the reading, not synchronisation
        for n, d in daemons.items():
            state = next((l for l in ctl[n].ask("status").decode().splitlines() if l.startswith("state:")), "")
            r[n]["playing_state"] = state.split(": ", 1)[-1]
            r[n]["private_playing_kb"] = private_kb(d.proc.pid)
            r[n]["memory_playing"] = memory_kb(d.proc.pid)
        for c in ctl.values():
            c.ask("stop")
            c.close()
        for c in waiting.values():
            c.close()
    finally:
        tonearm.stop()
        if base:
            base.stop()
        mpd.stop()
    return r


def print_threads(name: str, idle: dict) -> None:
    busy = sorted(idle["threads"].items(), key=lambda kv: -kv[1]["wakeups_per_s"])
    for tname, v in busy[:8]:
        log(f"     {name}: {tname:<32} {v['wakeups_per_s']:7.2f} wake-ups/s {v['cpu_ms']:8.2f} ms")


def report(r: dict, ctx) -> bool:
    t, m = r["tonearm"], r["mpd"]
    n = r["songs"]
    log("")
    log(f"9. The daemon vs MPD: {n} songs (tagged 0.5 s FLACs), TCP on loopback, one connection, "
        f"median of {r['runs']} runs; tonearm's start-up scan {r['tonearm_start_s']:.1f} s, "
        f"then busy (the watch's first look) {r['tonearm_settle_s']:.1f} s")
    log(f"   lines answered: playlistinfo tonearm {t['lines']['playlistinfo']}, MPD {m['lines']['playlistinfo']}; "
        f"list tonearm {t['lines']['list']}, MPD {m['lines']['list']}")
    for label, key in (("idle, no client", "idle"), ("idle, one client in idle", "idle_client")):
        log(f"   {label}: tonearm {t[key]['wakeups_per_s']:.2f} wake-ups/s, {t[key]['cpu_ms_per_min']:.2f} CPU-ms/min; "
            f"MPD {m[key]['wakeups_per_s']:.2f} wake-ups/s, {m[key]['cpu_ms_per_min']:.2f} CPU-ms/min "
            f"(over {t[key]['span']:.1f} s)")
        print_threads("tonearm", t[key])
        print_threads("mpd", m[key])
    log(f"   playing: tonearm {t['playing_state']}, MPD {m['playing_state']}")
    for label, key in (("idle", "memory_idle"), ("playing", "memory_playing")):
        log(f"   memory {label}, MB: " + "; ".join(
            f"{who} private clean {v[key]['Private_Clean'] / 1024:.1f}, private dirty {v[key]['Private_Dirty'] / 1024:.1f}, "
            f"anonymous {v[key]['Anonymous'] / 1024:.1f}" for who, v in (("tonearm", t), ("MPD", m))))
    rows = [
        ("1,000 status round trips", t["status_1000_s"], m["status_1000_s"], "s", "≤ 1×",
         t["status_1000_s"] <= m["status_1000_s"]),
        (f"playlistinfo, {n} songs", t["playlistinfo_s"], m["playlistinfo_s"], "s", "≤ 1×",
         t["playlistinfo_s"] <= m["playlistinfo_s"]),
        (f"list album group albumartist", t["list_s"], m["list_s"], "s", "≤ 1×", t["list_s"] <= m["list_s"]),
        ("idle wake-ups/s, no client", t["idle"]["wakeups_per_s"], m["idle"]["wakeups_per_s"], "/s", "0",
         t["idle"]["wakeups_per_s"] == 0),
        ("idle wake-ups/s, a client in idle", t["idle_client"]["wakeups_per_s"], m["idle_client"]["wakeups_per_s"],
         "/s", "0", t["idle_client"]["wakeups_per_s"] == 0),
        ("idle CPU ms/min, no client", t["idle"]["cpu_ms_per_min"], m["idle"]["cpu_ms_per_min"], "ms", "(info)", None),
        ("private memory idle", t["private_idle_kb"] / 1024, m["private_idle_kb"] / 1024, "MB", "< 1×",
         t["private_idle_kb"] < m["private_idle_kb"]),
        ("private memory playing", t["private_playing_kb"] / 1024, m["private_playing_kb"] / 1024, "MB", "< 1×",
         t["private_playing_kb"] < m["private_playing_kb"]),
    ]
    if "base" in r:
        b = r["base"]
        log("   base binary vs this one (same run, alternating):")
        for label, key, scale in (("1,000 status round trips, ms", "status_1000_s", 1000), ("playlistinfo, ms", "playlistinfo_s", 1000),
                                  ("list, ms", "list_s", 1000), ("private memory idle, MB", "private_idle_kb", 1 / 1024),
                                  ("private memory playing, MB", "private_playing_kb", 1 / 1024)):
            log(f"     {label:<32} base {b[key] * scale:9.1f}  new {t[key] * scale:9.1f}  MPD {m[key] * scale:9.1f}")
        for key in ("idle", "idle_client"):
            log(f"     wake-ups/s {key:<21} base {b[key]['wakeups_per_s']:9.2f}  new {t[key]['wakeups_per_s']:9.2f}  "
                f"MPD {m[key]['wakeups_per_s']:9.2f}")
        log("     all runs (s): " + "; ".join(f"{n} {k} " + ", ".join(f"{x:.4f}" for x in r[n]["all"][k])
                                          for n in ("base", "tonearm", "mpd") for k in ("status", "playlistinfo")))
    return print_goal_rows(rows)


if __name__ == "__main__":
    import driver
    driver.main(["daemon"])
