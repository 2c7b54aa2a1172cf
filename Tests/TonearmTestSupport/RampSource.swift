// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore
import TonearmEngine

/// A generated source for render-path tests: frame n of channel c holds a value computed from
/// n and c, so any dropped, repeated or misplaced frame is visible.
public final class RampSource: PlaybackSource, @unchecked Sendable {
    public let sourceFormat: AudioFormat
    public let frameLength: AudioFramePosition
    private var position: AudioFramePosition = 0

    public init(frames: AudioFramePosition, channels: Int = 2, sampleRate: Double = 48000) {
        sourceFormat = .standard(sampleRate: sampleRate, channels: channels)
        frameLength = frames
    }

    public static func value(frame: AudioFramePosition, channel: Int) -> Float {
        Float(frame % 100_000) / 100_000 + Float(channel) * 0.000_001
    }

    public func seek(toFrame frame: AudioFramePosition) throws { position = max(0, min(frame, frameLength)) }

    public func readInterleaved(into buffer: UnsafeMutablePointer<Float>, frameCount: Int) throws -> Int {
        let n = Int(min(AudioFramePosition(frameCount), frameLength - position))
        let ch = sourceFormat.channelCount
        for f in 0..<n {
            for c in 0..<ch { buffer[f * ch + c] = Self.value(frame: position + AudioFramePosition(f), channel: c) }
        }
        position += AudioFramePosition(n)
        return n
    }

    public func takeWarnings() -> [AudioWarning] { [] }
}
