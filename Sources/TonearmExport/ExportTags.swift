// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import TonearmCore

/// The tags an export writes, as FFmpeg's generic keys (each muxer maps them to its own
/// format: MP4 atoms, ID3v2 frames, Vorbis comments, Matroska tags, RIFF INFO).
struct ExportTags: Sendable, Hashable {
    var entries: [String: String]

    /// Container keys that describe the source file rather than the recording: never copied.
    static let technicalKeys: Set<String> = [
        "major_brand", "minor_version", "compatible_brands", "encoder", "creation_time", "handler_name",
        "vendor_id", "duration", "encoded_by", "language",
    ]

    /// The tags of `metadata`'s named fields (the normalised view) over the container's own
    /// non-technical keys (`formatSpecific`, lower-cased).
    init(metadata: AudioMetadata, formatSpecific: [String: String] = [:]) {
        var e: [String: String] = [:]
        for (k, v) in formatSpecific where !Self.technicalKeys.contains(k.lowercased()) && !v.isEmpty {
            e[k.lowercased()] = v
        }
        func put(_ k: String, _ v: String?) { if let v, !v.isEmpty { e[k] = v } }
        put("title", metadata.title)
        put("artist", metadata.artist)
        put("album", metadata.album)
        put("album_artist", metadata.albumArtist)
        put("composer", metadata.composer)
        put("genre", metadata.genre)
        put("date", metadata.date)
        put("comment", metadata.comment)
        put("lyrics", metadata.lyrics)
        put("track", metadata.trackNumber.map { n in metadata.trackCount.map { "\(n)/\($0)" } ?? "\(n)" })
        put("disc", metadata.discNumber.map { n in metadata.discCount.map { "\(n)/\($0)" } ?? "\(n)" })
        if metadata.isCompilation == true { e["compilation"] = "1" }
        let rg = metadata.replayGain
        put("replaygain_track_gain", rg.trackGain.map { String(format: "%.2f dB", $0) })
        put("replaygain_track_peak", rg.trackPeak.map { String(format: "%.6f", $0) })
        put("replaygain_album_gain", rg.albumGain.map { String(format: "%.2f dB", $0) })
        put("replaygain_album_peak", rg.albumPeak.map { String(format: "%.6f", $0) })
        entries = e
    }

    /// Sets every entry on `dict` (an `AVDictionary` owned by a format context or stream).
    func apply(to dict: UnsafeMutablePointer<OpaquePointer?>) {
        for (k, v) in entries.sorted(by: { $0.key < $1.key }) { av_dict_set(dict, k, v, 0) }
    }
}
