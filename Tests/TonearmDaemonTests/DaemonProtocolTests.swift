// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmDaemon
import TonearmMPDProtocol
import TonearmTestSupport

/// The daemon's server on the raw protocol: the same request lines sent to Debian's MPD
/// (``PrivateMPD``, an empty queue and library) and to the daemon (an empty queue), the answers
/// compared line for line — nothing of MPD's answers is written here; command lists; the idle
/// rules; the connection limit; 100 idle clients and a busy one.
@Suite(.serialized)
struct DaemonProtocolTests {
    /// Requests (one line, or a command list) whose answers on an empty queue depend only on the
    /// protocol: error codes, indices, messages, `list_OK`, closing.
    static let cases: [[String]] = [
        ["ping"],
        ["foo"],
        ["PING"],
        ["play 5"],
        ["play x"],
        ["play -1"],
        ["playid 99"],
        ["repeat 2"],
        ["random x"],
        ["single 2"],
        ["single oneshot"],
        ["consume 1"],
        ["consume 0"],
        ["crossfade -1"],
        ["delete 0"],
        ["delete 3:"],
        ["delete -1"],
        ["delete 2:1"],
        ["deleteid 5"],
        ["move 0 1"],
        ["moveid 3 0"],
        ["swap 0 1"],
        ["swapid 1 2"],
        ["seek 0 1"],
        ["seekid 9 1"],
        ["seekcur x"],
        ["playlistinfo 5"],
        ["playlistinfo"],
        ["playlistid 3"],
        ["plchanges x"],
        ["plchangesposid 0"],
        ["clearerror"],
        ["stop"],
        ["next"],
        ["previous"],
        ["pause"],
        ["pause 2"],
        ["shuffle"],
        ["clear"],
        ["play"],
        ["currentsong"],
        ["tagtypes enable Foo"],
        ["tagtypes bogus"],
        ["tagtypes clear"],
        ["tagtypes disable Artist"],
        ["tagtypes all"],
        ["seekcur 5"],
        ["setvol x"],
        ["volume 500"],
        ["addid x 5"],
        ["deleteid x"],
        ["binarylimit x"],
        ["binarylimit 63"],
        ["binarylimit 64"],
        ["binarylimit 8400896"],
        ["binarylimit 8400897"],
        ["binarylimit -1"],
        ["add"],
        ["status 1"],
        ["idle foo"],
        ["noidle", "ping"],
        ["idle", "ping"],
        ["command_list_begin", "ping", "foo", "ping", "command_list_end"],
        ["command_list_ok_begin", "ping", "ping", "command_list_end"],
        ["command_list_ok_begin", "ping", "play 3", "command_list_end"],
        ["command_list_begin", "repeat 0", "random 0", "command_list_end"],
        ["command_list_begin", "close", "command_list_end"],
        ["GET / HTTP/1.1"],
        ["ping \"unterminated"],
        // Messages, partitions, mixramp, stream tags (issue 20's second round).
        ["channels"],
        ["subscribe bad/name"],
        ["unsubscribe nope"],
        ["sendmessage nope hello"],
        ["sendmessage bad/name hello"],
        ["command_list_begin", "subscribe a", "subscribe a", "command_list_end"],
        ["command_list_ok_begin", "subscribe b:1", "subscribe a_2", "sendmessage b:1 \"hi there\"", "channels", "readmessages", "readmessages", "command_list_end"],
        ["channels"],
        ["readmessages"],
        ["listpartitions"],
        ["partition default"],
        ["partition other"],
        ["newpartition default"],
        ["newpartition bad/name"],
        ["delpartition default"],
        ["delpartition other"],
        ["mixrampdb x"],
        ["mixrampdb -17.5"],
        ["mixrampdelay 2"],
        ["mixrampdelay 0"],
        ["mixrampdb 0"],
        ["addtagid 99 artist x"],
        ["addtagid x artist x"],
        ["cleartagid 99 foo"],
        ["cleartagid 99"],
    ]

