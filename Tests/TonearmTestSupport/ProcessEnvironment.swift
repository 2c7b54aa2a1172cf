// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Changes to this process's environment for the length of a test's body, put back afterwards —
/// what the window tests need, since SDL reads `DISPLAY`, `WAYLAND_DISPLAY` and
/// `SDL_VIDEODRIVER` from the process itself. Not for tests that run in parallel with others that
/// read the same variables (the window suites are serialized and run in the one-at-a-time phase).
public enum ProcessEnvironment {
    /// Runs `body` with `changes` applied (a nil value unsets the variable) and restores every
    /// variable it changed, set or not, when `body` returns or throws.
    public static func with<T>(_ changes: [String: String?], _ body: () throws -> T) rethrows -> T {
        let saved = apply(changes)
        defer { restore(saved) }
        return try body()
    }

    /// The same for an async body.
    public static func with<T>(_ changes: [String: String?], _ body: () async throws -> T) async rethrows -> T {
        let saved = apply(changes)
        defer { restore(saved) }
        return try await body()
    }

    private static func apply(_ changes: [String: String?]) -> [(String, String?)] {
        let saved = changes.keys.map { ($0, ProcessInfo.processInfo.environment[$0]) }
        for (name, value) in changes {
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
        return saved
    }

    private static func restore(_ saved: [(String, String?)]) {
        for (name, value) in saved {
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
    }

    /// No display at all: SDL finds neither X11 nor Wayland nor a forced driver.
    public static let noDisplay: [String: String?] = ["DISPLAY": nil, "WAYLAND_DISPLAY": nil, "SDL_VIDEODRIVER": nil]
}

extension VirtualDisplay {
    /// The variables that point SDL at this display through its x11 driver (and away from any
    /// Wayland compositor of the machine's), for ``ProcessEnvironment/with(_:_:)``.
    public var sdlEnvironment: [String: String?] {
        ["DISPLAY": display, "WAYLAND_DISPLAY": nil, "SDL_VIDEODRIVER": "x11"]
    }

    /// The same for a child process's environment (an empty `WAYLAND_DISPLAY` hides the machine's
    /// compositor): merge it into the child's, `env.merging(display.childEnvironment) { $1 }`.
    public var childEnvironment: [String: String] {
        ["DISPLAY": display, "WAYLAND_DISPLAY": "", "SDL_VIDEODRIVER": "x11"]
    }
}
