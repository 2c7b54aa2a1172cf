// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import Foundation
import TonearmCore

/// The tags an export writes, as FFmpeg's generic keys (each muxer maps them to its own
/// format: MP4 atoms, ID3v2 frames, Vorbis comments, Matroska tags, RIFF INFO).
struct ExportTags: Sendable, Hashable {
    var entries: [String: String]
    /// The cover to embed (nil: none). Written as an attached picture in MP3 (APIC), MP4/M4A
    /// (`covr`) and FLAC (PICTURE block), as a `METADATA_BLOCK_PICTURE` comment in Ogg and Opus;
    /// the other containers have no standard place for it and get none.
    var artwork: Artwork?

    /// Container keys that describe the source file rather than the recording: never copied.
    static let technicalKeys: Set<String> = [
        "major_brand", "minor_version", "compatible_brands", "encoder", "creation_time", "handler_name",
        "vendor_id", "duration", "encoded_by", "language",
    ]

    /// The tags of `metadata`'s named fields (the normalised view) over the container's own
    /// non-technical keys (`formatSpecific`, lower-cased).
    /// The artwork is `metadata.artwork` unless `includingArtwork` is false.
    init(metadata: AudioMetadata, formatSpecific: [String: String] = [:], includingArtwork: Bool = true) {
        artwork = includingArtwork ? metadata.artwork : nil
        var e: [String: String] = [:]
        for (k, v) in formatSpecific where !Self.technicalKeys.contains(k.lowercased()) && !Self.pictureKeys.contains(k.lowercased()) && !v.isEmpty {
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

    /// Container keys holding a picture as text: the artwork is written from ``artwork`` instead
    /// (so that `includingArtwork: false` really leaves it out).
    static let pictureKeys: Set<String> = ["metadata_block_picture", "coverart", "coverartmime"]

    /// The FLAC PICTURE block of ``artwork`` (type 3, front cover), base64-encoded: the value of
    /// the Vorbis comment `METADATA_BLOCK_PICTURE` that Ogg Vorbis and Opus players read.
    var pictureComment: String? {
        guard let art = artwork else { return nil }
        var b: [UInt8] = []
        func u32(_ v: Int) { b += [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        let mime = Array(art.mimeType.utf8)
        u32(3)
        u32(mime.count); b += mime
        u32(0)  // no description
        u32(0); u32(0); u32(0); u32(0)  // width, height, depth, colours: unknown
        u32(art.data.count); b += art.data
        return Data(b).base64EncodedString()
    }

    /// Sets every entry on `dict` (an `AVDictionary` owned by a format context or stream).
    func apply(to dict: UnsafeMutablePointer<OpaquePointer?>) {
        for (k, v) in entries.sorted(by: { $0.key < $1.key }) { av_dict_set(dict, k, v, 0) }
    }
}
