// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// `tonearm play` says what it met in a file and played through anyway: corrupt packets skipped
/// (the first of a file when met, the count in the summary), and a name that says another
/// format — for the first item and for one that follows gaplessly. Both were silent before.
/// Through the real binary with files generated here, to the untimed null output.
@Suite struct PlayWarningsCLITests {
    static func environment(_ dir: TempDir) -> [String: String] {
        ["XDG_DATA_HOME": dir.file("data"), "XDG_STATE_HOME": dir.file("state"), "PULSE_SERVER": "unix:\(dir.file("no-pulse"))",
         "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(dir.file("no-bus"))"]
    }

    func play(_ files: [String], in dir: TempDir) throws -> RunResult {
        try run(try tonearmBinary(), ["play", "--plain", "--output", "null:untimed"] + files,
                environment: Self.environment(dir), currentDirectory: dir.path)
    }

    /// A 5 s MP3 with three runs of 1,500 noise bytes in its middle (deterministic).
    static func damagedMP3(_ dir: TempDir, name: String) throws {
        let clean = dir.file("clean-\(name)")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=5", "-c:a", "libmp3lame", "-b:a", "128k", clean])
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: clean)))
        var x: UInt32 = 0x2545_F491
        for start in [20_000, 40_000, 60_000] {
            for i in start..<(start + 1500) {
                x = x &* 1_103_515_245 &+ 12345
                bytes[i] = UInt8(truncatingIfNeeded: x >> 16)
            }
        }
        try Data(bytes).write(to: URL(fileURLWithPath: dir.file(name)))
    }

    @Test func corruptPacketsAreSaidOnceAndCountedInTheSummary() throws {
        let dir = try TempDir("cli-play-corrupt")
        defer { dir.remove() }
        try Self.damagedMP3(dir, name: "damaged.mp3")
        // The reference: FFmpeg meets errors in this file too.
        let ff = try TonearmTestSupport.run("ffmpeg", ["-nostdin", "-v", "error", "-i", dir.file("damaged.mp3"), "-f", "null", "-"])
        #expect(ff.stderr.contains("Error while decoding"), "\(ff.stderr)")

        let r = try play(["damaged.mp3"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let said = r.stderr.components(separatedBy: "\n").filter { $0.contains("corrupt audio at packet") }
        #expect(said.count == 1, "\(r.stderr)")
        #expect(said.first?.contains("damaged.mp3") == true)
        let done = try #require(r.stdout.components(separatedBy: "\n").first { $0.hasPrefix("Done:") })
        let count = try #require(done.firstMatch(of: /, (\d+) corrupt packets? skipped/).map { Int($0.1)! }, "\(done)")
        #expect(count >= 2, "\(done)")
        #expect(r.stdout.contains("damaged.mp3: \(count) corrupt packet"), "\(r.stdout)")
        #expect(done.contains("1 played, 0 failed"))
    }

    /// The same file as a network stream (`tonearm play http://…`, the streaming player): the
    /// first corrupt packet is said when met and the rest are counted in the summary, as for a
    /// file — every one was printed before.
    @Test func corruptPacketsOfAStreamAreSaidOnceAndCountedInTheSummary() throws {
        let dir = try TempDir("cli-stream-corrupt")
        defer { dir.remove() }
        try Self.damagedMP3(dir, name: "damaged.mp3")
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        let url = server.url("/damaged.mp3").absoluteString
        let r = try run(try tonearmBinary(), ["play", "--plain", "--output", "null:untimed", url],
                        environment: Self.environment(dir), currentDirectory: dir.path)
        #expect(r.status == 0, "\(r.stderr)")
        let all = r.stdout + r.stderr
        let said = all.components(separatedBy: "\n").filter { $0.contains("corrupt audio at packet") }
        #expect(said.count == 1, "\(all)")
        #expect(said.first?.contains("further ones are counted in the summary") == true, "\(all)")
        let done = try #require(r.stdout.components(separatedBy: "\n").first { $0.hasPrefix("Done:") }, "\(r.stdout)")
        let count = try #require(done.firstMatch(of: /, (\d+) corrupt packets? skipped/).map { Int($0.1)! }, "\(done)")
        #expect(count >= 2, "\(done)")
        #expect(r.stdout.contains("damaged.mp3: \(count) corrupt packet"), "\(r.stdout)")
        #expect(done.contains("1 played, 0 failed"))
    }

    @Test func aNameThatSaysAnotherFormatIsSaidForEveryItemOnce() throws {
        let dir = try TempDir("cli-play-misnamed")
        defer { dir.remove() }
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=1", "-c:a", "libmp3lame", dir.file("a.mp3")])
        try FileManager.default.copyItem(atPath: dir.file("a.mp3"), toPath: dir.file("first.ogg"))
        try FileManager.default.copyItem(atPath: dir.file("a.mp3"), toPath: dir.file("second.ogg"))

        let alone = try play(["first.ogg"], in: dir)
        #expect(alone.status == 0, "\(alone.stderr)")
        #expect(alone.stderr.components(separatedBy: "named .ogg but the content is MP3").count == 2, "\(alone.stderr)")

        let queue = try play(["a.mp3", "second.ogg"], in: dir)
        #expect(queue.status == 0, "\(queue.stderr)")
        let lines = queue.stderr.components(separatedBy: "\n").filter { $0.contains("named .ogg") }
        #expect(lines.count == 1, "\(queue.stderr)")
        #expect(lines.first?.contains("second.ogg") == true)
        #expect(queue.stdout.contains("2 played, 0 failed"))
    }
}
