// Small C helpers for libpulse macros and inline functions Swift cannot import well.
// SPDX-License-Identifier: GPL-3.0-or-later
#ifndef TONEARM_CPULSE_SHIM_H
#define TONEARM_CPULSE_SHIM_H

#include <pulse/pulseaudio.h>
#include <pulse/thread-mainloop.h>

static inline int tonearm_pa_stream_is_good(pa_stream_state_t s) { return PA_STREAM_IS_GOOD(s) ? 1 : 0; }
static inline int tonearm_pa_context_is_good(pa_context_state_t s) { return PA_CONTEXT_IS_GOOD(s) ? 1 : 0; }
static inline pa_volume_t tonearm_pa_volume_norm(void) { return PA_VOLUME_NORM; }
static inline const char *tonearm_pa_prop_media_role(void) { return PA_PROP_MEDIA_ROLE; }
static inline const char *tonearm_pa_prop_media_name(void) { return PA_PROP_MEDIA_NAME; }
static inline const char *tonearm_pa_prop_application_name(void) { return PA_PROP_APPLICATION_NAME; }
static inline const char *tonearm_pa_stream_event_request_cork(void) { return PA_STREAM_EVENT_REQUEST_CORK; }
static inline const char *tonearm_pa_stream_event_request_uncork(void) { return PA_STREAM_EVENT_REQUEST_UNCORK; }

#endif
