// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
import TonearmMPDProtocol

/// Reading request lines: the command word, quoted and unquoted arguments, escapes, white space,
/// and MPD's messages for lines it cannot read.
@Suite struct MPDRequestTests {
    func read(_ line: String) throws(MPDAck) -> MPDRequest { try MPDRequest(line: Array(line.utf8)) }

    @Test func wordsAndArguments() throws {
        #expect(try read("ping") == MPDRequest(command: "ping"))
        #expect(try read("find artist \"Joni Mitchell\" album Blue") == MPDRequest(command: "find", arguments: ["artist", "Joni Mitchell", "album", "Blue"]))
        #expect(try read("find\tartist\t x  \r") == MPDRequest(command: "find", arguments: ["artist", "x"]))
        #expect(try read("add \"\"") == MPDRequest(command: "add", arguments: [""]))
        #expect(try read("status_2 a\\b") == MPDRequest(command: "status_2", arguments: ["a\\b"]))
    }

    @Test func backslashesEscapeInsideQuotes() throws {
        #expect(try read(#"find artist "a\"b""#).arguments == ["artist", "a\"b"])
        #expect(try read(#"find artist "a\\b\c""#).arguments == ["artist", "a\\bc"])
        // A filter expression inside an argument keeps its own quotes.
        #expect(try read(#"find "(artist == \"AC/DC\")""#).arguments == [#"(artist == "AC/DC")"#])
    }

    @Test func utf8IsKeptAndBadBytesDoNotStopTheLine() throws {
        #expect(try read("find artist \"坂本 龍一\"").arguments == ["artist", "坂本 龍一"])
        let r = try MPDRequest(line: Array("find artist ".utf8) + [0xFF, 0xFE])
        #expect(r.arguments.count == 2 && r.arguments[1] == "\u{FFFD}\u{FFFD}")
    }

    @Test(arguments: [
        ("pi-ng", "Invalid word character"),
        ("find \"artist", "Missing closing '\"'"),
        ("find \"artist\"x", "Space expected after closing '\"'"),
        ("find 'artist' 'x'", "Invalid unquoted character"),
        ("find artist a\"b", "Invalid unquoted character"),
        ("find \"a\\", "Missing closing '\"'"),
        ("1ping", "Letter expected"),
    ])
    func unreadableLinesSayWhy(_ line: String, _ message: String) {
        #expect(throws: MPDAck(.unknown, message)) { try read(line) }
    }

    @Test func quotingReadsBack() throws {
        for text in ["plain", "with space", "quote \" and \\ backslash", "", "坂本 'x'"] {
            #expect(try read("add " + MPDRequest.quoted(text)).arguments == [text])
        }
    }

    @Test func tooManyArgumentsIsAnError() {
        let line = "ping" + String(repeating: " x", count: MPDRequest.maxArguments + 1)
        #expect(throws: MPDAck(.unknown, "Too many arguments")) { try read(line) }
    }

    @Test func ackLinesAreOneLine() {
        #expect(MPDAck(.argument, "Integer expected: x", command: "play").line == "ACK [2@0] {play} Integer expected: x")
        #expect(MPDAck(.noExist, "a\nb", command: "load", listIndex: 3).line == "ACK [50@3] {load} a b")
        #expect(MPDResponse.pair("Title", "two\nlines") == "Title: two lines\n")
    }
}
