// SPDX-License-Identifier: GPL-3.0-or-later
// ThreadSanitizer builds only: makes Swift's `Mutex` (Synchronization) visible to TSan on Linux.
//
// `Mutex.withLock` is inlined into Tonearm's code, and so is its fast path: one atomic
// compare-and-swap to lock, one to unlock, which TSan sees. When the lock is contended, the
// inlined code calls `_MutexHandle._lockSlow` / `_unlockSlow` in libswiftSynchronization.so,
// which is not built with TSan and hands the lock over through a priority-inheritance futex:
// the kernel, not an atomic TSan can see, transfers ownership. TSan then misses the
// happens-before edge of every contended lock and reports false races on whatever the mutex
// guards. The test executable defines those two entry points itself (the static linker binds
// Tonearm's calls to these definitions), calls the library's, and tells TSan what happened:
// an acquire on the mutex word after the slow lock, a release before the slow unlock — what the
// fast path's atomics tell it.
#if defined(__has_feature)
#  if __has_feature(thread_sanitizer) && defined(__linux__) && defined(__x86_64__)
#    define TONEARM_TSAN_SWIFT_MUTEX 1
#  endif
#endif

#ifdef TONEARM_TSAN_SWIFT_MUTEX
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

void __tsan_acquire(void *address);
void __tsan_release(void *address);

// `self` of a method of the non-copyable `_MutexHandle` is its address, passed in the Swift
// self register (clang's swift_context parameter is lowered to swiftself).
typedef void (*lock_slow_fn)(uint32_t, void *) __attribute__((swiftcall));
typedef void (*unlock_slow_fn)(void *) __attribute__((swiftcall));
typedef bool (*try_lock_slow_fn)(void *) __attribute__((swiftcall));

#define LOCK_SLOW "$s15Synchronization12_MutexHandleV9_lockSlowyys6UInt32VF"
#define UNLOCK_SLOW "$s15Synchronization12_MutexHandleV11_unlockSlowyyF"
#define TRY_LOCK_SLOW "$s15Synchronization12_MutexHandleV12_tryLockSlowSbyF"

static void *real(const char *name, void **cache) {
    void *f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (f == NULL) {
        f = dlsym(RTLD_NEXT, name);
        __atomic_store_n(cache, f, __ATOMIC_RELEASE);
    }
    return f;
}

__attribute__((swiftcall)) void tonearm_tsan_lock_slow(uint32_t selfId, __attribute__((swift_context)) void *handle)
    __asm__(LOCK_SLOW);
__attribute__((swiftcall)) void tonearm_tsan_lock_slow(uint32_t selfId, __attribute__((swift_context)) void *handle) {
    static void *cache;
    ((lock_slow_fn)real(LOCK_SLOW, &cache))(selfId, handle);
    __tsan_acquire(handle);
}

__attribute__((swiftcall)) void tonearm_tsan_unlock_slow(__attribute__((swift_context)) void *handle)
    __asm__(UNLOCK_SLOW);
__attribute__((swiftcall)) void tonearm_tsan_unlock_slow(__attribute__((swift_context)) void *handle) {
    static void *cache;
    __tsan_release(handle);
    ((unlock_slow_fn)real(UNLOCK_SLOW, &cache))(handle);
}

__attribute__((swiftcall)) bool tonearm_tsan_try_lock_slow(__attribute__((swift_context)) void *handle)
    __asm__(TRY_LOCK_SLOW);
__attribute__((swiftcall)) bool tonearm_tsan_try_lock_slow(__attribute__((swift_context)) void *handle) {
    static void *cache;
    bool locked = ((try_lock_slow_fn)real(TRY_LOCK_SLOW, &cache))(handle);
    if (locked) __tsan_acquire(handle);
    return locked;
}
#endif
