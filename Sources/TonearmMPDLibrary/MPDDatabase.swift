// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Glibc
import TonearmLibrary
import TonearmMPDProtocol

/// One song as MPD's database holds it: its URI (the path relative to the music folder), the
/// file's modification time, its audio format and its tags.
struct MPDSong: Sendable {
    let uri: String
    /// The folder's URI ("" at the top).
    let directory: String
    let path: String
    /// The library item's persistentID.
    let persistentID: UInt64
    /// Seconds since 1970 (the file's mtime).
    let mtime: Int64
    let sampleRate: Int
    /// "16", "24", "f"… as MPD's `Format` says it.
    let bits: String
    let channels: Int
    let duration: Double
    /// The tags, in the order they are printed.
    let tags: [(MPDTag, String)]

    func values(_ tag: MPDTag) -> [String] { tags.compactMap { $0.0 == tag ? $0.1 : nil } }

    /// The tag's values, or those of the tag MPD falls back to when the song has none
    /// (`ApplyTagFallback`: AlbumArtist → Artist, AlbumArtistSort → AlbumArtist → ArtistSort →
    /// Artist, ArtistSort → Artist, AlbumSort → Album, ComposerSort → Composer).
    func valuesWithFallback(_ tag: MPDTag) -> [String] {
        let own = values(tag)
        if !own.isEmpty { return own }
        switch tag {
        case .albumArtist, .artistSort: return values(.artist)
        case .albumArtistSort:
            let a = values(.albumArtist)
            return a.isEmpty ? valuesWithFallback(.artistSort) : a
        case .albumSort: return values(.album)
        case .composerSort: return values(.composer)
        default: return []
        }
    }

    var format: String { "\(sampleRate):\(bits):\(channels)" }

    /// The duration as MPD keeps it: whole milliseconds, cut (not rounded) from the samples.
    var milliseconds: Int64 { Int64((duration * 1000 + 1e-6).rounded(.down)) }
}

/// Where the database's URIs are on disk: the music folder (MPD's `music_directory`) and more
/// folders shown as top-level folders of the database under a name of their own (as MPD's
/// `mount` shows another storage).
public struct MPDFolders: Sendable, Hashable {
    /// The music folder: absolute, standardized, without a final slash.
    public let root: String
    /// The other folders: (top-level name, absolute path).
    public let mounts: [(name: String, path: String)]

    /// `root`, and each of `others` under its last path component (made unique: a name taken
    /// by an entry of the music folder or an earlier folder gets " (2)", " (3)"…).
    public init(root: String, others: [String] = []) {
        func clean(_ p: String) -> String {
            var r = URL(fileURLWithPath: p).standardizedFileURL.path
            while r.count > 1, r.hasSuffix("/") { r.removeLast() }
            return r
        }
        self.root = clean(root)
        var mounts: [(String, String)] = []
        var taken = Set((try? FileManager.default.contentsOfDirectory(atPath: self.root)) ?? [])
        for o in others.map(clean) where o != self.root && !mounts.contains(where: { $0.1 == o }) {
            let base = (o as NSString).lastPathComponent
            var name = base.isEmpty || base == "/" ? "music" : base
            var n = 2
            while taken.contains(name) {
                name = "\(base) (\(n))"
                n += 1
            }
            taken.insert(name)
            mounts.append((name, o))
        }
        self.mounts = mounts
    }

    public static func == (a: MPDFolders, b: MPDFolders) -> Bool {
        a.root == b.root && a.mounts.map(\.name) == b.mounts.map(\.name) && a.mounts.map(\.path) == b.mounts.map(\.path)
    }

    public func hash(into h: inout Hasher) {
        h.combine(root)
        for m in mounts { h.combine(m.path) }
    }

    /// Every folder on disk: the music folder first.
    public var all: [String] { [root] + mounts.map(\.path) }

    /// The file or folder a (normalized) URI names: "" is the music folder.
    public func path(forURI uri: String) -> String {
        let top = uri.split(separator: "/", maxSplits: 1).first.map(String.init) ?? ""
        if let m = mounts.first(where: { $0.name == top }) {
            return uri.count == top.count ? m.path : m.path + uri.dropFirst(top.count)
        }
        return uri.isEmpty ? root : (root == "/" ? "/" : root + "/") + uri
    }

    /// The URI of the file or folder at `path` inside one of the folders (not a folder itself
    /// of the music folder; a mounted folder is its name), else nil.
    public func uri(forPath path: String) -> String? {
        var p = URL(fileURLWithPath: path).standardizedFileURL.path
        while p.count > 1, p.hasSuffix("/") { p.removeLast() }
        for m in mounts {
            if p == m.path { return m.name }
            if p.hasPrefix(m.path + "/") { return m.name + "/" + p.dropFirst(m.path.count + 1) }
        }
        let prefix = root == "/" ? "/" : root + "/"
        guard p.hasPrefix(prefix), p.count > prefix.count else { return nil }
        return String(p.dropFirst(prefix.count))
    }
}

