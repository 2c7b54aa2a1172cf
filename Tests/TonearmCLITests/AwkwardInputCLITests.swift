// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// `tonearm play` of inputs real collections have and the other tests do not: playlists whose
/// relative entries are percent-encoded, files named like options, and a FLAC cut short. Through
/// the real binary, with files generated here.
@Suite(.offThePool) struct AwkwardInputCLITests {
    /// No sound server and no session bus: nothing outside the test is touched.
    static func environment(_ dir: TempDir) -> [String: String] {
        ["XDG_DATA_HOME": dir.file("data"), "XDG_STATE_HOME": dir.file("state"), "PULSE_SERVER": "unix:\(dir.file("no-pulse"))",
         "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(dir.file("no-bus"))"]
    }

    func play(_ arguments: [String], in dir: TempDir) throws -> RunResult {
        try run(try tonearmBinary(), ["play", "--plain", "--output", "null:untimed"] + arguments,
                environment: Self.environment(dir), currentDirectory: dir.path)
    }

    /// `sub%20dir/%E6%99%B4.flac` in an M3U or PLS names `sub dir/晴.flac` when no file has the
    /// name as written (as a `file://` entry would); a file whose name holds `%20` is still
    /// taken as written; an entry missing either way is reported in the one-line form.
    @Test func percentEncodedRelativeEntriesAreDecodedWhenTheLiteralPathIsMissing() throws {
        let dir = try TempDir("cli-awkward-list")
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.file("lists/sub dir"), withIntermediateDirectories: true)
        try Fixtures.tone(path: dir.file("lists/sub dir/晴.flac"), codecArgs: ["-c:a", "flac", "-metadata", "title=Sunny"], seconds: 0.5)
        try Fixtures.tone(path: dir.file("lists/a%20b.flac"), codecArgs: ["-c:a", "flac", "-metadata", "title=Literal"], seconds: 0.5)
        try "#EXTM3U\nsub%20dir/%E6%99%B4.flac\na%20b.flac\n".write(toFile: dir.file("lists/list.m3u"), atomically: true, encoding: .utf8)
        try "[playlist]\nFile1=sub%20dir/%E6%99%B4.flac\nNumberOfEntries=1\nVersion=2\n"
            .write(toFile: dir.file("lists/list.pls"), atomically: true, encoding: .utf8)

        let m3u = try play(["lists/list.m3u"], in: dir)
        #expect(m3u.status == 0, "\(m3u.stderr)")
        #expect(m3u.stdout.contains("Playing 1/2: Sunny"), "\(m3u.stdout)")
        #expect(m3u.stdout.contains("Playing 2/2: Literal"), "\(m3u.stdout)")
        #expect(m3u.stdout.contains("Done: 2 played, 0 failed"), "\(m3u.stdout)")
        #expect(!m3u.stderr.contains("file not found"), "\(m3u.stderr)")

        let pls = try play(["lists/list.pls"], in: dir)
        #expect(pls.status == 0, "\(pls.stderr)")
        #expect(pls.stdout.contains("Playing 1/1: Sunny"), "\(pls.stdout)")

        // Missing as written and decoded: one line per problem, `tonearm: <what>: <why>`, no usage text.
        try "#EXTM3U\nsub%20dir/gone%20too.flac\n".write(toFile: dir.file("lists/gone.m3u"), atomically: true, encoding: .utf8)
        let gone = try play(["lists/gone.m3u"], in: dir)
        #expect(gone.status == 1, "\(gone.stderr)")
        let lines = gone.stderr.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("tonearm: lists/gone.m3u: entry 1 (line 2): ") == true, "\(gone.stderr)")
        #expect(lines.first?.hasSuffix("sub%20dir/gone%20too.flac: file not found") == true, "\(gone.stderr)")
        #expect(lines.allSatisfy { $0.hasPrefix("tonearm: ") }, "\(gone.stderr)")
        #expect(!gone.stderr.contains("Usage:"), "\(gone.stderr)")
    }

    /// A file named like an option: after `--` or as `./-x.flac` it plays; given bare, the error
    /// names it and says how to give it (it was "give files, folders or playlists").
    @Test func aFileNamedLikeAnOptionIsNamedAndPlayable() throws {
        let dir = try TempDir("cli-awkward-dash")
        defer { dir.remove() }
        try Fixtures.tone(path: dir.file("-x.flac"), codecArgs: ["-c:a", "flac", "-metadata", "title=Dash"], seconds: 0.5)

        let bare = try play(["-x.flac"], in: dir)
        #expect(bare.status == 64, "\(bare.stderr)")
        let first = bare.stderr.split(separator: "\n").first.map(String.init) ?? ""
        #expect(first.hasPrefix("tonearm: play: unknown option '-x.flac'"), "\(bare.stderr)")
        #expect(first.contains("-- ") || first.contains("after --"), "\(bare.stderr)")
        #expect(first.contains("./-x.flac"), "\(bare.stderr)")

        for args in [["--", "-x.flac"], ["./-x.flac"], [dir.file("-x.flac")]] {
            let r = try play(args, in: dir)
            #expect(r.status == 0, "\(args): \(r.stderr)")
            #expect(r.stdout.contains("Playing 1/1: Dash"), "\(args): \(r.stdout)")
        }
        // Without `play`: the file is named, with how to play it.
        let root = try run(try tonearmBinary(), ["./-x.flac"], environment: Self.environment(dir), currentDirectory: dir.path)
        #expect(root.status == 64, "\(root.stderr)")
        #expect(root.stderr.hasPrefix("tonearm: ./-x.flac: not a tonearm command; to play the file: tonearm play ./-x.flac\n"), "\(root.stderr)")
        // Nothing to play at all is still told so.
        let none = try play([], in: dir)
        #expect(none.status == 64 && none.stderr.hasPrefix("tonearm: play: give files, folders or playlists"), "\(none.stderr)")
    }

    /// A FLAC cut at 60 % plays what is there and says, when it gets there and in the summary,
    /// that it ended early and where (it played through silently before).
    @Test func aTruncatedFLACSaysItEndedEarlyAndWhere() throws {
        let dir = try TempDir("cli-awkward-cut")
        defer { dir.remove() }
        let whole = dir.file("whole.flac"), cut = dir.file("cut.flac"), fine = dir.file("fine.flac")
        try Fixtures.tone(path: whole, codecArgs: ["-c:a", "flac", "-metadata", "title=Cut"], seconds: 10, rate: 8000, channels: 1)
        try Fixtures.tone(path: fine, codecArgs: ["-c:a", "flac", "-metadata", "title=Fine"], seconds: 0.5, rate: 8000, channels: 1)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
        try bytes.prefix(bytes.count * 6 / 10).write(to: URL(fileURLWithPath: cut))

        let r = try play([cut, fine], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        // Where: the end of what is there (about 6 s of the 10) — the time the file's audio stops.
        let expected = #/tonearm: .*cut\.flac: ended early, at 0:0[4-6] of 0:10 \(the file is cut short\)/#
        #expect(r.stderr.contains(expected), "\(r.stderr)")
        #expect(r.stdout.contains("Done: 2 played, 0 failed, 1 ended early"), "\(r.stdout)")
        #expect(r.stdout.contains(#/\n  .*cut\.flac: ended early, at 0:0[4-6] of 0:10/#), "\(r.stdout)")
        // The whole file, and the cut one's header alone, say nothing of the kind.
        let w = try play([whole], in: dir)
        #expect(w.status == 0 && !w.stderr.contains("ended early") && !w.stdout.contains("ended early"), "\(w.stderr)\(w.stdout)")
    }
}
