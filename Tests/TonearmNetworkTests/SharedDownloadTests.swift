// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import Testing
import TonearmCore
@testable import TonearmNetwork
import TonearmTestSupport

/// One download, several readers (`NetworkByteSource.makeReader()`, issue 19: a progressive
/// video's sound and picture read one fetch), against the tests' HTTP server on 127.0.0.1,
/// which counts the requests and the body bytes it sends: two readers on their own threads each
/// get the whole file while the server sends it once — from a server that takes ranges and from
/// one that ignores them; a reader that seeks far ahead makes the fetcher skip there, and the
/// fetcher, coming back for the other reader, does not send the skipped-to bytes again;
/// cancelling one reader leaves the other reading; the last one's cancel stops the fetching.
@Suite(.serialized) struct SharedDownloadTests {
    final class Site: @unchecked Sendable {
        let dir: TempDir
        let server: PrivateHTTPServer
        let name = "clip.bin"
        let bytes: [UInt8]
        init(size: Int = 1_500_000) throws {
            dir = try TempDir("shared-download")
            var g = SystemRandomNumberGenerator()
            bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &g) }
            try Data(bytes).write(to: URL(fileURLWithPath: dir.file(name)))
            server = try PrivateHTTPServer(root: dir.path)
        }
        deinit {
            server.stop()
            dir.remove()
        }
        /// Body bytes the server has sent for the file, over every request.
        var served: Int { server.requests(path: "/" + name).reduce(0) { $0 + $1.bytes } }
    }

    /// Reads `source` from its position to the end in pieces of `piece` bytes.
    static func readToEnd(_ source: NetworkByteSource, piece: Int) throws(TonearmError) -> [UInt8] {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: piece)
        while true {
            var n = 0
            var failure: TonearmError?
            chunk.withUnsafeMutableBytes { raw in
                do throws(TonearmError) { n = try source.read(into: raw) } catch { failure = error }
            }
            if let failure { throw failure }
            if n == 0 { return out }
            out += chunk[0..<n]
        }
    }

    /// Reads `source` to its end on a thread of its own; the bytes, or the error.
    static func readOnThread(_ source: NetworkByteSource, piece: Int, from offset: Int64 = 0) async -> Result<[UInt8], TonearmError> {
        await withCheckedContinuation { (done: CheckedContinuation<Result<[UInt8], TonearmError>, Never>) in
            let t = Thread {
                source.seek(to: offset)
                done.resume(returning: Result { () throws(TonearmError) -> [UInt8] in try readToEnd(source, piece: piece) })
            }
            t.start()
        }
    }

    /// Waits until the server has logged every request for the file as done.
    static func settled(_ site: Site) async {
        let path = "/" + site.name
        _ = await site.server.waitForRequests(timeout: 10) { log in
            let mine = log.filter { $0.path == path }
            return !mine.isEmpty && mine.allSatisfy(\.complete)
        }
    }

    @Test(arguments: ["", "1", "lie"])
    func twoReadersGetTheWholeFileFromOneDownload(norange: String) async throws {
        let site = try Site()
        // Throttled, so that the readers wait for bytes side by side.
        var query = ["rate": "3000000"]
        if !norange.isEmpty { query["norange"] = norange }
        let sound = NetworkByteSource(url: site.server.url("/" + site.name, query: query))
        let picture = sound.makeReader()
        sound.start()
        async let a = Self.readOnThread(sound, piece: 10_000)
        async let b = Self.readOnThread(picture, piece: 7_001)
        let (x, y) = await (a, b)
        #expect(try x.get() == site.bytes, "the first reader gets the file")
        #expect(try y.get() == site.bytes, "the second reader gets the file")
        sound.cancel()
        picture.cancel()
        await Self.settled(site)
        let requests = site.server.requests(path: "/" + site.name)
        #expect(requests.count == 1, "one download: \(requests.map { ($0.range, $0.bytes) })")
        #expect(site.served == site.bytes.count, "the file is sent once: \(site.served) of \(site.bytes.count)")
    }

    /// One reader jumps to the middle (a demuxer going for an index at the end, or a reader on ahead)
    /// while the other reads from the start: the fetcher goes there, comes back for the other
    /// reader's bytes when they are asked for, and stops where the bytes it already has begin —
    /// the server sends each byte once (bounded requests).
    @Test(.timeLimit(.minutes(2))) func aReaderFarAheadMakesNothingFetchTwice() async throws {
        let site = try Site(size: 5_000_000)
        // 2 MB/s: the fetcher has 1.2 s from the start of the third request to cut it where the
        // bytes it has begin; at 4 MB/s a clean-clone run at load 10 (three builds besides) saw
        // the whole second half sent again (the fetcher's thread did not run in the 0.6 s it had).
        let url = site.server.url("/" + site.name, query: ["rate": "2000000"])
        let finishes = Watched(0)
        let ahead = NetworkByteSource(url: url, onEvent: { e in if case .finished = e { finishes.update { $0 += 1 } } })
        let behind = ahead.makeReader()
        ahead.start()
        let far = Int64(site.bytes.count / 2)
        async let a = Self.readOnThread(ahead, piece: 16_384, from: far)
        let tail = try await a.get()
        #expect(tail == Array(site.bytes[Int(far)...]))
        async let b = Self.readOnThread(behind, piece: 16_384)
        let whole = try await b.get()
        #expect(whole == site.bytes)
        // The fetcher is done twice: at the end for the reader ahead, then where the bytes it
        // had begin (without the skip: at the end again, after fetching the second half twice).
        // The first comes even when the reader behind asks for its bytes between the fetcher
        // storing the last byte and noting the end (that request used to end without
        // `.finished`, and this wait, without a deadline, hung to the time limit).
        let twice = await finishes.wait(timeout: 30) { $0 >= 2 }
        #expect(twice, "the fetcher finished \(finishes.value) times, not 2")
        ahead.cancel()
        behind.cancel()
        await Self.settled(site)
        let requests = site.server.requests(path: "/" + site.name)
        #expect(requests.count <= 4, "\(requests.map { ($0.range, $0.bytes) })")
        // The first request is cut when the far seek comes, the third where the bytes already
        // fetched begin; what they sent past that (in flight, the socket's buffers) is the only
        // excess — more the longer the fetcher takes to cut a request (1.24 MB seen at 4 MB/s at
        // load 13). Fetching the second half again would be 2.5 MB more.
        #expect(site.served < site.bytes.count + 1_500_000, "each byte about once: \(site.served) of \(site.bytes.count) — \(requests.map { ($0.range, $0.bytes) })")
        #expect(ahead.loadedRanges == [0..<Int64(site.bytes.count)])
    }

    @Test func cancellingOneReaderLeavesTheOtherReadingAndTheLastStopsTheFetching() async throws {
        let site = try Site()
        let url = site.server.url("/" + site.name, query: ["rate": "1000000"])
        let sound = NetworkByteSource(url: url)
        let picture = sound.makeReader()
        sound.start()
        #expect(sound.waitUntilOpen(timeout: 20))
        picture.cancel()
        let refused = await Self.readOnThread(picture, piece: 4096)
        guard case .failure(.invalidState) = refused else {
            Issue.record("a cancelled reader reads nothing: \(refused)")
            return
        }
        let read = await Self.readOnThread(sound, piece: 4096)
        #expect(try read.get() == site.bytes, "the other reader reads on to the end")
        #expect(sound.failure == nil)

        // Two readers of a slow download: cancelling both ends the request early.
        let slow = NetworkByteSource(url: site.server.url("/" + site.name, query: ["rate": "20000"]))
        let second = slow.makeReader()
        slow.start()
        #expect(slow.waitUntilOpen(timeout: 20))
        slow.cancel()
        // The other reader waits for bytes ahead (or, cancelled first, reads nothing): its
        // cancel ends it.
        async let stillReading = Self.readOnThread(second, piece: 65_536, from: 200_000)
        second.cancel()
        guard case .failure = await stillReading else {
            Issue.record("a cancelled reader ends with an error")
            return
        }
        // Both requests logged and ended (the slow one's end is logged when the server sees the
        // close: checked before that, a clean-clone run under load counted one request).
        let path = "/" + site.name
        _ = await site.server.waitForRequests(timeout: 20) { log in
            let mine = log.filter { $0.path == path }
            return mine.count >= 2 && mine.allSatisfy(\.complete)
        }
        #expect(site.server.requests(path: path).count == 2)
        let last = try #require(site.server.requests(path: path).last)
        #expect(last.bytes < site.bytes.count, "the slow download stopped when its last reader was cancelled: \(last.bytes)")
    }
}
