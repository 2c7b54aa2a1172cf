// Loads OpenSSL (libssl, with libcrypto) on first use (see include/lazy_openssl.h).
// SPDX-License-Identifier: GPL-3.0-or-later
#include "lazy_openssl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

extern const int tonearm_openssl_function_count;
extern const char *const tonearm_openssl_function_names[];
extern void *tonearm_openssl_functions[];

static pthread_once_t once = PTHREAD_ONCE_INIT;
static _Atomic int loaded;
static char error[512];
static _Atomic int failed;

static void load(void) {
    void *handle = dlopen(tonearm_openssl_library, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *why = dlerror();
        snprintf(error, sizeof error, "%s", why ? why : "unknown error");
        atomic_store(&failed, 1);
        return;
    }
    for (int i = 0; i < tonearm_openssl_function_count; i++) {
        void *f = dlsym(handle, tonearm_openssl_function_names[i]);
        if (!f) {
            snprintf(error, sizeof error, "%s has no %s", tonearm_openssl_library, tonearm_openssl_function_names[i]);
            atomic_store(&failed, 1);
            dlclose(handle);
            return;
        }
        tonearm_openssl_functions[i] = f;
    }
    atomic_store(&loaded, 1);
}

int tonearm_openssl_load(void) {
    pthread_once(&once, load);
    return atomic_load(&loaded);
}

const char *tonearm_openssl_load_error(void) {
    pthread_once(&once, load);
    return atomic_load(&failed) ? error : NULL;
}

int tonearm_openssl_is_loaded(void) { return atomic_load(&loaded); }

void *tonearm_openssl_function(int index) {
    if (!atomic_load_explicit(&loaded, memory_order_acquire) && !tonearm_openssl_load()) {
        fprintf(stderr, "tonearm: OpenSSL cannot be loaded (%s). Install it (Debian: apt install libssl3, "
                        "or scripts/install-deps).\n", error);
        exit(127);
    }
    return tonearm_openssl_functions[index];
}