/// A folder of the database.
struct MPDDirectory: Sendable {
    let uri: String
    var mtime: Int64
    /// Indexes into the snapshot's songs, in MPD's order (``MPDSnapshot/songPrecedes(_:_:)``).
    var songs: [Int] = []
    /// URIs of the subfolders, in MPD's order (ICU collation of their names).
    var children: [String] = []
}

/// The library as MPD's database: the songs under the music folder, the folders that hold them.
/// Immutable once made.
final class MPDSnapshot: Sendable {
    let songs: [MPDSong]
    let directories: [String: MPDDirectory]
    /// Every song in database order: a folder's songs, then each subfolder in turn (MPD's
    /// `Directory::Walk`).
    let order: [Int]
    let byURI: [String: Int]
    let updated: Int64

    init(songs: [MPDSong], directories: [String: MPDDirectory], updated: Int64) {
        self.songs = songs
        self.directories = directories
        self.updated = updated
        var order: [Int] = []
        order.reserveCapacity(songs.count)
        func walk(_ uri: String) {
            guard let d = directories[uri] else { return }
            order += d.songs
            for c in d.children { walk(c) }
        }
        walk("")
        self.order = order
        var byURI: [String: Int] = [:]
        for (i, s) in songs.enumerated() { byURI[s.uri] = i }
        self.byURI = byURI
    }

    /// Reads the library's items under the folders (``MPDFolders``).
    static func load(library: MediaLibrary, folders: MPDFolders) throws(MPDAck) -> MPDSnapshot {
        let items: [MediaItem]
        do {
            items = try MediaQuery(groupingType: .title, mediaType: nil).items(in: library)
        } catch {
            throw MPDAck(.system, "\(error)")
        }
        var songs: [MPDSong] = []
        var directories: [String: MPDDirectory] = ["": MPDDirectory(uri: "", mtime: mtime(of: folders.root) ?? 0)]
        var songsByDirectory: [String: [Int]] = [:]
        var children: [String: [String]] = [:]
        for item in items {
            guard let uri = folders.uri(forPath: item.path) else { continue }
            let directory = parentURI(uri)
            // The folders up to the top.
            var d = directory
            while directories[d] == nil {
                directories[d] = MPDDirectory(uri: d, mtime: mtime(of: folders.path(forURI: d)) ?? 0)
                let parent = parentURI(d)
                children[parent, default: []].append(d)
                d = parent
            }
            songsByDirectory[directory, default: []].append(songs.count)
            songs.append(song(item, uri: uri, directory: directory))
        }
        var albumKeys: [String: CollationKey] = [:]
        for (uri, indexes) in songsByDirectory {
            let keyed = indexes.map { (SongOrderKey(songs[$0], albumKeys: &albumKeys), $0) }
            directories[uri]!.songs = keyed.sorted { $0.0 < $1.0 }.map(\.1)
        }
        for (uri, list) in children {
            let keyed = list.map { (CollationKey(baseName($0)), $0) }
            directories[uri]!.children = keyed.sorted { $0.0 < $1.0 }.map(\.1)
        }
        return MPDSnapshot(songs: songs, directories: directories, updated: Int64(Date().timeIntervalSince1970))
    }


    static func mtime(of path: String) -> Int64? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return Int64(st.st_mtim.tv_sec)
    }

    /// A tag's number as C's `strtol` reads it (0 when none).
    static func number(_ s: String?) -> Int {
        guard let s else { return 0 }
        let digits = s.drop { $0 == " " }.prefix { $0.isASCII && ($0.isNumber || $0 == "-") }
        return Int(digits) ?? 0
    }

    static func song(_ item: MediaItem, uri: String, directory: String) -> MPDSong {
        var tags: [(MPDTag, String)] = []
        // The library names an untagged file by its name: MPD leaves such a song without Title.
        // (The library does not record whether the title was tagged: see the report's limits.)
        let name = baseName(uri)
        let stem = name.lastIndex(of: ".").map { String(name[..<$0]) } ?? name
        // A file with no tags at all has its name as title; one with other tags keeps its title
        // even when it is the file's name ("Yesterday.flac" titled "Yesterday").
        if item.title != stem || item.artist != nil || item.albumTitle != nil { tags.append((.title, item.title)) }
        if let v = item.artist { tags.append((.artist, v)) }
        if let v = item.albumTitle { tags.append((.album, v)) }
        if let v = item.albumArtist { tags.append((.albumArtist, v)) }
        if let v = item.composer { tags.append((.composer, v)) }
        if let v = item.genre { tags.append((.genre, v)) }
        if let v = item.releaseDate ?? item.year.map(String.init) { tags.append((.date, v)) }
        if let v = item.trackNumber { tags.append((.track, String(v))) }
        if let v = item.discNumber { tags.append((.disc, String(v))) }
        let f = item.format
        let bits: String
        switch f.codec {
        case "mp3", "mp2": bits = "24"  // MPD's libmad decoder gives 24-bit samples
        default: bits = f.bitsPerSample.map(String.init) ?? "f"
        }
        return MPDSong(uri: uri, directory: directory, path: item.path, persistentID: item.persistentID, mtime: mtime(of: item.path) ?? Int64(item.dateAdded.timeIntervalSince1970),
                       sampleRate: f.sampleRate, bits: bits, channels: f.channelCount, duration: item.duration, tags: tags)
    }
}

