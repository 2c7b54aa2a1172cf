// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCodecs
import TonearmCore

/// What a player's decoder thread reads from: a seekable stream of Float32 PCM frames.
/// `AudioFile` is the usual one; tests and generators may provide others.
///
/// Threading: after the player takes a source, only its decoder thread calls these methods.
public protocol PlaybackSource: AnyObject, Sendable {
    /// The PCM format of the frames (sample rate and channels; samples are Float32).
    var sourceFormat: AudioFormat { get }
    /// Frames in the whole stream, exactly.
    var frameLength: AudioFramePosition { get }
    /// Moves to `frame` (0...frameLength); the next read starts exactly there.
    func seek(toFrame frame: AudioFramePosition) throws
    /// Reads up to `frameCount` interleaved frames into `buffer`; returns frames read, 0 at the end.
    func readInterleaved(into buffer: UnsafeMutablePointer<Float>, frameCount: Int) throws -> Int
    /// Warnings (corrupt packets, truncation) since the last call.
    func takeWarnings() -> [AudioWarning]
}

/// A file is the usual source: its processing format, exact length, sample-accurate seek.
extension AudioFile: PlaybackSource {
    public var sourceFormat: AudioFormat { processingFormat }
    public var frameLength: AudioFramePosition { length }
}
