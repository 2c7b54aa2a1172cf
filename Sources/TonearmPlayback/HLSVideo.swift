// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import TonearmCore
import TonearmNetwork
import TonearmVideo

/// The picture of an HLS item: a ``VideoDecoder`` over a reader of the item's HLS stream (the
/// segments the sound's demuxer reads, fetched once: ``PlayerItem`` `hlsStreamForPicture`). The
/// segments of every variant are one MPEG-TS stream to the decoder, so a variant switch is a
/// change of size in the middle of it (the frames come at the new size; the last one stays
/// shown meanwhile).
///
/// An HLS stream cannot seek: a picture that starts (at the item's time) reads the sound's
/// stream from the kept segment that holds that time; a seek reads the stream opened for the
/// seek's time — the one the sound's seek opened, or one the picture opens and the sound's seek
/// then reads too, whichever comes first. It then decodes on to the frame displayed at the
/// target (an exact seek), or shows the segment's first frame, the key frame at or before the
/// target (a seek with tolerance).
///
/// Threading: the pipeline's decoding thread calls it; ``cancel()`` from any thread (it wakes a
/// read waiting for segments, and ends the readers taken after it).
final class HLSVideoFrameSource: VideoFrameSource, @unchecked Sendable {
    private let item: PlayerItem
    private let format: VideoFrame.PixelFormat
    private var decoder: VideoDecoder?
    private var held: VideoFrame?
    /// The reader the decoder reads (cancelled by ``cancel()``), and whether it was.
    private let reading = Mutex<(source: HLSByteSource?, cancelled: Bool)>((nil, false))

    /// Where the picture starts (the item's time when it was asked for): the first seek there
    /// is its start, not a seek of the sound's.
    private var startTime: Double?

    /// The picture of `item` from `startTime` on (the item's time when the picture is asked for).
    init(item: PlayerItem, format: VideoFrame.PixelFormat, startTime: Double) {
        self.item = item
        self.format = format
        self.startTime = startTime
    }

    /// Ends the reading: a read waiting for segments wakes and throws. Any thread; idempotent.
    func cancel() {
        let source = reading.withLock { r -> HLSByteSource? in
            r.cancelled = true
            return r.source
        }
        source?.cancel()
    }

    /// Opens the decoder on a stream that starts at or before `time` (see the type).
    private func open(at time: Double, seeking: Bool) throws(TonearmError) -> VideoDecoder {
        let previous = reading.withLock { $0.source }
        let source = item.hlsStreamForPicture(at: time, seeking: seeking)
        let cancelled = reading.withLock { r -> Bool in
            r.source = source
            return r.cancelled
        }
        previous?.cancel()
        if cancelled { source.cancel() }
        source.start()
        _ = source.waitUntilOpen(timeout: item.networkOptions.limits.connectTimeout + item.networkOptions.limits.readTimeout)
        decoder = nil
        // On the sound's timeline: placed by the first stream's timestamps when the item knows
        // them (a VOD stream), by the segment's stated start otherwise (see HLSPlayback).
        let d = try VideoDecoder(byteSource: source, name: item.url.absoluteString, track: nil, outputFormat: format,
                                 timelineStart: source.startOffset, timestampOrigin: item.hlsOrigin?.containerStart)
        d.subtitle = item.subtitleChoice.selection
        decoder = d
        return d
    }

    func nextFrame() throws -> VideoFrame? {
        if let f = held {
            held = nil
            return f
        }
        let d = try decoder ?? open(at: startTime ?? item.hlsStream()?.startOffset ?? 0, seeking: false)
        return try d.nextFrame()
    }

    func seek(to seconds: Double, exact: Bool) throws {
        held = nil
        let starting = startTime.map { abs($0 - seconds) < 1e-6 } ?? false
        startTime = nil
        let d = try open(at: seconds, seeking: decoder != nil && !starting)
        held = try d.advance(to: seconds, exact: exact)
    }
}
