// libavfilter, loaded on first use and apart from the other FFmpeg libraries: only a video with
// a subtitle selected needs it (the `subtitles` filter, libass inside), so audio and plain video
// never load it (nor libass, fontconfig and freetype behind it). Written by hand: the
// functions are few; scripts/gen-lazy-stubs covers the libraries loaded together.
// SPDX-License-Identifier: GPL-3.0-or-later
#include "lazy.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#pragma GCC visibility push(hidden)
#include "../CFFmpeg/shim.h"
#pragma GCC visibility pop

static pthread_once_t avfilter_once = PTHREAD_ONCE_INIT;
static void *avfilter_handle;
static _Atomic int avfilter_loaded;

static void avfilter_load(void) {
    const char *name = "libavfilter.so." TONEARM_LAZY_STR(LIBAVFILTER_VERSION_MAJOR);
    avfilter_handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!avfilter_handle) {
        fprintf(stderr, "tonearm: FFmpeg's %s cannot be loaded (%s). Install it (Debian: apt install "
                        "libavfilter8, or scripts/install-deps).\n", name, dlerror());
        exit(127);
    }
    atomic_store(&avfilter_loaded, 1);
}

int tonearm_avfilter_is_loaded(void) { return atomic_load(&avfilter_loaded); }

/// `name` from libavfilter or a library it depends on (libavutil's av_opt_set), loading it
/// on first use.
static void *avfilter_resolve(const char *name) {
    pthread_once(&avfilter_once, avfilter_load);
    void *f = dlsym(avfilter_handle, name);
    if (!f) {
        fprintf(stderr, "tonearm: FFmpeg's %s cannot be found (%s).\n", name, dlerror());
        exit(127);
    }
    return f;
}

#define AVF_LAZY(name) \
    static _Atomic(__typeof__(&name)) cached_; \
    __typeof__(&name) f = atomic_load_explicit(&cached_, memory_order_acquire); \
    if (!f) { \
        f = (__typeof__(&name))avfilter_resolve(#name); \
        atomic_store_explicit(&cached_, f, memory_order_release); \
    }

AVFilterGraph *avfilter_graph_alloc(void) { AVF_LAZY(avfilter_graph_alloc); return f(); }
void avfilter_graph_free(AVFilterGraph **graph) { AVF_LAZY(avfilter_graph_free); f(graph); }
const AVFilter *avfilter_get_by_name(const char *name) { AVF_LAZY(avfilter_get_by_name); return f(name); }
AVFilterContext *avfilter_graph_alloc_filter(AVFilterGraph *graph, const AVFilter *filter, const char *name) {
    AVF_LAZY(avfilter_graph_alloc_filter); return f(graph, filter, name);
}
int avfilter_init_str(AVFilterContext *ctx, const char *args) { AVF_LAZY(avfilter_init_str); return f(ctx, args); }
int avfilter_link(AVFilterContext *src, unsigned srcpad, AVFilterContext *dst, unsigned dstpad) {
    AVF_LAZY(avfilter_link); return f(src, srcpad, dst, dstpad);
}
int avfilter_graph_config(AVFilterGraph *graphctx, void *log_ctx) { AVF_LAZY(avfilter_graph_config); return f(graphctx, log_ctx); }
int av_buffersrc_add_frame_flags(AVFilterContext *buffer_src, AVFrame *frame, int flags) {
    AVF_LAZY(av_buffersrc_add_frame_flags); return f(buffer_src, frame, flags);
}
int av_buffersink_get_frame(AVFilterContext *ctx, AVFrame *frame) { AVF_LAZY(av_buffersink_get_frame); return f(ctx, frame); }
int av_opt_set(void *obj, const char *name, const char *val, int search_flags) {
    AVF_LAZY(av_opt_set); return f(obj, name, val, search_flags);
}
int av_opt_set_int(void *obj, const char *name, int64_t val, int search_flags) {
    AVF_LAZY(av_opt_set_int); return f(obj, name, val, search_flags);
}
