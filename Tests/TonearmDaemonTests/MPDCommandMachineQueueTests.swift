// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
import TonearmDaemon
import TonearmMPDProtocol

/// The command layer's password, queue-from-database and priority commands alone (no sockets,
/// no player, a database stub): what a connection may run, MPD's playlist versions, the
/// current song MPD shows while stopped. The same behaviour is compared with a real MPD by
/// DaemonPermissionTests and DaemonPeerCLITests.
struct MPDCommandMachineQueueTests {
    /// A database of three songs and one stored playlist.
    final class Library: MPDDatabaseResponder, @unchecked Sendable {
        var saved: [String: [String]] = ["P": ["a", "b", "c"]]
        var commands: Set<String> { MPDCommandMachine.queueDatabaseCommands.union(["lsinfo"]) }
        func respond(command: String, arguments: [String], tagTypes: Set<MPDTag>) throws(MPDAck) -> String { "" }
        func songURIs(filterArguments: [String], command: String) throws(MPDAck) -> [String] {
            filterArguments == ["artist", "x"] ? ["a", "b", "c"] : []
        }
        func playlistURIs(named name: String, command: String) throws(MPDAck) -> [String] {
            guard let p = saved[name] else { throw MPDAck(.noExist, "No such playlist", command: command) }
            return p
        }
        func savePlaylist(named name: String, uris: [String], command: String) throws(MPDAck) {
            guard saved[name] == nil else { throw MPDAck(.exist, "Playlist already exists", command: command) }
            saved[name] = uris
        }
        func songURIs(under uri: String, command: String) throws(MPDAck) -> [String] {
            switch uri {
            case "dir": return ["a", "b"]
            case "", "/": return ["a", "b", "c"]
            case "a", "b", "c": return [uri]
            default: throw MPDAck(.noExist, "No such directory", command: command)
            }
        }
        func databaseStats() -> String { "artists: 1\nalbums: 1\nsongs: 3\ndb_playtime: 3\ndb_update: 5\n" }
    }

    static func send(_ m: inout MPDCommandMachine, _ line: String, database: (any MPDDatabaseResponder)? = nil,
                     client: MPDClientContext = MPDClientContext(isLocal: true),
                     player: MPDPlayerSnapshot = MPDPlayerSnapshot()) throws(MPDAck) -> MPDOutcome {
        let r = try MPDRequest(line: Array(line.utf8))
        _ = try MPDCommands.check(r, permissions: client.permissions)
        return try m.handle(r, client: client, player: player, database: database) { uri, _ in
            MPDSong(uri: uri, location: "/music/" + uri)
        }
    }

