// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
import TonearmDaemon
import TonearmMPDProtocol

/// The command layer alone (no sockets, no player): ids, playlist versions for `plchanges`,
/// the actions a command asks of the player, consume, and the database seam.
struct MPDCommandMachineTests {
    struct Library: MPDDatabaseResponder {
        var commands: Set<String> { ["lsinfo", "find", "rm"] }
        func respond(command: String, arguments: [String], tagTypes: Set<MPDTag>) throws(MPDAck) -> String {
            guard arguments.first != "bad" else { throw MPDAck(.noExist, "No such directory") }
            return "directory: \(command)\n"
        }
    }

    static func send(_ m: inout MPDCommandMachine, _ line: String, database: (any MPDDatabaseResponder)? = nil,
                     player: MPDPlayerSnapshot = MPDPlayerSnapshot()) throws(MPDAck) -> MPDOutcome {
        let r = try MPDRequest(line: Array(line.utf8))
        _ = try MPDCommands.check(r)
        return try m.handle(r, client: MPDClientContext(isLocal: true), player: player, database: database) { uri, _ in
            MPDSong(uri: uri, location: "/music/" + uri)
        }
    }

    static func send(_ m: inout MPDCommandMachine, _ line: String, connection: UInt64, isLocal: Bool = true) throws(MPDAck) -> MPDOutcome {
        let r = try MPDRequest(line: Array(line.utf8))
        _ = try MPDCommands.check(r)
        var c = MPDClientContext(isLocal: isLocal)
        c.connection = connection
        return try m.handle(r, client: c, player: MPDPlayerSnapshot(), database: nil) { uri, _ in MPDSong(uri: uri, location: uri) }
    }

