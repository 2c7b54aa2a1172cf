// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore

/// What an ``HLSByteSource`` reports while it works, on its fetch thread (`tonearm-hls`).
public enum HLSSourceEvent: Sendable, Hashable {
    /// The media playlist to play is known: whether it is live (no `#EXT-X-ENDLIST`) and, for
    /// a VOD playlist, its duration (the sum of the `#EXTINF` durations).
    case opened(isLive: Bool, duration: Double?)
    /// The variant changed before segment `sequence`: the `BANDWIDTH`s of the old and new one.
    case variantSwitched(from: Int, to: Int, sequence: Int)
    /// Segment `sequence` arrived whole (decrypted): its `#EXTINF` duration and its bytes.
    case segmentLoaded(sequence: Int, duration: Double, bytes: Int)
    /// A live media playlist was loaded again; `newSegments` were added since the last load.
    case playlistReloaded(newSegments: Int)
    /// A request failed; retrying after `delay` seconds (attempt n).
    case retrying(attempt: Int, delay: Double, failure: NetworkFailure)
    /// Every segment of the stream has arrived (a VOD playlist, or a live one that ended).
    case finished
    /// The source failed for good.
    case failed(TonearmError)
}

/// How an ``HLSByteSource`` fetches: limits, retries, how far ahead it reads, how it picks
/// variants.
public struct HLSSourceOptions: Sendable {
    /// Limits of every request (playlists, keys, segments).
    public var limits = NetworkLimits()
    /// Limits of every playlist (bytes, lines).
    public var playlistLimits = HLSPlaylistLimits()
    /// Retries of a failed segment, key or playlist reload (not of the first playlist load,
    /// which fails at once) before the source fails.
    public var retryAttempts = 4
    /// The longest wait between retries (0.25 s, then doubling up to this; each wait drawn from
    /// half to all of that: jitter).
    public var maximumBackoff = 4.0
    /// Segments fetched ahead of the reader at most (one more is being fetched).
    public var maximumSegmentsAhead = 4
    /// Bytes fetched ahead of the reader at most.
    public var maximumBytesAhead: Int64 = 16 << 20
    /// Bytes kept behind the reader (for a demuxer's seeks back while probing).
    public var keptBehind: Int64 = 1 << 20
    /// Seconds of segments kept behind the slowest reader besides ``keptBehind``: a segment is
    /// forgotten once it lies both that many bytes and that many seconds behind it. What the
    /// sound has read ahead of what is heard stays, so that a picture that starts (or joins
    /// after a seek) reads the segment it shows from memory (``HLSByteSource/makeReader(at:)``)
    /// instead of fetching it again.
    public var keptBehindDuration = 10.0
    /// A segment larger than this fails the source (``NetworkFailure/limitExceeded(_:)``).
    public var maximumSegmentBytes = 64 << 20
    /// Variants above this `BANDWIDTH` (bits/s) are not chosen; 0: no cap. The first variant is
    /// the highest at or below it (the lowest when there is no cap or none is below it).
    public var preferredPeakBitRate: Double = 0
    /// Whether the variant follows the measured bandwidth (false: the first choice stays).
    public var adaptiveSwitching = true
    /// Switch up to a variant when the measured bandwidth is at least its `BANDWIDTH` times this.
    public var switchUpFactor = 1.5
    /// Segments over which the bandwidth is measured.
    public var bandwidthWindow = 3
    /// A live playlist starts this many target durations before its end.
    public var liveStartTargetDurations = 3.0
    /// A VOD playlist starts with the segment that holds this time (seconds; 0: the first
    /// segment). ``HLSByteSource/startOffset`` says where that segment starts.
    public var startTime: Double = 0
    /// A live playlist that has not grown for this many seconds fails the source
    /// (``NetworkFailure/timedOut(phase:seconds:)``); nil: four target durations, and at least
    /// the read timeout.
    public var liveStallTimeout: Double?
    public init() {}
}

