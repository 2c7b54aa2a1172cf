// Loads FFmpeg's libraries on first use (see include/lazy.h).
// SPDX-License-Identifier: GPL-3.0-or-later
#include "lazy.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

extern const char *const tonearm_ffmpeg_libraries[];
extern const int tonearm_ffmpeg_library_count;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static void *handles[8];
static _Atomic int loaded;
/// The library that could not be loaded, and why (said at the first use, which then ends the
/// process: a load started ahead of use must not end it early).
static const char *failed_library;
static char failed_detail[512];

static void fail(const char *what, const char *detail) {
    fprintf(stderr,
            "tonearm: FFmpeg's %s cannot be loaded (%s). Install FFmpeg's libraries "
            "(Debian: apt install libavformat59 libavcodec59 libswresample4 libswscale6 libavutil57, "
            "or scripts/install-deps).\n",
            what, detail ? detail : "unknown error");
    exit(127);
}

static void load(void) {
    for (int i = 0; i < tonearm_ffmpeg_library_count && i < 8; i++) {
        handles[i] = dlopen(tonearm_ffmpeg_libraries[i], RTLD_NOW | RTLD_LOCAL);
        if (!handles[i]) {
            const char *why = dlerror();
            failed_library = tonearm_ffmpeg_libraries[i];
            snprintf(failed_detail, sizeof failed_detail, "%s", why ? why : "unknown error");
            return;
        }
    }
    atomic_store(&loaded, 1);
}

int tonearm_ffmpeg_is_loaded(void) { return atomic_load(&loaded); }

static void *load_thread(void *unused) {
    (void)unused;
    pthread_once(&once, load);
    return NULL;
}

void tonearm_ffmpeg_load_in_background(void) {
    if (atomic_load(&loaded)) return;
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) return;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    // Without a thread the libraries load at the first use, as they always did.
    (void)pthread_create(&thread, &attr, load_thread, NULL);
    pthread_attr_destroy(&attr);
}

int tonearm_ffmpeg_load(void) {
    pthread_once(&once, load);
    return atomic_load(&loaded);
}

void *tonearm_ffmpeg_resolve(int library, const char *name) {
    pthread_once(&once, load);
    if (!atomic_load(&loaded)) fail(failed_library ? failed_library : "libraries", failed_detail);
    void *f = dlsym(handles[library], name);
    if (!f) fail(name, dlerror());
    return f;
}
