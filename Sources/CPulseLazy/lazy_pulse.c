// Loads libpulse on first use (see include/lazy_pulse.h).
// SPDX-License-Identifier: GPL-3.0-or-later
#include "lazy_pulse.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

extern const int tonearm_pulse_function_count;
extern const char *const tonearm_pulse_function_names[];
extern void *tonearm_pulse_functions[];

static pthread_once_t once = PTHREAD_ONCE_INIT;
static _Atomic int loaded;
static char error[512];
static _Atomic int failed;

static void load(void) {
    void *handle = dlopen(tonearm_pulse_library, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *why = dlerror();
        snprintf(error, sizeof error, "%s", why ? why : "unknown error");
        atomic_store(&failed, 1);
        return;
    }
    for (int i = 0; i < tonearm_pulse_function_count; i++) {
        void *f = dlsym(handle, tonearm_pulse_function_names[i]);
        if (!f) {
            snprintf(error, sizeof error, "%s has no %s", tonearm_pulse_library, tonearm_pulse_function_names[i]);
            atomic_store(&failed, 1);
            dlclose(handle);
            return;
        }
        tonearm_pulse_functions[i] = f;
    }
    atomic_store(&loaded, 1);
}

int tonearm_pulse_load(void) {
    pthread_once(&once, load);
    return atomic_load(&loaded);
}

const char *tonearm_pulse_load_error(void) {
    pthread_once(&once, load);
    return atomic_load(&failed) ? error : NULL;
}

int tonearm_pulse_is_loaded(void) { return atomic_load(&loaded); }

void *tonearm_pulse_function(int index) {
    if (!atomic_load_explicit(&loaded, memory_order_acquire) && !tonearm_pulse_load()) {
        fprintf(stderr, "tonearm: libpulse cannot be loaded (%s). Install it (Debian: apt install libpulse0, "
                        "or scripts/install-deps).\n", error);
        exit(127);
    }
    return tonearm_pulse_functions[index];
}
