// Loads SDL2 on first use (see include/lazy_sdl2.h).
// SPDX-License-Identifier: GPL-3.0-or-later
#include "lazy_sdl2.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

extern const int tonearm_sdl2_function_count;
extern const char *const tonearm_sdl2_function_names[];
extern void *tonearm_sdl2_functions[];

static pthread_once_t once = PTHREAD_ONCE_INIT;
static _Atomic int loaded;
static char error[512];
static _Atomic int failed;

static void load(void) {
    void *handle = dlopen(tonearm_sdl2_library, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *why = dlerror();
        snprintf(error, sizeof error, "%s", why ? why : "unknown error");
        atomic_store(&failed, 1);
        return;
    }
    for (int i = 0; i < tonearm_sdl2_function_count; i++) {
        void *f = dlsym(handle, tonearm_sdl2_function_names[i]);
        if (!f) {
            snprintf(error, sizeof error, "%s has no %s", tonearm_sdl2_library, tonearm_sdl2_function_names[i]);
            atomic_store(&failed, 1);
            dlclose(handle);
            return;
        }
        tonearm_sdl2_functions[i] = f;
    }
    atomic_store(&loaded, 1);
}

int tonearm_sdl2_load(void) {
    pthread_once(&once, load);
    return atomic_load(&loaded);
}

const char *tonearm_sdl2_load_error(void) {
    pthread_once(&once, load);
    return atomic_load(&failed) ? error : NULL;
}

int tonearm_sdl2_is_loaded(void) { return atomic_load(&loaded); }

void *tonearm_sdl2_function(int index) {
    if (!atomic_load_explicit(&loaded, memory_order_acquire) && !tonearm_sdl2_load()) {
        fprintf(stderr, "tonearm: SDL2 is not installed (%s). Install it (Debian: apt install libsdl2-2.0-0, "
                        "or scripts/install-deps).\n", error);
        exit(127);
    }
    return tonearm_sdl2_functions[index];
}
