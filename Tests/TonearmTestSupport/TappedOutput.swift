// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCore
import TonearmOutput

/// A real output driver with its events seen by the test too: everything is `inner`'s (the same
/// device, timing and flush), and every event it publishes is recorded in ``seen`` before it goes
/// on to the owner (a player), which reads ``events`` as from any driver. A test waits on ``seen``
/// (a signal, not a poll) for what the driver did — its buffer grown, a flush answered.
public final class TappedOutput: ForwardingOutputDriver, Sendable {
    public let inner: any AudioOutputDriver
    /// The events `inner` published so far, in order.
    public let seen = Watched<[AudioOutputEvent]>([])

    public init(_ inner: any AudioOutputDriver) { self.inner = inner }

    /// `inner`'s events, each recorded in ``seen`` on the way.
    public var events: AsyncStream<AudioOutputEvent> {
        let source = inner.events
        let seen = self.seen
        return AsyncStream { c in
            let pump = Task {
                for await e in source {
                    seen.update { $0.append(e) }
                    c.yield(e)
                }
                c.finish()
            }
            c.onTermination = { _ in pump.cancel() }
        }
    }
    /// Whether `inner` has reported its buffer grown to more than `seconds` (at least `times` times).
    public func grew(beyond seconds: Double, times: Int = 1) -> @Sendable ([AudioOutputEvent]) -> Bool {
        { events in events.filter { if case .bufferChanged(let l) = $0 { l > seconds } else { false } }.count >= times }
    }
}
