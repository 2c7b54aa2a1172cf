// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import TonearmCore
import TonearmNetwork
import TonearmVideo

/// The picture of an HLS item: a ``VideoDecoder`` over a reader of the item's HLS stream (the
/// segments the sound's demuxer reads, fetched once: ``HLSByteSource/makeReader()``). The
/// segments of every variant are one MPEG-TS stream to the decoder, so a variant switch is a
/// change of size in the middle of it (the frames come at the new size; the last one stays
/// shown meanwhile).
///
/// An HLS stream cannot seek: a seek takes a new reader of the item's stream when that starts
/// at or before the target and its first bytes are still kept (after the item opened the stream
/// again at the target's segment, ``PlayerItem`` `reopened`), else a stream of its own opened at
/// the target's segment; it then decodes on to the frame displayed at the target.
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

    init(item: PlayerItem, format: VideoFrame.PixelFormat) {
        self.item = item
        self.format = format
    }

    /// Ends the reading: a read waiting for segments wakes and throws. Any thread; idempotent.
    func cancel() {
        let source = reading.withLock { r -> HLSByteSource? in
            r.cancelled = true
            return r.source
        }
        source?.cancel()
    }

    /// Opens the decoder on a stream that starts at or before `time`: a reader of the item's,
    /// or one of its own.
    private func open(at time: Double) throws(TonearmError) -> VideoDecoder {
        let previous = reading.withLock { $0.source }
        var source: HLSByteSource?
        if let shared = item.hlsStream(), shared.startOffset <= time + 1e-6, let reader = shared.makeReader() {
            source = reader
        }
        if source == nil {
            var options = item.hlsStream()?.options ?? HLSSourceOptions()
            if item.hlsStream() == nil { options.limits = item.networkOptions.limits }
            options.startTime = time
            source = HLSByteSource(url: item.url, options: options)
        }
        guard let source else { throw .invalidState("\(item.url.absoluteString): no HLS stream for the video") }
        let cancelled = reading.withLock { r -> Bool in
            r.source = source
            return r.cancelled
        }
        previous?.cancel()
        if cancelled { source.cancel() }
        source.start()
        _ = source.waitUntilOpen(timeout: item.networkOptions.limits.connectTimeout + item.networkOptions.limits.readTimeout)
        decoder = nil
        let d = try VideoDecoder(byteSource: source, name: item.url.absoluteString, track: nil, outputFormat: format,
                                 timelineStart: source.startOffset)
        d.subtitle = item.subtitleChoice.selection
        decoder = d
        return d
    }

    func nextFrame() throws -> VideoFrame? {
        if let f = held {
            held = nil
            return f
        }
        let d = try decoder ?? open(at: item.hlsStream()?.startOffset ?? 0)
        return try d.nextFrame()
    }

    func seek(to seconds: Double, exact: Bool) throws {
        held = nil
        let d = try open(at: seconds)
        held = try d.advance(to: seconds)
    }
}