/// An HLS (HTTP Live Streaming) audio stream as one continuous byte stream, for a demuxer to
/// read as it reads a file: the segments of a media playlist (concatenated MPEG-TS, AAC ADTS or
/// MP3 segments demux as one stream), fetched in order on a thread of their own, a bounded
/// number ahead of the reader.
///
/// - A master playlist's variants are sorted by `BANDWIDTH`; the first is the lowest (or the
///   highest under ``HLSSourceOptions/preferredPeakBitRate``). The bandwidth is measured over
///   the last segments (bytes / transfer time); before each segment, taking the lower of that
///   and the last segment's own, the source switches up to the highest variant whose
///   `BANDWIDTH` × ``HLSSourceOptions/switchUpFactor`` it reaches, or down (to the highest
///   variant at or below it) when it falls below the current variant's — at most once per
///   segment boundary. A switch continues at the next media sequence number, so the audio goes
///   on.
/// - A live playlist (no `#EXT-X-ENDLIST`) starts ``HLSSourceOptions/liveStartTargetDurations``
///   target durations before its end, is reloaded every target duration (half of it after an
///   unchanged reload), and is followed by media sequence number; the stream ends once
///   `#EXT-X-ENDLIST` appears and every segment has been read. A VOD playlist plays from its
///   first segment to its end.
/// - `METHOD=AES-128` segments are decrypted (AES-128-CBC, PKCS7; the key fetched once per key
///   URI; the IV from the tag or the media sequence number).
/// - A failed segment, key or reload is retried with backoff (a dropped connection resumes the
///   segment with a Range request, no byte twice); then the source fails with the typed error.
///   The first playlist load fails at once (a 404 names its status). Only `http` and `https`
///   are ever fetched: a playlist naming `file:`, `pipe:` or another scheme is refused.
///
/// One stream, several readers: ``makeReader()`` (from the start) and ``makeReader(at:)`` (from
/// a kept segment) give another source over the same segments with a read position of its own
/// (a video's demuxer beside the sound's): nothing is fetched twice. The fetcher keeps its
/// read-ahead limits against the slowest reader, and forgets only what lies both
/// ``HLSSourceOptions/keptBehind`` and ``HLSSourceOptions/keptBehindDuration`` behind it.
///
/// Threading: ``read(into:)`` and ``seek(to:)`` are for one reader thread (a demuxer's); a read
/// blocks until bytes arrive, the end, a failure or ``cancel()``, and never longer than the
/// limits allow: it fails with ``NetworkFailure/timedOut(phase:seconds:)`` when the fetcher has
/// shown no progress for that long. Everything else may be called from any thread. Events are
/// delivered on the fetch thread (`tonearm-hls`); keep the handler short. Releasing the source
/// stops its thread.
public final class HLSByteSource: ByteSource, Sendable {
    public typealias Options = HLSSourceOptions
    private let fetcher: HLSFetcher
    /// This source's reader of the fetcher.
    private let reader: Int
    /// Where this reader's first byte starts on the stream's timeline; nil: the stream's start.
    private let readerStart: Double?

    /// A source for the master or media playlist at `url`; nothing is fetched until
    /// ``start()``. `onEvent` is called on the fetch thread.
    public init(url: URL, options: Options = Options(), onEvent: @escaping @Sendable (HLSSourceEvent) -> Void = { _ in }) {
        fetcher = HLSFetcher(url: url, options: options, onEvent: onEvent)
        reader = fetcher.addReader() ?? 0
        readerStart = nil
    }

    private init(sharing fetcher: HLSFetcher, reader: Int, start: Double?) {
        self.fetcher = fetcher
        self.reader = reader
        readerStart = start
    }

    /// Another reader of this stream: a source with a read position of its own, at the start of
    /// the stream, over the same segments, fetched once. Each reader is for its own thread; the
    /// fetching stops when every reader has been cancelled or released, and ``cancel()`` on one
    /// ends that reader only. Nil when the stream's first bytes are no longer kept (a reader went
    /// on past ``HLSSourceOptions/keptBehind``), or after the fetching stopped or failed (a
    /// failed stream is never joined: the joiner opens its own). Its events go to this source's
    /// handler.
    public func makeReader() -> HLSByteSource? {
        fetcher.addReader().map { HLSByteSource(sharing: fetcher, reader: $0, start: nil) }
    }

