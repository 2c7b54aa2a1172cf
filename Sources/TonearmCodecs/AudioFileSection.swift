// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore

extension AudioFile {
    /// Opens the part `seconds` of the file at `path` (its audio stream `audioStream`) as a file
    /// of its own: frames are numbered from the part's start, ``length`` is the part's, reads end
    /// at its end and seeks stay inside it — what MPD's `rangeid` (and a cue sheet's track) plays.
    /// The bounds are rounded to the nearest frame and clamped to the file (an end past it, or
    /// nil, is the file's end).
    /// - Throws: as ``init(path:audioStream:)``; `invalidArgument` naming the file when the part
    ///   starts after the file ends or is empty, or a bound is negative or not finite.
    public convenience init(path: String, audioStream: Int?, seconds: PlaybackRange) throws(TonearmError) {
        let whole = try AudioFile(path: path, audioStream: audioStream)
        try self.init(section: seconds, of: whole)
    }

    /// The part `seconds` of `whole` as a file of its own (see
    /// ``init(path:audioStream:seconds:)``). `whole` must not be read afterwards: the part takes
    /// its decoder (network streams are opened by their fetcher, then made a part of).
    /// - Throws: `invalidArgument` as ``init(path:audioStream:seconds:)``, and the seek's error.
    public convenience init(section seconds: PlaybackRange, of whole: AudioFile) throws(TonearmError) {
        let rate = whole.processingFormat.sampleRate
        func frame(_ s: Double) -> AudioFramePosition { AudioFramePosition((s * rate).rounded()) }
        guard seconds.start.isFinite, seconds.start >= 0, seconds.end.map({ $0.isFinite && $0 > seconds.start }) ?? true else {
            throw .invalidArgument("\(whole.path): the range \(seconds) is not a part of the file (start ≥ 0, end after it)")
        }
        let start = frame(seconds.start)
        let end = min(seconds.end.map(frame) ?? whole.length, whole.length)
        guard start < end else {
            throw .invalidArgument("\(whole.path): the range \(seconds) starts after the file's \(String(format: "%.3f", whole.duration)) s")
        }
        try whole.seek(toFrame: start)
        self.init(part: whole, decoder: SectionDecoder(base: whole.decoder, start: start, end: end), length: end - start)
    }
}

/// Frames `start..<end` of `base`, numbered from 0: reads stop at `end`, seeks are offset by
/// `start`. Threading: as the decoder it wraps (``AudioFile``'s lock serialises every call).
final class SectionDecoder: AudioFileDecoder {
    let base: any AudioFileDecoder
    let start: Int64
    let end: Int64

    init(base: any AudioFileDecoder, start: Int64, end: Int64) {
        self.base = base
        self.start = start
        self.end = end
    }

    var pos: Int64 { max(0, base.pos - start) }
    var streamIndex: Int32 { base.streamIndex }

    func seek(to target: Int64) throws(TonearmError) { try base.seek(to: start + target) }

    /// Frames left before the part's end (0 once there).
    private var left: Int { Int(clamping: max(0, end - base.pos)) }

    func read(into out: UnsafePointer<UnsafeMutablePointer<Float>>, offset: Int, count: Int) throws(TonearmError) -> Int {
        let n = min(count, left)
        return n > 0 ? try base.read(into: out, offset: offset, count: n) : 0
    }

    func readInterleaved(into out: UnsafeMutablePointer<Float>, count: Int) throws(TonearmError) -> Int {
        let n = min(count, left)
        return n > 0 ? try base.readInterleaved(into: out, count: n) : 0
    }

    func takeWarnings() -> [AudioWarning] { base.takeWarnings() }
}
