// SPDX-License-Identifier: GPL-3.0-or-later
#include "CExecutorHook.h"

#include <stddef.h>
#include <time.h>

// The runtime's hook types (include/swift/Runtime/Concurrency.h of the Swift project): Swift's
// calling convention, the job last but for the original implementation.
struct Job;
#define SWIFTCC __attribute__((swiftcall))
typedef SWIFTCC void (*enqueue_original)(struct Job *job);
typedef SWIFTCC void (*delay_original)(unsigned long long delay, struct Job *job);
typedef SWIFTCC void (*deadline_original)(long long sec, long long nsec, long long tsec, long long tnsec, int clock,
                                          struct Job *job);

extern SWIFTCC void (*swift_task_enqueueGlobal_hook)(struct Job *job, enqueue_original original);
extern SWIFTCC void (*swift_task_enqueueGlobalWithDelay_hook)(unsigned long long delay, struct Job *job,
                                                              delay_original original);
extern SWIFTCC void (*swift_task_enqueueGlobalWithDeadline_hook)(long long sec, long long nsec, long long tsec,
                                                                 long long tnsec, int clock, struct Job *job,
                                                                 deadline_original original);

static tonearm_job_now_fn job_now;
static tonearm_job_later_fn job_later;

static SWIFTCC void on_enqueue(struct Job *job, enqueue_original original) {
    (void)original;
    job_now(job);
}

static SWIFTCC void on_delay(unsigned long long delay, struct Job *job, delay_original original) {
    (void)original;
    job_later(job, delay);
}

// The runtime's clocks: 1 continuous (CLOCK_BOOTTIME on Linux), 2 suspending (CLOCK_MONOTONIC).
static SWIFTCC void on_deadline(long long sec, long long nsec, long long tsec, long long tnsec, int clock,
                                struct Job *job, deadline_original original) {
    (void)tsec;
    (void)tnsec;
    (void)original;
    struct timespec now;
    clock_gettime(clock == 1 ? CLOCK_BOOTTIME : CLOCK_MONOTONIC, &now);
    long long left = (sec - (long long)now.tv_sec) * 1000000000LL + (nsec - (long long)now.tv_nsec);
    job_later(job, left > 0 ? (uint64_t)left : 0);
}

static bool installed;

bool tonearm_executor_hook_install(tonearm_job_now_fn now, tonearm_job_later_fn later) {
    if (installed || swift_task_enqueueGlobal_hook != NULL || swift_task_enqueueGlobalWithDelay_hook != NULL ||
        swift_task_enqueueGlobalWithDeadline_hook != NULL)
        return false;
    job_now = now;
    job_later = later;
    swift_task_enqueueGlobal_hook = on_enqueue;
    swift_task_enqueueGlobalWithDelay_hook = on_delay;
    swift_task_enqueueGlobalWithDeadline_hook = on_deadline;
    installed = true;
    return true;
}
