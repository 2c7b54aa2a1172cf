// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore
import TonearmLibrary
import TonearmMPDLibrary
import TonearmMPDProtocol

/// A song of the library as the page shows it: its library id (``MediaItem/persistentID``, as a
/// decimal string: JavaScript's numbers hold 53 bits), never its path.
public struct WebLibrarySong: Codable, Sendable, Hashable {
    public var id: String
    public var title: String
    public var artist: String
    public var album: String
    public var duration: Double?
    /// The library's rating, 0 (none) to 5 stars.
    public var rating = 0
    /// How many times it was played (the library's play count).
    public var plays = 0
}

/// An album of an artist: its name, its songs' count, and the id of its first song (its cover
/// is `/api/cover/ID`).
public struct WebLibraryAlbum: Codable, Sendable, Hashable {
    public var name: String
    public var artist: String
    public var songs: Int
    public var cover: String
}

/// One answer of the library API (`GET /api/library/…`).
public struct WebLibraryList: Codable, Sendable, Hashable {
    /// `artists`, `albums`, `songs` or `search`.
    public var type: String
    public var artists: [String]?
    public var albums: [WebLibraryAlbum]?
    public var songs: [WebLibrarySong]?
}

/// The stored playlists and the library's smart playlists (`GET /api/playlists`).
public struct WebPlaylists: Codable, Sendable, Hashable {
    public var type = "playlists"
    /// The stored playlists' names (MPD's `listplaylists`).
    public var names: [String]
    /// The library's standard smart playlists (Recently Added, Most Played, Top Rated, Never
    /// Played, computed now) with how many of their songs lie in the music folders; nil when the
    /// daemon has no library.
    public var smart: [WebSmartPlaylist]?
}

/// A smart playlist as the page lists it; its songs are `GET /api/library/smart?name=NAME`.
public struct WebSmartPlaylist: Codable, Sendable, Hashable {
    public var name: String
    public var songs: Int
}

/// An output of the daemon (`GET /api/outputs`).
public struct WebOutput: Codable, Sendable, Hashable {
    public var id: Int
    public var name: String
    public var enabled: Bool
}

public struct WebOutputs: Codable, Sendable, Hashable {
    public var type = "outputs"
    public var outputs: [WebOutput]
    /// The player's equalizer preset (the outputs' `equalizer` attribute), nil without one.
    public var equalizer: String?
    /// The presets it can take.
    public var presets: [String] = []
    /// The system volume of the sound device played to, 0–100, and whether it is muted (nil:
    /// the daemon plays to no sound server, or it does not answer).
    public var systemVolume: Int?
    public var systemMuted: Bool?
}

/// Why a library request failed: the HTTP status and the message sent as `{"error": …}`.
public struct WebLibraryError: Error, Sendable, Hashable, CustomStringConvertible {
    public let status: Int
    public let description: String
    public init(_ status: Int, _ d: String) {
        self.status = status
        description = d
    }
}

extension WebAnswer {
    /// The songs of a database answer (`find`): each starts at its `file:` line; the first of
    /// a repeated tag names it. Disc and track are read for the album's order.
    static func databaseSongs(_ pairs: [(key: String, value: String)]) -> [(uri: String, tags: [String: String])] {
        var out: [(uri: String, tags: [String: String])] = []
        for (k, v) in pairs {
            if k == "file" {
                out.append((v, [:]))
            } else if !out.isEmpty, out[out.count - 1].tags[k] == nil {
                out[out.count - 1].tags[k] = v
            }
        }
        return out
    }

    /// The leading number of `3` or `3/12`.
    static func number(_ s: String?) -> Int {
        guard let s else { return 0 }
        return Int(s.prefix { $0.isNumber }) ?? 0
    }

    /// The outputs of an `outputs` answer.
    public static func outputs(_ text: String) throws(WebCommandFailure) -> WebOutputs {
        var out: [WebOutput] = []
        var equalizer: String?
        for (k, v) in try pairs(text) {
            switch k {
            case "outputid": out.append(WebOutput(id: Int(v) ?? -1, name: "", enabled: false))
            case "outputname" where !out.isEmpty: out[out.count - 1].name = v
            case "outputenabled" where !out.isEmpty: out[out.count - 1].enabled = v == "1"
            case "attribute" where v.hasPrefix("equalizer=") && equalizer == nil: equalizer = String(v.dropFirst("equalizer=".count))
            default: break
            }
        }
        return WebOutputs(outputs: out, equalizer: equalizer)
    }

    /// The names of a `listplaylists` answer.
    public static func playlists(_ text: String) throws(WebCommandFailure) -> WebPlaylists {
        WebPlaylists(names: try pairs(text).filter { $0.key == "playlist" }.map(\.value))
    }
}

/// The library half of the web remote: browsing goes through the daemon's one command layer
/// (`list`, `find` — MPD's database, which holds the music folders' songs and nothing else);
/// search is the library's own full-text search (``MediaQuery/search(_:)``: folded words, CJK
/// from any part, Chinese from its pinyin, as `tonearm pick` finds them), its hits kept only
/// when they lie in the music folders. Songs are named by library id; a song's URI is found
/// from its id when it is added (``uri(ofSong:)``), and cover art is read by id.
struct WebLibrary: Sendable {
    let responder: MPDLibraryResponder

