// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmMPDClient
import TonearmMPDProtocol
@testable import TonearmCLI

/// What `tonearm remote` prints, offline: mpc's format language, the status lines as mpc 0.34
/// writes them (RemoteCLITests compares them with mpc's against a daemon), the song table with
/// wide characters aligned, and the seek and address arguments.
@Suite struct RemoteFormatTests {
    private func song(_ pairs: [(String, String)]) -> MPDSong {
        MPDSong(pairs.map { MPDPair($0.0, $0.1) })!
    }

    @Test func formatsAsMPCDoes() throws {
        let full = song([("file", "a/01.flac"), ("Title", "青花瓷"), ("Artist", "周杰伦"), ("Album", "我很忙"), ("duration", "239.6"), ("Pos", "4"), ("Id", "9")])
        let bare = song([("file", "b/02.flac"), ("Title", "Second")])
        let none = song([("file", "http://radio.example/live")])
        let station = song([("file", "http://radio.example/live"), ("Name", "Radio"), ("Title", "Now")])
        // mpc's default: "artist - title", the title alone, the file; a stream: "name: title".
        #expect(RemoteFormat.songDefault.render(full) == "周杰伦 - 青花瓷")
        #expect(RemoteFormat.songDefault.render(bare) == "Second")
        #expect(RemoteFormat.songDefault.render(none) == "http://radio.example/live")
        #expect(RemoteFormat.songDefault.render(station) == "Radio: Now")
        let f = try RemoteFormat("%position%. [%artist% - ]%title% (%time%) #%id%\\t%file%")
        #expect(f.render(full) == "5. 周杰伦 - 青花瓷 (4:00) #9\ta/01.flac")
        #expect(f.render(bare) == ". Second () #\tb/02.flac", "a missing value outside [] is empty, as in mpc")
        #expect(try RemoteFormat("%title%|%file%").render(none) == "http://radio.example/live")
        #expect(try RemoteFormat("[%album%&%artist%]|none").render(bare) == "none")
        // mpc's operators: | drops what came before when nothing was found; & needs a value on both sides.
        #expect(try RemoteFormat("x|y").render(bare) == "y")
        #expect(try RemoteFormat("%title%|%album%&zz").render(bare) == "Secondzz")
        #expect(try RemoteFormat("%album%&%title%|z").render(bare) == "z")
        #expect(try RemoteFormat("[x]").render(bare) == "")
        // Unknown names and a % that starts none are printed as they are.
        #expect(try RemoteFormat("100%% \\[x\\] %audioformat% 50% %TITLE%").render(bare) == "100%% [x] %audioformat% 50% Second")
        #expect(try RemoteFormat("%prio% %mdate%").render(bare) == "0 ")
        for bad in ["[%title%", "%title%]"] {
            #expect(throws: RemoteFormat.Problem.self) { try RemoteFormat(bad) }
        }
    }

