// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCodecs
import TonearmCore
import TonearmOutput
import TonearmPlayback
import TonearmTestSupport

/// `rangeid` is played, not only listed: the song plays its part — its frames exactly, the
/// part's length, elapsed and duration as MPD reports them (from the part's start) — and the next
/// song follows it. Through the file output (as fast as it renders, no real time).
@Suite struct DaemonRangeTests {
    static func frames(_ path: String) throws -> [[Float]] {
        let f = try AudioFile(path: path)
        let buffer = try #require(AudioPCMBuffer(format: f.processingFormat, frameCapacity: 8192))
        var out = [[Float]](repeating: [], count: f.processingFormat.channelCount)
        while true {
            try f.read(into: buffer)
            if buffer.frameLength == 0 { return out }
            for c in out.indices { out[c] += buffer.channel(c) }
        }
    }

    @Test func rangeidPlaysThePartThenTheNextSong() async throws {
        let outDir = try TempDir("daemon-range-out")
        defer { outDir.remove() }
        let out = outDir.file("out.wav")
        let d = try await TestDaemon(output: { FileOutput(path: out) })
        let a = try d.tone("a.flac", seconds: 4, freq: 440)
        let b = try d.tone("b.flac", seconds: 1, freq: 660)
        try d.mpc("add", a).expectSuccess()
        try d.mpc("add", b).expectSuccess()
        let c = try MPDTestClient(unixPath: d.socketPath)
        let ids = try c.exchange(["playlistinfo"]).filter { $0.hasPrefix("Id: ") }.map { String($0.dropFirst(4)) }
        #expect(try c.exchange(["rangeid \(ids[0]) 1.5:3"]) == ["OK"])
        #expect(try c.exchange(["playlistid \(ids[0])"]).contains("Range: 1.500-3.000"))
        #expect(d.daemon.player.queue.items().first?.range == PlaybackRange(start: 1.5, end: 3))

        let events = d.daemon.player.events
        try d.mpc("play").expectSuccess()
        _ = try await waitForEvent(events, timeout: 30, "the queue played to its end") { $0 == .finished }
        let got = try readWAV(out).channels
        let whole = try Self.frames(a), next = try Self.frames(b)
        for ch in 0..<2 {
            let expected = Array(whole[ch][66_150..<132_300]) + next[ch]
            #expect(got[ch].count == expected.count, "channel \(ch): \(got[ch].count) frames for 1.5 s of a.flac and b.flac's \(next[ch].count)")
            #expect(got[ch] == expected, "channel \(ch): a.flac from 1.5 s to 3 s, then b.flac, sample for sample")
        }
        // Cleared, as MPD: `rangeid ID :` plays the whole song again.
        #expect(try c.exchange(["rangeid \(ids[0]) :"]) == ["OK"])
        #expect(d.daemon.player.queue.items().first?.range == nil)
        await d.stop()
    }

    /// What MPD reports while a part plays (checked against MPD 0.23.12: `rangeid ID 3:6` of a
    /// 10 s song, a second in: `elapsed: 1.186`, `duration: 3.000`): both from the part's start.
    @Test func statusCountsFromThePartsStart() async throws {
        let d = try await TestDaemon()
        let a = try d.tone("a.flac", seconds: 10)
        try d.mpc("add", a).expectSuccess()
        let c = try MPDTestClient(unixPath: d.socketPath)
        let id = try #require(try c.exchange(["playlistinfo"]).first { $0.hasPrefix("Id: ") }?.dropFirst(4))
        #expect(try c.exchange(["rangeid \(id) 3:6"]) == ["OK"])
        try d.mpc("play").expectSuccess()
        let status = MPDTestClient.pairs(try c.exchange(["status"]))
        #expect(status["duration"] == "3.000", "\(status)")
        let elapsed = try #require(Double(status["elapsed"] ?? ""))
        #expect(elapsed >= 0 && elapsed < 3, "elapsed from the part's start: \(elapsed)")
        // The current song's range may not change (MPD's ACK).
        #expect(try c.exchange(["rangeid \(id) 1:2"]) == ["ACK [4@0] {rangeid} Cannot edit the current song"])
        await d.stop()
    }
}
