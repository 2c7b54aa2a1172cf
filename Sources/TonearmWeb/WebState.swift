// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// One song as the page shows it: no file path (the web API never names one), only tags, the
/// queue id and position. A song without a title is named by its file name (the last part of
/// its URI, without the extension), never by its folder.
public struct WebSong: Codable, Sendable, Hashable {
    public var id: Int
    public var pos: Int
    public var title: String
    public var artist: String
    public var album: String
    /// Seconds; nil when not known (a stream).
    public var duration: Double?
    /// The library id of the song (its cover is `/api/cover/ID`); nil when it is not a song of
    /// the library.
    public var cover: String?
}

/// The player's state as the page shows it (MPD's `status` and `currentsong`, as JSON).
public struct WebPlayerState: Codable, Sendable, Hashable {
    public var type = "state"
    /// `play`, `pause` or `stop`.
    public var state: String
    /// 0…100; nil when there is no volume to set.
    public var volume: Int?
    public var `repeat`: Bool
    public var random: Bool
    /// Seconds of crossfade between songs (MPD's `xfade`; 0: none).
    public var crossfade = 0
    /// Seconds into the song (at the time of the answer).
    public var elapsed: Double?
    public var duration: Double?
    /// The parts of a stream that have arrived, `[start, end]` in seconds of the song (a seek
    /// bar's buffered part); nil for a file (all of it is there) or a stream of unknown length.
    public var buffered: [[Double]]?
    /// The queue's version (MPD's `playlist`): a page asks for the queue when it changes.
    public var queueVersion: Int
    public var queueLength: Int
    public var song: WebSong?
}

/// The queue as the page shows it.
public struct WebQueue: Codable, Sendable, Hashable {
    public var type = "queue"
    public var songs: [WebSong]
}

/// An MPD answer that ended in `ACK` (or was not an answer at all).
public struct WebCommandFailure: Error, Sendable, Hashable, CustomStringConvertible {
    public let description: String
    public init(_ d: String) { description = d }
}

/// Reads the daemon's MPD answers (`key: value` lines ending in `OK`) into the page's state.
/// Pure: text in, values out.
public enum WebAnswer {
    /// The `key: value` pairs of an answer in order, or the `ACK` line as a failure.
    public static func pairs(_ text: String) throws(WebCommandFailure) -> [(key: String, value: String)] {
        var out: [(key: String, value: String)] = []
        var ended = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line == "OK" || line == "list_OK" {
                ended = true
                continue
            }
            if line.hasPrefix("ACK ") { throw WebCommandFailure(String(line)) }
            guard let colon = line.firstIndex(of: ":") else { throw WebCommandFailure("unexpected line in the daemon's answer: \(line)") }
            var value = line[line.index(after: colon)...]
            if value.first == " " { value = value.dropFirst() }
            out.append((String(line[..<colon]), String(value)))
        }
        guard ended else { throw WebCommandFailure("the daemon's answer did not end in OK") }
        return out
    }

    /// Songs of a `playlistinfo` or `currentsong` answer (each starts at its `file:` line).
    public static func songs(_ pairs: [(key: String, value: String)]) -> [WebSong] {
        var songs: [WebSong] = []
        var current: [String: String]?
        func flush() {
            if let c = current, let s = song(c) { songs.append(s) }
        }
        for (k, v) in pairs {
            if k == "file" {
                flush()
                current = [:]
            }
            // The first of a repeated tag (several Artist lines) names the song.
            if current?[k] == nil { current?[k] = v }
        }
        flush()
        return songs
    }

    static func song(_ fields: [String: String]) -> WebSong? {
        guard let id = fields["Id"].flatMap(Int.init), let pos = fields["Pos"].flatMap(Int.init) else { return nil }
        return WebSong(id: id, pos: pos, title: title(file: fields["file"] ?? "", fields: fields), artist: fields["Artist"] ?? fields["AlbumArtist"] ?? "", album: fields["Album"] ?? "",
                       duration: fields["duration"].flatMap(Double.init) ?? fields["Time"].flatMap(Double.init))
    }

    /// A song's title: its tag, else a stream's name, else its file name without the extension
    /// (a stream's: the last part of its URL's path, without the query, percent-decoded).
    static func title(file: String, fields: [String: String]) -> String {
        var path = Substring(file)
        if file.contains("://"), let end = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<end] }
        var name = path.split(separator: "/").last.map(String.init) ?? ""
        if file.contains("://") { name = name.removingPercentEncoding ?? name }
        if let dot = name.lastIndex(of: "."), dot != name.startIndex, !file.contains("://") { name = String(name[..<dot]) }
        return fields["Title"].flatMap { $0.isEmpty ? nil : $0 } ?? fields["Name"] ?? name
    }

    /// The state from a `status` answer and a `currentsong` answer.
    public static func state(status: String, current: String) throws(WebCommandFailure) -> WebPlayerState {
        var s: [String: String] = [:]
        for (k, v) in try pairs(status) where s[k] == nil { s[k] = v }
        let volume = s["volume"].flatMap(Int.init)
        return WebPlayerState(state: s["state"] ?? "stop", volume: volume.flatMap { $0 < 0 ? nil : $0 },
                              repeat: s["repeat"] == "1", random: s["random"] == "1", crossfade: s["xfade"].flatMap(Int.init) ?? 0,
                              elapsed: s["elapsed"].flatMap(Double.init), duration: s["duration"].flatMap(Double.init),
                              queueVersion: s["playlist"].flatMap(Int.init) ?? 0, queueLength: s["playlistlength"].flatMap(Int.init) ?? 0,
                              song: songs(try pairs(current)).first)
    }

    /// The queue from a `playlistinfo` answer.
    public static func queue(_ playlistinfo: String) throws(WebCommandFailure) -> WebQueue {
        WebQueue(songs: songs(try pairs(playlistinfo)))
    }
}
