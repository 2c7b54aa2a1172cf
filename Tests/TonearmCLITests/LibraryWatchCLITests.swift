// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Glibc
import Testing
import TonearmTestSupport

/// `tonearm library watch` as a user runs it: a line per change while files come and go, until
/// a signal ends it with the shell's status. Every wait is for the process's output or its end.
@Suite struct LibraryWatchCLITests {
    /// The exit code when the child exited by itself (not killed by a signal), else nil.
    private func exitCode(_ status: Int32?) -> Int32? {
        guard let status, status & 0x7f == 0 else { return nil }
        return (status >> 8) & 0xff
    }

    @Test func printsEachChangeUntilCtrlC() async throws {
        let dir = try TempDir("library-watch-cli")
        defer { dir.remove() }
        let music = dir.file("Music"), db = dir.file("library.sqlite")
        let base = try LibraryFixtures.baseMP3(in: dir.file("tmp"))
        try LibraryFixtures.write(LibraryFixtures.single("first.mp3", title: "First"), base: base, png: [], root: music)
        let bin = try tonearmBinary()
        let watch = try ChildProcess([bin, "library", "watch", music, "--db", db, "--debounce", "50"],
                                     captureStandardError: true, captureStandardOutput: true)
        defer { watch.terminate(SIGKILL) }

        #expect(await watch.waitForStandardOutput(timeout: 20) { $0.text.contains("Watching") || $0.childEnded },
                "stdout: \(watch.standardOutputText) stderr: \(watch.standardErrorText)")
        let start = watch.standardOutputText
        #expect(start.hasPrefix("Scanned in ") && start.contains(": 1 added, 0 updated, 0 moved, 0 removed, 0 unchanged, 0 skipped\n"),
                "\(start)")
        #expect(start.hasSuffix("Watching \(music) for changes (Ctrl-C to stop)\n"), "\(start)")

        try LibraryFixtures.write(LibraryFixtures.single("second.mp3", title: "Second"), base: base, png: [], root: music)
        let added = "added 1 (\(music)/second.mp3)\n"
        #expect(await watch.waitForStandardOutput(timeout: 20) { $0.text.contains(added) || $0.childEnded },
                "\(watch.standardOutputText)")
        try FileManager.default.removeItem(atPath: music + "/first.mp3")
        let removed = "removed 1 (\(music)/first.mp3)\n"
        #expect(await watch.waitForStandardOutput(timeout: 20) { $0.text.contains(removed) || $0.childEnded },
                "\(watch.standardOutputText)")

        kill(watch.pid, SIGINT)
        #expect(await watch.waitForExit(timeout: 20))
        #expect(exitCode(watch.status) == 130, "Ctrl-C ends it with the shell's 130 (status \(String(describing: watch.status)))")
        #expect(watch.standardErrorText.isEmpty, "\(watch.standardErrorText)")

        let songs = try await run(bin, ["library", "songs", "--db", db])
        #expect(songs.stdout.hasPrefix("Second") && !songs.stdout.contains("First"), "the library is as the lines said: \(songs.stdout)")
    }

    @Test func sigtermEndsItWith143AndNoScanSkipsTheScan() async throws {
        let dir = try TempDir("library-watch-cli-term")
        defer { dir.remove() }
        let music = dir.file("Music")
        try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
        let watch = try ChildProcess([try tonearmBinary(), "library", "watch", music, "--db", dir.file("l.sqlite"), "--no-scan"],
                                     captureStandardError: true, captureStandardOutput: true)
        defer { watch.terminate(SIGKILL) }
        #expect(await watch.waitForStandardOutput(timeout: 20) { $0.text.contains("Watching") || $0.childEnded })
        #expect(watch.standardOutputText == "Watching \(music) for changes (Ctrl-C to stop)\n", "\(watch.standardOutputText)")
        try Data("not music\n".utf8).write(to: URL(fileURLWithPath: music + "/readme.txt"))
        let skipped = "skipped 1 (\(music)/readme.txt: a text file, not media)\n"
        #expect(await watch.waitForStandardOutput(timeout: 20) { $0.text.contains(skipped) || $0.childEnded },
                "\(watch.standardOutputText)")
        kill(watch.pid, SIGTERM)
        #expect(await watch.waitForExit(timeout: 20))
        #expect(exitCode(watch.status) == 143, "status \(String(describing: watch.status))")
    }

    @Test func aMissingFolderIsAnError() throws {
        let dir = try TempDir("library-watch-cli-missing")
        defer { dir.remove() }
        let r = try run(try tonearmBinary(), ["library", "watch", dir.file("nope"), "--db", dir.file("l.sqlite")])
        #expect(r.status == 1)
        #expect(r.stderr.contains("tonearm: \(dir.file("nope")): file not found"), "\(r.stderr)")
    }
}
