// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
import Tonearm
@testable import TonearmCLI

/// The picker's keys from a terminal's bytes, however they are split.
@Suite struct PickerKeyDecoderTests {
    /// The keys `bytes` make, fed one byte at a time (the worst split a read can give).
    func keys(_ bytes: [UInt8], _ d: inout PickerKeyDecoder) -> [PickerInput] {
        bytes.flatMap { d.feed($0) }
    }

    func keys(_ text: String) -> [PickerInput] {
        var d = PickerKeyDecoder()
        return keys(Array(text.utf8), &d)
    }

    func text(_ s: String...) -> [PickerInput] { s.map { .key(.text($0)) } }

    @Test func asciiAndControlKeys() {
        #expect(keys("ab 1") == text("a", "b", " ", "1"))
        #expect(keys("\r\n\t") == [.key(.enter), .key(.enter), .key(.tab)])
        #expect(keys("\u{7F}\u{08}") == [.key(.backspace), .key(.backspace)])
        #expect(keys("\u{01}\u{15}\u{17}\u{0E}\u{10}\u{00}\u{03}\u{07}\u{0C}") == [
            .key(.selectAll), .key(.clearSearch), .key(.deleteWord), .key(.down), .key(.up), .key(.toggle),
            .key(.interrupt), .key(.escape), .redraw,
        ])
        #expect(keys("\u{02}\u{1F}").isEmpty, "other control bytes are not keys")
    }

    @Test func multiByteCharactersAreAssembledFromTheirBytes() {
        #expect(keys("晴天") == text("晴", "天"), "three bytes each")
        #expect(keys("é🎵ß") == text("é", "🎵", "ß"), "two, four and two bytes")
        // Split across reads: the pieces are kept until the character is complete.
        var d = PickerKeyDecoder()
        let bytes = Array("周杰伦".utf8)
        #expect(d.feed(bytes[0..<2]).isEmpty)
        #expect(d.feed(bytes[2..<5]) == text("周"))
        #expect(d.feed(bytes[5...]) == text("杰", "伦"))
    }

    @Test func bytesThatAreNotUTF8AreDropped() {
        var d = PickerKeyDecoder()
        #expect(keys([0xFF, 0x80, 0xC0, 0x41], &d) == text("A"), "invalid leads and stray continuations")
        #expect(keys([0xE6, 0x99, 0x42], &d) == text("B"), "a character cut short by ASCII: the ASCII stays")
        #expect(keys([0xED, 0xA0, 0x80, 0x43], &d) == text("C"), "an encoded surrogate")
        #expect(keys([0xE6, 0x99, 0x0D], &d) == [.key(.enter)], "a character cut short by a control key")
    }

    @Test func escapeSequences() {
        #expect(keys("\u{1B}[A\u{1B}[B\u{1B}[C\u{1B}[D") == [.key(.up), .key(.down), .key(.right), .key(.left)])
        #expect(keys("\u{1B}OA\u{1B}OB\u{1B}OH\u{1B}OF") == [.key(.up), .key(.down), .key(.home), .key(.end)], "SS3 forms")
        #expect(keys("\u{1B}[1;5C\u{1B}[1;2A") == [.key(.right), .key(.up)], "modifiers ignored")
        #expect(keys("\u{1B}[5~\u{1B}[6~\u{1B}[1~\u{1B}[4~\u{1B}[7~\u{1B}[8~\u{1B}[H\u{1B}[F") == [
            .key(.pageUp), .key(.pageDown), .key(.home), .key(.end), .key(.home), .key(.end), .key(.home), .key(.end),
        ])
        #expect(keys("\u{1B}[Z") == [.key(.backTab)])
        #expect(keys("\u{1B}[3~\u{1B}[15~x") == text("x"), "Delete and F5 are not used")
        #expect(keys("\u{1B}xy") == text("y"), "Alt+x is not used")
        #expect(keys("\u{1B}[" + String(repeating: "1;", count: 20) + "zx") == text("x"), "an overlong sequence is dropped whole")
    }

    @Test func aLoneEscapeWaitsForTheReadersTimeout() {
        var d = PickerKeyDecoder()
        #expect(d.feed(0x1B).isEmpty && d.isWaitingAfterEscape)
        #expect(d.flushEscape() == [.key(.escape)])
        #expect(!d.isWaitingAfterEscape && d.flushEscape().isEmpty)
        // Escape pressed twice: the first is a key, the second waits.
        #expect(d.feed([0x1B, 0x1B]) == [.key(.escape)] && d.isWaitingAfterEscape)
        #expect(d.feed(Array("[B".utf8)) == [.key(.down)], "the second began a sequence after all")
    }

    @Test func pastedTextIsOneKeyAndItsNewlinesAreNotEnter() {
        #expect(keys("\u{1B}[200~lemonade\nsong 晴\r\u{1B}[201~") == text("lemonade\nsong 晴\r"))
        #expect(keys("\u{1B}[200~\u{1B}[201~x") == text("x"), "an empty paste")
        // Bracketed paste byte by byte, the end marker split.
        var d = PickerKeyDecoder()
        var all: [PickerInput] = []
        for chunk in ["\u{1B}[20", "0~ab\u{1B}[2", "01~", "\r"] { all += d.feed(Array(chunk.utf8)) }
        #expect(all == text("ab") + [.key(.enter)])
    }
}
