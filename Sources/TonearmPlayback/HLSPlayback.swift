// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCodecs
import TonearmCore
import TonearmEngine
import TonearmNetwork

/// A VOD HLS stream as a seekable ``PlaybackSource``: the segments are one continuous stream to
/// the demuxer, so a seek opens the stream again from the segment that holds the target (an
/// ``HLSByteSource`` with ``HLSSourceOptions/startTime``) and decodes up to the target, which is
/// then sample-exact within the stream as decoded from that segment.
///
/// `open` gives the stream for a seek's time (the item's: a reader of the stream the picture
/// opened for the same seek, else a new one), not yet started.
///
/// Threading: after the player takes it, only the decoder thread calls it (as every
/// ``PlaybackSource``). `open` and `onReopen` are called there with each new source, before it
/// is read.
final class HLSPlayback: PlaybackSource, @unchecked Sendable {
    private let url: URL
    private let open: @Sendable (Double) -> (source: HLSByteSource, arrived: HLSArrival)
    private let onReopen: @Sendable (HLSByteSource, HLSArrival) -> Void
    private var file: AudioFile
    /// The source `file` reads (kept: releasing it stops its fetching).
    private var source: HLSByteSource
    /// The frame the next read returns.
    private var position: AudioFramePosition = 0
    let sourceFormat: AudioFormat
    let frameLength: AudioFramePosition

    /// Wraps `file`, open on `source` from the start of the VOD playlist of `duration` seconds.
    init(url: URL, file: AudioFile, source: HLSByteSource, duration: Double,
         open: @escaping @Sendable (Double) -> (source: HLSByteSource, arrived: HLSArrival),
         onReopen: @escaping @Sendable (HLSByteSource, HLSArrival) -> Void) {
        self.url = url
        self.file = file
        self.source = source
        self.open = open
        self.onReopen = onReopen
        sourceFormat = file.processingFormat
        frameLength = AudioFramePosition((duration * file.processingFormat.sampleRate).rounded())
    }

    func seek(toFrame frame: AudioFramePosition) throws {
        let target = max(0, min(frame, frameLength))
        if target == position { return }
        let rate = sourceFormat.sampleRate
        // A stream at the target's segment (or a reader of the one the picture opened for it).
        let (next, arrived) = open(Double(target) / rate)
        onReopen(next, arrived)
        next.start()
        let nextFile = try AudioFile(byteSource: next, name: url.absoluteString, streaming: true)
        let nextBase = AudioFramePosition((next.startOffset * rate).rounded())
        // Decode from the segment's start up to the target.
        var skip = Int(max(0, target - nextBase))
        let ch = sourceFormat.channelCount
        let scratch = UnsafeMutablePointer<Float>.allocate(capacity: 4096 * ch)
        defer { scratch.deallocate() }
        while skip > 0 {
            let n = try nextFile.readInterleaved(into: scratch, frameCount: min(4096, skip))
            if n == 0 { break }
            skip -= n
        }
        file = nextFile
        source = next
        position = target
    }

    func readInterleaved(into buffer: UnsafeMutablePointer<Float>, frameCount: Int) throws -> Int {
        let n = try file.readInterleaved(into: buffer, frameCount: frameCount)
        position += AudioFramePosition(n)
        return n
    }

    func takeWarnings() -> [AudioWarning] { file.takeWarnings() }
}