    @Test func answersAsMPDDoes() async throws {
        let mpd = try PrivateMPD()
        defer { mpd.stop() }
        let d = try await TestDaemon()
        var differences: [String] = []
        for lines in Self.cases {
            let theirs = try mpd.exchange(lines.map { Array($0.utf8) })
            let client = try MPDTestClient(unixPath: d.socketPath)
            #expect(client.greeting == "OK MPD 0.23.5")
            let ours = try client.exchange(lines)
            if ours != theirs { differences.append("\(lines): MPD \(theirs), Tonearm \(ours)") }
        }
        #expect(differences.isEmpty, "\(differences.joined(separator: "\n"))")
        await d.stop()
    }

    @Test func idleRules() async throws {
        let d = try await TestDaemon()
        let a = try d.tone("a.flac", seconds: 1)
        let idler = try MPDTestClient(unixPath: d.socketPath)
        let idlers = d.daemon.hub.idleCountChanges
        // Changes made while a client is busy (not idling) are kept for its next idle.
        let other = try MPDTestClient(unixPath: d.socketPath)
        #expect(try other.exchange(["add \(MPDRequest.quoted(a))"]) == ["OK"])
        #expect(try other.exchange(["repeat 1"]) == ["OK"])
        #expect(try idler.exchange(["idle playlist"]) == ["changed: playlist", "OK"])
        #expect(try idler.exchange(["idle"]) == ["changed: options", "OK"])
        // An idle with nothing pending waits; another client's change wakes it.
        idler.send(["idle mixer options"])
        _ = try await waitForEvent(idlers, timeout: 10, "the idle") { $0 == 1 }
        #expect(try other.exchange(["setvol 40"]) == ["OK"])
        #expect(try idler.readAnswer() == ["changed: mixer", "OK"])
        // noidle ends an idle with what changed (nothing): OK.
        idler.send(["idle"])
        _ = try await waitForEvent(idlers, timeout: 10, "the second idle") { $0 == 1 }
        #expect(try idler.exchange(["noidle"]) == ["OK"])
        #expect(try idler.exchange(["ping"]) == ["OK"])
        // Any other command while idling closes the connection.
        idler.send(["idle"])
        _ = try await waitForEvent(idlers, timeout: 10, "the third idle") { $0 == 1 }
        #expect(try idler.exchange(["status"]) == ["<closed>"])
        await d.stop()
    }

