// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// A part of the file's time line to play: from `start` to `end` seconds (nil: to the end).
public struct PlaybackRange: Sendable, Hashable, Codable, CustomStringConvertible {
    public var start: Double
    public var end: Double?

    public init(start: Double = 0, end: Double? = nil) {
        self.start = start
        self.end = end
    }

    public var description: String { String(format: "%.3f", start) + "–" + (end.map { String(format: "%.3f", $0) } ?? "end") }
}
