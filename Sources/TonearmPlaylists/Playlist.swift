// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore

/// Where a playlist entry is: a local file (an absolute path) or a network URL.
public enum PlaylistLocation: Sendable, Hashable, CustomStringConvertible {
    /// A local file, by absolute path (`.` and `..` components removed).
    case file(path: String)
    /// A network stream or file (http, https, or any other non-`file` scheme).
    case remote(URL)

    /// A location for `url`: a `file:` URL becomes `.file` (its path percent-decoded and made
    /// absolute), anything else `.remote`.
    public init(url: URL) {
        if url.isFileURL {
            self = .file(path: PlaylistPaths.absolute(url.path))
        } else {
            self = .remote(url)
        }
    }

    /// A local file; a relative `path` is taken relative to the current directory.
    public init(path: String) {
        self = .file(path: PlaylistPaths.absolute(path))
    }

    /// The location as a URL (a file URL for local files).
    public var url: URL {
        switch self {
        case .file(let p): URL(fileURLWithPath: p)
        case .remote(let u): u
        }
    }

    /// True for network URLs.
    public var isRemote: Bool {
        if case .remote = self { return true }
        return false
    }

    /// The local path, or nil for a network URL.
    public var path: String? {
        if case .file(let p) = self { return p }
        return nil
    }

    public var description: String {
        switch self {
        case .file(let p): p
        case .remote(let u): u.absoluteString
        }
    }
}

/// One item of a playlist.
public struct PlaylistEntry: Sendable, Hashable {
    /// The file or stream.
    public var location: PlaylistLocation
    /// The display title (`#EXTINF`'s text, PLS `TitleN`, XSPF `<title>`). An M3U title such as
    /// "Artist - Title" is kept whole: it is only a display string.
    public var title: String?
    /// The length in seconds, when the playlist gives it (`#EXTINF`, PLS `LengthN`, XSPF
    /// `<duration>` in milliseconds). Unknown lengths (-1) are nil.
    public var duration: Double?
    /// The performer (XSPF `<creator>`); M3U and PLS have no such field.
    public var artist: String?
    /// The album (XSPF `<album>`); M3U and PLS have no such field.
    public var album: String?
    /// Where the entry was read: the 1-based line of the playlist file (the path line in M3U, the
    /// `FileN` line in PLS, the `<track>` line in XSPF). Nil for entries made in code.
    /// Not part of equality or hashing: a playlist written and read back equals the original.
    public var sourceLine: Int?

    public init(location: PlaylistLocation, title: String? = nil, duration: Double? = nil,
                artist: String? = nil, album: String? = nil, sourceLine: Int? = nil) {
        self.location = location
        self.title = title
        self.duration = duration
        self.artist = artist
        self.album = album
        self.sourceLine = sourceLine
    }

    /// An entry for a URL: a `file:` URL is a local file, anything else a network location.
    public init(url: URL, title: String? = nil, duration: Double? = nil,
                artist: String? = nil, album: String? = nil) {
        self.init(location: PlaylistLocation(url: url), title: title, duration: duration,
                  artist: artist, album: album)
    }

    public static func == (a: PlaylistEntry, b: PlaylistEntry) -> Bool {
        a.location == b.location && a.title == b.title && a.duration == b.duration
            && a.artist == b.artist && a.album == b.album
    }

    public func hash(into h: inout Hasher) {
        h.combine(location)
        h.combine(title)
        h.combine(duration)
        h.combine(artist)
        h.combine(album)
    }
}

/// A local entry that cannot be played: reported, and left out of the playable list.
public struct MissingPlaylistEntry: Sendable, Hashable, CustomStringConvertible {
    /// The entry's 0-based position in `Playlist.entries`.
    public var index: Int
    /// The entry itself (its `sourceLine` says where it was in the playlist file, if read from one).
    public var entry: PlaylistEntry
    /// The local path that was checked.
    public var path: String
    /// Why it cannot be played: `.fileNotFound`, `.isDirectory` or `.notReadable`.
    public var reason: TonearmError

    public var description: String {
        if let line = entry.sourceLine {
            return "entry \(index + 1) (line \(line)): \(reason)"
        }
        return "entry \(index + 1): \(reason)"
    }
}