    @Test func passwordGivesItsPermissionsAndCommandsFollow() throws {
        var access = MPDAccess()
        try access.addPassword(parsing: "pw@read,add")
        var m = MPDCommandMachine(access: access)
        let guest = MPDClientContext(isLocal: true, permissions: access.initialPermissions)
        #expect(try Self.send(&m, "commands", client: guest).response
            == "command: binarylimit\ncommand: close\ncommand: commands\ncommand: notcommands\ncommand: password\ncommand: ping\ncommand: tagtypes\n")
        #expect(try Self.send(&m, "notcommands", client: guest).response.contains("command: status\n"))
        #expect(throws: MPDAck(.password, "incorrect password", command: "password")) { try Self.send(&m, "password nope", client: guest) }
        let reader = try Self.send(&m, "password pw", client: guest).client
        #expect(reader.permissions == [.read, .add])
        let listed = try Self.send(&m, "commands", client: reader).response
        #expect(listed.contains("command: status\n") && listed.contains("command: add\n") && !listed.contains("command: play\n"))
        #expect(try Self.send(&m, "notcommands", client: reader).response.contains("command: play\n"))
        #expect(throws: MPDAck(.permission, "you don't have permission for \"play\"", command: "play")) {
            try Self.send(&m, "play", client: reader)
        }
    }

    @Test func findaddLoadAndSaveWithMPDsVersions() throws {
        var m = MPDCommandMachine()
        let db = Library()
        let v0 = m.version
        _ = try Self.send(&m, "findadd artist x", database: db)
        // One version per song added.
        #expect(m.songs.map(\.uri) == ["a", "b", "c"] && m.version == v0 + 3)
        // Nothing found: nothing changes.
        #expect(try Self.send(&m, "findadd artist y", database: db).changed.isEmpty && m.version == v0 + 3)
        // At a position: added at the end one by one, then moved (one more).
        _ = try Self.send(&m, "findadd artist x position 1", database: db)
        #expect(m.songs.map(\.uri) == ["a", "a", "b", "c", "b", "c"] && m.version == v0 + 7)
        // `+1` needs a current song (there is none while stopped before any play).
        #expect(throws: MPDAck(.playerSync, "No current song", command: "findadd")) {
            try Self.send(&m, "findadd artist x position +1", database: db, player: MPDPlayerSnapshot(state: .stop, position: 0))
        }
        // load: a range, a position; one version for the whole load.
        _ = try Self.send(&m, "load P 1:3 0", database: db)
        #expect(m.songs.prefix(2).map(\.uri) == ["b", "c"] && m.version == v0 + 8)
        #expect(throws: MPDAck(.noExist, "No such playlist", command: "load")) { try Self.send(&m, "load Q", database: db) }
        #expect(throws: MPDAck(.argument, "Number too large: 99", command: "load")) { try Self.send(&m, "load P 0:1 99", database: db) }
        // save: the queue's URIs; a stored playlist changed.
        #expect(try Self.send(&m, "save S", database: db).changed == [.storedPlaylist])
        #expect(db.saved["S"] == m.songs.map(\.uri))
        #expect(throws: MPDAck(.exist, "Playlist already exists", command: "save")) { try Self.send(&m, "save S", database: db) }
        // stats: the database's lines after uptime and playtime.
        #expect(try Self.send(&m, "stats", database: db).response
            == "uptime: 0\nplaytime: 0\nartists: 1\nalbums: 1\nsongs: 3\ndb_playtime: 3\ndb_update: 5\n")
        // playlistfind: the queue's entries of the songs the database finds.
        let found = try Self.send(&m, "playlistfind artist x", database: db).response
        #expect(found.components(separatedBy: "file: ").count - 1 == m.songs.count)
        #expect(throws: MPDAck(.argument, "Unknown filter type", command: "playlistfind")) { try Self.send(&m, "playlistfind foo x", database: db) }
    }

    /// A stream's own tags, read once it plays, become its song's: one new playlist version in
    /// which its position changed, idle `playlist` — as MPD 0.23 does (DaemonPeerCLITests compares
    /// the answers). A song with tags keeps them; another song at the position is left alone.
    @Test func aStreamTakesTheTagsItCarries() throws {
        var m = MPDCommandMachine()
        _ = try Self.send(&m, "add a")
        m.restore(songs: m.songs + [MPDSong(uri: "http://h/s.flac", location: "http://h/s.flac")], volume: 100, isRepeat: false,
                  isRandom: false, single: .off, consume: false, crossfade: 0)
        let v = m.version
        let tags: [(MPDTag, String)] = [(.artist, "歌手"), (.title, "曲")]
        #expect(m.streamTagsRead(position: 1, location: "http://h/other.flac", tags: tags).isEmpty)
        #expect(m.streamTagsRead(position: 1, location: "http://h/s.flac", tags: []).isEmpty)
        #expect(m.version == v)
        #expect(m.streamTagsRead(position: 1, location: "http://h/s.flac", tags: tags) == [.playlist])
        #expect(m.version == v + 1 && m.songs[1].tags.map(\.1) == ["歌手", "曲"])
        #expect(try Self.send(&m, "plchangesposid \(v)").response == "cpos: 1\nId: \(m.entries[1].id)\n")
        // Told once: the song has tags now.
        #expect(m.streamTagsRead(position: 1, location: "http://h/s.flac", tags: [(.title, "Other")]).isEmpty)
        #expect(m.version == v + 1)
    }

    @Test func addAFolderAndVersionsOfAddAndSwap() throws {
        var m = MPDCommandMachine()
        let db = Library()
        let v = m.version
        // A folder's songs as one edit.
        let added = try Self.send(&m, "add dir", database: db)
        #expect(m.songs.map(\.uri) == ["a", "b"] && m.version == v + 1 && added.actions.count == 2)
        // "/" is the whole database (MPD's work-around for clients that send it).
        _ = try Self.send(&m, "add / 1", database: db)
        #expect(m.songs.map(\.uri) == ["a", "a", "b", "c", "b"] && m.version == v + 3)
        #expect(throws: MPDAck(.noExist, "No such song", command: "addid")) { try Self.send(&m, "addid dir", database: db) }
        // A song at a position: appended, then moved (two versions); at the end, one.
        _ = try Self.send(&m, "add c 0", database: db)
        #expect(m.version == v + 5 && m.songs.first?.uri == "c")
        _ = try Self.send(&m, "add c", database: db)
        #expect(m.version == v + 6)
        // swap: one version, the two positions only in plchanges.
        _ = try Self.send(&m, "swap 1 4", database: db)
        #expect(m.version == v + 7)
        #expect(try Self.send(&m, "plchangesposid \(v + 6)").response == "cpos: 1\nId: \(m.entries[1].id)\ncpos: 4\nId: \(m.entries[4].id)\n")
    }

    @Test func priorityAndReplayGain() throws {
        var m = MPDCommandMachine()
        for u in ["a", "b", "c"] { _ = try Self.send(&m, "add \(u)") }
        let v = m.version
        _ = try Self.send(&m, "prio 5 0:2")
        #expect(m.entries.map(\.priority) == [5, 5, 0] && m.version == v + 1)
        #expect(try Self.send(&m, "playlistinfo 0").text.hasSuffix("Id: 1\nPrio: 5\n"))
        // Unchanged: a new version all the same, but no song in plchanges.
        _ = try Self.send(&m, "prio 5 0:2")
        #expect(m.version == v + 2)
        #expect(try Self.send(&m, "plchangesposid \(v + 1)").response.isEmpty)
        // An empty range changes nothing; a start past the end is an error, the end is clipped.
        _ = try Self.send(&m, "prio 7 3:3")
        #expect(m.version == v + 2)
        #expect(throws: MPDAck(.argument, "Bad song index", command: "prio")) { try Self.send(&m, "prio 1 9") }
        _ = try Self.send(&m, "prioid 9 3")
        #expect(m.entries.map(\.priority) == [5, 5, 9])
        #expect(throws: MPDAck(.argument, "Number too large: 256", command: "prio")) { try Self.send(&m, "prio 256 0") }
        let rg = try Self.send(&m, "replay_gain_mode auto")
        #expect(rg.actions == [.replayGain("album")] && rg.changed == [.options])
        #expect(try Self.send(&m, "replay_gain_status").response == "replay_gain_mode: auto\n")
        // auto follows random: track gain when shuffled.
        #expect(try Self.send(&m, "random 1").actions == [.random(true), .replayGain("track")])
        #expect(throws: MPDAck(.argument, "Unrecognized replay gain mode", command: "replay_gain_mode")) { try Self.send(&m, "replay_gain_mode x") }
    }

    @Test func noCurrentSongWhileStoppedUntilPlayed() throws {
        var m = MPDCommandMachine()
        _ = try Self.send(&m, "add a")
        _ = try Self.send(&m, "add b")
        // The player has an index (0) from the first song added; MPD shows no current song.
        let stopped = MPDPlayerSnapshot(state: .stop, position: 0)
        #expect(!(try Self.send(&m, "status", player: stopped).response.contains("song: ")))
        #expect(try Self.send(&m, "currentsong", player: stopped).response.isEmpty)
        _ = try Self.send(&m, "play 1", player: stopped)
        // Stopped after playing: the current song stays (as MPD's).
        let after = MPDPlayerSnapshot(state: .stop, position: 1)
        #expect(try Self.send(&m, "status", player: after).response.contains("song: 1\nsongid: 2\n"))
        // Deleting it while stopped leaves none.
        _ = try Self.send(&m, "delete 1", player: after)
        #expect(!(try Self.send(&m, "status", player: MPDPlayerSnapshot(state: .stop, position: 0)).response.contains("song: ")))
        // clear wakes idle `player` only when it was playing.
        #expect(try Self.send(&m, "clear", player: stopped).changed == [.playlist])
        _ = try Self.send(&m, "add a")
        #expect(try Self.send(&m, "clear", player: MPDPlayerSnapshot(state: .play, position: 0)).changed == [.playlist, .player])
    }
}
