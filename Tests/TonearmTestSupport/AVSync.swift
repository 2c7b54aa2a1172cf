// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// A/V sync measured end to end, by instruments that do not ask the player: a clip with a white
/// flash and a beep at the same instants, the screen watched by ``ScreenSampler`` and the sink's
/// monitor recorded by ``MonitorRecorder``, each with CLOCK_MONOTONIC stamps of its own; then
/// ``AVSync/offsets(flashes:beeps:)`` pairs each flash with its beep.
public enum AVSync {
    /// CLOCK_MONOTONIC now, in seconds (the clock both instruments stamp with).
    public static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// A clip of `seconds` seconds, `width`×`height` at 30 fps, H.264 in MP4: black, and a white
    /// full frame for the first 0.1 s of every second; with a 1 kHz beep at 0.8 of full scale
    /// for 0.1 s every second, silence between (AAC, or `audioCodec`), 48 kHz mono. The beep
    /// starts `beepDelay` seconds after its flash (0: the same instants; another value makes a
    /// clip whose true offset is known, to check the measurement itself).
    public static func flashBeepClip(_ path: String, seconds: Int = 10, width: Int = 320, height: Int = 240,
                                     beepDelay: Double = 0, audioCodec: [String] = ["-c:a", "aac", "-b:a", "128k"]) throws {
        // geq: luma 235 (white) in the first 0.1 s of each second, else 16 (black); the 1e-4
        // keeps frame k·30 (T = k, rounded) inside the flash.
        let video = "color=c=black:size=\(width)x\(height):rate=30:d=\(seconds),"
            + "geq=lum='if(lt(mod(T+0.0001\\,1)\\,0.1)\\,235\\,16)':cb=128:cr=128"
        let d = String(format: "%.4f", beepDelay)
        let audio = "aevalsrc='if(between(t-\(d)\\,0\\,1e9)*lt(mod(t-\(d)\\,1)\\,0.1)\\,0.8*sin(2*PI*1000*(t-\(d)))\\,0)'"
            + ":s=48000:d=\(seconds)"
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", video, "-f", "lavfi", "-i", audio,
                             "-c:v", "libx264", "-g", "30", "-pix_fmt", "yuv420p"] + audioCodec + [path])
    }

    /// One flash paired with its beep.
    public struct Pair: Sendable, CustomStringConvertible {
        /// When the flash appeared on the screen and when the beep left the sink (CLOCK_MONOTONIC s).
        public var flash: Double
        public var beep: Double
        /// Video minus audio, in seconds: positive when the picture is late.
        public var offset: Double { flash - beep }
        public var description: String { String(format: "%+.1f ms", offset * 1000) }
    }

    /// Pairs each flash with the nearest beep within `window` seconds (a flash without one is
    /// left out: the caller checks how many were paired).
    public static func offsets(flashes: [Double], beeps: [Double], window: Double = 0.5) -> [Pair] {
        flashes.compactMap { f in
            guard let b = beeps.min(by: { abs($0 - f) < abs($1 - f) }), abs(b - f) <= window else { return nil }
            return Pair(flash: f, beep: b)
        }
    }

    /// The median and the largest magnitude of the offsets, in seconds.
    public static func summary(_ pairs: [Pair]) -> (median: Double, maxAbs: Double) {
        let s = pairs.map(\.offset).sorted()
        guard !s.isEmpty else { return (.nan, .nan) }
        let median = s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
        return (median, s.map(abs).max() ?? .nan)
    }
}

/// `pamonitor.py` (beside this file) recording a PulseAudio sink's monitor, each sample timed
/// by when it left the sink (PulseAudio's stream timing: the sink's latency included, no
/// calibration). Stop it with ``stop()``, then read ``onsets(threshold:quiet:)``.
public final class MonitorRecorder: @unchecked Sendable {
    public static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("pamonitor.py").path
    private let process: ChildProcess
    private let raw: String
    private let timing: String

    /// Starts recording the monitor of `sink` of `server` into `directory`, and waits until
    /// the recording stream is connected.
    public init(server: PrivatePulseServer, sink: String? = nil, directory: TempDir, timeout: Double = 10) throws {
        raw = directory.file("monitor-\(UUID().uuidString.prefix(8)).raw")
        timing = raw + ".timing"
        process = try ChildProcess(["python3", Self.script, server.serverString, "\(sink ?? server.sinkName).monitor", raw, timing],
                                   environment: server.environment, captureStandardError: true, captureStandardOutput: true)
        let out = process.waitForStandardOutputBlocking(timeout: timeout) { $0.text.contains("recording") || $0.childEnded }
        guard out.text.contains("recording") else {
            process.terminate(SIGKILL)
            throw TestSupportError("pamonitor.py did not start: \(process.standardErrorText.suffix(2000))")
        }
    }

