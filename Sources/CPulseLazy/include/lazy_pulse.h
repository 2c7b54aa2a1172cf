// libpulse loaded on first use: see pulse_stubs.c and scripts/gen-lazy-stubs.
// SPDX-License-Identifier: GPL-3.0-or-later
#ifndef TONEARM_CPULSE_LAZY_H
#define TONEARM_CPULSE_LAZY_H

/// Loads libpulse (once per process; RTLD_LOCAL) and looks up every function Tonearm calls.
/// Returns 1 when it is ready, 0 when it is not installed or lacks a function: then
/// `tonearm_pulse_load_error` says why. The first stub called (a mainloop made to open the
/// PulseAudio output, list the sound server's sinks or set a volume) loads it; a program that
/// opens no sound-server connection (a library scan, an export, --help) never loads it, nor the
/// ~24 libraries behind it (X11, sndfile, its codecs, libdbus's own copy, …). Thread-safe.
int tonearm_pulse_load(void);

/// Why `tonearm_pulse_load` failed ("libpulse.so.0: cannot open shared object file: …"),
/// or NULL when it has not failed.
const char *tonearm_pulse_load_error(void);

/// The name of the library loaded: "libpulse.so.0".
extern const char *const tonearm_pulse_library;

/// Whether libpulse is loaded in this process yet (a test and a diagnostic). Any thread.
int tonearm_pulse_is_loaded(void);

/// The real function number `index` (of the generated table). Loads the library when no one
/// has; when it cannot be loaded, prints why to standard error and ends the process with status
/// 127, as FFmpeg's stubs do (libpulse is a dependency of the package). After the load, an
/// atomic load and a table read: no lock, no allocation (the render thread calls through it).
void *tonearm_pulse_function(int index);

#endif
