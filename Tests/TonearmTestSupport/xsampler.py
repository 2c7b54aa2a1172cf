#!/usr/bin/env python3
# Watches one pixel of an X screen and writes each change of its colour with the time it was
# seen (Python's ctypes over libX11, no other package). For the A/V sync measurements and the
# video benchmark's time to first frame: what is on the screen, timed by its own clock.
#
#   xsampler.py DISPLAY X Y OUT [PERIOD_MS]
#
# Reads the pixel (X, Y) of the root window (on Xvfb, without a compositor, that is whatever
# window is there) with XGetImage every PERIOD_MS (default 1) milliseconds; each reading is a
# round trip, so the X server has drawn everything it was asked to before it answers. OUT gets
# a line "MONOTONIC_NS RRGGBB SPAN_NS" at the start and whenever the colour changes (written at
# once; OUT "-" is standard output, for a reader that follows the changes as they come):
# MONOTONIC_NS is CLOCK_MONOTONIC halfway between the last reading of the old colour and the
# reading of the new one, SPAN_NS the gap between those readings (the uncertainty, ± half of it).
# Prints "sampling" to standard output once the first reading is written; samples until SIGINT
# or SIGTERM (then flushes OUT and exits 0). Exits 1 with a message when the display cannot be
# opened.
# SPDX-License-Identifier: GPL-3.0-or-later
import ctypes
import signal
import sys
import time

X = ctypes.cdll.LoadLibrary("libX11.so.6")
X.XOpenDisplay.restype = ctypes.c_void_p
X.XOpenDisplay.argtypes = [ctypes.c_char_p]
X.XDefaultRootWindow.restype = ctypes.c_ulong
X.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
X.XGetImage.restype = ctypes.c_void_p
X.XGetImage.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_int, ctypes.c_uint, ctypes.c_uint,
                        ctypes.c_ulong, ctypes.c_int]
X.XGetPixel.restype = ctypes.c_ulong
X.XGetPixel.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
X.XDestroyImage.argtypes = [ctypes.c_void_p]
Z_PIXMAP = 2
ALL_PLANES = 0xFFFFFFFF

stopping = False


def stop(_signum, _frame):
    global stopping
    stopping = True


def main():
    if len(sys.argv) not in (5, 6):
        sys.exit("usage: xsampler.py DISPLAY X Y OUT [PERIOD_MS]")
    display = X.XOpenDisplay(sys.argv[1].encode())
    if not display:
        sys.exit(f"cannot open display {sys.argv[1]}")
    x, y, out_path = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    period = (float(sys.argv[5]) if len(sys.argv) == 6 else 1.0) / 1000
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    root = X.XDefaultRootWindow(display)

    def read():
        image = X.XGetImage(display, root, x, y, 1, 1, ALL_PLANES, Z_PIXMAP)
        if not image:
            return None
        pixel = X.XGetPixel(image, 0, 0) & 0xFFFFFF  # TrueColor 24-bit: 0xRRGGBB
        X.XDestroyImage(image)
        return pixel

    out = sys.stdout if out_path == "-" else open(out_path, "w")
    last, last_seen = None, 0
    announced = False
    while not stopping:
        t0 = time.monotonic_ns()
        pixel = read()
        t1 = time.monotonic_ns()
        if pixel != last:
            # Changed between the last reading (which ended at last_seen) and this one.
            start = last_seen if last is not None else t0
            out.write(f"{(start + t1) // 2} {pixel if pixel is not None else 0:06x} {t1 - start}\n")
            last = pixel
            out.flush()
        last_seen = t1
        if not announced:
            print("sampling", flush=True)
            announced = True
        time.sleep(period)  # the sampling period of a measurement, not a wait for an event
    if out is not sys.stdout:
        out.close()


main()
