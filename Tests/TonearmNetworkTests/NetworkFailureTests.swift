// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
@testable import TonearmNetwork

/// Failures that need no HTTP server: a refused scheme, an unknown host, a closed port, a server
/// that accepts and never answers — each a typed error, each within its limit.
@Suite struct NetworkFailureTests {
    func failure(_ url: String, limits: NetworkLimits = NetworkLimits(connectTimeout: 2, readTimeout: 2)) -> NetworkFailure? {
        do {
            _ = try HTTPClient.get(URL(string: url)!, limits: limits)
            return nil
        } catch {
            guard case .network(let u, let f) = error else { return nil }
            #expect(u == URL(string: url)!.absoluteString)
            return f
        }
    }

    @Test func onlyHTTPAndHTTPSAreAllowed() {
        #expect(failure("file:///etc/passwd") == .schemeNotAllowed("file"))
        #expect(failure("pipe:0") == .schemeNotAllowed("pipe"))
        #expect(failure("concat:a.mp3|b.mp3") == .schemeNotAllowed("concat"))
    }

    @Test func anUnknownHostSaysSo() {
        guard case .hostNotFound(let host, _) = failure("http://no-such-host.invalid/a.mp3") else {
            Issue.record("expected hostNotFound")
            return
        }
        #expect(host == "no-such-host.invalid")
    }

    @Test func aClosedPortIsRefused() throws {
        // A port that was free a moment ago: bind, read the port, close.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var a = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: 0, sin_addr: in_addr(s_addr: inet_addr("127.0.0.1")), sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        _ = withUnsafeMutablePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        let port = Int(UInt16(bigEndian: a.sin_port))
        close(fd)
        #expect(failure("http://127.0.0.1:\(port)/a.mp3") == .connectionRefused(host: "127.0.0.1", port: port))
    }

    @Test func aServerThatNeverAnswersTimesOut() throws {
        let listener = try Listener()
        defer { listener.close() }
        let f = failure("http://127.0.0.1:\(listener.port)/a.mp3", limits: NetworkLimits(connectTimeout: 2, readTimeout: 0.3))
        #expect(f == .timedOut(phase: "waiting for data", seconds: 0.3))
    }

    @Test func icyMetadataIsTakenOutOfTheAudio() {
        var demuxer = ICYDemuxer(metaint: 4)
        func block(_ text: String) -> [UInt8] {
            var b = Array(text.utf8)
            let blocks = (b.count + 15) / 16
            b += [UInt8](repeating: 0, count: blocks * 16 - b.count)
            return [UInt8(blocks)] + b
        }
        let stream: [UInt8] = [1, 2, 3, 4] + block("StreamTitle='It's a Song';StreamUrl='';") + [5, 6, 7, 8] + [0] + [9, 10]
        var audio: [UInt8] = []
        var blocks: [[String: String]] = []
        // Fed one byte at a time: pieces may split anywhere.
        for b in stream { blocks += [b].withUnsafeBytes { demuxer.feed($0, audio: &audio) } }
        #expect(audio == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
        #expect(blocks == [["StreamTitle": "It's a Song", "StreamUrl": ""]])
    }
}

/// A TCP listener on 127.0.0.1 that accepts connections (the kernel's backlog does) and never
/// answers.
final class Listener: @unchecked Sendable {
    let fd: Int32
    let port: Int
    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var a = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: 0, sin_addr: in_addr(s_addr: inet_addr("127.0.0.1")), sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        listen(fd, 8)
        _ = withUnsafeMutablePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        port = Int(UInt16(bigEndian: a.sin_port))
    }
    func close() { Glibc.close(fd) }

    /// The failure of a server that cannot seek, for a file above the limit, says both sizes.
    @Test func seekingUnsupportedSaysTheLimit() {
        let f = NetworkFailure.seekingUnsupported(length: 600 << 20, limit: 512 << 20)
        #expect(f.description == "the server does not support seeking and the file is larger than 512 MB (600 MB)")
        #expect(NetworkFailure.seekingUnsupported(length: 3 << 29, limit: 1 << 30).description.hasSuffix("larger than 1 GB (1.5 GB)"))
    }

    /// Retry waits: half to all of 0.25 s doubling per attempt, capped, never the same every time.
    @Test func retryWaitsDoubleWithJitterUpToTheCap() {
        var draws: Set<Double> = []
        for attempt in 1...8 {
            let base = min(4.0, 0.25 * pow(2, Double(attempt - 1)))
            for _ in 0..<50 {
                let d = RetryBackoff.delay(attempt: attempt, maximum: 4)
                #expect(d >= base / 2 - 0.0005 && d <= base + 0.0005, "attempt \(attempt): \(d)")
                if attempt == 8 { draws.insert(d) }
            }
        }
        #expect(draws.count > 1)
    }

    /// The pacer lets a burst through, then makes the next request wait for the window.
    @Test func thePacerAllowsABurstPerWindow() {
        let t0 = ContinuousClock.now
        var pacer = RequestPacer(burst: 4, window: 2)
        for k in 0..<4 {
            #expect(pacer.wait(now: t0 + .milliseconds(10 * k)) == 0)
            pacer.begin(now: t0 + .milliseconds(10 * k))
        }
        let wait = pacer.wait(now: t0 + .milliseconds(40))
        #expect(abs(wait - 1.96) < 1e-9, "\(wait)")
        #expect(pacer.wait(now: t0 + .seconds(2)) == 0)
        pacer.begin(now: t0 + .seconds(2))
        #expect(abs(pacer.wait(now: t0 + .seconds(2)) - 0.01) < 1e-9)
    }
}
