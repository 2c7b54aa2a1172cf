// SDL2 for Swift: the function-like macros Swift cannot import, as constants and functions.
// The headers are included as <SDL2/SDL.h> (SDL's own headers include each other with quotes,
// from their own folder), so the target needs no pkgConfig: sdl2.pc's `-D_REENTRANT` is left out,
// as CPulse leaves out libpulse.pc's flags.
// SPDX-License-Identifier: GPL-3.0-or-later
#ifndef TONEARM_CSDL2_SHIM_H
#define TONEARM_CSDL2_SHIM_H

#include <SDL2/SDL.h>

/// SDL_WINDOWPOS_CENTERED (SDL_WINDOWPOS_CENTERED_DISPLAY(0)).
static const int CSDL2_WINDOWPOS_CENTERED = (int)SDL_WINDOWPOS_CENTERED;
/// SDL_WINDOWPOS_UNDEFINED.
static const int CSDL2_WINDOWPOS_UNDEFINED = (int)SDL_WINDOWPOS_UNDEFINED;

/// The event type of an SDL_Event (its first member, common to every kind).
static inline Uint32 csdl2_event_type(const SDL_Event *event) { return event->type; }

/// SDL's version at run time, as one number (major*1000000 + minor*1000 + patch).
static inline int csdl2_linked_version(void) {
    SDL_version v;
    SDL_GetVersion(&v);
    return v.major * 1000000 + v.minor * 1000 + v.patch;
}

#endif