/// MPD's order of a folder's songs (`song_cmp` in its `SongSort.cxx`): by album (collated;
/// none first), disc, track (numbers; none or 0 first), then file name (collated). Made once per
/// song, not per comparison.
struct SongOrderKey: Comparable {
    let album: CollationKey?, disc: Int, track: Int, name: CollationKey

    init(_ s: MPDSong, albumKeys: inout [String: CollationKey]) {
        if let a = s.values(.album).first {
            if let k = albumKeys[a] { album = k } else {
                let k = CollationKey(a)
                albumKeys[a] = k
                album = k
            }
        } else {
            album = nil
        }
        disc = MPDSnapshot.number(s.values(.disc).first)
        track = MPDSnapshot.number(s.values(.track).first)
        name = CollationKey(baseName(s.uri))
    }

    static func < (a: SongOrderKey, b: SongOrderKey) -> Bool {
        if let c = CollationKey.compare(a.album, b.album), c != 0 { return c < 0 }
        for (x, y) in [(a.disc, b.disc), (a.track, b.track)] {
            if x <= 0 && y <= 0 { continue }
            if x != y { return x <= 0 ? true : y <= 0 ? false : x < y }
        }
        return a.name < b.name
    }

    static func == (a: SongOrderKey, b: SongOrderKey) -> Bool { !(a < b) && !(b < a) }
}

/// The folder of a URI ("" at the top).
func parentURI(_ uri: String) -> String {
    guard let slash = uri.lastIndex(of: "/") else { return "" }
    return String(uri[..<slash])
}

/// The last part of a URI.
func baseName(_ uri: String) -> String {
    guard let slash = uri.lastIndex(of: "/") else { return uri }
    return String(uri[uri.index(after: slash)...])
}

/// Time as MPD writes it (`Last-Modified`): ISO 8601 in UTC, to the second.
func iso8601(_ seconds: Int64) -> String { MPDResponse.time(seconds) }

/// The order MPD gives folder names (`IcuCollate`: ICU's root collation), approximated in three
/// levels as the Unicode collation algorithm has them: the letters without case or accents
/// (`alpha` < `Alpha Band` < `Beta` < `Émile` < `loose`; CJK after Latin, by code point), then the
/// accents, then the case (lower before upper), then the code points.
struct CollationKey: Comparable {
    let primary: [UInt32], secondary: [UInt32], tertiary: [UInt8], name: [UInt8]

    init(_ name: String) {
        if name.utf8.allSatisfy({ $0 < 0x80 }) {
            // ASCII (most names): no accents to take off, and no Foundation call.
            primary = name.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? UInt32($0) + 32 : UInt32($0) }
            secondary = primary
        } else {
            let noAccents = name.folding(options: [.diacriticInsensitive], locale: nil)
            primary = noAccents.lowercased().unicodeScalars.map(\.value)
            secondary = name.lowercased().unicodeScalars.map(\.value)
        }
        tertiary = name.unicodeScalars.map { $0.properties.isUppercase ? 1 : 0 }
        self.name = Array(name.utf8)
    }

    /// The order of the first level where `a` and `b` differ; nil when equal there.
    private static func level<T: Comparable>(_ a: [T], _ b: [T]) -> Bool? {
        a == b ? nil : a.lexicographicallyPrecedes(b)
    }

    static func < (a: CollationKey, b: CollationKey) -> Bool {
        level(a.primary, b.primary) ?? level(a.secondary, b.secondary) ?? level(a.tertiary, b.tertiary)
            ?? level(a.name, b.name) ?? false
    }

    static func == (a: CollationKey, b: CollationKey) -> Bool { a.name == b.name }

    /// -1, 0 or 1; nil (none) before any value.
    static func compare(_ a: CollationKey?, _ b: CollationKey?) -> Int? {
        switch (a, b) {
        case (nil, nil): return 0
        case (nil, _): return -1
        case (_, nil): return 1
        case let (a?, b?): return a < b ? -1 : b < a ? 1 : 0
        }
    }
}
