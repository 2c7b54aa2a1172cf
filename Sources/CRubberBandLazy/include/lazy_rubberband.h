// librubberband loaded on first use: see rubberband_stubs.c and scripts/gen-lazy-stubs.
// SPDX-License-Identifier: GPL-3.0-or-later
#ifndef TONEARM_CRUBBERBAND_LAZY_H
#define TONEARM_CRUBBERBAND_LAZY_H

/// Loads librubberband (once per process; RTLD_LOCAL) and looks up every function Tonearm calls.
/// Returns 1 when it is ready, 0 when it is not installed or lacks a function: then
/// `tonearm_rubberband_load_error` says why. The first stub called (rubberband_new, when a
/// TimeStretcher is made: a rate or pitch other than 1, a time-pitch node) loads it; a program
/// that changes neither never loads it (nor libfftw3 and libsamplerate behind it). Thread-safe.
int tonearm_rubberband_load(void);

/// Why `tonearm_rubberband_load` failed ("librubberband.so.2: cannot open shared object file: …"),
/// or NULL when it has not failed.
const char *tonearm_rubberband_load_error(void);

/// The name of the library loaded: "librubberband.so.2".
extern const char *const tonearm_rubberband_library;

/// Whether librubberband is loaded in this process yet (a test and a diagnostic). Any thread.
int tonearm_rubberband_is_loaded(void);

/// The real function number `index` (of the generated table). Loads the library when no one
/// has; when it cannot be loaded, prints why to standard error and ends the process with status
/// 127, as FFmpeg's stubs do (librubberband is a dependency of the package). After the load, an
/// atomic load and a table read: no lock, no allocation (the render thread calls through it).
void *tonearm_rubberband_function(int index);

#endif
