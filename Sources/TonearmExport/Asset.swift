// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore

/// A media file on disk, described lazily (the counterpart of `AVURLAsset`): its duration,
/// tracks and tags are read the first time one is asked for, then kept.
///
/// Threading: an actor; every loading method may be awaited from any task. The first load reads
/// the file's header on a cooperative thread (a few milliseconds; the file is not decoded).
/// A failed load is not kept: the next call tries again.
public actor Asset {
    /// The file's `file://` URL.
    public nonisolated let url: URL
    private var contents: AssetContents?

    /// An asset for the file at `url`. Nothing is read yet; a non-file URL fails at the first load.
    public init(url: URL) { self.url = url }

    /// The file's path, as used in messages.
    public nonisolated var path: String { url.isFileURL ? url.path : url.absoluteString }

    /// Everything the asset knows (read once).
    /// Throws `invalidURL` for a URL that is not a local file, and the file errors
    /// (`fileNotFound`, `isDirectory`, `emptyFile`, `notReadable`, `notMediaFile`).
    public func load() throws(TonearmError) -> AssetContents {
        if let contents { return contents }
        guard url.isFileURL else { throw .invalidURL(url.absoluteString) }
        let c = try Self.probe(url)
        contents = c
        return c
    }

    /// The file read, each track knowing its file.
    private static func probe(_ url: URL) throws(TonearmError) -> AssetContents {
        var c = try AssetProbe.probe(path: url.path)
        for i in c.tracks.indices { c.tracks[i].assetURL = url }
        return c
    }

    /// The tracks of `type`, read from the file now, from any thread, without `await` (what
    /// AVAsset's synchronous `tracks(withMediaType:)` gives; ``load()`` reads once and keeps).
    /// Throws as ``load()``.
    public nonisolated func readTracks(withMediaType type: AssetMediaType) throws(TonearmError) -> [AssetTrack] {
        guard url.isFileURL else { throw .invalidURL(url.absoluteString) }
        return try Self.probe(url).tracks.filter { $0.mediaType == type }
    }

    /// Seconds: the container's duration (else the longest track's end).
    public var duration: Double { get throws(TonearmError) { try load().duration } }

    /// Every track, in container order.
    public var tracks: [AssetTrack] { get throws(TonearmError) { try load().tracks } }

    /// The tags: common keys and the container's own.
    public var metadata: AssetMetadata { get throws(TonearmError) { try load().metadata } }

    /// The tracks of one media type, in container order.
    public func tracks(withMediaType type: AssetMediaType) throws(TonearmError) -> [AssetTrack] {
        try load().tracks.filter { $0.mediaType == type }
    }

    /// The track with stream index `trackID`, or nil.
    public func track(withTrackID trackID: Int) throws(TonearmError) -> AssetTrack? {
        try load().tracks.first { $0.trackID == trackID }
    }
}
