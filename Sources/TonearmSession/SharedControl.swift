// SPDX-License-Identifier: GPL-3.0-or-later
import CPulse
import Synchronization
import TonearmCore

/// One control connection, made on first use and made again when the server went away.
/// Thread-safe: callers that arrive while it connects wait for that connection (at most the
/// timeout).
final class SharedControl: Sendable {
    let server: String?
    let clientName: String
    let timeout: Double
    private let current = Mutex<PulseControl?>(nil)

    init(server: String?, clientName: String, timeout: Double) {
        self.server = server
        self.clientName = clientName
        self.timeout = timeout
    }

    deinit { current.withLock { $0 }?.close() }

    /// The connected control connection. Throws ``TonearmError/outputUnavailable(driver:reason:)``
    /// when no server answers. Blocks (at most the timeout) while connecting; any thread.
    func get() throws -> PulseControl {
        try current.withLock { c in
            if let c, c.isConnected { return c }
            c?.close()
            c = nil
            let fresh = try PulseControl(server: server, clientName: clientName, timeout: timeout)
            c = fresh
            return fresh
        }
    }
}

