// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCodecs
import TonearmCore
import TonearmOutput
@testable import TonearmPlayback
import TonearmTestSupport

/// ReplayGain in a queue: track and album gains from the tags, the fallback from album to track,
/// the pre-amp and the clipping guard, measured on what the queue plays.
@Suite  final class ReplayGainTests: Sendable {
    let dir: TempDir
    init() throws { dir = try TempDir("replaygain") }
    deinit { dir.remove() }

    /// A 1 s 440 Hz tone at amplitude 0.25 with the given ReplayGain tags.
    func tagged(_ name: String, _ tags: [String: String]) throws -> String {
        let path = dir.file(name)
        var args = ["-f", "lavfi", "-i", "aevalsrc=exprs=0.25*sin(2*PI*440*t):s=44100:d=1", "-c:a", "flac"]
        for (k, v) in tags.sorted(by: { $0.key < $1.key }) { args += ["-metadata", "\(k)=\(v)"] }
        try Fixtures.ffmpeg(args + [path])
        return path
    }

    /// The gain (dB) the queue applied to `path` in `mode`.
    func appliedGain(_ path: String, _ mode: ReplayGainMode, preamp: Double = 0) async throws -> Double {
        let out = dir.file("out-\(UUID().uuidString).wav")
        let q = QueuePlayer(items: [QueueItem(path: path)], output: { FileOutput(path: out) })
        defer { q.stop() }
        q.setReplayGain(mode, preamp: preamp)
        let events = q.events
        q.play()
        _ = try await waitForEvent(events, timeout: 30, "finished") { $0 == .finished }
        let level = rms(try readWAV(out).channels[0][4410..<39690])
        return 20 * log10(Double(level) / (0.25 / 2.0.squareRoot()))
    }

    @Test func trackAlbumFallbackPreampAndClippingGuard() async throws {
        let both = try tagged("both.flac", ["REPLAYGAIN_TRACK_GAIN": "-6.00 dB", "REPLAYGAIN_TRACK_PEAK": "0.25",
                                            "REPLAYGAIN_ALBUM_GAIN": "-3.00 dB", "REPLAYGAIN_ALBUM_PEAK": "0.25"])
        let trackOnly = try tagged("track.flac", ["REPLAYGAIN_TRACK_GAIN": "-6.00 dB", "REPLAYGAIN_TRACK_PEAK": "0.25"])
        let loud = try tagged("loud.flac", ["REPLAYGAIN_TRACK_GAIN": "+12.00 dB", "REPLAYGAIN_TRACK_PEAK": "0.25"])
        let untagged = try tagged("none.flac", [:])

        #expect(abs(try await appliedGain(both, .off)) < 0.05)
        #expect(abs(try await appliedGain(both, .track) + 6) < 0.05)
        #expect(abs(try await appliedGain(both, .album) + 3) < 0.05)
        // No album gain: album mode falls back to the track gain.
        #expect(abs(try await appliedGain(trackOnly, .album) + 6) < 0.05)
        #expect(abs(try await appliedGain(both, .track, preamp: 2) + 4) < 0.05)
        // The clipping guard: +12 dB (×3.98) on a peak of 0.5 would clip; it stops at 1/peak
        // (×2, +6.02 dB). With a peak of 0.25 (1/peak = ×4) the full +12 dB is allowed.
        let loudPeak = try tagged("loud2.flac", ["REPLAYGAIN_TRACK_GAIN": "+12.00 dB", "REPLAYGAIN_TRACK_PEAK": "0.5"])
        #expect(abs(try await appliedGain(loudPeak, .track) - 6.02) < 0.05)
        #expect(abs(try await appliedGain(loud, .track) - 12) < 0.05)
        // A file without tags plays at its own level in every mode.
        #expect(abs(try await appliedGain(untagged, .album)) < 0.05)
    }
}