    /// Messages go to the subscribers only (idle `message` for them alone); a closed
    /// connection's channels go; mixramp in `status`; `config` for local clients; `kill`;
    /// stream songs' tags edited, files' refused.
    @Test func messagesMixRampConfigKillAndStreamTags() throws {
        var m = MPDCommandMachine()
        #expect(try Self.send(&m, "subscribe news", connection: 1).changed == [.subscription])
        _ = try Self.send(&m, "subscribe news", connection: 2)
        _ = try Self.send(&m, "subscribe other", connection: 3)
        let sent = try Self.send(&m, "sendmessage news hello", connection: 3)
        #expect(sent.notify == [1: [.message], 2: [.message]])
        #expect(try Self.send(&m, "readmessages", connection: 1).response == "channel: news\nmessage: hello\n")
        #expect(try Self.send(&m, "readmessages", connection: 1).response == "")
        #expect(m.connectionClosed(2) == [.subscription])
        #expect(try Self.send(&m, "channels", connection: 9).response == "channel: news\nchannel: other\n")
        #expect(m.connectionClosed(1) == [.subscription])
        #expect(throws: MPDAck.self) { try Self.send(&m, "sendmessage news again", connection: 3) }

        _ = try Self.send(&m, "mixrampdb -17.5", connection: 1)
        _ = try Self.send(&m, "mixrampdelay 2", connection: 1)
        let status = try Self.send(&m, "status", connection: 1).response
        #expect(status.contains("mixrampdb: -17.5\nstate: stop\nmixrampdelay: 2\n"))

        m.musicDirectory = "/music"
        #expect(try Self.send(&m, "config", connection: 1).response == "music_directory: /music\n")
        #expect(throws: MPDAck.self) { try Self.send(&m, "config", connection: 1, isLocal: false) }
        #expect(try Self.send(&m, "kill", connection: 1).kill)

        _ = try Self.send(&m, "add http://radio.example/stream", connection: 1)
        _ = try Self.send(&m, "add song.flac", connection: 1)
        let v = m.version
        let edited = try Self.send(&m, "addtagid 1 Artist Radio", connection: 1)
        #expect(edited.changed == [.playlist] && m.version == v + 1)
        #expect(m.entries[0].song.tags.map(\.1) == ["Radio"])
        #expect(try Self.send(&m, "plchangesposid \(v)", connection: 1).response == "cpos: 0\nId: 1\n")
        _ = try Self.send(&m, "cleartagid 1", connection: 1)
        #expect(m.entries[0].song.tags.isEmpty)
        #expect(throws: MPDAck(.permission, "Cannot edit tags of local files", command: "addtagid")) {
            try Self.send(&m, "addtagid 2 Artist X", connection: 1)
        }
    }

    @Test func idsVersionsAndActions() throws {
        var m = MPDCommandMachine()
        for name in ["a", "b", "c"] { _ = try Self.send(&m, "add \(name)") }
        #expect(m.entries.map(\.id) == [1, 2, 3])
        let v = m.version
        let moved = try Self.send(&m, "moveid 3 0")
        #expect(moved.actions == [.move(from: 2, to: 0)])
        #expect(moved.changed == [.playlist])
        #expect(m.entries.map(\.id) == [3, 1, 2])
        // Every position from the first one changed is reported since the version before.
        let changes = try Self.send(&m, "plchangesposid \(v)")
        #expect(changes.response == "cpos: 0\nId: 3\ncpos: 1\nId: 1\ncpos: 2\nId: 2\n")
        _ = try Self.send(&m, "swapid 1 2")
        #expect(m.entries.map(\.id) == [3, 2, 1])
        let after = m.version
        _ = try Self.send(&m, "deleteid 1")
        #expect(try Self.send(&m, "plchangesposid \(after)").response.isEmpty)
        #expect(try Self.send(&m, "plchanges \(after - 1)").text.contains("Id: 2"))
        let play = try Self.send(&m, "playid 2")
        #expect(play.actions == [.play(position: 1, seconds: nil)])
        #expect(throws: MPDAck(.noExist, "No such song", command: "playid")) { try Self.send(&m, "playid 9") }
    }

    @Test func consumeRemovesWhatWasPlayed() throws {
        var m = MPDCommandMachine()
        _ = try Self.send(&m, "add a")
        _ = try Self.send(&m, "add b")
        #expect(m.playedToEnd(position: 0) == nil)
        _ = try Self.send(&m, "consume 1")
        let o = m.playedToEnd(position: 0)
        #expect(o?.actions == [.remove(at: 0)])
        #expect(m.songs.map(\.uri) == ["b"])
    }

    @Test func databaseCommandsGoThroughTheSeam() throws {
        var m = MPDCommandMachine()
        #expect(throws: MPDAck(.unknown, "unknown command \"lsinfo\"")) { try Self.send(&m, "lsinfo") }
        #expect(try Self.send(&m, "lsinfo", database: Library()).response == "directory: lsinfo\n")
        #expect(throws: MPDAck(.noExist, "No such directory", command: "lsinfo")) { try Self.send(&m, "lsinfo bad", database: Library()) }
        // `commands` lists them only when a library answers.
        #expect(!(try Self.send(&m, "commands").response.contains("command: lsinfo\n")))
        #expect(try Self.send(&m, "commands", database: Library()).response.contains("command: lsinfo\n"))
        // Only those the library answers: the others stay unknown and unlisted.
        #expect(throws: MPDAck(.unknown, "unknown command \"listall\"")) { try Self.send(&m, "listall", database: Library()) }
        #expect(!(try Self.send(&m, "commands", database: Library()).response.contains("command: listall\n")))
        // A stored playlist's change wakes `idle stored_playlist`.
        #expect(try Self.send(&m, "rm x", database: Library()).changed == [.storedPlaylist])
        #expect(try Self.send(&m, "find artist x", database: Library()).changed.isEmpty)
    }

    struct UpdatableLibrary: MPDDatabaseResponder, MPDDatabaseUpdater {
        var commands: Set<String> { ["lsinfo"] }
        func respond(command: String, arguments: [String], tagTypes: Set<MPDTag>) throws(MPDAck) -> String { "" }
        func update(uri: String, rescan: Bool) async -> Bool { false }
        func watchFolders(batches: @escaping @Sendable (MPDWatchBatch) -> Void) async throws {}
    }

    /// `update`/`rescan` as MPD answers them: a job number at once, `updating_db` in `status`
    /// until the job ends, idle `update` when the first starts and when each ends, `database`
    /// when it changed; paths that leave the music folder refused; unknown without an updater.
    @Test func updateJobs() throws {
        var m = MPDCommandMachine()
        let db = UpdatableLibrary()
        #expect(throws: MPDAck(.unknown, "unknown command \"update\"")) { try Self.send(&m, "update", database: Library()) }
        #expect(!(try Self.send(&m, "commands", database: Library()).response.contains("command: update\n")))
        #expect(try Self.send(&m, "commands", database: db).response.contains("command: rescan\n"))
        let first = try Self.send(&m, "update", database: db)
        #expect(first.response == "updating_db: 1\n")
        #expect(first.actions == [.update(job: 1, uri: "", rescan: false)])
        #expect(first.changed == [.update])
        #expect(try Self.send(&m, "status", database: db).response.hasSuffix("state: stop\nupdating_db: 1\n"))
        // A second one waits behind the first: no new `update` event yet.
        let second = try Self.send(&m, "rescan Artist/Album/", database: db)
        #expect(second.response == "updating_db: 2\n")
        #expect(second.actions == [.update(job: 2, uri: "Artist/Album", rescan: true)])
        #expect(second.changed.isEmpty)
        for bad in ["/etc", "../x", "a/../b", "./a"] {
            #expect(throws: MPDAck(.argument, "Malformed path", command: "update")) { try Self.send(&m, "update \(bad)", database: db) }
        }
        #expect(m.updateFinished(job: 1, changed: false) == [.update])
        #expect(try Self.send(&m, "status", database: db).response.hasSuffix("updating_db: 2\n"))
        #expect(m.updateFinished(job: 2, changed: true) == [.update, .database])
        #expect(!(try Self.send(&m, "status", database: db).response.contains("updating_db")))
        #expect(m.updateFinished(job: 2, changed: true).isEmpty)
        #expect(try Self.send(&m, "update", database: db).response == "updating_db: 3\n")
    }

    /// A batch of the folder watch is an update job (as MPD's inotify enqueues one): a number
    /// of the same count as `update`'s, `updating_db` in `status` while it runs, idle `update`
    /// when it starts alone and when it ends, `database` when it changed; the update queue's
    /// limit does not hold it back.
    @Test func watchBatchesAreUpdateJobs() throws {
        var m = MPDCommandMachine()
        let db = UpdatableLibrary()
        let (job, started) = m.watchJobStarted()
        #expect(job == 1 && started == [.update])
        #expect(try Self.send(&m, "status", database: db).response.hasSuffix("updating_db: 1\n"))
        // An `update` meanwhile waits behind it.
        let update = try Self.send(&m, "update", database: db)
        #expect(update.response == "updating_db: 2\n" && update.changed.isEmpty)
        #expect(m.updateFinished(job: 1, changed: true) == [.update, .database])
        #expect(try Self.send(&m, "status", database: db).response.hasSuffix("updating_db: 2\n"))
        // Behind a running job, a batch's start is no event of its own.
        #expect(m.watchJobStarted() == (3, []))
        #expect(m.updateFinished(job: 2, changed: false) == [.update])
        #expect(m.updateFinished(job: 3, changed: false) == [.update])
        #expect(!(try Self.send(&m, "status", database: db).response.contains("updating_db")))
        // A full update queue does not stop the watch.
        for _ in 0..<32 { _ = try Self.send(&m, "update", database: db) }
        #expect(throws: MPDAck(.updateAlready, "Update queue is full", command: "update")) { try Self.send(&m, "update", database: db) }
        #expect(m.watchJobStarted().job == 36)
    }

    /// The outputs commands as MPD answers them (the format of a real MPD's `outputs`), and
    /// disabling the only output while playing: a pause, with MPD's error; `play` then plays
    /// nothing until it is enabled again.
    @Test func outputs() throws {
        var m = MPDCommandMachine()
        m.output = MPDOutput(name: "PulseAudio", plugin: "pulse")
        #expect(try Self.send(&m, "outputs").response == "outputid: 0\noutputname: PulseAudio\nplugin: pulse\noutputenabled: 1\n")
        #expect(throws: MPDAck(.noExist, "No such audio output", command: "enableoutput")) { try Self.send(&m, "enableoutput 5") }
        #expect(throws: MPDAck(.argument, "Integer expected: x", command: "disableoutput")) { try Self.send(&m, "disableoutput x") }
        #expect(throws: MPDAck(.argument, "Unsupported attribute", command: "outputset")) { try Self.send(&m, "outputset 0 a b") }
        #expect(throws: MPDAck(.noExist, "No such audio output", command: "outputset")) { try Self.send(&m, "outputset 7 a b") }
        // Enabling what is enabled changes nothing.
        let same = try Self.send(&m, "enableoutput 0")
        #expect(same.changed.isEmpty && same.actions.isEmpty)
        _ = try Self.send(&m, "add a")
        let playing = MPDPlayerSnapshot(state: .play, position: 0, elapsed: 3)
        let off = try Self.send(&m, "disableoutput 0", player: playing)
        #expect(off.actions == [.output(id: 0, enabled: false)])
        #expect(off.changed == [.output, .player])
        #expect(try Self.send(&m, "outputs").response.hasSuffix("outputenabled: 0\n"))
        #expect(try Self.send(&m, "status", player: MPDPlayerSnapshot(state: .pause, position: 0, elapsed: 3)).response
            .contains("error: All audio outputs are disabled\n"))
        _ = try Self.send(&m, "clearerror")
        _ = try Self.send(&m, "play 0")
        #expect(try Self.send(&m, "status").response.contains("error: All audio outputs are disabled\n"))
        let on = try Self.send(&m, "toggleoutput 0")
        #expect(on.actions == [.output(id: 0, enabled: true)] && on.changed == [.output])
        #expect(m.outputEnabled)
    }

    /// The equalizer as every output's `equalizer` attribute: `outputset N equalizer NAME` on
    /// any output sets the one preset (an action for the player, idle `output`); an unknown
    /// preset, or the attribute on a daemon without an equalizer, is refused; a saved preset is
    /// restored only when the presets know it.
    @Test func theEqualizerIsAnOutputAttribute() throws {
        var m = MPDCommandMachine()
        #expect(throws: MPDAck(.argument, "Unsupported attribute", command: "outputset")) { try Self.send(&m, "outputset 0 equalizer rock") }
        m.outputs = [MPDOutput(name: "null", plugin: "null"), MPDOutput(name: "Snapcast", plugin: "fifo", attributes: ["path=/tmp/f"])]
        m.equalizerPresets = ["flat", "rock", "jazz"]
        #expect(try Self.send(&m, "outputs").response == "outputid: 0\noutputname: null\nplugin: null\noutputenabled: 1\nattribute: equalizer=flat\n"
            + "outputid: 1\noutputname: Snapcast\nplugin: fifo\noutputenabled: 1\nattribute: path=/tmp/f\nattribute: equalizer=flat\n")
        let set = try Self.send(&m, "outputset 1 equalizer rock")
        #expect(set.actions == [.equalizer("rock")] && set.changed == [.output])
        #expect(m.equalizer == "rock")
        #expect(try Self.send(&m, "outputs").response.components(separatedBy: "attribute: equalizer=rock\n").count == 3)
        #expect(throws: MPDAck(.argument, "Unknown equalizer preset \"loud\" (known: flat, rock, jazz)", command: "outputset")) {
            try Self.send(&m, "outputset 0 equalizer loud")
        }
        #expect(throws: MPDAck(.argument, "Unsupported attribute", command: "outputset")) { try Self.send(&m, "outputset 0 path /x") }
        m.restoreEqualizer("nosuch")
        #expect(m.equalizer == "rock")
        m.restoreEqualizer("jazz")
        #expect(m.equalizer == "jazz")
    }

    /// Several outputs: each listed with its id and attributes, switched alone; only with every
    /// output disabled does what plays pause.
    @Test func severalOutputs() throws {
        var m = MPDCommandMachine()
        m.outputs = [MPDOutput(name: "null", plugin: "null"), MPDOutput(name: "Snapcast", plugin: "fifo", attributes: ["path=/tmp/f"])]
        #expect(try Self.send(&m, "outputs").response == "outputid: 0\noutputname: null\nplugin: null\noutputenabled: 1\n"
            + "outputid: 1\noutputname: Snapcast\nplugin: fifo\noutputenabled: 1\nattribute: path=/tmp/f\n")
        _ = try Self.send(&m, "add a")
        let playing = MPDPlayerSnapshot(state: .play, position: 0, elapsed: 1)
        let off0 = try Self.send(&m, "disableoutput 0", player: playing)
        #expect(off0.actions == [.output(id: 0, enabled: false)] && off0.changed == [.output])
        #expect(m.outputEnabled && m.enabledOutputs == [false, true])
        let off1 = try Self.send(&m, "toggleoutput 1", player: playing)
        #expect(off1.actions == [.output(id: 1, enabled: false)] && off1.changed == [.output, .player])
        #expect(!m.outputEnabled)
        #expect(throws: MPDAck(.noExist, "No such audio output", command: "enableoutput")) { try Self.send(&m, "enableoutput 2") }
        m.restoreOutputs(["Snapcast": true])
        #expect(m.enabledOutputs == [false, true])
    }

    /// The volume and modes set on the player by someone else (MPRIS) show in `status`, with
    /// idle `mixer`/`options`; the values the MPD commands set already change nothing.
    @Test func theVolumeAndModesFollowThePlayer() throws {
        var m = MPDCommandMachine()
        #expect(m.playerVolumeChanged(100).isEmpty)
        #expect(m.playerVolumeChanged(50) == [.mixer])
        #expect(try Self.send(&m, "getvol").response == "volume: 50\n")
        #expect(m.playerRepeatChanged(repeat: true, single: true) == [.options])
        let status = try Self.send(&m, "status").response
        #expect(status.contains("repeat: 1\n") && status.contains("single: 1\n"), "\(status)")
        _ = try Self.send(&m, "repeat 0")
        // What `repeat 0` made of the player (none) is no change; single stays on.
        #expect(m.playerRepeatChanged(repeat: false, single: nil).isEmpty)
        #expect(m.single == .on)
        #expect(m.playerRandomChanged(true) == [.options])
        #expect(m.isRandom)
        // `single oneshot` with repeat: the player repeats one song, and its echo keeps oneshot.
        _ = try Self.send(&m, "repeat 1")
        _ = try Self.send(&m, "single oneshot")
        #expect(m.playerRepeatChanged(repeat: true, single: true).isEmpty)
        #expect(m.single == .oneshot)
    }
}
