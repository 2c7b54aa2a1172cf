// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Glibc

/// Signals taken from their default action (the process is not killed) and handed to a closure
/// instead, on a global queue, one call per delivery — how `record`, `library watch` and
/// `export` stop cleanly on Ctrl-C. ``cancel()`` stops watching and gives the signals their
/// default action back. Not for the play screens, whose input reader watches signals itself
/// (``SessionInput``).
struct SignalWatch {
    let signals: [Int32]
    private let sources: [any DispatchSourceSignal]

    /// Watches `signals` (by default the quit signals SIGINT, SIGTERM and SIGHUP).
    init(_ signals: [Int32] = [SIGINT, SIGTERM, SIGHUP], handler: @escaping @Sendable (Int32) -> Void) {
        self.signals = signals
        sources = signals.map { sig in
            signal(sig, SIG_IGN)
            let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            s.setEventHandler { handler(sig) }
            s.resume()
            return s
        }
    }

    /// Stops watching; the signals have their default action again.
    func cancel() {
        sources.forEach { $0.cancel() }
        for sig in signals { signal(sig, SIG_DFL) }
    }
}
