// SPDX-License-Identifier: GPL-3.0-or-later
// See include/RenderThreadProbe.h. The allocator and lock entry points of the test executable:
// each forwards to glibc and counts the call when the calling thread is counting.
#define _GNU_SOURCE
#include "RenderThreadProbe.h"

#if defined(__has_feature)
#  if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#    define RENDER_PROBE_DISABLED 1
#  endif
#endif
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#  define RENDER_PROBE_DISABLED 1
#endif

#if defined(RENDER_PROBE_DISABLED) || !defined(__linux__) || !defined(__GLIBC__)

int render_probe_available(void) { return 0; }
void render_probe_begin(void) {}
render_probe_counts render_probe_end(void) {
    render_probe_counts c = {0, 0, 0, 0};
    return c;
}
int render_probe_first_offence(int kind, void **frames, int capacity) { (void)kind; (void)frames; (void)capacity; return 0; }
void render_probe_describe(void *address, char *out, int capacity) { (void)address; if (capacity > 0) out[0] = 0; }
void render_probe_reset_offence(void) {}

#else

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <pthread.h>
#include <execinfo.h>
#include <stddef.h>
#include <string.h>
#include <sys/resource.h>

// glibc's allocator under its own names (exported by libc.so.6 for exactly this use).
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void __libc_free(void *pointer);
extern void *__libc_memalign(size_t alignment, size_t size);

// Thread-local (local-exec TLS in the executable: reading it never allocates).
static __thread int probe_active;
static __thread int64_t probe_allocations;
static __thread int64_t probe_frees;
static __thread int64_t probe_locks;
static __thread long probe_switches_at_begin;

// The first offence's stack of each kind (0: allocation or free, 1: lock): claimed once
// (0 → 1), written, then published (→ 2).
enum { offence_capacity = 48 };
static void *offence_frames[2][offence_capacity];
static int offence_count[2];
static int offence_state[2];

static void record_offence(int kind) {
    int expected = 0;
    if (!__atomic_compare_exchange_n(&offence_state[kind], &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return;
    probe_active = 0;  // backtrace() may allocate or lock: not counted, and no recursion
    offence_count[kind] = backtrace(offence_frames[kind], offence_capacity);
    probe_active = 1;
    __atomic_store_n(&offence_state[kind], 2, __ATOMIC_RELEASE);
}

static inline void count_allocation(void) {
    if (probe_active) {
        probe_allocations += 1;
        record_offence(0);
    }
}

static inline void count_lock(void) {
    if (probe_active) {
        probe_locks += 1;
        record_offence(1);
    }
}

int render_probe_first_offence(int kind, void **frames, int capacity) {
    if (kind < 0 || kind > 1 || __atomic_load_n(&offence_state[kind], __ATOMIC_ACQUIRE) != 2) return 0;
    int n = offence_count[kind] < capacity ? offence_count[kind] : capacity;
    memcpy(frames, offence_frames[kind], (size_t)n * sizeof(void *));
    return n;
}

void render_probe_describe(void *address, char *out, int capacity) {
    Dl_info info;
    if (capacity <= 0) return;
    if (dladdr(address, &info) == 0) {
        snprintf(out, (size_t)capacity, "%p", address);
    } else if (info.dli_sname != NULL) {
        snprintf(out, (size_t)capacity, "%s+0x%lx (%s)", info.dli_sname,
                 (unsigned long)((char *)address - (char *)info.dli_saddr), info.dli_fname);
    } else {
        snprintf(out, (size_t)capacity, "%s+0x%lx", info.dli_fname,
                 (unsigned long)((char *)address - (char *)info.dli_fbase));
    }
}

void render_probe_reset_offence(void) {
    __atomic_store_n(&offence_state[0], 0, __ATOMIC_RELEASE);
    __atomic_store_n(&offence_state[1], 0, __ATOMIC_RELEASE);
}

// backtrace() loads libgcc_s on its first call (which allocates): do that at start-up.
__attribute__((constructor)) static void warm_up_backtrace(void) {
    void *frames[4];
    (void)backtrace(frames, 4);
}

int render_probe_available(void) { return 1; }

static long voluntary_switches(void) {
    struct rusage usage;
    if (getrusage(RUSAGE_THREAD, &usage) != 0) return 0;
    return usage.ru_nvcsw;
}

void render_probe_begin(void) {
    probe_allocations = 0;
    probe_frees = 0;
    probe_locks = 0;
    probe_switches_at_begin = voluntary_switches();
    probe_active = 1;
}

render_probe_counts render_probe_end(void) {
    probe_active = 0;
    render_probe_counts c;
    c.allocations = probe_allocations;
    c.frees = probe_frees;
    c.locks = probe_locks;
    c.waits = voluntary_switches() - probe_switches_at_begin;
    return c;
}

// MARK: The allocator

void *malloc(size_t size) {
    count_allocation();
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    count_allocation();
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    count_allocation();
    return __libc_realloc(pointer, size);
}

void free(void *pointer) {
    if (pointer != NULL && probe_active) {
        probe_frees += 1;
        record_offence(0);
    }
    __libc_free(pointer);
}

void *memalign(size_t alignment, size_t size) {
    count_allocation();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    count_allocation();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    count_allocation();
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0 || alignment == 0) return EINVAL;
    void *p = __libc_memalign(alignment, size);
    if (p == NULL) return ENOMEM;
    *result = p;
    return 0;
}

// MARK: Locks (glibc's, found once through dlsym(RTLD_NEXT))

#define FORWARD_LOCK(name, type)                                                   \
    int name(type *lock) {                                                         \
        static int (*real)(type *);                                                \
        int (*f)(type *) = __atomic_load_n(&real, __ATOMIC_ACQUIRE);               \
        if (f == NULL) {                                                           \
            f = (int (*)(type *))dlsym(RTLD_NEXT, #name);                          \
            __atomic_store_n(&real, f, __ATOMIC_RELEASE);                          \
        }                                                                          \
        count_lock();                                                              \
        return f(lock);                                                            \
    }

FORWARD_LOCK(pthread_mutex_lock, pthread_mutex_t)
FORWARD_LOCK(pthread_mutex_trylock, pthread_mutex_t)
FORWARD_LOCK(pthread_rwlock_rdlock, pthread_rwlock_t)
FORWARD_LOCK(pthread_rwlock_wrlock, pthread_rwlock_t)
FORWARD_LOCK(pthread_rwlock_tryrdlock, pthread_rwlock_t)
FORWARD_LOCK(pthread_rwlock_trywrlock, pthread_rwlock_t)

#endif