    /// Another reader of this stream (as ``makeReader()``), from the start of the segment that
    /// holds `time` (seconds on the item's timeline) while that segment is kept (see
    /// ``HLSSourceOptions/keptBehindDuration``), or from where it will arrive when it is the
    /// next one (or the first of a stream that has fetched nothing yet). Its ``startOffset`` is
    /// the time its first byte starts at. Nil when that place is no longer (or not yet) in the
    /// stream, or after the fetching stopped or failed: the caller opens a stream of its own
    /// (the sound's seek and the picture's never share a stream that failed).
    public func makeReader(at time: Double) -> HLSByteSource? {
        fetcher.addReader(at: time).map { HLSByteSource(sharing: fetcher, reader: $0.id, start: $0.start) }
    }

    /// Releasing the source ends its reader; the last reader's release stops the fetching.
    deinit { fetcher.cancel(reader: reader) }

    /// The playlist address asked for.
    public var url: URL { fetcher.url }
    public var options: Options { fetcher.options }
    /// Starts fetching. Idempotent; any thread.
    public func start() { fetcher.start() }
    /// Stops fetching and wakes the reader (which then throws). With other readers
    /// (``makeReader()``): ends this reader only; the fetching stops with the last one. Any
    /// thread; idempotent.
    public func cancel() { fetcher.cancel(reader: reader) }
    /// Waits until the media playlist to play has been loaded (true), or the source failed or
    /// was cancelled (false; see ``failure``), at most `timeout` seconds. Any thread.
    public func waitUntilOpen(timeout: Double) -> Bool { fetcher.waitUntilOpen(timeout: timeout) }
    /// Waits until every segment has arrived (true), or the source failed or was cancelled
    /// (false), at most `timeout` seconds. Any thread.
    public func waitUntilFinished(timeout: Double) -> Bool { fetcher.waitUntilFinished(timeout: timeout) }

    /// Unknown: segments are added as they come.
    public var length: Int64? { nil }
    /// False: seeks work only within what is kept in memory (``HLSSourceOptions/keptBehind``
    /// behind the reader, and what has arrived ahead of it).
    public var isSeekable: Bool { false }
    /// The failure that ended the source, if it failed.
    public var failure: TonearmError? { fetcher.failure }
    /// Whether the media playlist is live (had no `#EXT-X-ENDLIST` when opened).
    public var isLive: Bool { fetcher.isLive }
    /// Where this reader's first byte starts in the VOD playlist (seconds): for the source and
    /// ``makeReader()``, where the first segment fetched starts (see
    /// ``HLSSourceOptions/startTime``; 0 for a live one); for ``makeReader(at:)``, where its
    /// segment starts.
    public var startOffset: Double { readerStart ?? fetcher.startOffset }
    /// The sum of the segments' durations of a VOD playlist; nil for a live one (or before open).
    public var duration: Double? { fetcher.duration }
    /// Whether every segment has arrived.
    public var isFinished: Bool { fetcher.isFinished }
    /// The variants' `BANDWIDTH`s (bits/s), lowest first; empty for a media playlist.
    public var variants: [Int] { fetcher.variants }
    /// The `BANDWIDTH` of the variant being fetched; nil for a media playlist.
    public var currentVariantBandwidth: Int? { fetcher.currentVariantBandwidth }
    /// The bandwidth measured over the last segments (bits/s); nil before the first segment.
    public var measuredBandwidth: Double? { fetcher.measuredBandwidth }
    /// Seconds of audio that have arrived and not been read yet (by the segments' durations).
    public var bufferedDuration: Double { fetcher.bufferedDuration(reader: reader) }
    /// The requests made so far: playlists, keys and segments, one entry each (a resumption is
    /// an entry of its own).
    public var accessLog: [NetworkAccessLogEntry] { fetcher.accessLog }
    /// The failures met so far (also those a retry overcame).
    public var errorLog: [NetworkErrorLogEntry] { fetcher.errorLog }

    /// Reads up to `buffer.count` bytes at the read position, waiting for them when they have
    /// not arrived. Returns 0 at the end of the stream. Throws the source's failure, or
    /// ``TonearmError/invalidState(_:)`` after ``cancel()``. The reader thread.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(TonearmError) -> Int { try fetcher.read(into: buffer, reader: reader) }
    /// Moves the read position within what is in memory, or forward; false for a position that
    /// is no longer kept, or past the end of a finished stream. The reader thread.
    @discardableResult
    public func seek(to offset: Int64) -> Bool { fetcher.seek(to: offset, reader: reader) }
    /// The read position.
    public var position: Int64 { fetcher.position(reader: reader) }
}
