// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `tonearm play http://…` as a user runs it, against a real HTTP server on 127.0.0.1: it says
/// when the network stalls and when it plays again, shows a radio station's titles, and a
/// missing stream ends with its status and exit status 1.
@Suite(.serialized) struct StreamCLITests {
    let dir: TempDir
    init() throws {
        dir = try TempDir("cli-stream")
        setenv("XDG_STATE_HOME", dir.file("state"), 1)
    }

    @Test func aStreamThatStallsSaysSoAndPlaysOn() throws {
        defer { dir.remove() }
        try Fixtures.tone(path: dir.file("a.mp3"), codecArgs: ["-c:a", "libmp3lame", "-b:a", "128k"], seconds: 6)
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        // About 4 s arrive, then nothing for 10 s.
        let url = server.url("/a.mp3", query: ["stall": "10", "at": "64000"]).absoluteString
        let r = try run(try tonearmBinary(), ["play", "--output", "null", url])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let out = r.stdout
        #expect(out.contains("Playing a.mp3 [MP3"), "\(out)")
        #expect(out.contains("0:06]"), "\(out)")
        let late = out.range(of: "the network is late")
        let again = out.range(of: "playing again after")
        #expect(late != nil && again != nil && late!.lowerBound < again!.lowerBound, "\(out)")
        #expect(out.contains("Done: 1 played, 0 failed"), "\(out)")
    }

    @Test func aRadioStationsTitlesAreShownAndCtrlCEnds() throws {
        defer { dir.remove() }
        try Fixtures.tone(path: dir.file("loop.mp3"), codecArgs: ["-c:a", "libmp3lame", "-b:a", "128k"], seconds: 3)
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        // Typed as a user would, with an escape already in it (`%20`) and a character that needs one (`|`).
        let url = server.url("/radio").absoluteString + "?file=loop.mp3&metaint=8000&every=16000&rate=24000"
            + "&titles=First%20Song|Second"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try tonearmBinary())
        p.arguments = ["play", "--output", "null", url]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        p.standardInput = Pipe()
        let text = Watched("")
        try p.run()
        let reader = Thread {
            while true {
                let d = out.fileHandleForReading.availableData
                if d.isEmpty { break }
                text.update { $0 += String(decoding: d, as: UTF8.self) }
            }
        }
        reader.start()
        let both = text.waitBlocking(timeout: 30) { $0.contains("Now: First Song") && $0.contains("Now: Second") }
        kill(p.processIdentifier, SIGINT)
        p.waitUntilExit()
        #expect(both, "\(text.value)")
        #expect(text.value.contains("live]"), "\(text.value)")
        #expect(p.terminationStatus == 130, "Ctrl-C ends with the shell's 130")
    }

    @Test func aMissingStreamFailsWithItsStatus() throws {
        defer { dir.remove() }
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        let r = try run(try tonearmBinary(), ["play", "--output", "null", server.url("/gone.mp3").absoluteString])
        #expect(r.status == 1)
        #expect(r.stderr.contains("the server answered 404"), "\(r.stderr)")
    }
}
