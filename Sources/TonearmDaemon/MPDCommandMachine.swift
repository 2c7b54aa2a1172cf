// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore
import TonearmMPDProtocol

/// MPD's idle subsystems (`idle` arguments and `changed:` values).
public enum MPDSubsystem: String, Sendable, Hashable, CaseIterable {
    case database, update, storedPlaylist = "stored_playlist", playlist, player, mixer, output, options, partition,
         sticker, subscription, message, neighbor, mount
}

/// What the command layer knows about the connection a command came on.
public struct MPDClientContext: Sendable, Hashable {
    /// On the Unix socket (may add local files), not TCP.
    public var isLocal: Bool
    /// The tags sent in song answers (`tagtypes`).
    public var tagTypes: Set<MPDTag> = Set(MPDTag.allCases)
    public var binaryLimit = 8192
    /// What the connection may do (``MPDAccess``; `password` changes it).
    public var permissions: MPDPermissions
    /// The connection's number (its channels and messages: `subscribe`, `readmessages`); 0
    /// for one that takes no part in them.
    public var connection: UInt64 = 0

    public init(isLocal: Bool, permissions: MPDPermissions = .all) {
        self.isLocal = isLocal
        self.permissions = permissions
    }
}

/// One of the daemon's audio outputs as `outputs` shows it (its id is its place in the list).
public struct MPDOutput: Sendable, Hashable {
    public var name: String
    public var plugin: String
    /// `attribute:` lines, as `NAME=VALUE`.
    public var attributes: [String]

    public init(name: String, plugin: String, attributes: [String] = []) {
        self.name = name
        self.plugin = plugin
        self.attributes = attributes
    }
}

/// A song of the queue as MPD shows it: its URI as added, the file or address played, tags.
public struct MPDSong: Sendable, Hashable {
    /// What `file:` says (the URI the client added).
    public var uri: String
    /// The local path or the http(s) address played.
    public var location: String
    public var tags: [(MPDTag, String)]
    public var duration: Double?
    public var format: MPDAudioFormat?
    /// When the file was last changed (seconds since 1970; MPD's `Last-Modified`), nil for streams.
    public var lastModified: Int64?

    public init(uri: String, location: String, tags: [(MPDTag, String)] = [], duration: Double? = nil,
                format: MPDAudioFormat? = nil, lastModified: Int64? = nil) {
        self.uri = uri
        self.location = location
        self.tags = tags
        self.duration = duration
        self.format = format
        self.lastModified = lastModified
    }

    public static func == (a: MPDSong, b: MPDSong) -> Bool {
        a.uri == b.uri && a.location == b.location && a.duration == b.duration && a.format == b.format && a.lastModified == b.lastModified
            && a.tags.map(\.0) == b.tags.map(\.0) && a.tags.map(\.1) == b.tags.map(\.1)
    }

    public func hash(into h: inout Hasher) {
        h.combine(uri)
        h.combine(location)
    }
}

/// The player as the command layer sees it when a command arrives (read from the player).
public struct MPDPlayerSnapshot: Sendable, Hashable {
    public enum State: String, Sendable, Hashable { case play, pause, stop }
    public var state: State
    /// Queue position of the current song (nil: none).
    public var position: Int?
    public var elapsed: Double
    public var duration: Double?
    /// Queue position of the song the player plays next in its own order (random mode's
    /// `nextsong`; nil: none, or not known).
    public var next: Int?
    /// Queue position of the first song of the player's order (random mode: where `play`
    /// starts when there is no current song).
    public var first: Int?
    /// The current song's place in the player's shuffled order (random mode; nil otherwise).
    public var orderPosition: Int?

    public init(state: State = .stop, position: Int? = nil, elapsed: Double = 0, duration: Double? = nil, next: Int? = nil,
                first: Int? = nil, orderPosition: Int? = nil) {
        self.orderPosition = orderPosition
        self.state = state
        self.position = position
        self.elapsed = elapsed
        self.duration = duration
        self.next = next
        self.first = first
    }
}

/// What the daemon does to its player for a command, in order.
public enum MPDPlayerAction: Sendable, Hashable {
    case insert(MPDSong, at: Int)
    case remove(at: Int)
    case move(from: Int, to: Int)
    case clear
    /// Play the song at `position` from `seconds` (nil position: resume or start the current one).
    case play(position: Int?, seconds: Double?)
    case pause
    case stop
    case next
    case previous
    /// Seek in the current song.
    case seek(Double)
    case volume(Int)
    case repeatMode(repeat: Bool, single: Bool)
    case random(Bool)
    case crossfade(Int)
    /// Update the database (`update`/`rescan`): the folder or song `uri` ("" for all), as job
    /// `job`; the daemon runs the jobs one after another and reports each end with
    /// ``MPDCommandMachine/updateFinished(job:changed:)``.
    case update(job: Int, uri: String, rescan: Bool)
    /// Output `id` enabled or disabled (`enableoutput`…); with every output disabled, what
    /// plays pauses.
    case output(id: Int, enabled: Bool)
    /// ReplayGain levelling: `off`, `track` or `album` (MPD's `auto` resolved by the machine).
    case replayGain(String)
    /// The player's equalizer takes the preset of this name (`outputset N equalizer NAME`).
    case equalizer(String)
    /// The songs at `positions` get priority `priority` (`prio`): in random mode the player
    /// plays higher ones first. `afterCurrent` false: the queue has no current song yet.
    case priority(UInt8, positions: [Int], afterCurrent: Bool)
    /// The song at `at` plays only its part `range` (`rangeid`; nil: all of it).
    case range(at: Int, PlaybackRange?)
}

/// What a command gave: the text of its answer (without `OK`), what the player is to do, and
/// the subsystems it changed.
public struct MPDOutcome: Sendable, Hashable {
    public var response = ""
    /// The start of the text answer as bytes (the long song listings), before ``response``:
    /// the answer is these bytes followed by ``response``.
    public var bytes: [UInt8] = []
    /// The whole text answer: ``bytes`` then ``response``.
    public var text: String { String(decoding: bytes, as: UTF8.self) + response }
    /// The raw bytes of a binary answer (`albumart`, `readpicture`), sent after ``response``
    /// (which ends with `binary: N`) and followed by a newline; nil for a text answer.
    public var binary: [UInt8]?
    public var actions: [MPDPlayerAction] = []
    public var changed: Set<MPDSubsystem> = []
    /// The connection's context after the command (`tagtypes`, `binarylimit`).
    public var client: MPDClientContext
    /// Subsystems changed for some connections only (`message` for those a message was sent to).
    public var notify: [UInt64: Set<MPDSubsystem>] = [:]
    /// `kill`: the daemon is to stop (the connection ends without an answer).
    public var kill = false

    public init(client: MPDClientContext) { self.client = client }
}

