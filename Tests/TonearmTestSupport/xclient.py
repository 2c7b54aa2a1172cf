#!/usr/bin/env python3
# A tiny X client for the window tests (Python's ctypes over libX11, no other package): finds a
# top-level window by its title and sends it what a desktop or a user would.
#
#   xclient.py DISPLAY TITLE ACTION [ACTION…]
#     close          the window manager's close request (WM_PROTOCOLS / WM_DELETE_WINDOW)
#     key:NAME       a key press and release (NAME is an X keysym name: space, Left, q, Escape…)
#     motion:X,Y     the pointer moving to (X, Y) in the window
#     cover          another client's window mapped over the whole screen, then destroyed:
#                    the window underneath is exposed and must draw itself again
#     click:X,Y      the left button pressed and released at (X, Y) (move there first: SDL
#                    places a click where the pointer last moved)
#
# Prints the window's id and exits 0 once every event is sent and flushed (XSync); exits 1 with
# a message when the display cannot be opened or no window has that title.
# SPDX-License-Identifier: GPL-3.0-or-later
import ctypes
import sys

X = ctypes.cdll.LoadLibrary("libX11.so.6")
Window = ctypes.c_ulong
X.XOpenDisplay.restype = ctypes.c_void_p
X.XOpenDisplay.argtypes = [ctypes.c_char_p]
X.XDefaultRootWindow.restype = Window
X.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
X.XQueryTree.argtypes = [ctypes.c_void_p, Window, ctypes.POINTER(Window), ctypes.POINTER(Window),
                         ctypes.POINTER(ctypes.POINTER(Window)), ctypes.POINTER(ctypes.c_uint)]
X.XFetchName.argtypes = [ctypes.c_void_p, Window, ctypes.POINTER(ctypes.c_char_p)]
X.XInternAtom.restype = ctypes.c_ulong
X.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
X.XStringToKeysym.restype = ctypes.c_ulong
X.XStringToKeysym.argtypes = [ctypes.c_char_p]
X.XKeysymToKeycode.restype = ctypes.c_ubyte
X.XKeysymToKeycode.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
X.XSendEvent.argtypes = [ctypes.c_void_p, Window, ctypes.c_int, ctypes.c_long, ctypes.c_void_p]
X.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]
X.XFree.argtypes = [ctypes.c_void_p]
X.XCreateSimpleWindow.restype = Window
X.XCreateSimpleWindow.argtypes = [ctypes.c_void_p, Window, ctypes.c_int, ctypes.c_int, ctypes.c_uint, ctypes.c_uint,
                                  ctypes.c_uint, ctypes.c_ulong, ctypes.c_ulong]
X.XMapRaised.argtypes = [ctypes.c_void_p, Window]
X.XDestroyWindow.argtypes = [ctypes.c_void_p, Window]
X.XDisplayWidth.argtypes = [ctypes.c_void_p, ctypes.c_int]
X.XDisplayHeight.argtypes = [ctypes.c_void_p, ctypes.c_int]


class ClientMessage(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("serial", ctypes.c_ulong), ("send_event", ctypes.c_int),
                ("display", ctypes.c_void_p), ("window", Window), ("message_type", ctypes.c_ulong),
                ("format", ctypes.c_int), ("l", ctypes.c_long * 5)]


class KeyOrMotion(ctypes.Structure):  # XKeyEvent, XButtonEvent and XMotionEvent share this layout
    _fields_ = [("type", ctypes.c_int), ("serial", ctypes.c_ulong), ("send_event", ctypes.c_int),
                ("display", ctypes.c_void_p), ("window", Window), ("root", Window), ("subwindow", Window),
                ("time", ctypes.c_ulong), ("x", ctypes.c_int), ("y", ctypes.c_int), ("x_root", ctypes.c_int),
                ("y_root", ctypes.c_int), ("state", ctypes.c_uint), ("code", ctypes.c_uint),
                ("same_screen", ctypes.c_int)]


class Event(ctypes.Union):  # XEvent: 24 longs
    _fields_ = [("client", ClientMessage), ("key", KeyOrMotion), ("pad", ctypes.c_long * 24)]


KEY_PRESS, KEY_RELEASE, BUTTON_PRESS, BUTTON_RELEASE, MOTION_NOTIFY, CLIENT_MESSAGE = 2, 3, 4, 5, 6, 33


def find(display, window, title):
    name = ctypes.c_char_p()
    if X.XFetchName(display, window, ctypes.byref(name)) and name.value is not None:
        found = name.value.decode("utf-8", "replace") == title
        if found:
            return window
    root, parent = Window(), Window()
    children = ctypes.POINTER(Window)()
    count = ctypes.c_uint()
    if not X.XQueryTree(display, window, ctypes.byref(root), ctypes.byref(parent), ctypes.byref(children), ctypes.byref(count)):
        return None
    try:
        for i in range(count.value):
            w = find(display, children[i], title)
            if w is not None:
                return w
    finally:
        if children:
            X.XFree(children)
    return None


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: xclient.py DISPLAY TITLE ACTION…")
    display = X.XOpenDisplay(sys.argv[1].encode())
    if not display:
        sys.exit(f"cannot open display {sys.argv[1]}")
    root = X.XDefaultRootWindow(display)
    window = find(display, root, sys.argv[2])
    if window is None:
        sys.exit(f"no window titled {sys.argv[2]!r}")
    for action in sys.argv[3:]:
        event = Event()
        if action == "close":
            m = event.client
            m.type, m.send_event, m.display, m.window, m.format = CLIENT_MESSAGE, 1, display, window, 32
            m.message_type = X.XInternAtom(display, b"WM_PROTOCOLS", 0)
            m.l[0] = X.XInternAtom(display, b"WM_DELETE_WINDOW", 0)
            X.XSendEvent(display, window, 0, 0, ctypes.byref(event))
        elif action.startswith("key:"):
            keysym = X.XStringToKeysym(action[4:].encode())
            if keysym == 0:
                sys.exit(f"no keysym {action[4:]!r}")
            for kind in (KEY_PRESS, KEY_RELEASE):
                k = event.key
                k.type, k.send_event, k.display, k.window, k.root = kind, 1, display, window, root
                k.code, k.same_screen = X.XKeysymToKeycode(display, keysym), 1
                X.XSendEvent(display, window, 0, 0, ctypes.byref(event))
        elif action.startswith("motion:"):
            x, y = (int(v) for v in action[7:].split(","))
            k = event.key
            k.type, k.send_event, k.display, k.window, k.root = MOTION_NOTIFY, 1, display, window, root
            k.x, k.y, k.x_root, k.y_root, k.same_screen = x, y, x, y, 1
            X.XSendEvent(display, window, 0, 0, ctypes.byref(event))
        elif action == "cover":
            w, h = X.XDisplayWidth(display, 0), X.XDisplayHeight(display, 0)
            cover = X.XCreateSimpleWindow(display, root, 0, 0, w, h, 0, 0, 0x808080)
            X.XMapRaised(display, cover)
            X.XSync(display, 0)
            X.XDestroyWindow(display, cover)
        elif action.startswith("click:"):
            x, y = (int(v) for v in action[6:].split(","))
            for kind in (BUTTON_PRESS, BUTTON_RELEASE):
                k = event.key
                k.type, k.send_event, k.display, k.window, k.root = kind, 1, display, window, root
                k.x, k.y, k.x_root, k.y_root, k.code, k.same_screen = x, y, x, y, 1, 1
                X.XSendEvent(display, window, 0, 0, ctypes.byref(event))
        else:
            sys.exit(f"unknown action {action!r}")
    X.XSync(display, 0)
    print(hex(window))


main()
