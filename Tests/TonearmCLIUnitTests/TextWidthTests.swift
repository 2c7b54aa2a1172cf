// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
@testable import TonearmCLI

/// Text measured in terminal columns.
@Suite struct TextWidthTests {
    @Test func widths() {
        #expect(TextWidth.of("abc") == 3)
        #expect(TextWidth.of("晴天") == 4 && TextWidth.of("ひらがな") == 8 && TextWidth.of("한국어") == 6)
        #expect(TextWidth.of("Ａｂ") == 4, "fullwidth forms")
        #expect(TextWidth.of("Beyonce\u{301}") == 7 && TextWidth.of("Beyoncé") == 7, "a combining accent takes none")
        #expect(TextWidth.of("🎵") == 2 && TextWidth.of("👍🏽") == 2 && TextWidth.of("❤️") == 2)
        #expect(TextWidth.of("Sæglópur ›…✓") == 12)
        #expect(TextWidth.of("a\u{200B}b") == 2, "a zero-width space")
    }

    @Test func clipNeverExceedsTheColumns() {
        #expect(TextWidth.clip("晴天晴天", to: 5) == "晴天…")
        #expect(TextWidth.clip("晴天晴天", to: 4) == "晴…", "a wide character is not cut in half")
        #expect(TextWidth.clip("晴天", to: 4) == "晴天", "what fits is not cut")
        #expect(TextWidth.clip("abc", to: 0) == "" && TextWidth.clip("abc", to: 1) == "…")
        let samples = ["Sigur Rós — Ágætis byrjun", "周杰伦 — 叶惠美 晴天 🎵 a mix of 한국어 and ｆｕｌｌ", "e\u{301}e\u{301}e\u{301}", ""]
        for s in samples {
            for w in 0...40 {
                let c = TextWidth.clip(s, to: w)
                #expect(TextWidth.of(c) <= w, "'\(c)' for \(w)")
                #expect(TextWidth.of(TextWidth.fit(s, to: w)) == w)
            }
        }
    }

    @Test func controlCharactersInTagsAreNotDrawn() {
        #expect(TextWidth.printable("Evil\u{1B}]0;pwned\u{07}\u{9B}2J") == "Evil?]0;pwned??2J")
        #expect(TextWidth.printable("abc\u{202E}def") == "abcdef", "bidirectional overrides dropped")
        #expect(TextWidth.printable("晴天 ok") == "晴天 ok")
    }
}