/// The database commands' seam: the library's responder (another module) answers these names.
/// Called on the daemon's command queue.
public protocol MPDDatabaseResponder: Sendable {
    /// The database commands it answers (a subset of ``MPDCommandMachine/databaseCommands``);
    /// the others answer `ACK [5@0]` unknown command and are not listed by `commands`.
    var commands: Set<String> { get }
    /// The answer's body without the final `OK`; `tagTypes` are the connection's (`tagtypes`).
    func respond(command: String, arguments: [String], tagTypes: Set<MPDTag>) throws(MPDAck) -> String
    /// The URIs of the songs `find`-style arguments select (`sort` and `window` included), in
    /// the order they are added: `findadd`, `searchadd` (`command` says which; `search…`
    /// ignores case), and the queue's `playlistfind`/`playlistsearch`.
    func songURIs(filterArguments: [String], command: String) throws(MPDAck) -> [String]
    /// The URIs of the stored playlist `name` in its order (`load`).
    /// - Throws: `ACK [50@0] {load} No such playlist`.
    func playlistURIs(named name: String, command: String) throws(MPDAck) -> [String]
    /// The URIs of the songs at or under `uri` (a song, or a folder: `add DIR`), in database
    /// order. - Throws: `ACK [50@0]` when it names neither.
    func songURIs(under uri: String, command: String) throws(MPDAck) -> [String]
    /// Saves `uris` as a new stored playlist (`save`).
    /// - Throws: `ACK [56@0] {save} Playlist already exists`, `ACK [2@0] {save} Bad playlist name`.
    func savePlaylist(named name: String, uris: [String], command: String) throws(MPDAck)
    /// The database lines of `stats` (`artists` … `db_update`), each ending with a newline.
    func databaseStats() -> String
    /// `albumart URI OFFSET` or `readpicture URI OFFSET`: the lines before the picture's bytes
    /// (`size: …`, `type: …`, `binary: N`; empty when the song has no picture: MPD then
    /// answers `OK` alone) and at most `binaryLimit` bytes from OFFSET.
    /// - Throws: MPD's ACKs ("No file exists", "No such song", "Bad file offset"…).
    func picture(command: String, arguments: [String], binaryLimit: Int) throws(MPDAck) -> (header: String, data: [UInt8])
    /// The URI of the local file or folder at the absolute `path` when it lies inside the music
    /// folder (not the folder itself), else nil: MPD adds such a path as the database's URI.
    func uri(forLocalPath path: String) -> String?
    /// The file of the database's song at `uri`, else nil.
    func localPath(forURI uri: String) -> String?
    /// The library's persistentID of the database's song whose file is `path`, else nil: the
    /// queue's items carry it, so that what counts plays finds the song.
    func persistentID(forLocalPath path: String) -> UInt64?
}

extension MPDDatabaseResponder {
    public func songURIs(filterArguments: [String], command: String) throws(MPDAck) -> [String] {
        throw MPDAck(.unknown, "unknown command \"\(command)\"")
    }

    public func playlistURIs(named name: String, command: String) throws(MPDAck) -> [String] {
        throw MPDAck(.unknown, "unknown command \"\(command)\"")
    }

    public func songURIs(under uri: String, command: String) throws(MPDAck) -> [String] {
        throw MPDAck(.noExist, "No such directory", command: command)
    }

    public func savePlaylist(named name: String, uris: [String], command: String) throws(MPDAck) {
        throw MPDAck(.unknown, "unknown command \"\(command)\"")
    }

    public func databaseStats() -> String { "" }

    public func picture(command: String, arguments: [String], binaryLimit: Int) throws(MPDAck) -> (header: String, data: [UInt8]) {
        throw MPDAck(.unknown, "unknown command \"\(command)\"")
    }

    public func uri(forLocalPath path: String) -> String? { nil }

    public func localPath(forURI uri: String) -> String? { nil }

    public func persistentID(forLocalPath path: String) -> UInt64? { nil }
}

/// A batch of the music folders' watch, as the daemon hears of it: it becomes an update job
/// (MPD's inotify enqueues one), shown in `status` while it runs.
public enum MPDWatchBatch: Sendable, Hashable {
    /// A batch of changes is being read into the database.
    case started
    /// It ended (`changed`: the database changed; read again before this is sent). Also sent
    /// without `started` for the watch's first look at the folders (no job: the daemon is
    /// starting).
    case finished(changed: Bool)
}

/// A database that can be updated (`update`, `rescan`) and watched: the library's, in the
/// daemon. The daemon calls ``update(uri:rescan:)`` for one job at a time, off its command queue.
public protocol MPDDatabaseUpdater: Sendable {
    /// Scans the folder or song `uri` of the music folder ("" for all; one that does not exist
    /// changes nothing), then reads the database again. True when the database changed.
    func update(uri: String, rescan: Bool) async -> Bool
    /// Watches the music folders until the task is cancelled, calling `batches` when a batch of
    /// files added, written, moved or removed starts being read and when it ends. Throws when a
    /// folder cannot be watched (or stops being watchable).
    func watchFolders(batches: @escaping @Sendable (MPDWatchBatch) -> Void) async throws
}

/// The daemon's command layer as a state machine: requests in (with the player as it is now),
/// an ``MPDOutcome`` out — the answer, the player actions, the changed subsystems. It owns the
/// MPD view of the queue: the songs with their ids, the playlist version (`plchanges`), the
/// modes and the volume. No I/O, no threads; ``MPDDaemon`` carries the actions out on the
/// player and resolves URIs before they get here.
public struct MPDCommandMachine: Sendable {
    public struct Entry: Sendable, Hashable {
        public var id: Int
        public var song: MPDSong
        /// The playlist version in which this position last changed.
        public var version: UInt32
        /// `prio`: 0…255 (MPD plays higher ones first in random mode).
        public var priority: UInt8 = 0
        /// `rangeid`: the part of the song to play, in milliseconds (0: from the start, to the end).
        public var rangeStart: UInt32 = 0
        public var rangeEnd: UInt32 = 0

        /// The part to play in seconds; nil when it is the whole song.
        public var playbackRange: PlaybackRange? {
            rangeStart == 0 && rangeEnd == 0 ? nil
                : PlaybackRange(start: Double(rangeStart) / 1000, end: rangeEnd > 0 ? Double(rangeEnd) / 1000 : nil)
        }
    }

    public private(set) var entries: [Entry] = []
    public private(set) var version: UInt32 = 1
    private var nextID = 1
    public private(set) var volume = 100
    public private(set) var isRepeat = false
    public private(set) var isRandom = false
    public private(set) var single: MPDArguments.SingleMode = .off
    public private(set) var consume = false
    public private(set) var crossfade = 0
    public private(set) var replayGainMode = MPDArguments.ReplayGainMode.off
    /// Whether the queue has a current song while stopped, as MPD has one: from the first
    /// `play` (or a restored state) until `clear` or the current song's deletion. The player
    /// keeps an index from the first song added; MPD's status shows none until then.
    public private(set) var hasCurrent = false
    public private(set) var error: String?
    /// The outputs (`outputs`; the id is the index) and whether each is enabled.
    public var outputs = [MPDOutput(name: "default", plugin: "tonearm")] {
        didSet { enabledOutputs = outputs.indices.map { $0 < enabledOutputs.count ? enabledOutputs[$0] : true } }
    }
    public private(set) var enabledOutputs = [true]
    /// Output 0.
    public var output: MPDOutput {
        get { outputs[0] }
        set { outputs[0] = newValue }
    }
    /// Whether any output is enabled (with none, nothing plays).
    public var outputEnabled: Bool { enabledOutputs.contains(true) }
    /// Sets which outputs are enabled, by name (a saved state; names not listed keep theirs).
    public mutating func restoreOutputs(_ enabled: [String: Bool]) {
        for (i, o) in outputs.enumerated() { if let e = enabled[o.name] { enabledOutputs[i] = e } }
    }
    /// MPD's error when the player is to play with every output disabled.
    static let noOutput = "All audio outputs are disabled"
    /// Update jobs asked for and not finished, in order (the first runs): `updating_db`.
    public private(set) var updateJobs: [Int] = []
    private var lastUpdateJob = 0
    /// MPD's largest job number (then it starts again at 1) and its queue's length.
    static let maxUpdateJob = 1 << 15
    static let maxUpdateQueue = 32
    /// The largest `binarylimit` MPD 0.23 takes (a larger one: "Number too large").
    static let maxBinaryLimit: Int64 = (8 << 20) + (16 << 10) - (4 << 10)
    /// Commands the database responder answers (``MPDDatabaseResponder``).
    public static let databaseCommands: Set<String> = [
        "lsinfo", "listall", "listallinfo", "listfiles", "find", "search", "findadd", "searchadd", "searchaddpl",
        "list", "count", "update", "rescan", "albumart", "readpicture", "getfingerprint",
        "listplaylists", "listplaylist", "listplaylistinfo", "load", "save", "rm", "rename", "playlistadd",
        "playlistclear", "playlistdelete", "playlistmove", "sticker",
    ]
    /// The database commands that change a stored playlist (idle `stored_playlist` after them).
    public static let storedPlaylistCommands: Set<String> = [
        "save", "rm", "rename", "playlistadd", "playlistclear", "playlistdelete", "playlistmove", "searchaddpl",
    ]
    /// Database commands carried out here, on the queue, with the database's songs
    /// (``MPDDatabaseResponder/songURIs(filterArguments:command:)`` and the stored playlists);
    /// answered when the database lists them in its ``MPDDatabaseResponder/commands``.
    public static let queueDatabaseCommands: Set<String> = [
        "findadd", "searchadd", "load", "save", "playlistfind", "playlistsearch",
    ]
    /// The commands this layer answers itself (with the connection's and the database's).
    public static let implemented: Set<String> = [
        "ping", "close", "idle", "noidle", "commands", "notcommands", "tagtypes", "urlhandlers", "decoders", "binarylimit",
        "status", "currentsong", "stats", "clearerror", "play", "playid", "pause", "stop", "next", "previous", "seek",
        "seekid", "seekcur", "setvol", "getvol", "volume", "repeat", "random", "single", "consume", "crossfade",
        "add", "addid", "delete", "deleteid", "clear", "move", "moveid", "playlistinfo", "playlistid", "playlist",
        "plchanges", "plchangesposid", "shuffle", "swap", "swapid", "replay_gain_status", "outputs",
        "enableoutput", "disableoutput", "toggleoutput", "outputset", "password", "replay_gain_mode", "prio", "prioid",
        "channels", "subscribe", "unsubscribe", "sendmessage", "readmessages", "listpartitions", "partition",
        "newpartition", "delpartition", "listmounts", "mixrampdb", "mixrampdelay", "config", "kill", "addtagid", "cleartagid",
        "rangeid", "readcomments",
    ]
    /// MPD's limits: channels a connection may subscribe to, messages waiting for it.
    static let maxSubscriptions = 16
    static let maxMessages = 64
    /// Each connection's channels (`subscribe`) and its unread messages (`readmessages`).
    public private(set) var subscriptions: [UInt64: Set<String>] = [:]
    private var mailboxes: [UInt64: [(channel: String, text: String)]] = [:]
    /// `mixrampdb` and `mixrampdelay` (MPD keeps them as floats; a delay of 0 or less is off).
    public private(set) var mixRampDB: Float = 0
    public private(set) var mixRampDelay: Float = -1
    /// The music folder `config` shows to local clients (nil: none), and `listmounts`' root.
    public var musicDirectory: String?
    /// The equalizer's presets (their names; empty: no equalizer). The daemon's one equalizer
    /// acts before every output: each output shows it as its `equalizer` attribute, and
    /// `outputset N equalizer NAME` on any of them sets it (MPD has no equalizer; an output
    /// attribute is how MPD clients set a player's option: `mpc outputset 1 equalizer=rock`).
    public var equalizerPresets: [String] = []
    /// The equalizer's preset now.
    public private(set) var equalizer = "flat"

