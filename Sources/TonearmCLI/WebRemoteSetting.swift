// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmDaemon

/// The daemon's web remote (`--http`, `[daemon] http`): off, or on at an address. Not the
/// HTTP stream output (`--output http:ADDR:PORT`), which serves audio, not a page.
enum WebRemoteSetting: Sendable, Hashable {
    case off
    case on(host: String, port: Int)

    /// Where it listens when turned on without an address (this machine only).
    static let defaultAddress = (host: "127.0.0.1", port: 6680)

    static func on(_ a: (host: String, port: Int)) -> Self { .on(host: a.host, port: a.port) }

    /// `on` (the default address), `off`, `ADDR:PORT`, `:PORT` (loopback) or `[V6]:PORT`.
    /// - Throws: ``WebRemoteSettingError`` naming the text.
    init(parsing text: String) throws(WebRemoteSettingError) {
        switch text {
        case "on", "true", "yes": self = .on(Self.defaultAddress)
        case "off", "false", "no": self = .off
        default:
            guard !text.hasPrefix("/"), let a = try? MPDListenAddress(parsing: text), case .tcp(let host, let port) = a else {
                throw WebRemoteSettingError(description: "'\(text)': expected ADDR:PORT (as 127.0.0.1:6680 or 0.0.0.0:6680), on or off")
            }
            self = .on(host: host, port: port)
        }
    }
}

struct WebRemoteSettingError: Error, Sendable, CustomStringConvertible {
    let description: String
}
