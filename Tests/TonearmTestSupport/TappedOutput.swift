// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCore
import TonearmOutput

/// A real output driver with its events seen by the test too: everything is `inner`'s (the same
/// device, timing and flush), and every event it publishes is recorded in ``seen`` before it goes
/// on to the owner (a player), which reads ``events`` as from any driver. A test waits on ``seen``
/// (a signal, not a poll) for what the driver did — its buffer grown, a flush answered.
public final class TappedOutput: AudioOutputDriver, Sendable {
    public let inner: any AudioOutputDriver
    /// The events `inner` published so far, in order.
    public let seen = Watched<[AudioOutputEvent]>([])

    public init(_ inner: any AudioOutputDriver) { self.inner = inner }

    public var name: String { inner.name }
    public var format: AudioFormat { inner.format }
    public var isAudible: Bool { inner.isAudible }
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
    public func open(format: AudioFormat) throws { try inner.open(format: format) }
    public func start(source: any AudioRenderSource) throws { try inner.start(source: source) }
    public func pause() { inner.pause() }
    public func resume() { inner.resume() }
    public func stop() { inner.stop() }
    public func close() { inner.close() }
    public func drain(timeout: Double) { inner.drain(timeout: timeout) }
    public func flush(replacing replace: () -> Void) { inner.flush(replacing: replace) }
    public func setVolume(_ volume: Float) { inner.setVolume(volume) }
    public var latency: Double { inner.latency }
    public var framesPlayed: Int64 { inner.framesPlayed }
    public var underrunCount: Int { inner.underrunCount }
    public func watchForReturn(_ onReturn: @escaping @Sendable () -> Void) -> OutputReturnWatch? {
        inner.watchForReturn(onReturn)
    }

    /// Whether `inner` has reported its buffer grown to more than `seconds` (at least `times` times).
    public func grew(beyond seconds: Double, times: Int = 1) -> @Sendable ([AudioOutputEvent]) -> Bool {
        { events in events.filter { if case .bufferChanged(let l) = $0 { l > seconds } else { false } }.count >= times }
    }
}