    var library: MediaLibrary { responder.library }

    /// The URI (in the music folders) of the library's song `id`.
    /// - Throws: 404 when the library has no such song or it lies outside the music folders.
    func uri(ofSong id: UInt64) throws(WebLibraryError) -> String {
        let item: MediaItem?
        do { item = try library.item(persistentID: id) } catch { throw WebLibraryError(500, "\(error)") }
        guard let item else { throw WebLibraryError(404, "the library has no song \(id)") }
        guard let uri = responder.uri(forFilePath: item.path), responder.filePath(forURI: uri) != nil else {
            throw WebLibraryError(404, "song \(id) is not in the music folders")
        }
        return uri
    }

    /// Library ids of the database's songs (by URI), as the page names them.
    func songs(_ found: [(uri: String, tags: [String: String])]) throws(WebLibraryError) -> [WebLibrarySong] {
        try identified(found).map(\.song)
    }

    /// ``songs(_:)`` with each song's tags (the songs the library has no id for left out).
    func identified(_ found: [(uri: String, tags: [String: String])]) throws(WebLibraryError) -> [(song: WebLibrarySong, tags: [String: String])] {
        let paths = found.map { responder.folders.path(forURI: $0.uri) }
        let usage: [String: ItemUsage]
        do { usage = try library.usage(forPaths: paths) } catch { throw WebLibraryError(500, "\(error)") }
        return zip(found, paths).compactMap { song, path in
            guard let u = usage[path] else { return nil }
            let t = song.tags
            return (WebLibrarySong(id: String(u.persistentID), title: WebAnswer.title(file: song.uri, fields: t), artist: t["Artist"] ?? t["AlbumArtist"] ?? "",
                                   album: t["Album"] ?? "", duration: t["duration"].flatMap(Double.init) ?? t["Time"].flatMap(Double.init),
                                   rating: u.rating, plays: u.playCount), t)
        }
    }

    /// The full-text search's songs in the music folders (at most `limit`).
    func search(_ text: String, limit: Int = 200) throws(WebLibraryError) -> [WebLibrarySong] {
        let items: [MediaItem]
        do { items = try MediaQuery.search(text).items(in: library) } catch { throw WebLibraryError(500, "\(error)") }
        return songs(items, limit: limit)
    }

    /// The library's standard smart playlists (``MediaLibrary/standardSmartPlaylists()``: those
    /// no playlist of the library's own hides), each with its songs in the music folders, in
    /// the playlist's order.
    func smartPlaylists() throws(WebLibraryError) -> [(name: String, songs: [WebLibrarySong])] {
        do { return try library.standardSmartPlaylists().map { ($0.playlist.name, songs($0.items)) } } catch {
            throw WebLibraryError(500, "\(error)")
        }
    }

    /// The songs of the smart playlist called `name` (as ``smartPlaylists()`` names it).
    /// - Throws: 404 when there is none of that name.
    func smartPlaylist(named name: String) throws(WebLibraryError) -> [WebLibrarySong] {
        guard let found = try smartPlaylists().first(where: { $0.name == name }) else {
            throw WebLibraryError(404, "no smart playlist \"\(name)\" (known: \(SmartPlaylist.standard.map(\.name).joined(separator: ", ")))")
        }
        return found.songs
    }

    /// `items` that lie in the music folders, as the page shows songs (at most `limit`).
    private func songs(_ items: [MediaItem], limit: Int = .max) -> [WebLibrarySong] {
        var out: [WebLibrarySong] = []
        for item in items where out.count < limit && responder.uri(forFilePath: item.path) != nil {
            out.append(WebLibrarySong(id: String(item.persistentID), title: item.title, artist: item.artist ?? item.albumArtist ?? "",
                                      album: item.albumTitle ?? "", duration: item.duration > 0 ? item.duration : nil,
                                      rating: item.rating, plays: item.playCount))
        }
        return out
    }

    /// The cover of song `id`: the picture in its tags, else the cover file of its folder (as
    /// MPD's `albumart` finds it); its bytes and type.
    /// - Throws: 404 when there is no such song in the music folders, or no cover.
    func cover(ofSong id: UInt64) throws(WebLibraryError) -> (data: [UInt8], type: String) {
        let uri = try uri(ofSong: id)
        do {
            if let item = try library.item(persistentID: id), let artwork = try library.artwork(for: item) {
                return (artwork.data, artwork.mimeType)
            }
        } catch {
            throw WebLibraryError(500, "\(error)")
        }
        if let answer = try? responder.picture(command: "albumart", arguments: [uri, "0"], binaryLimit: 1 << 26), !answer.data.isEmpty {
            return (answer.data, Self.imageType(answer.data))
        }
        throw WebLibraryError(404, "song \(id) has no cover")
    }

    /// The type of a cover file, from its first bytes.
    static func imageType(_ data: [UInt8]) -> String {
        if data.starts(with: [0x89, 0x50, 0x4e, 0x47]) { return "image/png" }
        if data.starts(with: [0xff, 0xd8]) { return "image/jpeg" }
        if data.starts(with: [0x42, 0x4d]) { return "image/bmp" }
        if data.starts(with: [0x49, 0x49, 0x2a, 0]) || data.starts(with: [0x4d, 0x4d, 0, 0x2a]) { return "image/tiff" }
        return "application/octet-stream"
    }
}
