// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import GRDB
import TonearmCore

/// How an item's audio is stored.
public struct MediaItemFormat: Sendable, Hashable, Codable {
    /// The container, readable: "MP3", "FLAC", "M4A", "Ogg", ….
    public var container: String
    /// FFmpeg's codec name: "mp3", "flac", "aac", "opus", ….
    public var codec: String
    public var sampleRate: Int
    public var channelCount: Int
    /// Bits per sample of PCM and lossless codecs; nil for lossy ones.
    public var bitsPerSample: Int?
    /// Bits per second, when known.
    public var bitRate: Int?
}

/// One playable file in the library, as last scanned (MPMediaItem). A value: it does not change
/// when the database does; query again for fresh counts.
public struct MediaItem: Sendable, Hashable, Codable, Identifiable {
    /// Stable identity: derived from the file's content when first added and kept for the row's
    /// life, through moves and tag changes.
    public var persistentID: UInt64
    public var id: UInt64 { persistentID }
    /// The file's location.
    public var url: URL
    public var path: String { url.path }
    public var fileSize: Int64
    /// The title tag, or the file name without extension when untagged.
    public var title: String
    public var artist: String?
    public var albumTitle: String?
    public var albumArtist: String?
    public var composer: String?
    public var genre: String?
    public var trackNumber: Int?
    public var trackCount: Int?
    public var discNumber: Int?
    public var discCount: Int?
    public var year: Int?
    /// The date as tagged (a year, or an ISO date).
    public var releaseDate: String?
    /// Seconds.
    public var duration: Double
    public var mediaType: MediaType
    public var isCompilation: Bool
    public var beatsPerMinute: Int?
    public var lyrics: String?
    public var replayGain: ReplayGain
    /// The key of the item's cover in the artwork table (``MediaLibrary/artwork(for:)``).
    public var artworkID: UInt64?
    public var format: MediaItemFormat
    public var playCount: Int
    public var skipCount: Int
    public var lastPlayedDate: Date?
    /// 0 (unrated) to 5.
    public var rating: Int
    public var dateAdded: Date

    /// The artist that names the item's album: the album artist, else the artist.
    public var albumArtistOrArtist: String? { albumArtist ?? artist }

    init(row: Row) {
        persistentID = UInt64(bitPattern: row["id"])
        url = URL(fileURLWithPath: row["path"], isDirectory: false)  // without the hint, Foundation stats the path
        fileSize = row["size"]
        title = row["title"]
        artist = row["artist"]
        albumTitle = row["album"]
        albumArtist = row["albumArtist"]
        composer = row["composer"]
        genre = row["genre"]
        trackNumber = row["trackNumber"]
        trackCount = row["trackCount"]
        discNumber = row["discNumber"]
        discCount = row["discCount"]
        year = row["year"]
        releaseDate = row["releaseDate"]
        duration = row["duration"]
        mediaType = MediaType(rawValue: row["mediaType"]) ?? .music
        isCompilation = row["isCompilation"]
        beatsPerMinute = row["bpm"]
        lyrics = row["lyrics"]
        replayGain = ReplayGain(trackGain: row["trackGain"], trackPeak: row["trackPeak"],
                                albumGain: row["albumGain"], albumPeak: row["albumPeak"])
        artworkID = (row["artworkHash"] as Int64?).map { UInt64(bitPattern: $0) }
        format = MediaItemFormat(container: row["container"], codec: row["codec"], sampleRate: row["sampleRate"],
                                 channelCount: row["channels"], bitsPerSample: row["bitsPerSample"], bitRate: row["bitRate"])
        playCount = row["playCount"]
        skipCount = row["skipCount"]
        lastPlayedDate = (row["lastPlayedDate"] as Double?).map { Date(timeIntervalSince1970: $0) }
        rating = row["rating"]
        dateAdded = Date(timeIntervalSince1970: row["dateAdded"])
    }
}