    @Test func statusLinesAreMPCs() {
        func status(_ pairs: [(String, String)]) -> MPDStatus { MPDStatus(MPDReply(pairs: pairs.map { MPDPair($0.0, $0.1) })) }
        let current = song([("file", "a.flac"), ("Title", "T"), ("Artist", "A")])
        let paused = status([("volume", "5"), ("repeat", "1"), ("random", "0"), ("single", "oneshot"), ("consume", "0"), ("playlistlength", "12"),
                             ("state", "pause"), ("song", "9"), ("time", "75:200"), ("elapsed", "75.4"), ("duration", "200.1")])
        #expect(RemoteText.status(paused, current: current, format: .songDefault) == """
            A - T
            [paused]  #10/12   1:15/3:20 (37%)
            volume:  5%   repeat: on    random: off   single: once  consume: off

            """)
        let playing = status([("volume", "-1"), ("state", "play"), ("song", "0"), ("playlistlength", "1"), ("time", "3725:4000"), ("consume", "1")])
        #expect(RemoteText.status(playing, current: current, format: .songDefault).split(separator: "\n").dropFirst().joined(separator: "\n") == """
            [playing] #1/1  62:05/66:40 (93%)
            volume: n/a   repeat: off   random: off   single: off   consume: on
            """)
        let stopped = status([("volume", "100"), ("state", "stop"), ("error", "Failed to open")])
        #expect(RemoteText.status(stopped, current: current, format: .songDefault)
                == "volume:100%   repeat: off   random: off   single: off   consume: off\nERROR: Failed to open\n")
    }

    @Test func theTableAlignsWideCharacters() {
        let songs = [song([("file", "x/1.flac"), ("Title", "青花瓷"), ("Artist", "周杰伦"), ("Album", "我很忙"), ("duration", "239"), ("Pos", "0"), ("Id", "1")]),
                     song([("file", "x/2.flac"), ("Title", "Second"), ("Artist", "Somebody Else"), ("duration", "5"), ("Pos", "1"), ("Id", "2")]),
                     song([("file", "x/Ｆｕｌｌ.flac"), ("duration", "61"), ("Pos", "9"), ("Id", "3")])]
        let lines = RemoteText.table(songs, currentID: 2).split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines[1].hasPrefix(">  2  Second"))
        #expect(lines[0].hasPrefix("   1  青花瓷"))
        #expect(lines[2].hasPrefix("  10  Ｆｕｌｌ.flac"), "no title: the file's name")
        // Every column starts at the same terminal column in every row: the times end together.
        let widths = lines.map { TextWidth.of($0) }
        #expect(Set(widths).count == 1, "\(lines)")
        #expect(lines.map { $0.suffix(4) } == ["3:59", "0:05", "1:01"])
        // A cell wider than the limit is clipped by columns, not characters.
        let long = song([("file", "y"), ("Title", String(repeating: "長", count: 40)), ("Pos", "0")])
        let clipped = RemoteText.table([long], currentID: nil, maxColumn: 10)
        #expect(TextWidth.of(clipped.dropLast()) <= 5 + 10, "\(clipped)")
    }

    @Test func seekTargetsAndAddresses() {
        #expect(RemoteSeek.target("90") == .absolute(90))
        #expect(RemoteSeek.target("1:30") == .absolute(90))
        #expect(RemoteSeek.target("1:02:03") == .absolute(3723))
        #expect(RemoteSeek.target("+10") == .relative(10))
        #expect(RemoteSeek.target("-0:05") == .relative(-5))
        #expect(RemoteSeek.target("50%") == .percent(50))
        for bad in ["", "x", "1:60", "101%", "1::2", "+", "1:2:3:4", "-5%", "1e3", "nan"] {
            #expect(RemoteSeek.target(bad) == nil, "\(bad)")
        }
        #expect(MPDAddress("/run/user/1/tonearm/mpd.sock") == .unix(path: "/run/user/1/tonearm/mpd.sock"))
        #expect(MPDAddress("localhost") == .tcp(host: "localhost", port: 6600))
        #expect(MPDAddress("127.0.0.1:6601") == .tcp(host: "127.0.0.1", port: 6601))
        #expect(MPDAddress("[::1]:7000") == .tcp(host: "::1", port: 7000))
        #expect(MPDAddress("[::1]:7000")?.description == "[::1]:7000")
        for bad in ["", "host:0", "host:x", "host:70000", "[::1]x"] { #expect(MPDAddress(bad) == nil, "\(bad)") }
    }

    /// MPD's times read by hand agree with Foundation's ISO 8601 reading; anything but MPD's one
    /// form is refused.
    @Test func mpdTimesAreReadAsUTC() {
        for iso in ["1970-01-01T00:00:00Z", "2026-11-28T10:14:35Z", "2000-02-29T23:59:59Z", "2038-01-19T03:14:08Z", "1999-12-31T12:00:00Z"] {
            let expected: Int? = ISO8601DateFormatter().date(from: iso).map { Int($0.timeIntervalSince1970) }
            let read: Int? = RemoteText.utcSeconds(iso).map { Int($0) }
            #expect(expected != nil && read == expected, "\(iso)")
        }
        for bad in ["", "2026-11-28", "2026-11-28T10:14:35", "2026-11-28 10:14:35Z", "2026-13-28T10:14:35Z", "2026-11-28T24:00:00Z",
                    "2026-11-2xT10:14:35Z", "2026-11-28T10:14:35+01:00", "２０２６-11-28T10:14:35Z"] {
            #expect(RemoteText.utcSeconds(bad) == Optional<time_t>.none, "\(bad)")
        }
        #expect(RemoteText.localTime("garbage", dateOnly: false) == nil)
        #expect(RemoteText.localTime("2026-11-28T10:14:35Z", dateOnly: false) != nil)
    }
}
