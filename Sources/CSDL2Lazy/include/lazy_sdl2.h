// SDL2 loaded on first use: see sdl2_stubs.c and scripts/gen-lazy-stubs.
// SPDX-License-Identifier: GPL-3.0-or-later
#ifndef TONEARM_CSDL2_LAZY_H
#define TONEARM_CSDL2_LAZY_H

/// Loads libSDL2 (once per process; RTLD_LOCAL) and looks up every SDL function Tonearm calls.
/// Returns 1 when SDL is ready, 0 when it is not installed or lacks a function: then
/// `tonearm_sdl2_load_error` says why. Called before SDL_Init by the window (a program that
/// never opens one never loads SDL, nor the X11 and Wayland libraries behind it). Thread-safe.
int tonearm_sdl2_load(void);

/// Why `tonearm_sdl2_load` failed ("libSDL2-2.0.so.0: cannot open shared object file: …"), or
/// NULL when it has not failed.
const char *tonearm_sdl2_load_error(void);

/// The name of the library loaded: "libSDL2-2.0.so.0".
extern const char *const tonearm_sdl2_library;

/// Whether SDL is loaded in this process yet (a test and a diagnostic). Any thread.
int tonearm_sdl2_is_loaded(void);

/// The real SDL function number `index` (of the generated table). Loads SDL when no one has;
/// when it cannot be loaded, prints why to standard error and ends the process with status 127
/// (the window asks `tonearm_sdl2_load` first, so that it never comes to this).
void *tonearm_sdl2_function(int index);

#endif
