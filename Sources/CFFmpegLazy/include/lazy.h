// FFmpeg loaded on first use: see ffmpeg_stubs.c and scripts/gen-lazy-stubs.
// SPDX-License-Identifier: GPL-3.0-or-later
#ifndef TONEARM_CFFMPEG_LAZY_H
#define TONEARM_CFFMPEG_LAZY_H

#include <stdatomic.h>

/// Whether FFmpeg's libraries are loaded in this process yet (a test and a diagnostic: a scan of
/// FLAC files or `tonearm --help` never loads them). Any thread.
int tonearm_ffmpeg_is_loaded(void);

/// Starts loading FFmpeg's libraries on a thread of its own and returns at once (a command that
/// will decode soon: the loading overlaps its other start-up work; the first use waits for it to
/// finish). A library that cannot be loaded is reported at the first use, as without this.
/// Any thread; nothing happens once loaded.
void tonearm_ffmpeg_load_in_background(void);

/// Loads FFmpeg's libraries now, or waits until a load in progress (on another thread) is over.
/// 1 when they are loaded; 0 when one cannot be (said at the first use). Thread-safe.
int tonearm_ffmpeg_load(void);

/// Whether libavfilter is loaded in this process yet (only a subtitle selected loads it). Any thread.
int tonearm_avfilter_is_loaded(void);

/// The address of FFmpeg's function `name` in library `library` (an index into
/// `tonearm_ffmpeg_libraries`), loading the libraries on first use. Thread-safe. When a library
/// or a function cannot be found, prints why and what to install to standard error and ends
/// the process with status 127: FFmpeg is a hard dependency, as it would be if linked.
void *tonearm_ffmpeg_resolve(int library, const char *name);

#define TONEARM_LAZY_STR_(x) #x
#define TONEARM_LAZY_STR(x) TONEARM_LAZY_STR_(x)

/// In a stub: `f`, the real `name`, resolved once (a race resolves twice to the same address).
#define TONEARM_LAZY(name, library) \
    static _Atomic(__typeof__(&name)) cached_; \
    __typeof__(&name) f = atomic_load_explicit(&cached_, memory_order_acquire); \
    if (!f) { \
        f = (__typeof__(&name))tonearm_ffmpeg_resolve(library, #name); \
        atomic_store_explicit(&cached_, f, memory_order_release); \
    }

#endif
