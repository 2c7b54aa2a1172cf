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
        #expect(try Self.send(&m, "plchanges \(after - 1)").response.contains("Id: 2"))
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
}
