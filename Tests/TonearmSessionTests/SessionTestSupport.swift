// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore
import TonearmOutput
import TonearmTestSupport

/// A source whose every frame says which frame it is: the left channel holds the thousands
/// (`0.05 + 0.9 × (n / 1000 mod 1000) / 1000`), the right one the units (`0.05 + 0.9 × (n mod 1000) / 1000`),
/// so a recording of a sink's monitor tells exactly which frames were heard there (16-bit
/// recording resolves a step of 0.0009 with room to spare; silence decodes to nothing).
final class CounterSource: AudioRenderSource, @unchecked Sendable {
    private var frame = 0 // render thread only
    /// Renders so far; updated by every render (test code: the lock is held for an instant).
    let renders = Watched(0)

    static func encode(_ n: Int) -> (Float, Float) {
        (0.05 + 0.9 * Float((n / 1000) % 1000) / 1000, 0.05 + 0.9 * Float(n % 1000) / 1000)
    }

    /// The frame number a recorded frame holds, or nil for silence.
    static func decode(_ l: Float, _ r: Float) -> Int? {
        guard l > 0.025, r > 0.025 else { return nil }
        let high = Int(((l - 0.05) / 0.9 * 1000).rounded()), low = Int(((r - 0.05) / 0.9 * 1000).rounded())
        guard (0..<1000).contains(high), (0..<1000).contains(low) else { return nil }
        return high * 1000 + low
    }

    func render(into buffer: UnsafeMutablePointer<Float>, frameCount: Int, timing: RenderTiming) -> RenderResult {
        for i in 0..<frameCount {
            let (l, r) = Self.encode(frame + i)
            buffer[2 * i] = l
            buffer[2 * i + 1] = r
        }
        frame += frameCount
        renders.update { $0 += 1 }
        return RenderResult(framesRendered: frameCount, ended: false)
    }
}

/// Waits until `out.framesPlayed` reaches `frames` (at most `timeout` seconds), looking again at
/// each render of `source` — the device asks for audio as it plays; nothing sleeps.
func waitUntilPlayed(_ out: PulseOutput, atLeast frames: Int64, pulling source: CounterSource,
                     timeout: Double = 10) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(timeout)
    while true {
        let calls = source.renders.value
        if out.framesPlayed >= frames { return true }
        let left = (deadline - ContinuousClock.now) / .seconds(1)
        if left <= 0 { return false }
        _ = await source.renders.wait(timeout: left) { $0 > calls }
    }
}

/// Collects what an async stream delivers; `wait` returns as soon as a matching element has
/// arrived (before or after the call), false after the timeout.
final class Collected<Element: Sendable>: Sendable {
    private let received = Watched<[Element]>([])
    private let task: Task<Void, Never>

    init(_ stream: AsyncStream<Element>) {
        let r = received
        task = Task { for await e in stream { r.update { $0.append(e) } } }
    }

    deinit { task.cancel() }

    var all: [Element] { received.value }

    func wait(timeout: Double = 5, for match: @escaping @Sendable (Element) -> Bool) async -> Bool {
        await received.wait(timeout: timeout) { $0.contains(where: match) }
    }

    /// Waits until `count` elements have arrived (false after the timeout).
    func wait(timeout: Double = 5, count: Int) async -> Bool {
        await received.wait(timeout: timeout) { $0.count >= count }
    }
}

extension PrivatePulseServer {
    /// Loads a float32 48 kHz stereo null sink `name` with extra sink properties; returns its module index.
    @discardableResult
    func loadNullSink(_ name: String, description: String, properties: String = "") throws -> String {
        let props = properties.isEmpty ? "device.description=\(description)" : "device.description=\(description) \(properties)"
        let r = try pactl("load-module", "module-null-sink", "sink_name=\(name)", "format=float32le", "rate=48000",
                          "channels=2", "sink_properties=\"\(props)\"")
        guard r.status == 0 else { throw TestSupportError("loading \(name) failed: \(r.stderr)") }
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Loads an input named `name` that describes itself with `properties`, as a microphone or
    /// a line in would: a mono remap of the default null sink's monitor (module-null-source
    /// takes no properties); returns the module's index.
    @discardableResult
    func loadInput(_ name: String, description: String, properties: String = "") throws -> String {
        let props = properties.isEmpty ? "device.description=\(description)" : "device.description=\(description) \(properties)"
        let r = try pactl("load-module", "module-remap-source", "master=\(sinkName).monitor", "source_name=\(name)",
                          "channels=1", "channel_map=mono", "source_properties=\"\(props)\"")
        guard r.status == 0 else { throw TestSupportError("loading \(name) failed: \(r.stderr)") }
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
