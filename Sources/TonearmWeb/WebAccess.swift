// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import TonearmMPDProtocol

/// Who may use the web remote, and from which page.
///
/// - Bound to loopback, a page has what a TCP client of the daemon has before `password`
///   (MPD's default permissions: everything when no password is set). Bound to any other
///   address — or when those default permissions are none — it needs one of the daemon's
///   passwords: the login form trades it for a session cookie (random, `HttpOnly`,
///   `SameSite=Strict`) that carries that password's permissions.
/// - A browser's `POST` and WebSocket upgrade must come from the remote's own page: an `Origin`
///   header, when there is one, must name the `Host` the request was sent to (a page elsewhere
///   cannot drive the player through a visitor's browser). Clients without `Origin` (curl) are
///   not browsers and need the cookie all the same when a login is required.
public final class WebAccess: Sendable {
    public static let cookieName = "tonearm_session"
    public let requiresLogin: Bool
    let access: MPDAccess
    /// How long a session lasts from its login (its cookie's `Max-Age` too).
    public let sessionLifetime: Duration
    /// At most this many sessions at once: a new login ends the oldest beyond it.
    public let maxSessions: Int
    public static let defaultSessionLifetime = Duration.seconds(12 * 3600)
    public static let defaultMaxSessions = 32
    private let sessions = Mutex<[String: (permissions: MPDPermissions, expires: ContinuousClock.Instant)]>([:])

    /// `host`: the address the remote listens on.
    public init(host: String, access: MPDAccess, sessionLifetime: Duration = defaultSessionLifetime, maxSessions: Int = defaultMaxSessions) {
        self.access = access
        self.sessionLifetime = sessionLifetime
        self.maxSessions = max(1, maxSessions)
        requiresLogin = !Self.isLoopback(host) || access.initialPermissions.isEmpty
    }

    /// `127.0.0.0/8`, `::1`, `localhost`.
    public static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }

    /// A new session for `password` (its token, for the cookie), or nil when it is none of the
    /// daemon's passwords.
    /// Sessions live ``sessionLifetime`` from `now`; expired ones are forgotten here, and the
    /// oldest are ended when more than ``maxSessions`` would be open.
    public func login(password: String, now: ContinuousClock.Instant = .now) -> String? {
        guard !password.isEmpty, let permissions = access.permissions(forPassword: password) else { return nil }
        var bytes = [UInt8](repeating: 0, count: 32)
        var generator = SystemRandomNumberGenerator()
        for i in bytes.indices { bytes[i] = UInt8.random(in: 0...255, using: &generator) }
        let token = bytes.map { String(format: "%02x", $0) }.joined()
        let expires = now + sessionLifetime
        sessions.withLock { all in
            all = all.filter { $0.value.expires > now }
            while all.count >= maxSessions, let oldest = all.min(by: { $0.value.expires < $1.value.expires })?.key {
                all.removeValue(forKey: oldest)
            }
            all[token] = (permissions, expires)
        }
        return token
    }

    /// Whether `session` is a session open at `now`.
    public func isValid(session: String, now: ContinuousClock.Instant = .now) -> Bool {
        sessions.withLock { $0[session].map { $0.expires > now } ?? false }
    }

    /// Sessions open now (expired ones not yet forgotten included).
    public var sessionCount: Int { sessions.withLock { $0.count } }

    /// What a request may do: the session's permissions (its cookie), or without login the
    /// default ones; nil when a login is required and the request has no valid session.
    public func permissions(sessionToken: String?, now: ContinuousClock.Instant = .now) -> MPDPermissions? {
        if let sessionToken, let s = sessions.withLock({ $0[sessionToken] }), s.expires > now { return s.permissions }
        return requiresLogin ? nil : access.initialPermissions
    }

    /// Whether a browser request's `Origin` is this server's own page (`host`: the request's
    /// `Host` header). No `Origin`: not a browser's cross-site request.
    public static func originAllowed(origin: String?, host: String?) -> Bool {
        guard let origin else { return true }
        guard let host, !host.isEmpty else { return false }
        return origin == "http://" + host || origin == "https://" + host
    }
}
