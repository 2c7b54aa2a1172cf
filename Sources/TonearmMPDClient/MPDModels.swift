// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmMPDProtocol

/// `status` read into types (the fields a player shows; the rest in ``fields``).
public struct MPDStatus: Sendable, Hashable {
    public enum State: String, Sendable, Hashable { case play, pause, stop }

    public var state: State
    /// 0–100; nil when the server has no mixer (`volume: -1` or none).
    public var volume: Int?
    public var repeatMode: Bool
    public var random: Bool
    /// `0`, `1` or `oneshot`.
    public var single: String
    /// `0`, `1` or `oneshot`.
    public var consume: String
    public var playlistVersion: UInt64
    public var playlistLength: Int
    /// The current song's place in the queue (0-based) and id.
    public var song: Int?
    public var songID: Int?
    public var nextSong: Int?
    /// Seconds into the current song and its length.
    public var elapsed: Double?
    public var duration: Double?
    /// `time: E:T` in whole seconds (what mpc shows).
    public var timeElapsed: Int?
    public var timeTotal: Int?
    public var bitrate: Int?
    /// `44100:16:2`.
    public var audioFormat: String?
    public var error: String?
    public var updatingDB: Int?
    /// Every field as sent.
    public var fields: [MPDPair]

    public init(_ reply: MPDReply) {
        fields = reply.pairs
        state = State(rawValue: reply["state"] ?? "stop") ?? .stop
        volume = reply["volume"].flatMap { Int($0) }.flatMap { $0 >= 0 ? $0 : nil }
        repeatMode = reply["repeat"] == "1"
        random = reply["random"] == "1"
        single = reply["single"] ?? "0"
        consume = reply["consume"] ?? "0"
        playlistVersion = reply["playlist"].flatMap { UInt64($0) } ?? 0
        playlistLength = reply["playlistlength"].flatMap { Int($0) } ?? 0
        song = reply["song"].flatMap { Int($0) }
        songID = reply["songid"].flatMap { Int($0) }
        nextSong = reply["nextsong"].flatMap { Int($0) }
        // `time: 5:20` (whole seconds) in older servers; `elapsed`/`duration` in 0.20+.
        let time = reply["time"]?.split(separator: ":").compactMap { Double($0) }
        elapsed = reply["elapsed"].flatMap { Double($0) } ?? time?.first
        duration = reply["duration"].flatMap { Double($0) } ?? (time?.count == 2 ? time?[1] : nil)
        let whole = reply["time"]?.split(separator: ":").compactMap { Int($0) }
        timeElapsed = whole?.count == 2 ? whole?[0] : nil
        timeTotal = whole?.count == 2 ? whole?[1] : nil
        bitrate = reply["bitrate"].flatMap { Int($0) }
        audioFormat = reply["audio"]
        error = reply["error"]
        updatingDB = reply["updating_db"].flatMap { Int($0) }
    }
}

/// A song as `currentsong`, `playlistinfo`, `search` send it: its URI, tags, and where it is in
/// the queue.
public struct MPDSong: Sendable, Hashable {
    /// The URI (relative to the music folder) or the absolute path or URL.
    public var file: String
    /// Every tag, in the order sent (a tag may repeat: several artists).
    public var tags: [MPDPair]
    public var position: Int?
    public var id: Int?
    /// Seconds (`duration`, or `Time`).
    public var duration: Double?
    /// MPD's `Format` (`44100:16:2`), when sent.
    public var format: String?
    /// MPD's `Last-Modified` (`2026-11-28T10:22:41Z`), when sent.
    public var lastModified: String?
    /// The queue priority (`Prio`; 0 when not sent).
    public var priority: Int

    public init?(_ pairs: [MPDPair]) {
        guard let first = pairs.first, first.key == "file" else { return nil }
        file = first.value
        let rest = MPDReply(pairs: Array(pairs.dropFirst()))
        tags = rest.pairs.filter { !["pos", "id", "duration", "time", "last-modified", "format", "prio", "added"].contains($0.key.lowercased()) }
        position = rest["Pos"].flatMap { Int($0) }
        id = rest["Id"].flatMap { Int($0) }
        duration = rest["duration"].flatMap { Double($0) } ?? rest["Time"].flatMap { Double($0) }
        format = rest["Format"]
        lastModified = rest["Last-Modified"]
        priority = rest["Prio"].flatMap { Int($0) } ?? 0
    }

    /// The first value of a tag (`Title`, `Artist`, `Album`…; without case).
    public func tag(_ name: String) -> String? { tags.first { $0.key.lowercased() == name.lowercased() }?.value }

    public var title: String? { tag("Title") }
    public var artist: String? { tag("Artist") }
    public var album: String? { tag("Album") }
    /// A stream's station name.
    public var name: String? { tag("Name") }

    /// The songs of an answer (one per `file:` line; directories and playlists are skipped).
    public static func list(_ reply: MPDReply) -> [MPDSong] {
        reply.records(startingWith: ["file", "directory", "playlist"]).compactMap { MPDSong($0) }
    }
}

/// An audio output as `outputs` lists it.
public struct MPDOutput: Sendable, Hashable {
    public var id: Int
    public var name: String
    public var plugin: String?
    public var isEnabled: Bool
    /// Its `attribute:` lines, each `NAME=VALUE` (a pipe's path, the daemon's equalizer).
    public var attributes: [String] = []

    public static func list(_ reply: MPDReply) -> [MPDOutput] {
        reply.records(startingWith: ["outputid"]).compactMap { pairs in
            let r = MPDReply(pairs: pairs)
            guard let id = r["outputid"].flatMap({ Int($0) }) else { return nil }
            return MPDOutput(id: id, name: r["outputname"] ?? "", plugin: r["plugin"], isEnabled: r["outputenabled"] == "1",
                             attributes: r.values(of: "attribute"))
        }
    }
}

extension MPDClient {
    /// `status`.
    public func status() async throws(MPDClientError) -> MPDStatus { MPDStatus(try await send("status")) }

    /// `currentsong` (nil when there is none).
    public func currentSong() async throws(MPDClientError) -> MPDSong? { MPDSong.list(try await send("currentsong")).first }

    /// `playlistinfo`: the queue.
    public func queue() async throws(MPDClientError) -> [MPDSong] { MPDSong.list(try await send("playlistinfo")) }

    /// `outputs`.
    public func outputs() async throws(MPDClientError) -> [MPDOutput] { MPDOutput.list(try await send("outputs")) }

    /// `addid URI [POSITION]`: the new entry's id.
    public func addID(_ uri: String, at position: Int? = nil) async throws(MPDClientError) -> Int {
        let reply = try await send("addid", arguments: [uri] + (position.map { [String($0)] } ?? []))
        guard let id = reply["Id"].flatMap({ Int($0) }) else { throw .protocolError(address, "addid answered no Id") }
        return id
    }
}
