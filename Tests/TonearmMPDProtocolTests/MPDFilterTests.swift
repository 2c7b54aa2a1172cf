// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
import TonearmMPDProtocol

/// Filter expressions and the older pairs read into trees; MPD's messages for what is wrong.
@Suite struct MPDFilterTests {
    func parse(_ args: String..., exact: Bool = true) throws(MPDFilterError) -> MPDFilter {
        try MPDFilter.parse(arguments: args, exact: exact)
    }

    @Test func expressions() throws {
        #expect(try parse("(artist == 'x')") == .compare(.tag(.artist), .equal, "x"))
        #expect(try parse(#"(ALBUMARTIST != "a \"q\"")"#) == .compare(.tag(.albumArtist), .notEqual, #"a "q""#))
        #expect(try parse("( title contains  'live' )") == .compare(.tag(.title), .contains, "live"))
        #expect(try parse("(any =~ '^a')") == .compare(.any, .matches, "^a"))
        #expect(try parse("(file !~ 'x')") == .compare(.file, .notMatches, "x"))
        #expect(try parse("(!(genre == 'Jazz'))") == .not(.compare(.tag(.genre), .equal, "Jazz")))
        #expect(try parse("((artist == 'a')AND(album == 'b') AND (date == '1971'))")
                == .and([.compare(.tag(.artist), .equal, "a"), .compare(.tag(.album), .equal, "b"), .compare(.tag(.date), .equal, "1971")]))
        #expect(try parse("((artist == 'a'))") == .compare(.tag(.artist), .equal, "a"))
        #expect(try parse("(base 'Jazz/Blue')") == .base("Jazz/Blue"))
        #expect(try parse("(modified-since '2020-01-02T03:04:05Z')") == .modifiedSince(1_577_934_245))
        #expect(try parse("(modified-since '1600000000')") == .modifiedSince(1_600_000_000))
        // An integer is read first (as MPD does): 2020 is seconds, not the year.
        #expect(try parse("(modified-since '2020')") == .modifiedSince(2020))
        #expect(try parse("(modified-since '2020-02')") == .modifiedSince(1_580_515_200))
        #expect(try parse("(AudioFormat =~ '44100:*:2')") == .audioFormat(.init(sampleRate: 44_100, format: nil, channels: 2), mask: true))
        #expect(try parse("(audioformat == 'dsd64:2')") == .audioFormat(.init(sampleRate: 352_800, format: "dsd", channels: 2), mask: false))
    }

    @Test func severalArgumentsAllHold() throws {
        #expect(try parse("(artist == 'a')", "album", "b") == .and([.compare(.tag(.artist), .equal, "a"), .compare(.tag(.album), .equal, "b")]))
        #expect(try parse("Artist", "a", exact: false) == .compare(.tag(.artist), .contains, "a"))
        #expect(try parse("ANY", "a") == .compare(.any, .equal, "a"))
        #expect(try parse("filename", "a") == .compare(.file, .equal, "a"))
    }

    @Test(arguments: [
        (["(artist == x)"], "Quoted string expected"),
        (["(artist = 'x')"], "'==' or '!=' expected"),
        (["(artist contains'x')"], "'==' or '!=' expected"),
        (["(foo == 'x')"], "Unknown filter type: foo"),
        (["(Base 'x')"], "Unknown filter type: Base"),
        (["(artist == 'x'"], "')' expected"),
        (["(artist == 'x)"], "Closing quote not found"),
        (["((artist == 'x') OR (album == 'y'))"], "'AND' expected"),
        (["((artist == 'x') and (album == 'y'))"], "'AND' expected"),
        (["((artist == 'x') AND (album == 'y')"], "Word expected"),
        (["()"], "Word expected"),
        (["(! x)"], "'(' expected"),
        (["(artist == 'x')x"], "Unparsed garbage after expression"),
        (["artist"], "Incorrect number of filter arguments"),
        (["foo", "bar"], "Unknown filter type"),
        (["Base", "x"], "Unknown filter type"),
        (["(modified-since '2020-13')"], "Failed to parse date"),
        (["(AudioFormat == '44100:16')"], "Channel count missing"),
        (["(AudioFormat == '0:16:2')"], "Invalid sample rate: 0"),
        (["(AudioFormat == '44100:12:2')"], "Invalid sample format: 12"),
        (["(AudioFormat == '*:16:2')"], "Failed to parse the sample rate"),
        (["(AudioFormat == '44100:16:2 ')"], "Extra data after channel count:  "),
    ])
    func malformedFiltersSayWhy(_ args: [String], _ message: String) {
        #expect(throws: MPDFilterError(message)) { try MPDFilter.parse(arguments: args) }
    }

    /// White space between tokens, and after the whole expression, is skipped (as MPD does).
    @Test func whiteSpaceBetweenTokens() throws {
        #expect(try parse("(!(artist == 'x') )") == .not(.compare(.tag(.artist), .equal, "x")))
        #expect(try parse("(artist == 'x') ") == .compare(.tag(.artist), .equal, "x"))
    }

    @Test func deepNestingIsRefusedNotACrash() {
        let deep = String(repeating: "(!", count: 10_000) + "(artist == 'x')" + String(repeating: ")", count: 10_000)
        #expect(throws: MPDFilterError("Filter expression nested too deeply")) { try MPDFilter.parse(arguments: [deep]) }
    }

    @Test func theExpressionTextReadsBack() throws {
        let filters: [MPDFilter] = [
            .and([.compare(.tag(.artist), .equal, #"a "q" \ b"#), .not(.compare(.any, .contains, "x"))]),
            .base("Jazz/坂本"), .modifiedSince(1_600_000_000),
            .audioFormat(.init(sampleRate: 48_000, format: "f", channels: nil), mask: true),
        ]
        for f in filters { #expect(try MPDFilter.parse(arguments: [f.expression]) == f, "\(f.expression)") }
    }
}
