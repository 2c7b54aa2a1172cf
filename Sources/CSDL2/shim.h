// SDL2 for Swift: the function-like macros Swift cannot import, as constants and functions.
// The headers are included as <SDL2/SDL.h> (SDL's own headers include each other with quotes,
// from their own folder), so the target needs no pkgConfig: sdl2.pc's `-D_REENTRANT` is left out,
// as CPulse leaves out libpulse.pc's flags.
// SPDX-License-Identifier: GPL-3.0-or-later
#ifndef TONEARM_CSDL2_SHIM_H
#define TONEARM_CSDL2_SHIM_H

#include <SDL2/SDL.h>
#include <SDL2/SDL_syswm.h>

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

#if defined(SDL_VIDEO_DRIVER_X11)
/// An X protocol error that is not SDL's to handle (SDL sets its own handler around the calls
/// it checks) is ignored rather than ending the process.
static inline int csdl2_x11_ignore_error(Display *display, XErrorEvent *error) {
    (void)display;
    (void)error;
    return 0;
}
#endif

/// Replaces Xlib's default error handler — which prints "X Error of failed request" and calls
/// exit(1) — for the whole process. A request that races a window's destruction (SDL_PushEvent
/// from another thread wakes the window thread with an XSendEvent to its window on a connection
/// of its own; a window being destroyed then gives BadWindow, read when SDL closes that
/// connection at SDL_Quit) must not end a player. Called before SDL starts its video: SDL saves
/// the handler it finds and puts it back when it stops, so this one stays across every window
/// of the process; libX11 is loaded here and kept loaded (were SDL's unload the last, a reload
/// would bring the default handler back). Returns 1 when the handler was set.
static inline int csdl2_x11_survive_protocol_errors(void) {
#if defined(SDL_VIDEO_DRIVER_X11)
    void *x11 = SDL_LoadObject("libX11.so.6");
    if (!x11) return 0;
    XErrorHandler (*set)(XErrorHandler) = (XErrorHandler (*)(XErrorHandler))SDL_LoadFunction(x11, "XSetErrorHandler");
    if (!set) return 0;
    set(csdl2_x11_ignore_error);
    return 1;
#else
    return 0;
#endif
}

/// Whether the window's X11 display has a window manager (one that says so on the root window
/// with _NET_SUPPORTING_WM_CHECK, as EWMH managers do): 1 yes, 0 no, -1 not X11 or unknown.
/// Full screen on X11 is asked of the window manager; without one the window covers the
/// screen itself. libX11 is looked up at run time (SDL loads it the same way), not linked.
static inline int csdl2_x11_window_manager_present(SDL_Window *window) {
#if defined(SDL_VIDEO_DRIVER_X11)
    SDL_SysWMinfo info;
    SDL_VERSION(&info.version);
    if (!SDL_GetWindowWMInfo(window, &info) || info.subsystem != SDL_SYSWM_X11) return -1;
    void *x11 = SDL_LoadObject("libX11.so.6");
    if (!x11) return -1;
    Atom (*internAtom)(Display *, const char *, Bool) = (Atom (*)(Display *, const char *, Bool))SDL_LoadFunction(x11, "XInternAtom");
    int (*getProperty)(Display *, Window, Atom, long, long, Bool, Atom, Atom *, int *, unsigned long *, unsigned long *,
                       unsigned char **) =
        (int (*)(Display *, Window, Atom, long, long, Bool, Atom, Atom *, int *, unsigned long *, unsigned long *,
                 unsigned char **))SDL_LoadFunction(x11, "XGetWindowProperty");
    int (*xfree)(void *) = (int (*)(void *))SDL_LoadFunction(x11, "XFree");
    int result = -1;
    if (internAtom && getProperty && xfree) {
        Display *display = info.info.x11.display;
        Atom check = internAtom(display, "_NET_SUPPORTING_WM_CHECK", True);
        result = 0;
        if (check != None) {
            Atom type = None;
            int format = 0;
            unsigned long count = 0, after = 0;
            unsigned char *data = NULL;
            if (getProperty(display, DefaultRootWindow(display), check, 0, 1, False, XA_WINDOW, &type, &format, &count,
                            &after, &data) == Success && type == XA_WINDOW && count == 1) {
                result = 1;
            }
            if (data) xfree(data);
        }
    }
    SDL_UnloadObject(x11);
    return result;
#else
    (void)window;
    return -1;
#endif
}

/// The OpenGL renderer string (GL_RENDERER: "llvmpipe (LLVM 15.0.6, 256 bits)", a GPU's name)
/// of the context current on this thread, looked up through SDL (which loaded the library);
/// NULL without one. SDL's opengl and opengles2 renderers make theirs current when created.
static inline const char *csdl2_current_gl_renderer(void) {
    typedef const unsigned char *(*GetString)(unsigned int);
    GetString getString = (GetString)SDL_GL_GetProcAddress("glGetString");
    if (!getString) return NULL;
    return (const char *)getString(0x1F01 /* GL_RENDERER */);
}

#endif
