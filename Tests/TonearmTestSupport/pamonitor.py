#!/usr/bin/env python3
# Records a PulseAudio sink's monitor with the time at which each sample was HEARD, i.e. left the
# sink (Python's ctypes over libpulse, no other package). For the A/V sync measurements.
#
#   pamonitor.py SERVER SOURCE OUT.raw OUT.timing
#
# OUT.raw: the monitor as 16-bit little-endian mono at 48 kHz, from the stream's first sample.
# OUT.timing: lines "MONOTONIC_NS STREAM_USEC", each a reading of the stream's clock: at
# CLOCK_MONOTONIC MONOTONIC_NS, the sample at STREAM_USEC (from the recording's first sample) was
# the one leaving the sink. PulseAudio's own timing makes this exact without a calibration: for a
# recording of a monitor, pa_stream_get_time() is the write index (what the sink has rendered and
# posted to its monitor) minus the sink's latency (how far ahead of the speaker it rendered) plus
# the transport delay (libpulse's calc_time). Readings are asked for every 20 ms; each is taken
# in the latency-update callback, as the server's answer arrives. The null sink's clock is
# CLOCK_MONOTONIC, so sample k was heard at MONOTONIC_NS - (STREAM_USEC - k / 48 kHz) for any
# reading (a reader takes the median over readings).
#
# Prints "recording" to standard output once the stream is connected; records until SIGINT or
# SIGTERM (then flushes both files and exits 0). Exits 1 with a message on failure.
# SPDX-License-Identifier: GPL-3.0-or-later
import ctypes
import signal
import sys
import time

P = ctypes.cdll.LoadLibrary("libpulse.so.0")
vp = ctypes.c_void_p
P.pa_mainloop_new.restype = vp
P.pa_mainloop_get_api.restype = vp
P.pa_mainloop_get_api.argtypes = [vp]
P.pa_mainloop_iterate.argtypes = [vp, ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
P.pa_context_new.restype = vp
P.pa_context_new.argtypes = [vp, ctypes.c_char_p]
P.pa_context_connect.argtypes = [vp, ctypes.c_char_p, ctypes.c_int, vp]
P.pa_context_get_state.argtypes = [vp]
P.pa_context_errno.argtypes = [vp]
P.pa_strerror.restype = ctypes.c_char_p
P.pa_stream_new.restype = vp
P.pa_stream_new.argtypes = [vp, ctypes.c_char_p, vp, vp]
P.pa_stream_connect_record.argtypes = [vp, ctypes.c_char_p, vp, ctypes.c_int]
P.pa_stream_get_state.argtypes = [vp]
P.pa_stream_peek.argtypes = [vp, ctypes.POINTER(vp), ctypes.POINTER(ctypes.c_size_t)]
P.pa_stream_drop.argtypes = [vp]
P.pa_stream_get_time.argtypes = [vp, ctypes.POINTER(ctypes.c_uint64)]
P.pa_stream_update_timing_info.restype = vp
P.pa_stream_update_timing_info.argtypes = [vp, vp, vp]
P.pa_operation_unref.argtypes = [vp]
P.pa_stream_set_latency_update_callback.argtypes = [vp, vp, vp]

PA_SAMPLE_S16LE = 3
CONTEXT_READY, CONTEXT_FAILED, CONTEXT_TERMINATED = 4, 5, 6
STREAM_READY, STREAM_FAILED, STREAM_TERMINATED = 2, 3, 4
PA_STREAM_ADJUST_LATENCY, PA_STREAM_DONT_MOVE = 0x2000, 0x0200
RATE = 48000


class SampleSpec(ctypes.Structure):
    _fields_ = [("format", ctypes.c_int), ("rate", ctypes.c_uint32), ("channels", ctypes.c_uint8)]


class BufferAttr(ctypes.Structure):
    _fields_ = [("maxlength", ctypes.c_uint32), ("tlength", ctypes.c_uint32), ("prebuf", ctypes.c_uint32),
                ("minreq", ctypes.c_uint32), ("fragsize", ctypes.c_uint32)]


stopping = False


def stop(_signum, _frame):
    global stopping
    stopping = True


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: pamonitor.py SERVER SOURCE OUT.raw OUT.timing")
    server, source, raw_path, timing_path = sys.argv[1:]
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    loop = P.pa_mainloop_new()
    ctx = P.pa_context_new(P.pa_mainloop_get_api(loop), b"tonearm-test-monitor")
    if P.pa_context_connect(ctx, server.encode(), 0, None) < 0:
        sys.exit(f"cannot connect to {server}")

    def iterate():
        # Blocks until something happens (a signal interrupts it: it returns, and the loop checks).
        P.pa_mainloop_iterate(loop, 1, None)

    while (st := P.pa_context_get_state(ctx)) != CONTEXT_READY:
        if st in (CONTEXT_FAILED, CONTEXT_TERMINATED):
            sys.exit(f"cannot connect to {server}: {P.pa_strerror(P.pa_context_errno(ctx)).decode()}")
        iterate()
    spec = SampleSpec(PA_SAMPLE_S16LE, RATE, 1)
    stream = P.pa_stream_new(ctx, b"monitor", ctypes.byref(spec), None)
    # 5 ms fragments; a large queue, so that a busy moment here never drops samples (which would
    # shift every later sample's time).
    attr = BufferAttr(RATE * 2 * 10, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, RATE * 2 // 200)
    if P.pa_stream_connect_record(stream, source.encode(), ctypes.byref(attr),
                                  PA_STREAM_ADJUST_LATENCY | PA_STREAM_DONT_MOVE) < 0:
        sys.exit(f"cannot record {source}")
    while (st := P.pa_stream_get_state(stream)) != STREAM_READY:
        if st in (STREAM_FAILED, STREAM_TERMINATED):
            sys.exit(f"cannot record {source}: {P.pa_strerror(P.pa_context_errno(ctx)).decode()}")
        iterate()

    raw = open(raw_path, "wb")
    timing = open(timing_path, "w")
    pending = [False, 0]  # an update asked for; when the last was asked for (ns)

    @ctypes.CFUNCTYPE(None, vp, vp)
    def on_latency(s, _userdata):
        now = time.monotonic_ns()
        usec = ctypes.c_uint64()
        if P.pa_stream_get_time(s, ctypes.byref(usec)) == 0:
            timing.write(f"{now} {usec.value}\n")
        pending[0] = False

    P.pa_stream_set_latency_update_callback(stream, on_latency, None)
    print("recording", flush=True)
    data, size = vp(), ctypes.c_size_t()
    while not stopping:
        iterate()
        if P.pa_stream_get_state(stream) != STREAM_READY:
            sys.exit("the recording stream failed")
        while P.pa_stream_peek(stream, ctypes.byref(data), ctypes.byref(size)) == 0 and size.value > 0:
            if data.value is None:
                raw.write(b"\0" * size.value)  # a hole: silence of its length
            else:
                raw.write(ctypes.string_at(data.value, size.value))
            P.pa_stream_drop(stream)
        now = time.monotonic_ns()
        if not pending[0] and now - pending[1] > 20_000_000:
            op = P.pa_stream_update_timing_info(stream, None, None)
            if op:
                P.pa_operation_unref(op)
                pending[0], pending[1] = True, now
    raw.close()
    timing.close()


main()
