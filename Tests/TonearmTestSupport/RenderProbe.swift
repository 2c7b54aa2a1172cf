// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import RenderThreadProbe
import Synchronization
import TonearmCore
import TonearmOutput

/// Counts what the render thread does inside its render calls — heap allocations and frees,
/// pthread lock calls, and waits (voluntary context switches) — while armed. Only the thread
/// that renders is counted (the counters are thread-local, see `RenderThreadProbe.h`), so the
/// control plane may allocate and lock as much as it likes meanwhile.
///
/// Use it through ``ProbingOutput``, which wraps a real output driver and counts around every
/// call of its source.
public final class RenderProbe: Sendable {
    /// What the render thread did while armed.
    public struct Counts: Sendable, Equatable, CustomStringConvertible {
        public var allocations: Int64 = 0
        public var frees: Int64 = 0
        public var locks: Int64 = 0
        public var waits: Int64 = 0
        /// Render calls counted.
        public var calls: Int64 = 0
        /// Nothing the realtime contract forbids.
        public var isClean: Bool { allocations == 0 && frees == 0 && locks == 0 && waits == 0 }
        public var description: String {
            "\(calls) render calls: \(allocations) allocations, \(frees) frees, \(locks) locks, \(waits) waits"
        }
    }

    /// Whether counting works in this build (not under a sanitizer, which owns malloc).
    public static var isAvailable: Bool { render_probe_available() != 0 }

    private let armedFlag = Atomic<Bool>(false)
    private let skip: Int64
    private let seen = Atomic<Int64>(0)
    private let countingStarted = DispatchSemaphore(value: 0)
    private let allocations = Atomic<Int64>(0)
    private let frees = Atomic<Int64>(0)
    private let locks = Atomic<Int64>(0)
    private let waits = Atomic<Int64>(0)
    private let calls = Atomic<Int64>(0)

    /// A probe that counts from the render call after the first `skippingFirst` calls (the first
    /// cycles may touch lazily initialised runtime metadata once; the contract is about the
    /// steady state and what changes in it).
    public init(skippingFirst: Int = 0) {
        skip = Int64(skippingFirst)
        render_probe_reset_offence()
        armedFlag.store(true, ordering: .relaxed)
    }

    /// Waits (at most `timeout` seconds) until the skipped calls have passed and counting has
    /// begun: what the caller does afterwards happens while the render thread is counted.
    public func waitUntilCounting(timeout: Double = 10) -> Bool {
        if seen.load(ordering: .acquiring) > skip { return true }
        guard countingStarted.wait(timeout: .now() + timeout) == .success else { return false }
        countingStarted.signal()  // for a later caller
        return true
    }

    /// Stops counting after the current render call.
    public func disarm() { armedFlag.store(false, ordering: .releasing) }

    /// The totals so far.
    public var counts: Counts {
        Counts(allocations: allocations.load(ordering: .acquiring), frees: frees.load(ordering: .acquiring),
               locks: locks.load(ordering: .acquiring), waits: waits.load(ordering: .acquiring),
               calls: calls.load(ordering: .acquiring))
    }

    /// Where the first allocation or free, and the first lock, were made, symbolised (empty
    /// when there was none).
    public var firstOffences: String {
        let a = stack(kind: 0), l = stack(kind: 1)
        return (a.isEmpty ? "" : "first allocation or free at:\n  " + a.joined(separator: "\n  ") + "\n")
            + (l.isEmpty ? "" : "first lock at:\n  " + l.joined(separator: "\n  ") + "\n")
    }

    private func stack(kind: Int32) -> [String] {
        var frames = [UnsafeMutableRawPointer?](repeating: nil, count: 48)
        let n = Int(frames.withUnsafeMutableBufferPointer { render_probe_first_offence(kind, $0.baseAddress, 48) })
        guard n > 0 else { return [] }
        let described = (0..<n).map { i in
            var text = [CChar](repeating: 0, count: 512)
            render_probe_describe(frames[i], &text, 512)
            return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        // The probe's own frames (the C hooks, the measuring wrapper) say nothing: from the hook's caller to the driver.
        return Array(described.dropFirst(2).map(Self.symbolise).prefix { !$0.hasPrefix("closure #1 in ProbedSource") })
    }

    /// "file+0xoffset" (a symbol the dynamic table does not export: Swift code in the test
    /// executable) through addr2line and swift-demangle, for a readable failure; as it was when
    /// they are not there.
    private static func symbolise(_ frame: String) -> String {
        guard !frame.contains(" ("), let plus = frame.range(of: "+0x", options: .backwards) else { return frame }
        let file = String(frame[..<plus.lowerBound]), offset = "0x" + frame[plus.upperBound...]
        guard let lines = try? run("addr2line", ["-f", "-e", file, offset]), lines.status == 0 else { return frame }
        let parts = lines.stdout.split(separator: "\n").map(String.init)
        guard parts.count >= 2 else { return frame }
        let name = (try? run("swift", ["demangle", "--simplified", "--compact", parts[0]]))?.stdout
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? parts[0]
        return "\(name) \(parts[1])"
    }

    /// Runs `body` — a render call, or a capture callback — counting what it does when armed.
    /// The thread that runs it.
    @inline(__always)
    public func measure<R>(_ body: () -> R) -> R {
        guard armedFlag.load(ordering: .acquiring) else { return body() }
        let call = seen.add(1, ordering: .acquiringAndReleasing).newValue
        if call <= skip {
            let r = body()
            if call == skip { countingStarted.signal() }
            return r
        }
        if call == 1 && skip == 0 { countingStarted.signal() }
        render_probe_begin()
        let r = body()
        let c = render_probe_end()
        allocations.add(c.allocations, ordering: .relaxed)
        frees.add(c.frees, ordering: .relaxed)
        locks.add(c.locks, ordering: .relaxed)
        waits.add(c.waits, ordering: .relaxed)
        calls.add(1, ordering: .releasing)
        return r
    }
}

/// An output driver that passes everything to `inner` (a real driver: null, PulseAudio) and
/// counts, with `probe`, what each call of the source does on the inner driver's render thread.
public final class ProbingOutput: ForwardingOutputDriver, Sendable {
    public let inner: any AudioOutputDriver
    public let probe: RenderProbe

    public init(_ inner: any AudioOutputDriver, probe: RenderProbe) {
        self.inner = inner
        self.probe = probe
    }

    public func start(source: any AudioRenderSource) throws {
        try inner.start(source: ProbedSource(source, probe: probe))
    }
}

/// The source a ``ProbingOutput`` hands its driver: the real source, measured.
final class ProbedSource: AudioRenderSource, Sendable {
    let source: any AudioRenderSource
    let probe: RenderProbe

    init(_ source: any AudioRenderSource, probe: RenderProbe) {
        self.source = source
        self.probe = probe
    }

    func render(into buffer: UnsafeMutablePointer<Float>, frameCount: Int, timing: RenderTiming) -> RenderResult {
        probe.measure { source.render(into: buffer, frameCount: frameCount, timing: timing) }
    }
}
