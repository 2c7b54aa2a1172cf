// SPDX-License-Identifier: GPL-3.0-or-later

/// A span of media time in seconds (the counterpart of `CMTimeRange`): `start` and `duration`,
/// both non-negative. Converted to sample positions with ``frames(sampleRate:)``, which rounds
/// to the nearest sample, so `1:30` at 48 kHz is exactly frame 4 320 000.
///
/// A range may be open-ended: ``init(start:)`` (or an infinite `duration`) runs from `start` to
/// the end of whatever it is applied to, as `CMTimeRange` with a positive-infinity duration.
public struct AssetTimeRange: Sendable, Hashable, Codable, CustomStringConvertible {
    public var start: Double
    public var duration: Double
    public var end: Double { start + duration }

    /// A range from `start` lasting `duration` (negative values and NaN are clamped to 0;
    /// `.infinity` makes the range run to the end).
    public init(start: Double, duration: Double) {
        self.start = start.isNaN ? 0 : min(max(0, start), .greatestFiniteMagnitude)
        self.duration = duration.isNaN ? 0 : max(0, duration)
    }

    /// A range from `start` to the end of the media it is applied to (`duration` is `.infinity`).
    public init(start: Double) { self.init(start: start, duration: .infinity) }

    /// Whether the range runs to the end of the media (its duration is infinite).
    public var isOpenEnded: Bool { duration == .infinity }

    /// A range from `start` to `end` (an `end` before `start` gives an empty range).
    public init(start: Double, end: Double) { self.init(start: start, duration: end - start) }

    /// The first frame and the frame count at `sampleRate`, each rounded to the nearest sample.
    /// Positions too large for a frame number (an open-ended range's end) saturate at
    /// ``maximumFrame``, so `start + count` never overflows.
    public func frames(sampleRate: Int) -> (start: Int64, count: Int64) {
        let s = Self.frame(start * Double(sampleRate))
        let e = Self.frame(end * Double(sampleRate))
        return (s, max(0, e - s))
    }

    /// The largest frame position ``frames(sampleRate:)`` returns (2⁶⁰, far beyond any media).
    public static let maximumFrame: Int64 = 1 << 60

    private static func frame(_ position: Double) -> Int64 {
        let r = position.rounded()
        return r >= Double(maximumFrame) ? maximumFrame : Int64(max(0, r))
    }

    /// The part of this range inside `other` (empty, at the later start, when they do not overlap).
    public func clamped(to other: AssetTimeRange) -> AssetTimeRange {
        let s = min(max(start, other.start), other.end)
        return AssetTimeRange(start: s, end: max(s, min(end, other.end)))
    }

    /// `1500 ms–2250 ms`; an open-ended range reads `1500 ms–end`.
    private enum CodingKeys: String, CodingKey { case start, duration }

    /// Decodes `start` and `duration`; a missing `duration` is an open-ended range.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(start: try c.decode(Double.self, forKey: .start),
                  duration: try c.decodeIfPresent(Double.self, forKey: .duration) ?? .infinity)
    }

    /// Encodes `start` and `duration`, leaving `duration` out for an open-ended range (JSON has
    /// no infinity).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(start, forKey: .start)
        if duration.isFinite { try c.encode(duration, forKey: .duration) }
    }

    public var description: String {
        func f(_ v: Double) -> String {
            let ms = (v * 1000).rounded()
            return ms < 1e15 ? String(Int64(ms)) + " ms" : "end"
        }
        return "\(f(start))–\(f(end))"
    }
}
