// SPDX-License-Identifier: GPL-3.0-or-later

/// A span of media time in seconds (the counterpart of `CMTimeRange`): `start` and `duration`,
/// both non-negative. Converted to sample positions with ``frames(sampleRate:)``, which rounds
/// to the nearest sample, so `1:30` at 48 kHz is exactly frame 4 320 000.
public struct AssetTimeRange: Sendable, Hashable, Codable, CustomStringConvertible {
    public var start: Double
    public var duration: Double
    public var end: Double { start + duration }

    /// A range from `start` lasting `duration` (negative values are clamped to 0).
    public init(start: Double, duration: Double) {
        self.start = max(0, start)
        self.duration = max(0, duration)
    }

    /// A range from `start` to `end` (an `end` before `start` gives an empty range).
    public init(start: Double, end: Double) { self.init(start: start, duration: end - start) }

    /// The first frame and the frame count at `sampleRate`, each rounded to the nearest sample.
    public func frames(sampleRate: Int) -> (start: Int64, count: Int64) {
        let s = Int64((start * Double(sampleRate)).rounded())
        let e = Int64((end * Double(sampleRate)).rounded())
        return (s, max(0, e - s))
    }

    /// The part of this range inside `other` (empty, at the later start, when they do not overlap).
    public func clamped(to other: AssetTimeRange) -> AssetTimeRange {
        let s = min(max(start, other.start), other.end)
        return AssetTimeRange(start: s, end: max(s, min(end, other.end)))
    }

    public var description: String {
        func f(_ v: Double) -> String { String(Int((v * 1000).rounded())) + " ms" }
        return "\(f(start))–\(f(end))"
    }
}
