// SPDX-License-Identifier: GPL-3.0-or-later
// Swift concurrency's global executor hooks (swift_task_enqueueGlobal*_hook of the Swift runtime,
// exported by libswift_Concurrency in the shared and the static runtime alike), set from C so
// that the release binary, whose static runtime exports no dynamic symbols, needs no dlsym.
#ifndef TONEARM_EXECUTOR_HOOK_H
#define TONEARM_EXECUTOR_HOOK_H

#include <stdbool.h>
#include <stdint.h>

/// Runs a job (a Swift `UnownedJob`'s pointer) as soon as it can.
typedef void (*tonearm_job_now_fn)(void *_Nonnull job);
/// Runs a job after `nanoseconds` (0: at once).
typedef void (*tonearm_job_later_fn)(void *_Nonnull job, uint64_t nanoseconds);

/// Hands every job of Swift concurrency's global executor (and its delayed and deadline jobs:
/// `Task.sleep`) to `now` and `later` instead of libdispatch's global queues. Call once, on the
/// main thread, before any task has left the main actor. Returns false (and changes nothing) when
/// a hook was already set.
bool tonearm_executor_hook_install(tonearm_job_now_fn _Nonnull now, tonearm_job_later_fn _Nonnull later);

#endif
