// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
@testable import TonearmMPDProtocol

/// The client's reading of a server's answers (MPDResponseParser): the greeting, pairs, `OK`,
/// `list_OK`, `ACK` lines into typed errors, binary chunks, any split of the bytes, and the
/// limits that keep a broken server from holding a client's memory. Offline; no server.
@Suite struct MPDResponseParserTests {
    /// Feeds `text` in pieces of `step` bytes and collects every answer.
    private func answers(_ bytes: [UInt8], step: Int, greeting: Bool = true) throws -> (String?, [MPDResponseParser.Answer]) {
        var p = MPDResponseParser()
        var out: [MPDResponseParser.Answer] = []
        var version: String?
        var i = 0
        while i < bytes.count {
            p.feed(bytes[i..<min(bytes.count, i + step)])
            i += step
            if greeting && version == nil { version = try p.readGreeting() }
            if !greeting || version != nil { while let a = try p.nextAnswer() { out.append(a) } }
        }
        return (version, out)
    }

    @Test func readsGreetingPairsListOKAndErrorsWhateverTheSplit() throws {
        let text = "OK MPD 0.23.5\nvolume: 50\nrepeat: 0\nstate: play\nOK\n"
            + "file: a.flac\nTitle: 青花瓷\nlist_OK\nfile: b.flac\nlist_OK\nOK\n"
            + "ACK [50@1] {play} No such song\n"
            + "Name: with: colons: inside\nempty:\nOK\n"
        let bytes = Array(text.utf8)
        var first: [MPDResponseParser.Answer]?
        for step in [1, 2, 3, 7, bytes.count] {
            let (version, got) = try answers(bytes, step: step)
            #expect(version == "0.23.5")
            #expect(got.count == 4, "step \(step): \(got)")
            if let first { #expect(got == first, "step \(step)") } else { first = got }
        }
        let got = try #require(first)
        guard case .ok(let status) = got[0] else { Issue.record("\(got[0])"); return }
        #expect(status["VOLUME"] == "50")  // keys without case, as clients read them
        #expect(status.pairs.map(\.key) == ["volume", "repeat", "state"])
        guard case .ok(let list) = got[1] else { Issue.record("\(got[1])"); return }
        #expect(list.listEnds == [2, 3])
        #expect(list.listReplies.map { $0.values(of: "file") } == [["a.flac"], ["b.flac"]])
        #expect(list.listReplies[0]["Title"] == "青花瓷")
        guard case .failure(let error, let partial) = got[2] else { Issue.record("\(got[2])"); return }
        #expect(error == MPDServerError(code: 50, listIndex: 1, command: "play", message: "No such song"))
        #expect(error.ack == .noExist)
        #expect(partial.pairs.isEmpty)
        guard case .ok(let odd) = got[3] else { Issue.record("\(got[3])"); return }
        #expect(odd["Name"] == "with: colons: inside")
        #expect(odd["empty"] == "")
    }

    @Test func anACKLineRoundTripsThroughTheServersWriter() throws {
        // What the daemon writes (MPDAck.line) is what the client reads back.
        for code in MPDAckCode.allCases {
            let ack = MPDAck(code, "a message with {braces} and [brackets]", command: "seekcur", listIndex: 3)
            let read = try #require(MPDServerError(line: ack.line))
            #expect(read.ack == code && read.listIndex == 3 && read.command == "seekcur" && read.message == ack.message)
            #expect(read.description == ack.line)
        }
        // An unknown code is kept as a number; a line without a command name too.
        #expect(MPDServerError(line: "ACK [99@0] {} what")?.code == 99)
        #expect(MPDServerError(line: "ACK [99@0] {} what")?.ack == nil)
        for bad in ["ACK", "ACK [x@0] {a} b", "ACK [1@] {a} b", "ACK [1@0] a b", "ACK [1@0] {a b", "ACK [-1@0] {a} b"] {
            #expect(MPDServerError(line: bad) == nil, "\(bad)")
        }
    }

    @Test func readsABinaryChunkWhateverItHolds() throws {
        // The chunk may hold newlines, "OK\n" and invalid UTF-8: read by its size, not by lines.
        let payload: [UInt8] = Array("OK\nlist_OK\n".utf8) + [0xFF, 0x00, 10, 13]
        let bytes = Array("size: 100\ntype: image/png\nbinary: \(payload.count)\n".utf8) + payload + Array("\nOK\n".utf8)
        for step in [1, 5, bytes.count] {
            let (_, got) = try answers(bytes, step: step, greeting: false)
            #expect(got.count == 1)
            guard case .ok(let reply) = got.first else { Issue.record("step \(step): \(got)"); continue }
            #expect(reply.binary == payload)
            #expect(reply["type"] == "image/png" && reply["binary"] == String(payload.count))
        }
    }

    @Test func refusesWhatIsNotTheProtocol() throws {
        func failure(_ text: String, greeting: Bool = false, limits: (Int, Int) = (1 << 20, 1 << 26)) -> MPDResponseError? {
            var p = MPDResponseParser(maxLineBytes: limits.0, maxBinaryBytes: limits.1)
            p.feed(Array(text.utf8))
            do {
                if greeting { _ = try p.readGreeting() } else { while try p.nextAnswer() != nil {} }
                return nil
            } catch { return error }
        }
        #expect(failure("HTTP/1.1 400 Bad Request\n", greeting: true)?.message.contains("not an MPD server") == true)
        #expect(failure("no colon here\n")?.message.contains("neither") == true)
        #expect(failure("key:novalue-space\n") != nil)
        #expect(failure(": value\n")?.message.contains("empty key") == true)
        #expect(failure("ACK broken\n")?.message.contains("malformed error") == true)
        #expect(failure("binary: x\n")?.message.contains("no size") == true)
        #expect(failure("binary: 100\n", limits: (1 << 20, 10))?.message.contains("more than 10") == true)
        #expect(failure("binary: 2\nabXOK\n")?.message.contains("not followed by a newline") == true)
        #expect(failure("binary: 1\na\nbinary: 1\nb\nOK\n")?.message.contains("second binary") == true)
        // A line over the limit, complete or not yet ended.
        #expect(failure("k: " + String(repeating: "x", count: 100) + "\n", limits: (50, 10))?.message.contains("longer than 50") == true)
        #expect(failure("k: " + String(repeating: "x", count: 100), limits: (50, 10))?.message.contains("longer than 50") == true)
        // Not complete yet: no answer, no error.
        var p = MPDResponseParser()
        p.feed(Array("state: play\nO".utf8))
        #expect(try p.nextAnswer() == nil)
        p.feed(Array("K\r\n".utf8))  // a CR before the newline is not part of the line
        #expect(try p.nextAnswer() == .ok(MPDReply(pairs: [MPDPair("state", "play")])))
        #expect(p.bufferedCount == 0)
    }

    @Test func recordsSplitSongsAtTheirFirstKey() {
        let reply = MPDReply(pairs: [MPDPair("directory", "d"), MPDPair("Last-Modified", "x"), MPDPair("file", "d/a.flac"),
                                     MPDPair("Title", "A"), MPDPair("file", "d/b.flac"), MPDPair("Pos", "1")])
        let records = reply.records(startingWith: ["file", "directory"])
        #expect(records.map { $0.map(\.key) } == [["directory", "Last-Modified"], ["file", "Title"], ["file", "Pos"]])
    }
}
