// SPDX-License-Identifier: GPL-3.0-or-later
// Counts, on one thread at a time, what the realtime render path must never do: allocate or free
// heap memory, take a pthread lock, or block (voluntary context switches: a contended lock, a
// semaphore or condition wait, a sleep, blocking I/O).
//
// How: the test executable defines malloc, calloc, realloc, free, posix_memalign, aligned_alloc,
// memalign and the pthread mutex/rwlock lock calls itself. Symbols an executable defines come
// first in the process's global lookup scope, so every shared library (the Swift runtime,
// Foundation, libdispatch, FFmpeg, libpulse) calls these; each forwards to glibc's own and, when
// the calling thread is counting, counts the call in thread-local counters. Other threads are
// never counted, and a thread that is not counting pays one thread-local load per call.
//
// Not available in a ThreadSanitizer (or AddressSanitizer) build: the sanitizer runtime defines
// the same symbols. `render_probe_available()` then returns 0 and nothing is counted.
#ifndef RENDER_THREAD_PROBE_H
#define RENDER_THREAD_PROBE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What one thread did between `render_probe_begin` and `render_probe_end`.
typedef struct {
    /// malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign calls.
    int64_t allocations;
    /// free calls with a non-null pointer (releasing the last reference of an object frees it).
    int64_t frees;
    /// pthread_mutex_lock / trylock, pthread_rwlock_rdlock / wrlock / tryrdlock / trywrlock calls.
    int64_t locks;
    /// Voluntary context switches of the thread (getrusage RUSAGE_THREAD ru_nvcsw): each is a
    /// wait — on a contended lock of any kind (Swift's Mutex waits on a futex), a semaphore, a
    /// condition, a sleep or blocking I/O.
    int64_t waits;
} render_probe_counts;

/// 1 when the interposed allocator and locks are in place (not in a sanitizer build), else 0.
int render_probe_available(void);

/// Starts counting on the calling thread (its counters start from zero).
void render_probe_begin(void);

/// Stops counting on the calling thread and returns what it counted since `render_probe_begin`.
render_probe_counts render_probe_end(void);

/// The return addresses of the first allocation or free (`kind` 0) or the first lock (`kind` 1)
/// counted in this process (any thread), for a diagnostic: copies at most `capacity` into
/// `frames` and returns how many (0: none yet).
int render_probe_first_offence(int kind, void **frames, int capacity);

/// Describes a code address as "symbol+0xoffset (library)" into `out` (at most `capacity` bytes).
void render_probe_describe(void *address, char *out, int capacity);

/// Forgets the first offence (the next one is recorded).
void render_probe_reset_offence(void);

#ifdef __cplusplus
}
#endif

#endif
