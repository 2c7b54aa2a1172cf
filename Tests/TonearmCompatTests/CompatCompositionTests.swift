// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCompat
import TonearmTestSupport

/// AVMutableComposition as iOS code builds it: inserts into its audio track (synchronous, from a
/// file's tracks) place the ranges where asked, the composition is an AVAsset exported by the
/// failable session, and the exported file (re-encoded to PCM) has the composed length and the sources' samples in
/// the composed order.
@Suite struct CompatCompositionTests {
    @Test func insertsComposeAndExportInOrder() async throws {
        let dir = try TempDir("compat-composition")
        defer { dir.remove() }
        let low = dir.file("low.wav"), high = dir.file("high.wav")
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=300:duration=1:sample_rate=48000", "-c:a", "pcm_s16le", low])
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=2000:duration=1:sample_rate=48000", "-c:a", "pcm_s16le", high])
        // As an AVAsset (on an AVURLAsset itself, Tonearm's `await`ed form is found too).
        func asset(_ path: String) -> AVAsset { AVURLAsset(url: URL(fileURLWithPath: path)) }
        let lowTrack = try #require(asset(low).tracks(withMediaType: .audio).first)
        let highTrack = try #require(asset(high).tracks(withMediaType: .audio).first)
        #expect(asset(dir.file("none.wav")).tracks(withMediaType: .audio).isEmpty)

        let composition = AVMutableComposition()
        let track = try #require(composition.addMutableTrack(withMediaType: .audio, preferredTrackID: kCMPersistentTrackID_Invalid))
        #expect(composition.addMutableTrack(withMediaType: .video, preferredTrackID: kCMPersistentTrackID_Invalid) == nil)
        // 0.5 s of the low tone, then 0.25 s of the high one put before it.
        try track.insertTimeRange(AssetTimeRange(start: 0.25, duration: 0.5), of: lowTrack, at: 0)
        try track.insertTimeRange(AssetTimeRange(start: 0, duration: 0.25), of: highTrack, at: 0)
        #expect(abs(composition.duration - 0.75) < 1e-9)
        #expect(composition.composition.segments.map(\.url.path) == [high, low])
        #expect(throws: TonearmError.self) { try track.insertTimeRange(AssetTimeRange(start: 0, duration: 0.1), of: lowTrack, at: 5) }

        let asset: AVAsset = composition
        // Tonearm's PCM preset: cut at the exact samples (passthrough keeps whole packets, as iOS's does).
        let session = try #require(AVAssetExportSession(asset: asset, presetName: .pcm))
        let out = dir.file("out.wav")
        session.outputURL = URL(fileURLWithPath: out)
        let (done, sink) = AsyncStream<Void>.makeStream()
        session.exportAsynchronously { sink.yield(()) }
        _ = try await waitForEvent(done, timeout: 30, "the export") { _ in true }
        #expect(session.status == .completed, "\(String(describing: session.error))")

        let raw = dir.file("out.raw")
        let r = try await run("ffmpeg", ["-nostdin", "-v", "error", "-i", out, "-f", "s16le", "-ac", "1", raw])
        #expect(r.status == 0, "\(r.stderr)")
        let samples = try Data(contentsOf: URL(fileURLWithPath: raw)).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        #expect(samples.count == 36_000)
        // Zero crossings per 0.25 s: the high tone first (≈ 1,000), then the low one (≈ 150).
        func crossings(_ s: ArraySlice<Int16>) -> Int { zip(s, s.dropFirst()).filter { ($0 < 0) != ($1 < 0) }.count }
        #expect(abs(crossings(samples[0..<12_000]) - 1_000) < 20)
        #expect(abs(crossings(samples[12_000..<24_000]) - 150) < 5)
        #expect(abs(crossings(samples[24_000..<36_000]) - 150) < 5)
    }
}
