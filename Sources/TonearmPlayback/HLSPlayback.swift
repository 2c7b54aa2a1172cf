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
/// The timeline is the first stream's: a reopened stream is placed on it by its timestamps
/// (the first sample's against the first stream's first sample), not by the segment's start as
/// the playlist states it — those differ when segments are cut at the picture's key frames (by
/// 53–59 ms in ffmpeg's own HLS output: the audio before a key frame goes into the segment
/// before it), and the sound after a seek would be that much off the timeline (the picture too:
/// see `HLSVideoFrameSource`). A segment whose sound starts after the target (its timestamps say
/// so) is not used: the one before it is opened instead.
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
    /// The first stream's first sample's timestamp (frames), when its decoder states one: the
    /// item's timeline origin (``PlayerItem/hlsOrigin``), which the picture shares.
    private let origin: Int64?

    /// Wraps `file`, open on `source` from the start of the VOD playlist of `duration` seconds.
    init(url: URL, file: AudioFile, source: HLSByteSource, duration: Double, origin: TimestampOrigin,
         open: @escaping @Sendable (Double) -> (source: HLSByteSource, arrived: HLSArrival),
         onReopen: @escaping @Sendable (HLSByteSource, HLSArrival) -> Void) {
        self.url = url
        self.file = file
        self.source = source
        self.open = open
        self.onReopen = onReopen
        self.origin = origin.firstSample
        sourceFormat = file.processingFormat
        frameLength = AudioFramePosition((duration * file.processingFormat.sampleRate).rounded())
    }

    func seek(toFrame frame: AudioFramePosition) throws {
        let target = max(0, min(frame, frameLength))
        if target == position { return }
        let rate = sourceFormat.sampleRate
        // A stream at the target's segment (or a reader of the one the picture opened for it);
        // the segment before when that one's sound starts after the target.
        var time = Double(target) / rate
        var next: HLSByteSource, nextFile: AudioFile, nextBase: AudioFramePosition
        while true {
            let opened = open(time)
            next = opened.source
            onReopen(next, opened.arrived)
            next.start()
            nextFile = try AudioFile(byteSource: next, name: url.absoluteString, streaming: true)
            let stated = AudioFramePosition((next.startOffset * rate).rounded())
            if let origin, let first = nextFile.timestampOrigin.firstSample {
                nextBase = first - origin
            } else {
                nextBase = stated
            }
            guard nextBase > target, next.startOffset > 0, time > 0 else { break }
            time = max(0, next.startOffset - 0.001)
        }
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
