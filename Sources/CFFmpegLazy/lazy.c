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
        if (!handles[i]) fail(tonearm_ffmpeg_libraries[i], dlerror());
    }
    atomic_store(&loaded, 1);
}

int tonearm_ffmpeg_is_loaded(void) { return atomic_load(&loaded); }

void *tonearm_ffmpeg_resolve(int library, const char *name) {
    pthread_once(&once, load);
    void *f = dlsym(handles[library], name);
    if (!f) fail(name, dlerror());
    return f;
}
