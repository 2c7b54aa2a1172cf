// SPDX-License-Identifier: GPL-3.0-or-later
import Glibc
import Synchronization
import TonearmCore

/// A preallocated, lock-free, single-producer single-consumer ring of interleaved stereo Float32
/// samples: how the render thread hands what it rendered to an output that writes on its own
/// thread (a Snapcast pipe, an HTTP stream). Nothing here allocates, locks or waits after `init`.
///
/// Contract: one producer calls `write`, one consumer calls `read`.
public final class TapRing: @unchecked Sendable {
    // @unchecked: `storage` is written by the producer only between `tail` loads and the
    // releasing store, and read by the consumer only below the acquired `tail`.
    /// Capacity in frames (stereo).
    public let capacityFrames: Int
    private let storage: UnsafeMutablePointer<Float>
    private let head = Atomic<Int>(0)  // frames read (monotonic); consumer writes
    private let tail = Atomic<Int>(0)  // frames written (monotonic); producer writes

    public init(capacityFrames: Int) {
        precondition(capacityFrames > 0, "invalid ring capacity")
        self.capacityFrames = capacityFrames
        storage = .allocate(capacity: capacityFrames * 2)
        storage.initialize(repeating: 0, count: capacityFrames * 2)
    }

    deinit { storage.deallocate() }

    /// Frames waiting to be read (a hint from any thread).
    public var availableFrames: Int { tail.load(ordering: .acquiring) - head.load(ordering: .acquiring) }

    /// Writes `frames` frames of `channels`-channel interleaved audio as stereo (mono is doubled,
    /// more channels keep the first two), all or nothing: false (nothing written) when they do
    /// not fit. Producer only; real-time safe.
    public func write(_ samples: UnsafePointer<Float>, frames: Int, channels: Int) -> Bool {
        let t = tail.load(ordering: .relaxed)
        guard frames <= capacityFrames - (t - head.load(ordering: .acquiring)) else { return false }
        for i in 0..<frames {
            let slot = ((t + i) % capacityFrames) * 2
            let left = samples[i * channels]
            storage[slot] = left
            storage[slot + 1] = channels > 1 ? samples[i * channels + 1] : left
        }
        tail.store(t + frames, ordering: .releasing)
        return true
    }

    /// Reads up to `maxFrames` stereo frames into `buffer`; returns how many. Consumer only.
    public func read(into buffer: UnsafeMutablePointer<Float>, maxFrames: Int) -> Int {
        let h = head.load(ordering: .relaxed)
        let n = min(maxFrames, tail.load(ordering: .acquiring) - h)
        for i in 0..<n {
            let slot = ((h + i) % capacityFrames) * 2
            buffer[i * 2] = storage[slot]
            buffer[i * 2 + 1] = storage[slot + 1]
        }
        head.store(h + n, ordering: .releasing)
        return n
    }
}

/// One output fed from the render thread (any output but the one whose clock drives rendering):
/// a ring the render thread fills while the tap is enabled, the rate of what is in it, and how
/// many frames were dropped because the writer did not keep up.
public final class OutputTap: Sendable {
    public let ring: TapRing
    private let enabledFlag = Atomic<Bool>(false)
    private let rate = Atomic<Int>(48_000)
    private let droppedFrames = Atomic<Int>(0)
    /// Held while a render thread writes the ring: two outputs rendering at once (a crossfade
    /// between formats) never write it together — the second skips its period instead of waiting.
    fileprivate let busy = Atomic<Bool>(false)

    /// A tap holding `seconds` of 48 kHz stereo.
    public init(seconds: Double = 2) {
        ring = TapRing(capacityFrames: max(4096, Int(seconds * 48_000)))
    }

    /// Whether the render thread feeds the tap (`enableoutput`).
    public var isEnabled: Bool {
        get { enabledFlag.load(ordering: .acquiring) }
        set { enabledFlag.store(newValue, ordering: .releasing) }
    }
    /// The sample rate of what the ring holds (the clock output's rate).
    public var sampleRate: Int { rate.load(ordering: .relaxed) }
    /// Frames the render thread could not put in the ring (the writer fell behind).
    public var dropped: Int { droppedFrames.load(ordering: .relaxed) }

    /// Render thread: puts one period in the ring, or counts it dropped. Real-time safe.
    fileprivate func feed(_ buffer: UnsafePointer<Float>, frames: Int, channels: Int, sampleRate: Int) {
        guard busy.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else { return }
        rate.store(sampleRate, ordering: .relaxed)
        if !ring.write(buffer, frames: frames, channels: channels) {
            droppedFrames.wrappingAdd(frames, ordering: .relaxed)
        }
        busy.store(false, ordering: .releasing)
    }
}

/// The outputs of a program that plays to several at once (the daemon): one driver whose clock
/// drives rendering (PulseAudio or the null output) and any number of taps the render thread
/// copies each period into. Every driver the player makes goes through ``wrap(_:)``.
public final class OutputHub: Sendable {
    /// The taps, fixed at creation (the render thread walks them without a lock).
    public let taps: [OutputTap]
    private let clockEnabled = Atomic<Bool>(true)

    public init(taps: [OutputTap]) { self.taps = taps }

    /// Whether the clock output is heard (disabled, it renders on, silenced, so that the taps
    /// keep their pace).
    public var isClockEnabled: Bool {
        get { clockEnabled.load(ordering: .acquiring) }
        set { clockEnabled.store(newValue, ordering: .releasing) }
    }

    /// `driver`, feeding the taps with what it renders.
    public func wrap(_ driver: any AudioOutputDriver) -> any AudioOutputDriver {
        TeeOutputDriver(inner: driver, hub: self)
    }

    /// Render thread: after the clock driver's period was rendered.
    func feed(_ buffer: UnsafeMutablePointer<Float>, frames: Int, channels: Int, sampleRate: Int) {
        for tap in taps where tap.isEnabled {
            tap.feed(buffer, frames: frames, channels: channels, sampleRate: sampleRate)
        }
        if !clockEnabled.load(ordering: .relaxed) {
            memset(buffer, 0, frames * channels * MemoryLayout<Float>.size)
        }
    }
}

/// The clock driver with a source that also feeds the hub's taps.
final class TeeOutputDriver: ForwardingOutputDriver, @unchecked Sendable {
    // @unchecked: `channels`/`rate` are set by `open` on the control plane before `start`.
    let inner: any AudioOutputDriver
    let hub: OutputHub

    init(inner: any AudioOutputDriver, hub: OutputHub) {
        self.inner = inner
        self.hub = hub
    }

    func start(source: any AudioRenderSource) throws {
        let f = inner.format
        try inner.start(source: TeeSource(source: source, hub: hub, channels: f.channelCount, sampleRate: Int(f.sampleRate)))
    }
}

/// Renders from the player's source, then hands the period to the hub.
final class TeeSource: AudioRenderSource {
    let source: any AudioRenderSource
    let hub: OutputHub
    let channels: Int
    let sampleRate: Int

    init(source: any AudioRenderSource, hub: OutputHub, channels: Int, sampleRate: Int) {
        self.source = source
        self.hub = hub
        self.channels = channels
        self.sampleRate = sampleRate
    }

    func render(into buffer: UnsafeMutablePointer<Float>, frameCount: Int, timing: RenderTiming) -> RenderResult {
        let result = source.render(into: buffer, frameCount: frameCount, timing: timing)
        hub.feed(buffer, frames: frameCount, channels: channels, sampleRate: sampleRate)
        return result
    }
}
