// Small C helpers for FFmpeg macros Swift cannot import.
// SPDX-License-Identifier: GPL-3.0-or-later
#ifndef TONEARM_CFFMPEG_SHIM_H
#define TONEARM_CFFMPEG_SHIM_H

#include <errno.h>
#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/dict.h>
#include <libavutil/opt.h>
#include <libavutil/samplefmt.h>
#include <libavutil/log.h>
#include <libswresample/swresample.h>
#include <libavutil/audio_fifo.h>
#include <libavutil/pixdesc.h>
#include <libavutil/display.h>
#include <libswscale/swscale.h>
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersrc.h>
#include <libavfilter/buffersink.h>

static inline int tonearm_averror(int e) { return AVERROR(e); }
static inline int tonearm_averror_eof(void) { return AVERROR_EOF; }
static inline int tonearm_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int tonearm_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }
static inline int tonearm_averror_decoder_not_found(void) { return AVERROR_DECODER_NOT_FOUND; }
static inline int tonearm_averror_exit(void) { return AVERROR_EXIT; }
static inline int64_t tonearm_av_nopts_value(void) { return AV_NOPTS_VALUE; }
static inline int tonearm_av_time_base(void) { return AV_TIME_BASE; }

/// `av_strerror` into a caller buffer (replaces the `av_err2str` macro).
static inline void tonearm_av_strerror(int err, char *buf, size_t size) {
    if (av_strerror(err, buf, size) < 0) { snprintf(buf, size, "FFmpeg error %d", err); }
}

static inline AVChannelLayout tonearm_layout_default(int channels) {
    AVChannelLayout l;
    av_channel_layout_default(&l, channels);
    return l;
}

/// `swr_convert` wants `const uint8_t **` where frames hold `uint8_t **`.
static inline int tonearm_swr_convert(SwrContext *s, uint8_t **out, int out_count,
                                      uint8_t **in, int in_count) {
    return swr_convert(s, out, out_count, (const uint8_t **)in, in_count);
}

/// `sws_scale` wants `const uint8_t *const *` where frames hold `uint8_t **`.
static inline int tonearm_sws_scale(struct SwsContext *c, uint8_t **src, const int *srcStride, int srcSliceY,
                                    int srcSliceH, uint8_t **dst, const int *dstStride) {
    return sws_scale(c, (const uint8_t *const *)src, srcStride, srcSliceY, srcSliceH, dst, dstStride);
}

static inline int tonearm_av_buffersrc_flag_keep_ref(void) { return AV_BUFFERSRC_FLAG_KEEP_REF; }
static inline int tonearm_av_opt_search_children(void) { return AV_OPT_SEARCH_CHILDREN; }

/// Silences FFmpeg's own logging (Tonearm reports errors itself).
static inline void tonearm_av_log_quiet(void) { av_log_set_level(AV_LOG_QUIET); }

#endif