/// The playlist file formats Tonearm reads and writes.
public enum PlaylistFormat: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// M3U: one path or URL a line, optionally extended with `#EXTM3U` / `#EXTINF`. Read as UTF-8
    /// when valid, else as Windows-1252 / Latin-1; written as UTF-8.
    case m3u
    /// M3U8: M3U in UTF-8.
    case m3u8
    /// PLS: the `[playlist]` INI format with `FileN` / `TitleN` / `LengthN`.
    case pls
    /// XSPF: the XML Shareable Playlist Format (`http://xspf.org/ns/0/`).
    case xspf

    /// The format named by a file extension (case-insensitive), or nil.
    public init?(fileExtension: String) {
        switch fileExtension.lowercased() {
        case "m3u": self = .m3u
        case "m3u8": self = .m3u8
        case "pls": self = .pls
        case "xspf": self = .xspf
        default: return nil
        }
    }

    /// The usual file extension, without the dot.
    public var fileExtension: String { rawValue }

    public var description: String { rawValue.uppercased() }

    /// The format the content announces, or nil when it has no signature (a plain M3U list has
    /// none): `#EXTM3U` → `.m3u8`, `[playlist]` → `.pls`, an XML `<playlist>` in the XSPF
    /// namespace → `.xspf`.
    public static func sniff(_ data: Data) -> PlaylistFormat? {
        let head = PlaylistText.decode(data.prefix(4096)).text
        let trimmed = head.drop(while: { $0.isWhitespace })
        if trimmed.hasPrefix("#EXTM3U") { return .m3u8 }
        if trimmed.prefix(10).lowercased() == "[playlist]" { return .pls }
        if trimmed.hasPrefix("<"), head.contains("<playlist"), head.contains("http://xspf.org/ns/0/") {
            return .xspf
        }
        return nil
    }

    /// The format of a playlist named with `fileExtension` (may be nil) holding `data`: the content's
    /// signature wins over a wrong extension; a plain list with an M3U extension stays M3U; text with
    /// neither is taken as plain M3U. Nil when neither the name nor the content is a playlist.
    public static func detect(data: Data, fileExtension: String?) -> PlaylistFormat? {
        let byName = fileExtension.flatMap { PlaylistFormat(fileExtension: $0) }
        let byContent = sniff(data)
        switch (byName, byContent) {
        case (let n?, nil): return n
        case (nil, let c?): return c
        case (let n?, let c?):
            if (n == .m3u || n == .m3u8) && (c == .m3u || c == .m3u8) { return n }
            return c
        case (nil, nil):
            guard !data.isEmpty, PlaylistText.decode(data.prefix(4096)).text.looksLikeText else { return nil }
            return .m3u
        }
    }
}

/// A list of media files and streams, as read from or written to M3U, M3U8, PLS or XSPF.
public struct Playlist: Sendable, Hashable {
    /// The playlist's own title (XSPF `<title>`, M3U `#PLAYLIST:`); PLS has none.
    public var title: String?
    /// The items, in order.
    public var entries: [PlaylistEntry]

    public init(title: String? = nil, entries: [PlaylistEntry] = []) {
        self.title = title
        self.entries = entries
    }

    /// Splits the entries into those that can be played and the local files that cannot
    /// (missing, a directory, or unreadable). Network URLs are always kept: they are not checked.
    /// Never throws; each problem is reported in `missing` with the entry's index, line and path.
    public func entriesCheckingFiles() -> (playable: [PlaylistEntry], missing: [MissingPlaylistEntry]) {
        var playable: [PlaylistEntry] = []
        var missing: [MissingPlaylistEntry] = []
        let fm = FileManager.default
        for (i, e) in entries.enumerated() {
            guard case .file(let raw) = e.location else {
                playable.append(e)
                continue
            }
            let path = PlaylistPaths.absolute(raw)
            var isDir: ObjCBool = false
            let reason: TonearmError?
            if !fm.fileExists(atPath: path, isDirectory: &isDir) {
                reason = .fileNotFound(path: path)
            } else if isDir.boolValue {
                reason = .isDirectory(path: path)
            } else if !fm.isReadableFile(atPath: path) {
                reason = .notReadable(path: path, reason: "permission denied")
            } else {
                reason = nil
            }
            if let reason {
                missing.append(MissingPlaylistEntry(index: i, entry: e, path: path, reason: reason))
            } else {
                playable.append(e)
            }
        }
        return (playable, missing)
    }
}
