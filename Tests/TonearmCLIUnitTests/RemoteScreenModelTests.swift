// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
import TonearmMPDClient
import TonearmMPDProtocol
@testable import TonearmCLI

/// `tonearm remote screen`'s model, offline: what the daemon's status and queue changes make of
/// the screen (the PTY test drives the whole screen against a daemon).
@Suite struct RemoteScreenModelTests {
    private func song(_ pairs: [(String, String)]) -> MPDSong { MPDSong(pairs.map { MPDPair($0.0, $0.1) })! }
    private func status(_ pairs: [(String, String)]) -> MPDStatus { MPDStatus(MPDReply(pairs: pairs.map { MPDPair($0.0, $0.1) })) }

    @Test func theFormatComesFromTheStatusElseFromTheSong() {
        var model = RemoteScreenModel()
        let now = ContinuousClock.now
        let songs = [song([("file", "a.flac"), ("Format", "44100:16:2"), ("Title", "晴天"), ("duration", "40.0"), ("Pos", "0"), ("Id", "1")]),
                     song([("file", "b.flac"), ("Format", "22050:24:6"), ("Pos", "1"), ("Id", "2")])]
        // Stopped, MPD sends no `audio`: the current song's Format.
        model.apply(status: status([("state", "stop"), ("song", "0"), ("songid", "1"), ("playlistlength", "2")]), changes: songs, at: now)
        #expect(model.screen(ScreenState(), output: "daemon", at: now).format == "44.1 kHz · 16 bit · stereo")
        // Playing: the status's `audio` (what the output gets) wins.
        model.apply(status: status([("state", "play"), ("song", "1"), ("songid", "2"), ("playlistlength", "2"), ("audio", "48000:f:2"),
                                    ("elapsed", "1.5"), ("duration", "10.0")]), changes: [], at: now)
        let playing = model.screen(ScreenState(), output: "daemon", at: now + .seconds(2))
        #expect(playing.format.hasPrefix("48 kHz"), "\(playing.format)")
        #expect(playing.elapsed == 3.5, "the time moves on from the status's elapsed")
    }
}
