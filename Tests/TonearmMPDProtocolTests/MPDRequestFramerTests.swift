// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
import TonearmMPDProtocol

/// The framer's rules, one at a time: single commands, command lists (and their size limit),
/// lines that close the connection, `idle`/`noidle`.
@Suite struct MPDRequestFramerTests {
    func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

    @Test func aLineIsOneCommand() {
        var f = MPDRequestFramer()
        #expect(f.receive(line: bytes("status\r")) == .execute(.init(lines: [bytes("status")], mode: .single)))
    }

    @Test func aLineThatIsNotACommandClosesTheConnection() {
        for line in ["", "GET / HTTP/1.1", "Ping", "1ping", " ping"] {
            var f = MPDRequestFramer()
            #expect(f.receive(line: bytes(line)) == .close(.notACommand), "\(line)")
            // ...and nothing after it is read.
            #expect(f.receive(line: bytes("ping")) == .close(.notACommand))
        }
    }

    @Test func commandListsCollectUntilTheirEnd() {
        var f = MPDRequestFramer()
        #expect(f.receive(line: bytes("command_list_ok_begin")) == .none)
        #expect(f.isCollecting)
        #expect(f.receive(line: bytes("add a")) == .none)
        #expect(f.receive(line: bytes("pi-ng")) == .none)  // read when carried out
        #expect(f.receive(line: bytes("command_list_end")) == .execute(.init(lines: [bytes("add a"), bytes("pi-ng")], mode: .list(ok: true))))
        #expect(!f.isCollecting)
        #expect(f.receive(line: bytes("command_list_begin")) == .none)
        #expect(f.receive(line: bytes("command_list_end")) == .execute(.init(lines: [], mode: .list(ok: false))))
    }

    @Test func aCommandListPastTheLimitClosesTheConnection() {
        var f = MPDRequestFramer(maxCommandListBytes: 10)
        _ = f.receive(line: bytes("command_list_begin"))
        #expect(f.receive(line: bytes("add 12345")) == .none)  // 9 bytes
        #expect(f.receive(line: bytes("add 1")) == .close(.commandListTooLarge(limit: 10)))
        #expect(f.receive(line: bytes("command_list_end")) == .close(.notACommand))
    }

    @Test func whileIdlingOnlyNoidleIsRead() {
        var f = MPDRequestFramer()
        // noidle without idle: ignored.
        #expect(f.receive(line: bytes("noidle")) == .none)
        f.enterIdle()
        #expect(f.isIdle)
        #expect(f.receive(line: bytes("noidle")) == .endIdle)
        #expect(!f.isIdle)
        f.enterIdle()
        f.leaveIdle()  // an event answered the idle
        #expect(f.receive(line: bytes("status")) == .execute(.init(lines: [bytes("status")], mode: .single)))
        f.enterIdle()
        #expect(f.receive(line: bytes("status")) == .close(.commandWhileIdle))
    }
}
