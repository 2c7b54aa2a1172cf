// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCodecs
import TonearmCore
import TonearmOutput
@testable import TonearmPlayback
import TonearmTestSupport

/// A queue with network items, from a real HTTP server on 127.0.0.1: a stream plays to its end
/// (what reaches the output is what the local file decodes to), and an address the server does
/// not have fails with its status and the queue goes on.
@Suite(.serialized) struct NetworkQueueTests {
    @Test func aNetworkItemPlaysAndAMissingOneFailsWithItsStatus() async throws {
        let dir = try TempDir("net-queue")
        defer { dir.remove() }
        try Fixtures.tone(path: dir.file("song.flac"), codecArgs: ["-c:a", "flac"], seconds: 1.5)
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        let out = dir.file("out.wav")
        let song = QueueItem(pathOrURL: server.url("/song.flac").absoluteString)
        let missing = QueueItem(pathOrURL: server.url("/missing.flac").absoluteString)
        #expect(song.isRemote && missing.isRemote)
        let q = QueuePlayer(items: [song, missing], output: { FileOutput(path: out) })
        defer { q.stop() }
        let collector = eventsUntilFinished(q.events)
        q.play()
        let events = await collector.value
        let failures = events.compactMap { e -> (Int, TonearmError)? in
            if case .itemFailed(let i, _, let error) = e { return (i, error) }
            return nil
        }
        #expect(failures.count == 1)
        #expect(failures.first?.0 == 1)
        guard case .network(_, .httpStatus(404, _))? = failures.first?.1 else {
            Issue.record("expected a 404, got \(String(describing: failures.first?.1))")
            return
        }
        let heard = try readWAV(out).channels[0]
        let local = try AudioFile(path: dir.file("song.flac"))
        let buffer = try #require(AudioPCMBuffer(format: local.processingFormat, frameCapacity: Int(local.length)))
        try local.read(into: buffer)
        let expected = Array(buffer.channel(0))
        #expect(heard.count == expected.count)
        let same = heard.count == expected.count && zip(heard, expected).allSatisfy { abs($0 - $1) < 1e-6 }
        #expect(same, "the stream's audio differs from the file's")
    }

    @Test func playDoesNotWaitForTheNetworkAndStopCancelsTheStart() async throws {
        let dir = try TempDir("net-queue-start")
        defer { dir.remove() }
        try Fixtures.tone(path: dir.file("song.flac"), codecArgs: ["-c:a", "flac"], seconds: 1)
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        let out = dir.file("out.wav")
        // The first response stalls 3 s after its headers (once per path); later ones do not.
        let song = QueueItem(pathOrURL: server.url("/song.flac", query: ["stall": "3", "at": "0"]).absoluteString)
        let q = QueuePlayer(items: [song], output: { FileOutput(path: out) })
        defer { q.stop() }
        q.play()
        #expect(q.playbackState == .stopped, "play() returned while the stream was still connecting")
        let stalled = await server.waitForRequest(timeout: 10) { $0.path == "/song.flac" && $0.stalled }
        #expect(stalled != nil)
        q.stop()
        // Started again: this start plays; the first, still waiting for its stalled response,
        // must never start a second output.
        let collector = eventsUntilFinished(q.events)
        q.play()
        let events = await collector.value
        #expect(events.filter { $0 == .stateChanged(.playing) }.count == 1)
        let heard = try readWAV(out).channels[0]
        let local = try AudioFile(path: dir.file("song.flac"))
        #expect(heard.count == Int(local.length))
    }
}