    /// Restores the equalizer's preset a previous daemon saved (one the presets know).
    public mutating func restoreEqualizer(_ name: String) {
        if equalizerPresets.contains(name) { equalizer = name }
    }

    /// The passwords and default permissions (`password`).
    public var access: MPDAccess

    public init(access: MPDAccess = .open) { self.access = access }

    /// Songs of the queue in order.
    public var songs: [MPDSong] { entries.map(\.song) }

    /// Restores what a saved state says (queue, volume, modes).
    public mutating func restore(songs: [MPDSong], volume: Int, isRepeat: Bool, isRandom: Bool, single: MPDArguments.SingleMode,
                                 consume: Bool, crossfade: Int = 0, outputEnabled: Bool = true, priorities: [UInt8]? = nil,
                                 ranges: [PlaybackRange?]? = nil) {
        enabledOutputs = outputs.map { _ in outputEnabled }
        entries = []
        for s in songs { appendEntry(s, at: entries.count) }
        if let priorities, priorities.count == entries.count {
            for i in entries.indices { entries[i].priority = priorities[i] }
        }
        if let ranges, ranges.count == entries.count {
            for (i, r) in ranges.enumerated() {
                guard let r else { continue }
                entries[i].rangeStart = UInt32(clamping: Int64((r.start * 1000).rounded()))
                entries[i].rangeEnd = r.end.map { UInt32(clamping: Int64(($0 * 1000).rounded())) } ?? 0
            }
        }
        self.volume = volume
        self.isRepeat = isRepeat
        self.isRandom = isRandom
        self.single = single
        self.consume = consume
        self.crossfade = crossfade
        hasCurrent = !entries.isEmpty
    }

    // MARK: Events from the player

    /// The player played the song at `position` to its end: with consume on, it leaves the queue.
    public mutating func playedToEnd(position: Int) -> MPDOutcome? {
        guard consume, entries.indices.contains(position) else { return nil }
        var o = MPDOutcome(client: MPDClientContext(isLocal: true))
        removeEntries(position..<(position + 1))
        o.actions = [.remove(at: position)]
        o.changed = [.playlist]
        return o
    }

    /// The song at `position` started playing: as MPD (`playlist::SongStarted`), its priority
    /// goes back to 0 — a new playlist version when it had one — without moving it in the
    /// order. The outcome's action tells the player.
    public mutating func songStarted(position: Int) -> MPDOutcome? {
        guard entries.indices.contains(position), entries[position].priority != 0 else { return nil }
        var o = MPDOutcome(client: MPDClientContext(isLocal: true))
        bump()
        entries[position].priority = 0
        entries[position].version = version
        o.actions = [.priority(0, positions: [position], afterCurrent: true)]
        o.changed = [.playlist]
        return o
    }

    /// The stream at `position` (played from `location`) was opened and carries `tags`: as MPD
    /// does once a stream plays, a song without tags of its own takes them — a new playlist
    /// version in which that position changed (`plchanges` lists it), idle `playlist`. Nothing
    /// when the song has tags already, the tags are none, or the position holds another song now.
    public mutating func streamTagsRead(position: Int, location: String, tags: [(MPDTag, String)]) -> Set<MPDSubsystem> {
        guard !tags.isEmpty, entries.indices.contains(position), entries[position].song.location == location,
              entries[position].song.tags.isEmpty else { return [] }
        bump()
        entries[position].song.tags = tags
        entries[position].version = version
        return [.playlist]
    }

    /// The update job `job` ended (`changed`: the database changed): idle `update`, and
    /// `database` when it changed.
    public mutating func updateFinished(job: Int, changed: Bool) -> Set<MPDSubsystem> {
        guard let i = updateJobs.firstIndex(of: job) else { return [] }
        updateJobs.remove(at: i)
        return changed ? [.update, .database] : [.update]
    }

    /// A batch of the folder watch started: an update job (a number as `update` gives, in
    /// `status` until ``updateFinished(job:changed:)``), idle `update` when no other job runs.
    /// The update queue's limit does not apply (the watch never waits).
    public mutating func watchJobStarted() -> (job: Int, changed: Set<MPDSubsystem>) {
        lastUpdateJob = lastUpdateJob >= Self.maxUpdateJob ? 1 : lastUpdateJob + 1
        updateJobs.append(lastUpdateJob)
        return (lastUpdateJob, updateJobs.count == 1 ? [.update] : [])
    }

    /// The player's volume (0…100) was set by someone else (MPRIS): `mixer` when it differs.
    public mutating func playerVolumeChanged(_ v: Int) -> Set<MPDSubsystem> {
        let v = min(100, max(0, v))
        guard v != volume else { return [] }
        volume = v
        return [.mixer]
    }

    /// The player's repeat mode was set by someone else (MPRIS `LoopStatus`): `repeat` follows,
    /// and `single` too when it says (a repeat of none leaves `single` as it is: MPD's single
    /// without repeat is the player's none). `options` when they differ.
    public mutating func playerRepeatChanged(repeat r: Bool, single s: Bool?) -> Set<MPDSubsystem> {
        // A player repeating one song is MPD's single on or oneshot: oneshot stays oneshot (the
        // player's own echo of an MPD `single oneshot` is no change).
        let newSingle: MPDArguments.SingleMode = switch s {
        case nil: single
        case true?: single == .off ? .on : single
        case false?: .off
        }
        guard r != isRepeat || newSingle != single else { return [] }
        isRepeat = r
        single = newSingle
        return [.options]
    }

