// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCore

/// An output driver that wraps another and changes only part of what it does — keeps one output
/// open across tracks, measures the render calls, records the events — forwarding everything
/// else to ``inner``. A wrapper declares `inner` and implements only what it changes; every other
/// requirement of ``AudioOutputDriver`` comes from this protocol's extension, so that a
/// requirement added later (as `flush(replacing:)` and `watchForReturn(_:)` were) reaches the
/// real driver instead of falling back to ``AudioOutputDriver``'s do-nothing defaults.
///
/// Threading: as ``AudioOutputDriver``'s; each forwarded call runs on the caller's thread.
public protocol ForwardingOutputDriver: AudioOutputDriver {
    /// The driver that does the work.
    var inner: any AudioOutputDriver { get }
}

extension ForwardingOutputDriver {
    public var name: String { inner.name }
    public var format: AudioFormat { inner.format }
    public var isAudible: Bool { inner.isAudible }
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
    public var clockReading: OutputClockReading { inner.clockReading }
    public var framesPlayed: Int64 { inner.framesPlayed }
    public var underrunCount: Int { inner.underrunCount }
    public var events: AsyncStream<AudioOutputEvent> { inner.events }
    public var ownDevice: String? { inner.ownDevice }
    public func playThrough(device: String?) -> Bool { inner.playThrough(device: device) }
    public func watchForReturn(_ onReturn: @escaping @Sendable () -> Void) -> OutputReturnWatch? {
        inner.watchForReturn(onReturn)
    }
}
