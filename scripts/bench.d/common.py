# Shared helpers of scripts/bench's parts: the work folder and the processes started (both
# removed on exit, also on failure), building tonearm, running and timing commands, reading a
# process's CPU time (per thread, from schedstat), the figures' statistics and the goal table.
# Python 3 standard library only.
# SPDX-License-Identifier: GPL-3.0-or-later
import atexit
import json
import os
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRATCH = os.path.join(ROOT, ".build-bench")
CLK_TCK = os.sysconf("SC_CLK_TCK")
children: list[subprocess.Popen] = []
_workdir = ""


def cleanup() -> None:
    for p in children:
        if p.poll() is None:
            try:
                p.kill()
            except ProcessLookupError:
                pass
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
    if _workdir and os.path.isdir(_workdir):
        shutil.rmtree(_workdir, ignore_errors=True)


def _on_signal(signum, _frame) -> None:
    cleanup()
    sys.exit(128 + signum)


def setup() -> None:
    """Makes the work folder and arranges for it and every child to go on exit."""
    global _workdir
    atexit.register(cleanup)
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, _on_signal)
    _workdir = tempfile.mkdtemp(prefix="tonearm-bench.")


def work(*parts: str) -> str:
    """A path in the work folder (removed on exit)."""
    if not _workdir:
        raise RuntimeError("common.setup() was not called")
    return os.path.join(_workdir, *parts)


def log(msg: str) -> None:
    print(msg, flush=True)


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, **kw)


def spawn(cmd: list[str], **kw) -> subprocess.Popen:
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, **kw)
    children.append(p)
    return p


# MARK: set-up

def install_and_build(no_install: bool, tools: list[str]) -> str:
    """Installs the peers (scripts/install-deps --bench) unless `no_install`, checks that
    `tools` are there, and builds tonearm; returns its path."""
    if not no_install:
        run([os.path.join(ROOT, "scripts", "install-deps"), "--bench"])
    for tool in tools:
        if not shutil.which(tool):
            sys.exit(f"bench: '{tool}' is missing (run scripts/install-deps --bench)")
    # As scripts/demo builds it: the Swift runtime linked in (a process starts in half the time
    # from a cold cache: 40 shared libraries instead of 55).
    log("Building tonearm (release, static Swift runtime, scratch path .build-bench)…")
    run(["swift", "build", "-c", "release", "--static-swift-stdlib", "--scratch-path", SCRATCH, "--product", "tonearm"],
        cwd=ROOT, stdout=subprocess.DEVNULL)
    out = run(["swift", "build", "-c", "release", "--scratch-path", SCRATCH, "--show-bin-path"],
              cwd=ROOT, capture_output=True, text=True).stdout.strip()
    return os.path.join(out, "tonearm")


def make_flac(path: str, seconds: int) -> None:
    """The benchmark file: two tones per channel (one amplitude-modulated, one phase-modulated)
    plus white noise, so the FLAC encoder's predictor has real residual to code (≈ 770 kbit/s)."""
    left = "0.3*sin(2*PI*440*t)*(0.6+0.4*sin(2*PI*0.25*t))+0.2*sin(2*PI*1234.5*t)+0.15*(2*random(0)-1)"
    right = "0.3*sin(2*PI*554.37*t)+0.2*sin(2*PI*987.77*t+sin(2*PI*3*t))+0.15*(2*random(1)-1)"
    run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
         f"aevalsrc='{left}|{right}':s=44100:d={seconds}",
         "-c:a", "flac", "-sample_fmt", "s16", path])


# MARK: timing commands

def cpu_of_children() -> float:
    r = os.times()
    return r.children_user + r.children_system


def time_command(cmd: list[str], runs: int) -> dict:
    """Median wall and CPU (user+system) seconds over `runs` runs after one warm-up."""
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    walls, cpus = [], []
    for _ in range(runs):
        c0 = cpu_of_children()
        t0 = time.monotonic()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        walls.append(time.monotonic() - t0)
        cpus.append(cpu_of_children() - c0)
    return {"wall": statistics.median(walls), "cpu": statistics.median(cpus),
            "wall_min": min(walls), "runs": runs, "tool": "repeat"}