    @Test func connectionLimitAndLongLines() async throws {
        var limits = MPDServerLimits()
        limits.maxConnections = 3
        limits.maxLineLength = 1024
        let d = try await TestDaemon(limits: limits)
        let kept = try (0..<3).map { _ in try MPDTestClient(unixPath: d.socketPath) }
        for c in kept { #expect(c.greeting == "OK MPD 0.23.5") }
        // The fourth is closed at once, without a greeting.
        let refused = try MPDTestClient(unixPath: d.socketPath)
        #expect(refused.greeting == "<closed>")
        // A line longer than the limit closes its connection; the others go on.
        kept[0].send([String(repeating: "a", count: 2000)])
        #expect(try kept[0].readAnswer() == ["<closed>"])
        #expect(try kept[1].exchange(["ping"]) == ["OK"])
        await d.stop()
    }

    @Test func hundredIdleClientsAndABusyOneAllServed() async throws {
        var limits = MPDServerLimits()
        limits.maxConnections = 128
        let d = try await TestDaemon(limits: limits)
        let a = try d.tone("a.flac", seconds: 1)
        let idlers = d.daemon.hub.idleCountChanges
        let idle = try (0..<100).map { _ in try MPDTestClient(unixPath: d.socketPath) }
        for c in idle { c.send(["idle playlist"]) }
        _ = try await waitForEvent(idlers, timeout: 30, "100 idle clients") { $0 == 100 }
        let busy = try MPDTestClient(unixPath: d.socketPath)
        for i in 0..<200 {
            let id = MPDTestClient.pairs(try busy.exchange(["addid \(MPDRequest.quoted(a))"]))["Id"]
            #expect(id == String(i + 1))
            if i % 50 == 0 { #expect(try busy.exchange(["status"]).last == "OK") }
        }
        let info = try busy.exchange(["playlistinfo"])
        #expect(info.filter { $0.hasPrefix("Id: ") }.count == 200)
        for c in idle { #expect(try c.readAnswer() == ["changed: playlist", "OK"]) }
        await d.stop()
    }

    /// A client that vanishes mid-answer (a reset while a long `playlistinfo` is written) and one
    /// that asks and never reads hold no one else: a third client is served throughout, an idle
    /// one is woken, and the one that does not read is closed once its unread answers pass the
    /// output limit (MPD's `max_output_buffer_size`), instead of being answered in full.
    @Test func vanishedAndStalledClientsHoldNoOne() async throws {
        var limits = MPDServerLimits()
        limits.maxOutputBuffer = 256 << 10
        let d = try await TestDaemon(limits: limits)
        let a = try d.tone("a.flac", seconds: 1, title: "A song whose title makes the answer longer")
        let busy = try MPDTestClient(unixPath: d.socketPath)
        let adds = ["command_list_begin"] + Array(repeating: "add \(MPDRequest.quoted(a))", count: 1000) + ["command_list_end"]
        #expect(try busy.exchange(adds, timeout: 30) == ["OK"])
        let watcher = try MPDTestClient(unixPath: d.socketPath)
        watcher.send(["idle playlist"])
        // Vanishes: asks for the whole queue, then resets the connection without reading.
        do {
            let vanishing = try MPDTestClient(port: d.port)
            vanishing.send(["playlistinfo"])
            vanishing.closeAbortively()
        }
        // Stalls: 30 answers of the whole queue asked for, none read.
        let stalled = try MPDTestClient(unixPath: d.socketPath)
        stalled.send(Array(repeating: "playlistinfo", count: 30))
        for _ in 0..<20 { #expect(try busy.exchange(["status"]).last == "OK") }
        #expect(MPDTestClient.pairs(try busy.exchange(["addid \(MPDRequest.quoted(a))"]))["Id"] == "1001")
        #expect(try watcher.readAnswer() == ["changed: playlist", "OK"])
        // The stalled client, read at last: cut off after a few answers, not given all 30.
        var answers = 0, closed = false
        while !closed && answers < 30 {
            let answer = try stalled.readAnswer(timeout: 30)
            if answer.last == "OK" { answers += 1 }
            closed = answer.last == "<closed>"
        }
        #expect(answers < 30, "\(answers) whole answers read before the close")
        #expect(try busy.exchange(["ping"]) == ["OK"])
        await d.stop()
    }
}

/// Passwords and permissions as MPD has them: the same configuration (`password` lines, with
/// and without `default_permissions`) given to a real MPD and to the daemon, the same requests
/// sent on one connection to each, the answers compared line for line. `commands` and
/// `notcommands` are compared on the commands the daemon answers (MPD's lists also name the
/// ones it lacks: `sticker`, `mount`, …).
@Suite(.serialized)
struct DaemonPermissionTests {
    static let passwords = ["sec@read,add", "adm@read,add,control,admin"]

    static let transcript: [[String]] = [
        ["currentsong"], ["commands"], ["notcommands"], ["idle foo"], ["play 1 2 3"], ["add nosuch.flac"], ["ping"],
        ["password nope"], ["currentsong"],
        ["password sec"], ["currentsong"], ["commands"], ["notcommands"], ["playlistinfo"], ["play"], ["add nosuch.flac"],
        ["clear"], ["setvol 10"],
        ["command_list_ok_begin", "ping", "password adm", "clear", "command_list_end"],
        ["commands"], ["notcommands"], ["password nope"], ["clear"], ["random 0"],
        ["password sec"], ["clear"], ["command_list_begin", "currentsong", "repeat 0", "command_list_end"],
    ]

    /// The answers to ``transcript`` on one connection, `commands`/`notcommands` lines kept
    /// for the daemon's commands only.
    static func run(_ client: MPDTestClient) throws -> [String] {
        var out: [String] = []
        for lines in transcript {
            let answer = try client.exchange(lines).filter { line in
                guard line.hasPrefix("command: ") else { return true }
                return MPDCommandMachine.implemented.contains(String(line.dropFirst(9)))
            }
            out.append("\(lines.joined(separator: " / ")) → \(answer.joined(separator: " | "))")
        }
        return out
    }

    @Test(arguments: [nil, "read"])
    func passwordsAndPermissionsAreMPDs(defaultPermissions: String?) async throws {
        var config = Self.passwords.map { "password \"\($0)\"\n" }.joined()
        var access = MPDAccess()
        for p in Self.passwords { try access.addPassword(parsing: p) }
        if let defaultPermissions {
            config += "default_permissions \"\(defaultPermissions)\"\n"
            try access.setDefaultPermissions(parsing: defaultPermissions)
        }
        let mpd = try PrivateMPD(extraConfig: config)
        defer { mpd.stop() }
        let d = try await TestDaemon(access: access)
        let theirs = try Self.run(MPDTestClient(unixPath: mpd.socketPath))
        let ours = try Self.run(MPDTestClient(unixPath: d.socketPath))
        await d.stop()
        let differences = zip(theirs, ours).filter { $0 != $1 }.map { "MPD     \($0)\nTonearm \($1)" }
        #expect(differences.isEmpty, Comment(rawValue: differences.joined(separator: "\n")))
        // The permission errors were there to compare.
        #expect(ours.contains { $0.contains("ACK [4@0] {play} you don't have permission for \"play\"") })
        #expect(ours.contains { $0.contains("ACK [3@0] {password} incorrect password") })
    }

    /// `local_permissions`: a client on the Unix socket starts with them (the same transcript,
    /// compared with MPD given the same settings; MPD's private instance listens on a Unix
    /// socket only), a TCP client with the default ones.
    @Test func localPermissionsAreMPDs() async throws {
        var access = MPDAccess()
        for p in Self.passwords { try access.addPassword(parsing: p) }
        try access.setDefaultPermissions(parsing: "read")
        try access.setLocalPermissions(parsing: "read,add,player")
        let mpd = try PrivateMPD(extraConfig: Self.passwords.map { "password \"\($0)\"\n" }.joined()
                                    + "default_permissions \"read\"\nlocal_permissions \"read,add,player\"\n")
        defer { mpd.stop() }
        let d = try await TestDaemon(access: access)
        let theirs = try Self.run(MPDTestClient(unixPath: mpd.socketPath))
        let ours = try Self.run(MPDTestClient(unixPath: d.socketPath))
        let differences = zip(theirs, ours).filter { $0 != $1 }.map { "MPD     \($0)\nTonearm \($1)" }
        #expect(differences.isEmpty, Comment(rawValue: differences.joined(separator: "\n")))
        // The local permissions were in force: `play` allowed before any password.
        #expect(ours[1].hasPrefix("commands → ") && ours[1].contains("command: play |"), "\(ours)")
        #expect(ours[4] == "play 1 2 3 → ACK [2@0] {play} too many arguments for \"play\"", "\(ours)")
        let tcp = try MPDTestClient(port: d.port)
        #expect(try tcp.exchange(["play"]) == ["ACK [4@0] {play} you don't have permission for \"play\""])
        #expect(try tcp.exchange(["currentsong"]) == ["OK"])
        await d.stop()
    }

    /// Idle needs `read`: without it the daemon answers MPD's permission error instead of
    /// waiting; with it (after `password`) a change made by another client wakes it.
    @Test func idleNeedsRead() async throws {
        var access = MPDAccess()
        try access.addPassword(parsing: "sec@read")
        try access.addPassword(parsing: "adm@read,add,control,admin")
        let d = try await TestDaemon(access: access)
        let idlers = d.daemon.hub.idleCountChanges
        let idler = try MPDTestClient(unixPath: d.socketPath)
        #expect(try idler.exchange(["idle player"]) == ["ACK [4@0] {idle} you don't have permission for \"idle\""])
        #expect(try idler.exchange(["password sec"]) == ["OK"])
        idler.send(["idle options"])
        _ = try await waitForEvent(idlers, timeout: 10, "the idle") { $0 == 1 }
        let admin = try MPDTestClient(unixPath: d.socketPath)
        #expect(try admin.exchange(["repeat 1"]) == ["ACK [4@0] {repeat} you don't have permission for \"repeat\""])
        #expect(try admin.exchange(["password adm"]) == ["OK"])
        #expect(try admin.exchange(["repeat 1"]) == ["OK"])
        #expect(try idler.readAnswer() == ["changed: options", "OK"])
        await d.stop()
    }
}
