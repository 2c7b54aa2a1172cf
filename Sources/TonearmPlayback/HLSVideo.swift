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
/// An HLS stream cannot seek: a seek of a playing picture waits for the sound's seek to open
/// the stream again at the target's segment (``PlayerItem`` `reopened`) and takes a reader of
/// that stream; a picture that starts (at the item's time) takes a reader of the item's stream
/// when that starts at or before the time and its first bytes are still kept. Otherwise (no
/// such stream within ``reopenWait`` seconds) it opens a stream of its own at the target's
/// segment. It then decodes on to the frame displayed at the target.
///
/// Threading: the pipeline's decoding thread calls it; ``cancel()`` from any thread (it wakes a
/// read waiting for segments, and ends the readers taken after it).
final class HLSVideoFrameSource: VideoFrameSource, @unchecked Sendable {
    private let item: PlayerItem
    private let format: VideoFrame.PixelFormat
    private var decoder: VideoDecoder?
    private var held: VideoFrame?
    /// The item's stream generation the decoder reads (nil: none yet, or a stream of its own).
    private var generation: Int?
    /// How long a seek waits for the sound's seek to open the stream again.
    static let reopenWait = 5.0
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
        item.wakeHLSWaiters()
    }

    private var isCancelled: Bool { reading.withLock { $0.cancelled } }

    /// Opens the decoder on a stream that starts at or before `time`: a reader of the item's,
    /// or one of its own. `seeking`: the decoder reads a stream already, and the sound's seek
    /// will open the item's stream again (waited for).
    private func open(at time: Double, seeking: Bool) throws(TonearmError) -> VideoDecoder {
        let previous = reading.withLock { $0.source }
        var source: HLSByteSource?
        var (shared, current) = item.hlsStreamGeneration()
        if seeking, let known = generation, current <= known {
            if let next = item.waitForHLSStream(after: known, timeout: Self.reopenWait, stop: { isCancelled }) {
                (shared, current) = next
            } else if isCancelled {
                throw .invalidState("\(item.url.absoluteString): the video was stopped")
            }
        }
        generation = nil
        if let shared, shared.startOffset <= time + 1e-6, let reader = shared.makeReader() {
            source = reader
            generation = current
        }
        if source == nil {
            // The sound's options (its variant choice and limits), else the item's limits.
            var options = shared?.options ?? HLSSourceOptions()
            if shared == nil { options.limits = item.networkOptions.limits }
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
        let d = try decoder ?? open(at: startTime ?? item.hlsStream()?.startOffset ?? 0, seeking: false)
        return try d.nextFrame()
    }

    func seek(to seconds: Double, exact: Bool) throws {
        held = nil
        let starting = startTime.map { abs($0 - seconds) < 1e-6 } ?? false
        startTime = nil
        let d = try open(at: seconds, seeking: decoder != nil && !starting)
        held = try d.advance(to: seconds)
    }
}
