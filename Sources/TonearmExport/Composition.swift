// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore

/// A sequence of audio taken from time ranges of assets (the counterpart of
/// `AVMutableComposition`, for one audio track): enough to cut, join and reorder audio. Export
/// it with ``AssetExportSession/init(composition:presetName:)`` (or `init(asset:presetName:)`,
/// as iOS code writes it): re-encoded by a preset, or with ``ExportPreset/passthrough`` its
/// packets unchanged when every segment has one format (seed 003 extracts a video's sound so).
///
/// A plain value: copy it, change the copy. The export has the first segment's sample rate and
/// channel count; segments at another rate or channel count are resampled or remixed to it
/// (then only those segments are not sample-exact). Times are seconds, turned into frames at
/// export by rounding to the nearest sample at each segment's own rate.
public struct Composition: Sendable, Hashable {
    /// One stretch of the composition: `sourceRange` of track `trackID` of the file at `url`.
    public struct Segment: Sendable, Hashable {
        public var url: URL
        public var trackID: Int
        public var sourceRange: AssetTimeRange
        public var sampleRate: Int
        public var channelCount: Int
    }

    /// The segments in playing order.
    public private(set) var segments: [Segment] = []

    public init() {}

    /// Seconds: the sum of the segments' durations.
    public var duration: Double { segments.reduce(0) { $0 + $1.sourceRange.duration } }

    /// Inserts `range` of `asset`'s audio track (`trackID`, else its default audio track) at
    /// `time` seconds into the composition; what was at `time` and after moves later by the
    /// range's duration (a segment `time` falls inside is split). A range running past the end
    /// of the track is cut at the end.
    ///
    /// Throws the asset's loading errors, `noAudioTrack`, `noSuchTrack`, and `invalidArgument`
    /// when `time` is outside `0…duration` or the range is empty or starts after the track's end.
    public mutating func insertTimeRange(_ range: AssetTimeRange, of asset: Asset, at time: Double,
                                         trackID: Int? = nil) async throws(TonearmError) {
        let track = try await ExportPlanner.audioTrack(of: asset, trackID: trackID)
        let total = duration
        guard time >= 0, time <= total + 1e-9 else {
            throw .invalidArgument("insert at \(time) s: the composition is \(total) s long")
        }
        let available = track.timeRange.duration > 0 ? track.timeRange.end : try await asset.duration
        guard range.duration > 0 else { throw .invalidArgument("\(asset.path): the time range \(range) is empty") }
        guard range.start < available else {
            throw .invalidArgument("\(asset.path): the time range \(range) starts after the end of the track (\(Int((available * 1000).rounded())) ms)")
        }
        let rate = track.formatDescription.sampleRate ?? 0, channels = track.formatDescription.channelCount ?? 0
        let segment = Segment(url: asset.url, trackID: track.trackID, sourceRange: range.clamped(to: AssetTimeRange(start: 0, end: available)),
                              sampleRate: rate, channelCount: channels)
        let index = split(at: time)
        segments.insert(segment, at: index)
    }

    /// Inserts `range` of `track` — an audio track of a loaded ``Asset``, which knows its file
    /// (``AssetTrack/assetURL``) — at `time` seconds, as
    /// ``insertTimeRange(_:of:at:trackID:)`` inserts an asset's track, without reading the file
    /// again (`AVMutableCompositionTrack.insertTimeRange(_:of:at:)`).
    ///
    /// Throws `invalidArgument` for a track that is not audio or knows no file, a `time` outside
    /// `0…duration`, an empty range or one starting after the track's end.
    public mutating func insertTimeRange(_ range: AssetTimeRange, of track: AssetTrack, at time: Double) throws(TonearmError) {
        guard let url = track.assetURL else { throw .invalidArgument("track #\(track.trackID) knows no file: load it from an Asset") }
        guard track.mediaType == .audio else {
            throw .invalidArgument("\(url.path): track #\(track.trackID) is a \(track.mediaType) track; a composition holds audio")
        }
        let total = duration
        guard time >= 0, time <= total + 1e-9 else {
            throw .invalidArgument("insert at \(time) s: the composition is \(total) s long")
        }
        let available = track.timeRange.end
        guard range.duration > 0 else { throw .invalidArgument("\(url.path): the time range \(range) is empty") }
        guard range.start < available else {
            throw .invalidArgument("\(url.path): the time range \(range) starts after the end of the track (\(Int((available * 1000).rounded())) ms)")
        }
        let segment = Segment(url: url, trackID: track.trackID, sourceRange: range.clamped(to: AssetTimeRange(start: 0, end: available)),
                              sampleRate: track.formatDescription.sampleRate ?? 0, channelCount: track.formatDescription.channelCount ?? 0)
        segments.insert(segment, at: split(at: time))
    }

    /// Removes `range` (composition seconds): what follows moves earlier. Segments it cuts
    /// through are split.
    public mutating func removeTimeRange(_ range: AssetTimeRange) {
        guard range.duration > 0 else { return }
        let from = split(at: min(range.start, duration))
        let to = split(at: min(range.end, duration))
        segments.removeSubrange(from..<to)
    }

    /// Splits the segment `time` falls strictly inside; returns the index of the first segment
    /// starting at or after `time`.
    private mutating func split(at time: Double) -> Int {
        var t = 0.0
        for (i, s) in segments.enumerated() {
            let end = t + s.sourceRange.duration
            if abs(time - t) < 1e-9 { return i }
            if time < end {
                let cut = s.sourceRange.start + (time - t)
                var head = s, tail = s
                head.sourceRange = AssetTimeRange(start: s.sourceRange.start, end: cut)
                tail.sourceRange = AssetTimeRange(start: cut, end: s.sourceRange.end)
                segments.replaceSubrange(i...i, with: [head, tail])
                return i + 1
            }
            t = end
        }
        return segments.count
    }

    /// The part of the composition inside `range` (composition seconds).
    func trimmed(to range: AssetTimeRange) -> Composition {
        var c = self
        c.removeTimeRange(AssetTimeRange(start: range.end, end: max(range.end, c.duration)))
        c.removeTimeRange(AssetTimeRange(start: 0, end: range.start))
        return c
    }
}
