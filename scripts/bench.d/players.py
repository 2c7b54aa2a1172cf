# The players scripts/bench's playback and EQ parts measure while they play to a real-time null
# output (tonearm, MPD, mpv), and the measurement itself: CPU from the request to play to the
# end of a window, and over the window's steady span (after every player's start-up) the run
# time of each thread from /proc/PID/task/*/schedstat (nanoseconds) and its wake-ups
# (voluntary context switches), beside the process's memory at the end.
# SPDX-License-Identifier: GPL-3.0-or-later
import os
import socket
import subprocess
import time

from common import (free_port, log, proc_cpu, proc_status, run, spawn, thread_delta, thread_times, work)


class Player:
    """One player under measurement: started, then sampled at the start and end of the window."""

    def __init__(self, name: str):
        self.name = name
        self.proc: subprocess.Popen | None = None
        self.cpu0 = 0.0
        self.result: dict = {}

    def start(self) -> None: ...
    def playing(self) -> bool: return self.proc is not None and self.proc.poll() is None

    def begin_window(self) -> None:
        self.cpu0 = proc_cpu(self.proc.pid)

    def begin_steady(self) -> None:
        """Start of the steady-state span (every player is playing; start-up is over)."""
        self.threads0 = thread_times(self.proc.pid)
        self.t_steady0 = time.monotonic()

    def end_window(self, window: float) -> None:
        if self.proc.poll() is not None:
            raise RuntimeError(f"{self.name} exited early with status {self.proc.returncode}")
        threads = thread_delta(self.threads0, thread_times(self.proc.pid))
        steady_span = time.monotonic() - self.t_steady0
        st = proc_status(self.proc.pid)
        cpu = proc_cpu(self.proc.pid)
        run_s = sum(t["run_s"] for t in threads.values())
        wakeups = sum(t["switches"] for t in threads.values())
        self.result = {"cpu": cpu - self.cpu0, "cpu_total": cpu, "window": window,
                       "steady_span": steady_span, "steady_per_min": run_s * 60 / steady_span,
                       "wakeups_per_s": wakeups / steady_span,
                       "threads": {k: {**v, "per_min": v["run_s"] * 60 / steady_span,
                                       "wakeups_per_s": v["switches"] / steady_span}
                                   for k, v in threads.items()},
                       **st}
        self.proc.kill()
        self.proc.wait()


class Tonearm(Player):
    def __init__(self, binary: str, flac: str, eq: str | None = None, name: str = "tonearm"):
        super().__init__(name)
        self.cmd = [binary, "play", "--plain", "--output", "null", *(["--eq", eq] if eq else []), flac]

    def start(self) -> None:
        self.proc = spawn(self.cmd)


class Mpv(Player):
    def __init__(self, flac: str, af: str | None = None, name: str = "mpv"):
        super().__init__(name)
        self.cmd = ["mpv", "--no-config", "--no-video", "--ao=null", "--ao-null-untimed=no",
                    "--really-quiet", *([f"--af={af}"] if af else []), flac]

    def start(self) -> None:
        self.proc = spawn(self.cmd)


class Mpd(Player):
    """A private MPD (127.0.0.1 on a free port, its files in the work folder, a null output,
    no auto-update) playing one file."""

    def __init__(self, flac: str, folder: str = "mpd"):
        super().__init__("mpd")
        self.flac = flac
        self.port = free_port()
        self.dir = work(folder)

    def mpc(self, *args: str) -> None:
        run(["mpc", "-q", "-h", "127.0.0.1", "-p", str(self.port), *args],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)

    def write_conf(self, conf: str, music: str) -> None:
        d = self.dir
        with open(conf, "w") as f:
            f.write(f'music_directory "{music}"\ndb_file "{d}/db"\nstate_file "{d}/state"\n'
                    f'log_file "{d}/log"\nplaylist_directory "{d}/playlists"\n'
                    f'bind_to_address "127.0.0.1"\nport "{self.port}"\n'
                    'zeroconf_enabled "no"\nauto_update "no"\n'
                    'audio_output {\n  type "null"\n  name "null"\n}\n')

    def start(self) -> None:
        d = self.dir
        os.makedirs(os.path.join(d, "media"))
        os.makedirs(os.path.join(d, "playlists"))
        os.symlink(self.flac, os.path.join(d, "media", "bench.flac"))
        conf = os.path.join(d, "mpd.conf")
        self.write_conf(conf, f"{d}/media")
        self.proc = spawn(["mpd", "--no-daemon", conf])
        self.wait_listening()
        self.mpc("update", "--wait")
        self.mpc("add", "bench.flac")

    def wait_listening(self, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError("mpd did not start listening")
                time.sleep(0.05)

    def begin_window(self) -> None:
        # The window starts when playback is asked for (the database scan is not playback).
        super().begin_window()
        self.mpc("play")


def play_players(players: list[Player], window: float, sequential: bool) -> dict:
    """Plays `players` (together, or one after another) for `window` seconds each; the steady
    span starts min(5 s, a quarter of the window) in."""
    groups = [[p] for p in players] if sequential else [players]
    for group in groups:
        names = ", ".join(p.name for p in group)
        log(f"  playback: {names} for {window:.0f} s …")
        for p in group:
            p.start()
        for p in group:
            p.begin_window()
        t0 = time.monotonic()
        warmup = min(5.0, window / 4)
        time.sleep(warmup)  # a measurement window, not synchronisation
        for p in group:
            p.begin_steady()
        time.sleep(window - warmup)
        elapsed = time.monotonic() - t0
        for p in group:
            p.end_window(elapsed)
    return {p.name: p.result for p in players}