    /// The player's shuffle was set by someone else (MPRIS `Shuffle`): `random` follows.
    public mutating func playerRandomChanged(_ on: Bool) -> Set<MPDSubsystem> {
        guard on != isRandom else { return [] }
        isRandom = on
        return [.options]
    }

    /// The connection `connection` ended: its channels and messages go (idle `subscription`
    /// when it had channels).
    public mutating func connectionClosed(_ connection: UInt64) -> Set<MPDSubsystem> {
        mailboxes[connection] = nil
        guard let channels = subscriptions.removeValue(forKey: connection), !channels.isEmpty else { return [] }
        return [.subscription]
    }

    /// MPD's channel names: letters, digits and `_-.:`, not empty.
    static func isValidChannel(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x5F || c == 0x2D || c == 0x2E || c == 0x3A
        }
    }

    /// MPD's partition names: letters, digits, `_` and `-`, not empty.
    static func isValidPartition(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x5F || c == 0x2D
        }
    }

    /// A float as MPD prints it (the shortest form that reads back: `-17`, `0.5`).
    static func shortest(_ f: Float) -> String {
        if f.isFinite, f == f.rounded(), abs(f) < 1e9 { return String(Int(f)) }
        return f.description
    }

    /// The player reported an error (an item that could not be played).
    public mutating func failed(_ message: String) {
        error = message
    }

    // MARK: Requests

    /// Carries out `request` (already checked against ``MPDCommands``). `resolve` turns a URI of
    /// `add`/`addid` into a song (or the ACK why not).
    public mutating func handle(_ request: MPDRequest, client: MPDClientContext, player: MPDPlayerSnapshot,
                                database: (any MPDDatabaseResponder)?,
                                resolve: (String, MPDClientContext) throws(MPDAck) -> MPDSong) throws(MPDAck) -> MPDOutcome {
        var player = player
        if player.state == .stop, !hasCurrent { player.position = nil }
        let out = try handleRequest(request, client: client, player: player, database: database, resolve: resolve)
        if out.actions.contains(where: { if case .play = $0 { true } else { false } }) { hasCurrent = true }
        // MPD: deleting the current song while stopped leaves no current song.
        if player.state == .stop, let p = player.position,
           out.actions.contains(where: { if case .remove(at: p) = $0 { true } else { false } }) || request.command == "clear" {
            hasCurrent = false
        }
        return out
    }

    private mutating func handleRequest(_ request: MPDRequest, client: MPDClientContext, player: MPDPlayerSnapshot,
                                        database: (any MPDDatabaseResponder)?,
                                        resolve: (String, MPDClientContext) throws(MPDAck) -> MPDSong) throws(MPDAck) -> MPDOutcome {
        let name = request.command
        let args = request.arguments
        var out = MPDOutcome(client: client)
        func arg(_ e: MPDArgumentError) -> MPDAck { e.ack(command: name) }
        func integer(_ s: String, min: Int64 = Int64(Int32.min), max: Int64 = Int64(Int32.max)) throws(MPDAck) -> Int {
            do { return Int(try MPDArguments.integer(s, min: min, max: max)) } catch { throw arg(error) }
        }
        func unsigned(_ s: String, max: Int64 = Int64(UInt32.max)) throws(MPDAck) -> Int {
            do { return Int(try MPDArguments.unsigned(s, max: max)) } catch { throw arg(error) }
        }
        func bool(_ s: String) throws(MPDAck) -> Bool {
            do { return try MPDArguments.bool(s) } catch { throw arg(error) }
        }
        func float(_ s: String) throws(MPDAck) -> Double {
            do { return try MPDArguments.float(s) } catch { throw arg(error) }
        }
        func range(_ s: String) throws(MPDAck) -> Range<Int> {
            let r: MPDArguments.Range
            do { r = try MPDArguments.range(s) } catch { throw arg(error) }
            switch r {
            case .all: return 0..<entries.count
            case .span(let start, let end):
                let e = end.map { Int($0) } ?? entries.count
                guard Int(start) <= entries.count, e <= entries.count, Int(start) < e || (Int(start) == e && e == entries.count) else {
                    throw MPDAck(.argument, "Bad song index", command: name)
                }
                return Int(start)..<e
            }
        }
        func position(_ s: String) throws(MPDAck) -> Int {
            let n = try unsigned(s, max: Int64(Int32.max))
            guard n < entries.count else { throw MPDAck(.argument, "Bad song index", command: name) }
            return n
        }
        func index(ofID s: String) throws(MPDAck) -> Int {
            let id = try unsigned(s)
            guard let i = entries.firstIndex(where: { $0.id == id }) else { throw MPDAck(.noExist, "No such song", command: name) }
            return i
        }
        func changeOptions() { out.changed.insert(.options) }

        if name == "update" || name == "rescan" {
            guard database is any MPDDatabaseUpdater else { throw MPDAck(.unknown, "unknown command \"\(name)\"") }
            var uri = args.first ?? ""
            while uri.hasSuffix("/") { uri.removeLast() }
            // MPD's uri_safe_local: relative, without "." or ".." parts.
            guard !uri.hasPrefix("/"), !(args.first ?? "").hasPrefix("/"),
                  !uri.split(separator: "/", omittingEmptySubsequences: false).contains(where: { $0 == "." || $0 == ".." || (!uri.isEmpty && $0.isEmpty) }) else {
                throw MPDAck(.argument, "Malformed path", command: name)
            }
            guard updateJobs.count < Self.maxUpdateQueue else { throw MPDAck(.updateAlready, "Update queue is full", command: name) }
            lastUpdateJob = lastUpdateJob >= Self.maxUpdateJob ? 1 : lastUpdateJob + 1
            updateJobs.append(lastUpdateJob)
            out.response = MPDResponse.pair("updating_db", String(lastUpdateJob))
            out.actions = [.update(job: lastUpdateJob, uri: uri, rescan: name == "rescan")]
            // Idle `update` when it starts (a job queued behind another starts later).
            if updateJobs.count == 1 { out.changed.insert(.update) }
            return out
        }
        if name == "albumart" || name == "readpicture" {
            guard let database, database.commands.contains(name) else { throw MPDAck(.unknown, "unknown command \"\(name)\"") }
            let picture: (header: String, data: [UInt8])
            do { picture = try database.picture(command: name, arguments: args, binaryLimit: client.binaryLimit) } catch { throw error.at(0, command: name) }
            out.response = picture.header
            if !picture.header.isEmpty { out.binary = picture.data }
            return out
        }
        if Self.databaseCommands.contains(name), !Self.queueDatabaseCommands.contains(name) {
            guard let database, database.commands.contains(name) else { throw MPDAck(.unknown, "unknown command \"\(name)\"") }
            do { out.response = try database.respond(command: name, arguments: args, tagTypes: client.tagTypes) } catch { throw error.at(0, command: name) }
            if MPDCommandMachine.storedPlaylistCommands.contains(name) { out.changed.insert(.storedPlaylist) }
            // As MPD: every `sticker set` or `delete` that succeeds.
            if name == "sticker", args.first == "set" || args.first == "delete" { out.changed.insert(.sticker) }
            return out
        }

        switch name {
        case "ping", "close", "idle", "noidle":
            break
        case "commands", "notcommands":
            // MPD: `commands` lists what the connection may run, `notcommands` what it may not
            // (of the commands answered here).
            let updates = database is any MPDDatabaseUpdater
            for c in MPDCommands.all where Self.implemented.contains(c.name) || database?.commands.contains(c.name) == true
                || (updates && (c.name == "update" || c.name == "rescan")) {
                if MPDCommands.allows(c.name, client.permissions) == (name == "commands") {
                    out.response += MPDResponse.pair("command", c.name)
                }
            }
        case "password":
            // A wrong password leaves the permissions as they were.
            guard let p = access.permissions(forPassword: args[0]) else { throw MPDAck(.password, "incorrect password", command: name) }
            out.client.permissions = p
        case "tagtypes":
            if args.isEmpty {
                for t in MPDTag.allCases where client.tagTypes.contains(t) { out.response += MPDResponse.pair("tagtype", t.rawValue) }
                break
            }
            var tags = Set<MPDTag>()
            for a in args.dropFirst() {
                guard let t = MPDTag(name: a) else { throw MPDAck(.argument, "Unknown tag type", command: name) }
                tags.insert(t)
            }
            switch args[0] {
            case "clear": out.client.tagTypes = []
            case "all": out.client.tagTypes = Set(MPDTag.allCases)
            case "enable":
                guard !tags.isEmpty else { throw MPDAck(.argument, "Not enough arguments", command: name) }
                out.client.tagTypes.formUnion(tags)
            case "disable":
                guard !tags.isEmpty else { throw MPDAck(.argument, "Not enough arguments", command: name) }
                out.client.tagTypes.subtract(tags)
            default: throw MPDAck(.argument, "Unknown sub command", command: name)
            }
        case "urlhandlers":
            out.response = MPDResponse.pair("handler", "http://") + MPDResponse.pair("handler", "https://")
                + (client.isLocal ? MPDResponse.pair("handler", "file://") : "")
        case "decoders":
            out.response = MPDResponse.pair("plugin", "ffmpeg")
                + ["flac", "mp3", "ogg", "oga", "opus", "m4a", "wav", "aiff"].map { MPDResponse.pair("suffix", $0) }.joined()
        case "binarylimit":
            // MPD's largest: its client output buffer (8 MiB and 16 KiB) less 4 KiB.
            let n = try unsigned(args[0], max: Self.maxBinaryLimit)
            guard n >= 64 else { throw MPDAck(.argument, "Value too small", command: name) }
            out.client.binaryLimit = n
        case "status":
            out.response = status(player)
        case "currentsong":
            if let p = player.position, entries.indices.contains(p) { out.response = songText(p, client: client) }
        case "stats":
            // MPD's order: uptime, playtime, then the database's lines when it has one.
            out.response = MPDResponse.pair("uptime", "0") + MPDResponse.pair("playtime", "0")
            if let database {
                out.response += database.databaseStats()
            } else {
                out.response += MPDResponse.pair("artists", "0") + MPDResponse.pair("albums", "0") + MPDResponse.pair("songs", "0")
                    + MPDResponse.pair("db_playtime", "0")
            }
        case "clearerror":
            error = nil
            out.changed.insert(.player)
        case "replay_gain_status":
            out.response = MPDResponse.pair("replay_gain_mode", replayGainMode.rawValue)
        case "replay_gain_mode":
            do { replayGainMode = try MPDArguments.replayGainMode(args[0]) } catch { throw arg(error) }
            out.actions = [.replayGain(effectiveReplayGain)]
            changeOptions()
        case "outputs":
            out.response = outputs.enumerated().map { i, o in
                MPDResponse.pair("outputid", String(i)) + MPDResponse.pair("outputname", o.name)
                    + MPDResponse.pair("plugin", o.plugin) + MPDResponse.pair("outputenabled", enabledOutputs[i] ? "1" : "0")
                    + o.attributes.map { MPDResponse.pair("attribute", $0) }.joined()
                    + (equalizerPresets.isEmpty ? "" : MPDResponse.pair("attribute", "equalizer=" + equalizer))
            }.joined()
        case "enableoutput", "disableoutput", "toggleoutput":
            let id = try unsigned(args[0])
            guard id < outputs.count else { throw MPDAck(.noExist, "No such audio output", command: name) }
            let enable = name == "toggleoutput" ? !enabledOutputs[id] : name == "enableoutput"
            guard enable != enabledOutputs[id] else { break }
            enabledOutputs[id] = enable
            out.actions = [.output(id: id, enabled: enable)]
            out.changed.insert(.output)
            // As MPD: with every output disabled, what played pauses, with the error in `status`.
            if !outputEnabled && player.state == .play {
                error = Self.noOutput
                out.changed.insert(.player)
            }
        // Client-to-client messages (MPD's MessageCommands).
        case "channels":
            var all = Set<String>()
            for (_, c) in subscriptions { all.formUnion(c) }
            for c in all.sorted(by: { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }) {
                out.response += MPDResponse.pair("channel", c)
            }
        case "subscribe":
            let c = args[0]
            guard Self.isValidChannel(c) else { throw MPDAck(.argument, "invalid channel name", command: name) }
            var mine = subscriptions[client.connection] ?? []
            guard !mine.contains(c) else { throw MPDAck(.exist, "already subscribed to this channel", command: name) }
            guard mine.count < Self.maxSubscriptions else { throw MPDAck(.exist, "subscription list is full", command: name) }
            mine.insert(c)
            subscriptions[client.connection] = mine
            out.changed.insert(.subscription)
        case "unsubscribe":
            guard subscriptions[client.connection]?.remove(args[0]) != nil else {
                throw MPDAck(.noExist, "not subscribed to this channel", command: name)
            }
            out.changed.insert(.subscription)
        case "sendmessage":
            let c = args[0]
            guard Self.isValidChannel(c) else { throw MPDAck(.argument, "invalid channel name", command: name) }
            var sent = false
            for (connection, channels) in subscriptions where channels.contains(c) {
                guard mailboxes[connection, default: []].count < Self.maxMessages else { continue }
                mailboxes[connection, default: []].append((c, args[1]))
                out.notify[connection, default: []].insert(.message)
                sent = true
            }
            guard sent else { throw MPDAck(.noExist, "nobody is subscribed to this channel", command: name) }
        case "readmessages":
            for m in mailboxes.removeValue(forKey: client.connection) ?? [] {
                out.response += MPDResponse.pair("channel", m.channel) + MPDResponse.pair("message", m.text)
            }

        // Partitions: the default one only.
        case "listpartitions":
            out.response = MPDResponse.pair("partition", "default")
        case "partition":
            guard args[0] == "default" else { throw MPDAck(.noExist, "partition does not exist", command: name) }
        case "newpartition":
            guard Self.isValidPartition(args[0]) else { throw MPDAck(.argument, "bad name", command: name) }
            guard args[0] != "default" else { throw MPDAck(.exist, "name already exists", command: name) }
            // MPD's answer when it has all the partitions it may have: here, the default one.
            throw MPDAck(.unknown, "Too many partitions", command: name)
        case "delpartition":
            guard args[0] == "default" else { throw MPDAck(.noExist, "no such partition", command: name) }
            throw MPDAck(.unknown, "cannot delete the default partition", command: name)

        // Storage: the music folder, no mounts.
        case "listmounts":
            guard let musicDirectory, database != nil else { throw MPDAck(.noExist, "No database", command: name) }
            out.response = MPDResponse.pair("mount", "") + MPDResponse.pair("storage", musicDirectory)
        case "config":
            guard client.isLocal else { throw MPDAck(.permission, "Command only permitted to local clients", command: name) }
            if let musicDirectory { out.response = MPDResponse.pair("music_directory", musicDirectory) }
        case "kill":
            out.kill = true

        case "mixrampdb":
            mixRampDB = Float(try float(args[0]))
            changeOptions()
        case "mixrampdelay":
            mixRampDelay = Float(try float(args[0]))
            changeOptions()

        // Tags of stream songs (MPD edits those only: a file's are the file's).
        case "addtagid", "cleartagid":
            let id = try unsigned(args[0])
            var tag: MPDTag?
            if args.count > 1 {
                guard let t = MPDTag(name: args[1]) else { throw MPDAck(.argument, "Unknown tag type: \(args[1])", command: name) }
                tag = t
            }
            guard let i = entries.firstIndex(where: { $0.id == id }) else { throw MPDAck(.noExist, "No such song", command: name) }
            guard entries[i].song.uri.contains("://"), !entries[i].song.uri.lowercased().hasPrefix("file://") else {
                throw MPDAck(.permission, "Cannot edit tags of local files", command: name)
            }
            if name == "addtagid", let tag {
                entries[i].song.tags.append((tag, args[2]))
            } else {
                entries[i].song.tags.removeAll { tag == nil || $0.0 == tag }
            }
            bump()
            entries[i].version = version
            out.changed.insert(.playlist)
        case "outputset":
            guard try unsigned(args[0]) < outputs.count else { throw MPDAck(.noExist, "No such audio output", command: name) }
            guard args[1] == "equalizer", !equalizerPresets.isEmpty else { throw MPDAck(.argument, "Unsupported attribute", command: name) }
            guard equalizerPresets.contains(args[2]) else {
                throw MPDAck(.argument, "Unknown equalizer preset \"\(args[2].prefix(40))\" (known: \(equalizerPresets.joined(separator: ", ")))", command: name)
            }
            equalizer = args[2]
            out.actions = [.equalizer(args[2])]
            out.changed.insert(.output)

        // Playback.
        case "play":
            var p: Int? = nil
            if let a = args.first {
                let n = try integer(a, min: -1)
                if n >= 0 {
                    guard n < entries.count else { throw MPDAck(.argument, "Bad song index", command: name) }
                    p = n
                }
            }
            if p == nil && entries.isEmpty { break }
            // No current song: the first of the order (random mode: the highest priority's).
            if p == nil && player.state == .stop { p = player.position ?? (isRandom ? player.first ?? 0 : 0) }
            out.actions = [.play(position: p, seconds: nil)]
            out.changed.insert(.player)
        case "playid":
            var p: Int? = nil
            if let a = args.first {
                let n = try integer(a, min: -1)
                if n >= 0 { p = try index(ofID: a) }
            }
            if p == nil && entries.isEmpty { break }
            // No current song: the first of the order (random mode: the highest priority's).
            if p == nil && player.state == .stop { p = player.position ?? (isRandom ? player.first ?? 0 : 0) }
            out.actions = [.play(position: p, seconds: nil)]
            out.changed.insert(.player)
        case "pause":
            let pause = try args.first.map { a throws(MPDAck) in try bool(a) } ?? (player.state == .play)
            if player.state == .stop { break }
            out.actions = [pause ? .pause : .play(position: nil, seconds: nil)]
            out.changed.insert(.player)
        case "stop":
            out.actions = [.stop]
            out.changed.insert(.player)
        case "next":
            guard player.state != .stop else { throw MPDAck(.playerSync, "Not playing", command: name) }
            out.actions = [.next]
            out.changed.insert(.player)
        case "previous":
            guard player.state != .stop else { throw MPDAck(.playerSync, "Not playing", command: name) }
            out.actions = [.previous]
            out.changed.insert(.player)
        case "seek":
            let p = try position(args[0])
            let t = try float(args[1])
            out.actions = [.play(position: p, seconds: max(0, t))]
            out.changed.insert(.player)
        case "seekid":
            let p = try index(ofID: args[0])
            let t = try float(args[1])
            out.actions = [.play(position: p, seconds: max(0, t))]
            out.changed.insert(.player)
        case "seekcur":
            let a = args[0]
            let t = try float(a)
            guard player.state != .stop, player.position != nil else { throw MPDAck(.playerSync, "Not playing", command: name) }
            let relative = a.hasPrefix("+") || a.hasPrefix("-")
            out.actions = [.seek(max(0, relative ? player.elapsed + t : t))]
            out.changed.insert(.player)
        case "setvol":
            let v = try unsigned(args[0])
            guard v <= 100 else { throw MPDAck(.argument, "Invalid volume value", command: name) }
            setVolume(v, &out)
        case "volume":
            let d = try integer(args[0], min: -100, max: 100)
            setVolume(min(100, max(0, volume + d)), &out)
        case "getvol":
            out.response = MPDResponse.pair("volume", String(volume))
        case "repeat":
            isRepeat = try bool(args[0])
            out.actions = [.repeatMode(repeat: isRepeat, single: single != .off)]
            changeOptions()
        case "single":
            do { single = try MPDArguments.singleMode(args[0]) } catch { throw arg(error) }
            out.actions = [.repeatMode(repeat: isRepeat, single: single != .off)]
            changeOptions()
        case "random":
            isRandom = try bool(args[0])
            out.actions = [.random(isRandom)]
            if replayGainMode == .auto { out.actions.append(.replayGain(effectiveReplayGain)) }
            changeOptions()
        case "consume":
            consume = try bool(args[0])
            changeOptions()
        case "crossfade":
            crossfade = try unsigned(args[0])
            out.actions = [.crossfade(crossfade)]
            changeOptions()

        // The queue from the database.
        case "findadd", "searchadd", "load":
            guard let database, database.commands.contains(name) else { throw MPDAck(.unknown, "unknown command \"\(name)\"") }
            var a = args
            // The insert position first (as MPD reads it): `position POS` at the end of
            // findadd's, load's third argument.
            var at = entries.count
            var positionText: String?
            if name == "load" {
                if a.count > 2 { positionText = a[2] }
            } else if a.count >= 2, a[a.count - 2] == "position" {
                positionText = a.removeLast()
                a.removeLast()
            }
            if let positionText { at = try insertPosition(positionText, player: player, command: name) }
            let uris: [String]
            if name == "load" {
                var r = 0..<Int.max
                if a.count > 1 {
                    do {
                        if case .span(let start, let end) = try MPDArguments.range(a[1]) { r = Int(start)..<(end.map { Int($0) } ?? Int.max) }
                    } catch { throw arg(error) }
                }
                let all = try database.playlistURIs(named: a[0], command: name)
                uris = r.lowerBound < all.count ? Array(all[r.lowerBound..<min(all.count, r.upperBound)]) : []
            } else {
                uris = try database.songURIs(filterArguments: a, command: name)
            }
            var songs: [MPDSong] = []
            for u in uris { songs.append(try resolve(u, client)) }
            guard !songs.isEmpty else { break }
            // Playlist versions as MPD counts them: `load` is one edit (MPD's bulk edit);
            // `findadd` one per song added at the end, and one more for moving them to the
            // position asked for.
            for (k, song) in songs.enumerated() {
                appendEntry(song, at: at + k, bumping: name != "load")
                out.actions.append(.insert(song, at: at + k))
            }
            if name == "load" || at < entries.count - songs.count { touch(from: at) }
            out.changed.insert(.playlist)
        case "save":
            guard let database, database.commands.contains(name) else { throw MPDAck(.unknown, "unknown command \"\(name)\"") }
            try database.savePlaylist(named: args[0], uris: entries.map(\.song.uri), command: name)
            out.changed.insert(.storedPlaylist)
        case "playlistfind", "playlistsearch":
            guard let database, database.commands.contains(name) else { throw MPDAck(.unknown, "unknown command \"\(name)\"") }
            // A filter only (no sort or window): parsed here for MPD's errors first.
            do { _ = try MPDFilter.parse(arguments: args, exact: name == "playlistfind") } catch { throw error.ack(command: name) }
            // The database's songs the filter selects; the queue's entries of those URIs.
            let matching = Set(try database.songURIs(filterArguments: args, command: name))
            for i in entries.indices where matching.contains(entries[i].song.uri) { out.response += songText(i, client: client) }
        case "prio", "prioid":
            let priority = UInt8(try unsigned(args[0], max: 255))
            // One range or id at a time, as MPD sets them: those before a bad one stay set.
            for a in args.dropFirst() {
                var r: Range<Int>
                if name == "prioid" {
                    let i = try index(ofID: a)
                    r = i..<(i + 1)
                } else {
                    // MPD's RangeArg::CheckClip: the end is cut to the queue, a start past it is an error.
                    let parsed: MPDArguments.Range
                    do { parsed = try MPDArguments.range(a) } catch { throw arg(error) }
                    r = 0..<entries.count
                    if case .span(let start, let end) = parsed {
                        let hi = min(end.map { Int($0) } ?? entries.count, entries.count)
                        guard Int(start) <= hi else { throw MPDAck(.argument, "Bad song index", command: name) }
                        r = Int(start)..<hi
                    }
                }
                // A new playlist version for each non-empty range, changed or not; only the
                // songs whose priority changed are in `plchanges` after it.
                guard !r.isEmpty else { continue }
                bump()
                var changed: [Int] = []
                for p in r where entries[p].priority != priority {
                    entries[p].priority = priority
                    entries[p].version = version
                    changed.append(p)
                }
                if !changed.isEmpty { out.actions.append(.priority(priority, positions: changed, afterCurrent: hasCurrent)) }
                out.changed.insert(.playlist)
            }

        case "rangeid":
            // MPD's order: the id, the range, the song, then whether it may be edited.
            let id = try unsigned(args[0])
            guard let (start, end0) = Self.timeRange(args[1]) else { throw MPDAck(.argument, "Bad range", command: name) }
            guard let i = entries.firstIndex(where: { $0.id == id }) else { throw MPDAck(.noExist, "No such song", command: name) }
            // MPD 0.23 compares the song's queue position with the current song's number in
            // the play order (the same number unless in random mode).
            if player.state != .stop, (isRandom ? player.orderPosition ?? player.position : player.position) == i {
                throw MPDAck(.permission, "Cannot edit the current song", command: name)
            }
            var end = end0
            if let d = entries[i].song.duration {
                let ms = UInt32(clamping: Int64(d * 1000))
                guard start <= ms else { throw MPDAck(.argument, "Invalid start offset", command: name) }
                if end >= ms { end = 0 }
            }
            entries[i].rangeStart = start
            entries[i].rangeEnd = end
            out.actions.append(.range(at: i, entries[i].playbackRange))
            bump()
            entries[i].version = version
            out.changed.insert(.playlist)

        // The queue.
        case "add", "addid":
            // The position is read first (MPD's order), then the URI.
            let at = args.count > 1 ? try insertPosition(args[1], player: player, command: name) : entries.count
            var args = args
            // A local path of a song inside the music folder is the database's URI (MPD's
            // LocateFileUri: for every client, before the local-file rules). A folder's path
            // stays a path (MPD: "No such song", inside the music folder or not).
            if let database, let path = Self.localPath(args[0]), let uri = database.uri(forLocalPath: path),
               (try? database.songURIs(under: uri, command: name)) == [uri] {
                args[0] = uri
            }
            // `add DIR`: the database's songs under a folder of it, as one edit (MPD's bulk
            // edit: one playlist version, one more for the move to a position). `addid` takes
            // songs only.
            if let database, database.commands.contains("findadd"), !args[0].contains("://"),
               !args[0].hasPrefix("/") || args[0] == "/",
               let uris = try? database.songURIs(under: args[0], command: name), uris != [args[0]] {
                guard name == "add" else { throw MPDAck(.noExist, "No such song", command: name) }
                var songs: [MPDSong] = []
                for u in uris { songs.append(try resolve(u, client)) }
                guard !songs.isEmpty else { break }
                for (k, song) in songs.enumerated() {
                    appendEntry(song, at: at + k, bumping: false)
                    out.actions.append(.insert(song, at: at + k))
                }
                touch(from: at)
                if at < entries.count - songs.count { touch(from: at) }
                out.changed.insert(.playlist)
                break
            }
            let song = try resolve(args[0], client)
            let id = appendEntry(song, at: at)
            // MPD appends, then moves the song to its position: one version more.
            if at < entries.count - 1 { touch(from: at) }
            if name == "addid" { out.response = MPDResponse.pair("Id", String(id)) }
            out.actions = [.insert(song, at: at)]
            out.changed.insert(.playlist)
        case "delete":
            // As MPD's (RangeArg::CheckClip): the end is cut to the queue; a start past it is an error.
            let parsed: MPDArguments.Range
            do { parsed = try MPDArguments.range(args[0]) } catch { throw arg(error) }
            var r = 0..<entries.count
            if case .span(let start, let end) = parsed {
                let hi = min(end.map { Int($0) } ?? entries.count, entries.count)
                guard Int(start) <= hi else { throw MPDAck(.argument, "Bad song index", command: name) }
                r = Int(start)..<hi
            }
            guard !r.isEmpty else { break }
            removeEntries(r)
            out.actions = r.reversed().map { .remove(at: $0) }
            out.changed.insert(.playlist)
        case "deleteid":
            let i = try index(ofID: args[0])
            removeEntries(i..<(i + 1))
            out.actions = [.remove(at: i)]
            out.changed.insert(.playlist)
        case "clear":
            hasCurrent = false
            entries = []
            bump()
            out.actions = [.clear]
            // MPD stops the player first: a player event only when it was not stopped.
            out.changed.insert(.playlist)
            if player.state != .stop { out.changed.insert(.player) }
        case "move", "moveid":
            let from: Int
            if name == "move" {
                let r = try range(args[0])
                guard r.count == 1 else {
                    // A range: moved one by one, keeping their order.
                    let to = try unsigned(args[1])
                    guard to + r.count <= entries.count else { throw MPDAck(.argument, "Bad song index", command: name) }
                    for (k, _) in r.enumerated() {
                        let src = r.lowerBound < to ? r.lowerBound : r.lowerBound + k
                        let dst = r.lowerBound < to ? to + r.count - 1 : to + k
                        moveEntry(src, dst)
                        out.actions.append(.move(from: src, to: dst))
                    }
                    out.changed.insert(.playlist)
                    break
                }
                from = r.lowerBound
            } else {
                from = try index(ofID: args[0])
            }
            let to = try position(args[1])
            moveEntry(from, to)
            out.actions = [.move(from: from, to: to)]
            out.changed.insert(.playlist)
        case "swap", "swapid":
            let a = name == "swap" ? try position(args[0]) : try index(ofID: args[0])
            let b = name == "swap" ? try position(args[1]) : try index(ofID: args[1])
            guard a != b else { break }
            let (lo, hi) = (min(a, b), max(a, b))
            // One playlist version, and only the two positions changed in it (MPD's
            // SwapPositions); the player moves the two songs.
            entries.swapAt(lo, hi)
            bump()
            entries[lo].version = version
            entries[hi].version = version
            out.actions = [.move(from: hi, to: lo), .move(from: lo + 1, to: hi)]
            out.changed.insert(.playlist)
        case "shuffle":
            let r = try args.first.map { a throws(MPDAck) in try range(a) } ?? 0..<entries.count
            guard r.count > 1 else { break }
            var rng = SystemRandomNumberGenerator()
            for i in r.dropLast() {
                let j = Int.random(in: i..<r.upperBound, using: &rng)
                guard j != i else { continue }
                moveEntry(j, i)
                out.actions.append(.move(from: j, to: i))
            }
            out.changed.insert(.playlist)
        case "playlistinfo":
            let r = try args.first.map { a throws(MPDAck) in try range(a) } ?? 0..<entries.count
            out.bytes = songsAnswer(r, count: r.count, client: client)
        case "playlistid":
            if let a = args.first {
                out.response = songText(try index(ofID: a), client: client)
            } else {
                out.bytes = songsAnswer(entries.indices, count: entries.count, client: client)
            }
        case "playlist":
            for (i, e) in entries.enumerated() { out.response += "\(i):file: \(MPDResponse.oneLine(e.song.uri))\n" }
        case "plchanges", "plchangesposid":
            let since = try unsigned(args[0])
            let r = try args.count > 1 ? range(args[1]) : 0..<entries.count
            let all = UInt32(truncatingIfNeeded: since) > version
            if name == "plchanges" {
                let changed = r.filter { all || entries[$0].version > since }
                out.bytes = songsAnswer(changed, count: changed.count, client: client)
            } else {
                for i in r where all || entries[i].version > since {
                    out.response += MPDResponse.pair("cpos", String(i)) + MPDResponse.pair("Id", String(entries[i].id))
                }
            }
        default:
            throw MPDAck(.unknown, "unknown command \"\(name)\"")
        }
        // Nothing plays without an output: the daemon does not start it (MPD pauses, with this error).
        if !outputEnabled, out.actions.contains(where: { if case .play = $0 { true } else { false } }) { error = Self.noOutput }
        return out
    }

    /// `START:END` of `rangeid` as MPD reads it (seconds, either optional, in whole
    /// milliseconds cut as MPD cuts them): nil for a negative or malformed part, or an end not
    /// after the start.
    static func timeRange(_ s: String) -> (start: UInt32, end: UInt32)? {
        guard let colon = s.firstIndex(of: ":") else { return nil }
        func part(_ t: Substring) -> UInt32?? {
            if t.isEmpty { return .some(0) }
            guard let f = Float(t), f.isFinite, f >= 0, f * 1000 < Float(UInt32.max) else { return nil }
            return .some(UInt32(f * 1000))
        }
        guard let start = part(s[..<colon]), let end = part(s[s.index(after: colon)...]),
              let start, let end, end == 0 || end > start else { return nil }
        return (start, end)
    }

    /// The path an absolute or `file://` URI names, else nil.
    static func localPath(_ uri: String) -> String? {
        if uri.hasPrefix("/") { return uri }
        guard uri.lowercased().hasPrefix("file://") else { return nil }
        return URL(string: uri)?.path
    }

    // MARK: Answers

    func status(_ p: MPDPlayerSnapshot) -> String {
        // Written as bytes (one buffer, no `String` per line, no Foundation formatting).
        var w = MPDAnswerWriter(capacity: 384)
        w.pair("volume", volume)
        w.pair("repeat", isRepeat ? "1" : "0")
        w.pair("random", isRandom ? "1" : "0")
        w.pair("single", single.rawValue)
        w.pair("consume", consume ? "1" : "0")
        w.pair("partition", "default")
        w.pair("playlist", Int(version))
        w.pair("playlistlength", entries.count)
        // MPD prints its floats in the shortest form (fmt's `{}`): 0, not 0.000000.
        w.pair("mixrampdb", Self.shortest(mixRampDB))
        w.pair("state", p.state.rawValue)
        if crossfade > 0 { w.pair("xfade", crossfade) }
        if mixRampDelay > 0 { w.pair("mixrampdelay", Self.shortest(mixRampDelay)) }
        if let pos = p.position, entries.indices.contains(pos) {
            w.pair("song", pos)
            w.pair("songid", entries[pos].id)
            if p.state != .stop {
                let d = p.duration ?? entries[pos].song.duration
                w.append("time: ")
                w.integer(Int(p.elapsed.rounded()))
                w.append(":")
                w.integer(Int((d ?? 0).rounded()))
                w.append("\n")
                w.pair("elapsed", fixed3: p.elapsed)
                w.pair("bitrate", "0")
                if let d { w.pair("duration", fixed3: d) }
                if let f = entries[pos].song.format { w.pair("audio", f.text) }
            }
            // In random mode the next song is the player's (its shuffled order, priorities first).
            let next = isRandom ? p.next.flatMap { entries.indices.contains($0) ? $0 : nil }
                : pos + 1 < entries.count ? pos + 1 : (isRepeat && !entries.isEmpty ? 0 : nil)
            if let next {
                w.pair("nextsong", next)
                w.pair("nextsongid", entries[next].id)
            }
        }
        if let job = updateJobs.first { w.pair("updating_db", job) }
        if let error { w.pair("error", error) }
        return String(decoding: w.bytes, as: UTF8.self)
    }

    func songText(_ i: Int, client: MPDClientContext) -> String {
        var w = MPDAnswerWriter(capacity: 512)
        writeSong(i, client: client, to: &w)
        return String(decoding: w.bytes, as: UTF8.self)
    }

    /// The songs at `positions` as bytes (the long listings: `playlistinfo`, `playlistid`,
    /// `plchanges`), without a `String` per line.
    func songsAnswer(_ positions: some Sequence<Int>, count: Int, client: MPDClientContext) -> [UInt8] {
        var w = MPDAnswerWriter(capacity: count * 320)
        for i in positions { writeSong(i, client: client, to: &w) }
        return w.bytes
    }

    private static let tagCount = MPDTag.allCases.count

    func writeSong(_ i: Int, client: MPDClientContext, to w: inout MPDAnswerWriter) {
        let e = entries[i]
        // MPD's order: file, Last-Modified, Format, the tags, Time and duration, then the queue's.
        w.pair("file", e.song.uri)
        // `rangeid`'s part, as MPD prints it: `Range: 1.500-3.000`, or `Range: 1.500-` to the end.
        func seconds(_ ms: UInt32) -> String { "\(ms / 1000)." + String(1000 + ms % 1000).dropFirst() }
        if e.rangeEnd > 0 {
            w.pair("Range", seconds(e.rangeStart) + "-" + seconds(e.rangeEnd))
        } else if e.rangeStart > 0 {
            w.pair("Range", seconds(e.rangeStart) + "-")
        }
        if let m = e.song.lastModified {
            w.append("Last-Modified: ")
            w.time(m)
            w.append("\n")
        }
        if let f = e.song.format { w.pair("Format", f.text) }
        let all = client.tagTypes.count == Self.tagCount
        for (tag, value) in e.song.tags where all || client.tagTypes.contains(tag) { w.pair(tag.rawValue, value) }
        if var d = e.song.duration {
            // The range's length (MPD's GetDuration: to its end, else the song's, less its start).
            if e.rangeEnd > 0 || e.rangeStart > 0 {
                d = (e.rangeEnd > 0 ? Double(e.rangeEnd) / 1000 : d) - Double(e.rangeStart) / 1000
            }
            w.pair("Time", Int(d.rounded()))
            w.pair("duration", fixed3: d)
        }
        w.pair("Pos", i)
        w.pair("Id", e.id)
        if e.priority > 0 { w.pair("Prio", Int(e.priority)) }
    }

    /// The level ReplayGain applies: MPD's `auto` is `track` in random mode, else `album`.
    var effectiveReplayGain: String {
        replayGainMode == .auto ? (isRandom ? "track" : "album") : replayGainMode.rawValue
    }

    /// An insert position as MPD's `ParseInsertPosition` reads it: `N` (at most the queue's
    /// length), `+N` after the current song, `-N` before it.
    func insertPosition(_ s: String, player: MPDPlayerSnapshot, command: String) throws(MPDAck) -> Int {
        let count = entries.count
        if s.hasPrefix("+") || s.hasPrefix("-") {
            guard let c = player.position, c < count else { throw MPDAck(.playerSync, "No current song", command: command) }
            let limit = s.hasPrefix("+") ? count - c - 1 : c
            let n: Int
            do { n = Int(try MPDArguments.unsigned(String(s.dropFirst()), max: Int64(limit))) } catch { throw error.ack(command: command) }
            return s.hasPrefix("+") ? c + 1 + n : c - n
        }
        do { return Int(try MPDArguments.unsigned(s, max: Int64(count))) } catch { throw error.ack(command: command) }
    }

    // MARK: The queue's bookkeeping

    private mutating func setVolume(_ v: Int, _ out: inout MPDOutcome) {
        volume = v
        out.actions = [.volume(v)]
        out.changed.insert(.mixer)
    }

    private mutating func bump() {
        version = version == UInt32.max ? 1 : version + 1
    }

    /// Marks positions from `start` on as changed in a new version.
    private mutating func touch(from start: Int) {
        bump()
        for i in max(0, start)..<entries.count { entries[i].version = version }
    }

    /// Inserts `song` at `at` with a new id; a new playlist version unless `bumping` is false
    /// (the caller counts the version of a bulk edit itself).
    @discardableResult
    private mutating func appendEntry(_ song: MPDSong, at: Int, bumping: Bool = true) -> Int {
        let id = nextID
        nextID += 1
        entries.insert(Entry(id: id, song: song, version: version), at: at)
        if bumping { touch(from: at) }
        return id
    }

    private mutating func removeEntries(_ r: Range<Int>) {
        entries.removeSubrange(r)
        touch(from: r.lowerBound)
    }

    private mutating func moveEntry(_ from: Int, _ to: Int) {
        guard from != to else { return }
        let e = entries.remove(at: from)
        entries.insert(e, at: to)
        touch(from: min(from, to))
    }
}
