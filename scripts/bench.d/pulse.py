# A private PulseAudio server for scripts/bench's sound and start parts, and a recorder of its
# null sink's monitor that notes when sound starts.
# SPDX-License-Identifier: GPL-3.0-or-later
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from array import array

from common import children


class PrivatePulse:
    """A private, headless PulseAudio server in `directory` (socket, runtime, state, config all
    inside) with one float32 48 kHz stereo null sink as the default sink — the server the tests
    start. Ready when it sends systemd's READY=1 to its NOTIFY_SOCKET. `log_level` ("debug": every
    underrun of a stream is logged) goes to its --log-level."""

    SINK = "bench_null"

    def __init__(self, directory: str, log_level: str | None = None):
        self.dir = directory
        for sub in ("run", "config", "state"):
            os.makedirs(os.path.join(directory, sub), mode=0o700, exist_ok=True)
        self.env = {**os.environ,
                    "XDG_RUNTIME_DIR": f"{directory}/run", "XDG_CONFIG_HOME": f"{directory}/config",
                    "PULSE_RUNTIME_PATH": f"{directory}/run", "PULSE_STATE_PATH": f"{directory}/state",
                    "PULSE_SERVER": f"unix:{directory}/native", "HOME": directory, "LC_ALL": "C"}
        with open(f"{directory}/bench.pa", "w") as f:
            f.write(f"load-module module-native-protocol-unix auth-anonymous=1 socket={directory}/native\n"
                    f"load-module module-null-sink sink_name={self.SINK} format=float32le rate=48000 channels=2\n"
                    f"set-default-sink {self.SINK}\n")
        notify_path = f"{directory}/notify"
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        notify.bind(notify_path)
        notify.settimeout(10)
        self.proc = subprocess.Popen(
            ["pulseaudio", "-n", "-F", f"{directory}/bench.pa", "--daemonize=no", "--system=false",
             "--exit-idle-time=-1", "--disallow-exit", "--use-pid-file=no", "--realtime=true",
             "--high-priority=true", f"--log-target=file:{directory}/pulse.log",
             *([f"--log-level={log_level}"] if log_level else [])],
            env={**self.env, "NOTIFY_SOCKET": notify_path},
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        children.append(self.proc)
        try:
            while b"READY=1" not in notify.recv(4096).split(b"\n"):
                pass
        except socket.timeout:
            raise RuntimeError("the private pulseaudio did not report ready within 10 s")
        finally:
            notify.close()

    def sink_latency(self) -> float | None:
        out = subprocess.run(["pactl", "list", "sinks"], env=self.env, capture_output=True, text=True).stdout
        in_sink = False
        for line in out.splitlines():
            t = line.strip()
            if t.startswith("Name:"):
                in_sink = t == f"Name: {self.SINK}"
            if in_sink and t.startswith("Latency:"):
                return float(t.split()[1]) / 1e6
        return None

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)


class MonitorWatch:
    """Records the null sink's monitor with parec (raw s16le, 1 ms fragments); a thread reads it
    as it arrives and notes the CLOCK_MONOTONIC time (time.monotonic_ns) of every chunk in which
    sound starts after at least `gap` of silence. The recorder's own latency is in every figure,
    the same for every player."""

    THRESHOLD = 328  # 0.01 of full scale

    def __init__(self, pulse: PrivatePulse, gap: float = 0.1):
        self.gap_ns = int(gap * 1e9)
        self.cond = threading.Condition()
        self.onsets: list[int] = []
        self.last_sound = 0
        self.proc = subprocess.Popen(
            ["parec", "--raw", "--latency-msec=1", "--format=s16le", "--rate=48000", "--channels=2",
             "-d", f"{pulse.SINK}.monitor"],
            env=pulse.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        children.append(self.proc)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        fd = self.proc.stdout.fileno()
        carry = b""
        while True:
            data = os.read(fd, 65536)
            t = time.monotonic_ns()
            if not data:
                break
            data = carry + data
            n = len(data) - len(data) % 2
            carry = data[n:]
            samples = array("h", data[:n])
            if sys.byteorder == "big":
                samples.byteswap()
            loud = len(samples) > 0 and max(max(samples), -min(samples)) > self.THRESHOLD
            with self.cond:
                if loud:
                    if t - self.last_sound > self.gap_ns:
                        self.onsets.append(t)
                    self.last_sound = t
                self.cond.notify_all()

    def wait_silence(self, seconds: float, timeout: float = 10) -> None:
        """Until the monitor has been silent for `seconds`."""
        with self.cond:
            if not self.cond.wait_for(lambda: time.monotonic_ns() - self.last_sound >= seconds * 1e9, timeout):
                raise RuntimeError("the monitor did not fall silent")

    def onset_after(self, t: int, timeout: float = 5) -> int:
        """The first onset later than `t` (monotonic ns)."""
        with self.cond:
            if not self.cond.wait_for(lambda: any(o > t for o in self.onsets), timeout):
                raise RuntimeError("no sound reached the monitor")
            return next(o for o in self.onsets if o > t)


def need_pulse_tools() -> None:
    for tool in ("pulseaudio", "paplay", "parec", "pactl"):
        if not shutil.which(tool):
            sys.exit(f"bench: '{tool}' is missing (run scripts/install-deps)")


def watch_monitor(pulse: PrivatePulse) -> MonitorWatch:
    """A MonitorWatch on `pulse`'s sink, once the sink renders in small blocks."""
    watch = MonitorWatch(pulse)
    # A null sink renders far ahead until a low-latency client is there; wait until it runs
    # with the recorder's small blocks (nothing signals this: poll).
    deadline = time.monotonic() + 10
    while (pulse.sink_latency() or 1) > 0.02:
        if time.monotonic() > deadline:
            raise RuntimeError("the null sink still renders far ahead")
        time.sleep(0.05)
    return watch
