// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmTestSupport

/// `tonearm play` of addresses with percent-escapes (`%E6%9C%88%E5%85%89%20x.mp3`), against a
/// real HTTP server on 127.0.0.1 that logs each request line: the request carries the path
/// exactly as escaped (a server refuses raw UTF-8 and spaces with 400), and the user is shown
/// the decoded name. One address (the streaming player), several (the queue), and an M3U
/// playlist naming escaped addresses.
@Suite(.serialized) struct EscapedURLCLITests {
    /// The file's name on the server, and the same as an escaped request target.
    static let name = "月光 x.mp3", escaped = "/%E6%9C%88%E5%85%89%20x.mp3"
    static let otherName = "b#1 ü.mp3", otherEscaped = "/b%231%20%C3%BC.mp3"

    let dir: TempDir
    let server: PrivateHTTPServer

    init() throws {
        dir = try TempDir("cli-escaped")
        try Fixtures.tone(path: dir.file(Self.name), codecArgs: ["-c:a", "libmp3lame", "-b:a", "128k"], seconds: 1)
        try Fixtures.tone(path: dir.file(Self.otherName), codecArgs: ["-c:a", "libmp3lame", "-b:a", "128k"], seconds: 1)
        server = try PrivateHTTPServer(root: dir.path)
    }

    func play(_ arguments: [String]) throws -> RunResult {
        try run(try tonearmBinary(), ["play", "--output", "null:untimed"] + arguments,
                environment: ["XDG_STATE_HOME": dir.file("state"), "XDG_DATA_HOME": dir.file("data")])
    }

    /// The request targets the server received for media, once its log holds a finished request
    /// for each of `expected` (the log comes through a pipe, after the player may have ended).
    func targets(once expected: Set<String>) async -> [String] {
        _ = await server.waitForRequests(timeout: 10) { log in
            expected.allSatisfy { t in log.contains { $0.target == t && $0.complete } }
        }
        return server.requests().map(\.target)
    }

    @Test func oneEscapedAddressIsRequestedAsEscapedAndShownDecoded() async throws {
        defer { server.stop(); dir.remove() }
        let r = try play([server.baseURL.absoluteString + Self.escaped])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let sent = await targets(once: [Self.escaped])
        #expect(!sent.isEmpty && sent.allSatisfy { $0 == Self.escaped }, "request targets: \(sent)")
        #expect(server.requests().allSatisfy { $0.status != 400 })
        #expect(r.stdout.contains("Playing \(Self.name) [MP3"), "\(r.stdout)")
    }

    @Test func severalEscapedAddressesAreRequestedAsEscapedAndShownDecoded() async throws {
        defer { server.stop(); dir.remove() }
        let r = try play([server.baseURL.absoluteString + Self.escaped, server.baseURL.absoluteString + Self.otherEscaped])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let sent = Set(await targets(once: [Self.escaped, Self.otherEscaped]))
        #expect(sent == [Self.escaped, Self.otherEscaped], "request targets: \(sent)")
        #expect(r.stdout.contains("Playing 1/2: \(Self.name) ["), "\(r.stdout)")
        #expect(r.stdout.contains("Playing 2/2: \(Self.otherName) ["), "\(r.stdout)")
        #expect(r.stdout.contains("Done: 2 played, 0 failed"), "\(r.stdout)")
    }

    @Test func anM3UOfEscapedAddressesIsRequestedAsEscaped() async throws {
        defer { server.stop(); dir.remove() }
        let list = dir.file("list.m3u")
        try "#EXTM3U\n\(server.baseURL.absoluteString + Self.escaped)\n\(server.baseURL.absoluteString + Self.otherEscaped)\n"
            .write(toFile: list, atomically: true, encoding: .utf8)
        let r = try play([list])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let sent = Set(await targets(once: [Self.escaped, Self.otherEscaped]))
        #expect(sent == [Self.escaped, Self.otherEscaped], "request targets: \(sent)")
        #expect(r.stdout.contains("Playing 1/2: \(Self.name) ["), "\(r.stdout)")
        #expect(r.stdout.contains("Playing 2/2: \(Self.otherName) ["), "\(r.stdout)")
    }
}