    /// Stops the recording (SIGINT: the files are completed) and waits for it.
    public func stop() { process.terminate(SIGINT) }
    deinit { process.terminate(SIGKILL) }

    /// When (CLOCK_MONOTONIC seconds) the sample `index` left the sink: from the recorder's
    /// readings of the stream's clock, the 10th percentile of their offsets (a reading taken late
    /// by a busy moment in the recorder is late, never early).
    public func timeBase() throws -> Double {
        let text = try String(contentsOfFile: timing, encoding: .utf8)
        let offsets = text.split(separator: "\n").compactMap { line -> Double? in
            let p = line.split(separator: " ")
            guard p.count == 2, let ns = Double(p[0]), let us = Double(p[1]) else { return nil }
            return ns / 1e9 - us / 1e6
        }.sorted()
        guard offsets.count >= 3 else { throw TestSupportError("pamonitor.py took \(offsets.count) timing readings") }
        return offsets[offsets.count / 10]
    }

    /// The beginnings of sounds (CLOCK_MONOTONIC seconds at which they left the sink): each the
    /// first sample above `threshold` of full scale after at least `quiet` seconds below it.
    public func onsets(threshold: Double = 0.3, quiet: Double = 0.3) throws -> [Double] {
        let base = try timeBase()
        let data = try Data(contentsOf: URL(fileURLWithPath: raw))
        let limit = Int(threshold * 32767), gap = Int(quiet * 48000)
        var result: [Double] = []
        var last = Int.min / 2
        data.withUnsafeBytes { (p: UnsafeRawBufferPointer) in
            let n = p.count / 2
            for i in 0..<n {
                let v = Int(Int16(littleEndian: p.loadUnaligned(fromByteOffset: 2 * i, as: Int16.self)))
                guard abs(v) > limit else { continue }
                if i - last > gap { result.append(base + Double(i) / 48000) }
                last = i
            }
        }
        return result
    }
}

/// `xsampler.py` (beside this file) watching one pixel of an X screen every millisecond and
/// noting each change of its colour with CLOCK_MONOTONIC. Stop it with ``stop()``, then read
/// ``changes()``.
public final class ScreenSampler: @unchecked Sendable {
    public static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("xsampler.py").path
    private let process: ChildProcess
    private let out: String

    /// Starts watching pixel (`x`, `y`) of `display`'s screen; waits for the first reading.
    public init(display: VirtualDisplay, x: Int, y: Int, directory: TempDir, timeout: Double = 10) throws {
        out = directory.file("pixel-\(UUID().uuidString.prefix(8)).txt")
        process = try ChildProcess(["python3", Self.script, display.display, "\(x)", "\(y)", out],
                                   captureStandardError: true, captureStandardOutput: true)
        let o = process.waitForStandardOutputBlocking(timeout: timeout) { $0.text.contains("sampling") || $0.childEnded }
        guard o.text.contains("sampling") else {
            process.terminate(SIGKILL)
            throw TestSupportError("xsampler.py did not start: \(process.standardErrorText.suffix(2000))")
        }
    }

    public func stop() { process.terminate(SIGINT) }
    deinit { process.terminate(SIGKILL) }

    /// Each change: when it was seen (CLOCK_MONOTONIC seconds, ± half of `span`) and the new colour.
    public func changes() throws -> [(time: Double, color: Screenshot.Color, span: Double)] {
        try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n").compactMap { line in
            let p = line.split(separator: " ")
            guard p.count == 3, let ns = Double(p[0]), let rgb = Int(p[1], radix: 16), let span = Double(p[2]) else { return nil }
            return (ns / 1e9, Screenshot.Color(r: rgb >> 16 & 0xff, g: rgb >> 8 & 0xff, b: rgb & 0xff), span / 1e9)
        }
    }

    /// When the pixel turned from white (each channel ≥ `level`) to another colour.
    public func whiteEnds(level: Int = 192) throws -> [Double] {
        var result: [Double] = []
        var white = false
        for c in try changes() {
            let w = c.color.r >= level && c.color.g >= level && c.color.b >= level
            if !w && white { result.append(c.time) }
            white = w
        }
        return result
    }

    /// When the pixel turned white (each channel ≥ `level`) from another colour.
    public func whiteOnsets(level: Int = 192) throws -> [Double] {
        var result: [Double] = []
        var white = false
        for c in try changes() {
            let w = c.color.r >= level && c.color.g >= level && c.color.b >= level
            if w && !white { result.append(c.time) }
            white = w
        }
        return result
    }
}