def hyperfine_command(cmd: list[str], runs: int) -> dict:
    line = " ".join(shlex.quote(a) for a in cmd)
    json_path = work("hf.json")
    run(["hyperfine", "--style", "none", "--warmup", "1", "--runs", str(runs), "-N",
         "--export-json", json_path, line], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    r = json.load(open(json_path))["results"][0]
    return {"wall": r["median"], "cpu": r["user"] + r["system"], "wall_min": r["min"],
            "runs": runs, "tool": "hyperfine"}


def measure_command(cmd: list[str], runs: int) -> dict:
    """hyperfine_command when hyperfine is there, else time_command."""
    return hyperfine_command(cmd, runs) if shutil.which("hyperfine") else time_command(cmd, runs)


def run_timed(cmd: list[str]) -> dict:
    """Wall time and CPU (user + system from wait4) of one run, and what it printed."""
    with tempfile.TemporaryFile() as out:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        children.append(p)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    if p.returncode != 0:
        raise RuntimeError(f"{shlex.join(cmd)} failed with status {p.returncode}: {text[-2000:]}")
    return {"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "output": text, "maxrss_kb": ru.ru_maxrss}


def median_timed(cmd: list[str], runs: int) -> dict:
    """Median wall and CPU over `runs` runs after one warm-up (processes included)."""
    run_timed(cmd)
    rs = [run_timed(cmd) for _ in range(runs)]
    return {"wall": statistics.median(r["wall"] for r in rs), "cpu": statistics.median(r["cpu"] for r in rs),
            "wall_min": min(r["wall"] for r in rs), "runs": runs, "lines": rs[-1]["output"].count("\n")}


# MARK: a running process

def proc_cpu(pid: int) -> float:
    """User + system CPU seconds of a process, from /proc/PID/stat (clock ticks: coarse)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # fields[0] is field 3 (state): utime and stime are fields 14 and 15.
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def thread_times(pid: int) -> dict:
    """Each live thread of `pid`: {tid: {"name", "run_ns", "slices", "switches"}} — run time in
    nanoseconds and time slices from /proc/PID/task/TID/schedstat (exact, unlike /proc/PID/stat's
    ticks), and voluntary + involuntary context switches from its status (each voluntary one is
    a wake-up after a wait). Threads that end between two readings drop out of the difference:
    read them while the process is steady."""
    out = {}
    base = f"/proc/{pid}/task"
    for tid in os.listdir(base):
        try:
            with open(f"{base}/{tid}/schedstat") as f:
                run_ns, _wait_ns, slices = (int(x) for x in f.read().split())
            with open(f"{base}/{tid}/comm") as f:
                name = f.read().strip()
            switches = 0
            with open(f"{base}/{tid}/status") as f:
                for line in f:
                    if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                        switches += int(line.split()[1])
        except OSError:
            continue  # the thread ended
        out[int(tid)] = {"name": name, "run_ns": run_ns, "slices": slices, "switches": switches}
    return out


def thread_delta(before: dict, after: dict) -> dict:
    """Per thread (by name and tid) run time and wake-ups between two thread_times readings;
    threads born in between count from zero."""
    out = {}
    for tid, a in after.items():
        b = before.get(tid, {"run_ns": 0, "slices": 0, "switches": 0})
        out[f"{a['name']}/{tid}"] = {"run_s": (a["run_ns"] - b["run_ns"]) / 1e9,
                                    "slices": a["slices"] - b["slices"],
                                    "switches": a["switches"] - b["switches"]}
    return out


def process_runtime(pid: int) -> float:
    """CPU seconds of the process's live threads, from schedstat (exact; a thread that has
    ended is not counted, so read it over spans in which the threads stay)."""
    return sum(t["run_ns"] for t in thread_times(pid).values()) / 1e9


def proc_status(pid: int) -> dict:
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmHWM", "VmRSS", "RssAnon", "RssFile", "Threads"):
                out[key] = int(value.split()[0])
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    out["Pss"] = int(line.split()[1])
    except OSError:
        pass
    return out


def interrupt(p: subprocess.Popen, timeout: float = 10) -> None:
    """Ends `p` as a user at a terminal does (SIGINT: a player or recorder finishes its file),
    killing it when it has not ended within `timeout` seconds, and reaps it."""
    if p.poll() is None:
        p.send_signal(signal.SIGINT)
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# MARK: figures

def percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def stats(v: list[float]) -> dict:
    return {"median": statistics.median(v), "p95": percentile(v, 0.95), "min": min(v), "max": max(v),
            "n": len(v), "all": v}


def print_goal_rows(rows: list) -> bool:
    """The goal table: rows of (label, tonearm, peer or None, unit, goal text, met: bool or
    None for information). True when every judged row is met."""
    log(f"{'measure':<36} {'tonearm':>10} {'peer':>10} {'ratio':>7}  {'goal':<8} met?")
    all_met = True
    for label, a, b, unit, goal, met in rows:
        mark = "-" if met is None else ("yes" if met else "NO")
        if met is False:
            all_met = False
        if b is None:  # no peer figure
            log(f"{label:<36} {a:7.3f} {unit:<2} {'-':>10} {'-':>7}  {goal:<8} {mark}")
            continue
        ratio = a / b if b else float("inf")
        log(f"{label:<36} {a:7.3f} {unit:<2} {b:7.3f} {unit:<2} {ratio:6.2f}×  {goal:<8} {mark}")
    return all_met


def machine() -> dict:
    model = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break

    def version(cmd: list[str]) -> str:
        try:
            return subprocess.run(cmd, capture_output=True, text=True).stdout.splitlines()[0].strip()
        except (OSError, IndexError):
            return "?"
    commit = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                            capture_output=True, text=True).stdout.strip()
    return {"date": time.strftime("%Y-%m-%d %H:%M %Z"), "nproc": os.cpu_count(), "cpu": model,
            "load": os.getloadavg(), "tonearm": commit,
            "ffmpeg": version(["ffmpeg", "-version"]), "sox": version(["sox", "--version"]),
            "mpv": version(["mpv", "--version"]), "mpd": version(["mpd", "--version"]),
            "paplay": version(["paplay", "--version"]),
            "hyperfine": version(["hyperfine", "--version"]) if shutil.which("hyperfine") else "absent"}


def print_machine(m: dict, peers: list[str]) -> None:
    log(f"Machine: {m['nproc']} × {m['cpu']}; load average before the run "
        f"{m['load'][0]:.2f} {m['load'][1]:.2f} {m['load'][2]:.2f}; {m['date']}; tonearm {m['tonearm']}")
    if m['load'][0] > 0.5 * m['nproc']:
        log("NOTE: the machine was loaded before the run (load average above half the processors): "
            "wall times are noisy; CPU times and instruction counts are the steadier figures.")
    if peers:
        log("Peers: " + " | ".join(m[p] for p in peers))
