// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// `tonearm play --shuffle` and `--start FILE` as a user runs them: --start names the first
/// file (the first of the shuffled order with --shuffle, which still plays every file once),
/// and a --start that is not one of the files is refused clearly.
@Suite struct StartShuffleCLITests {
    let dir: TempDir
    let files: [String]

    init() throws {
        let folder = try TempDir("cli-start")
        dir = folder
        files = try ["a", "b", "c", "d"].map { name in
            let p = folder.file("\(name).flac")
            try Fixtures.tone(path: p, codecArgs: ["-c:a", "flac"], seconds: 0.5)
            return p
        }
    }

    func play(_ arguments: [String]) throws -> RunResult {
        try run(try tonearmBinary(), ["play", "--output", "null:untimed", "--plain"] + arguments,
                environment: ["XDG_STATE_HOME": dir.file("state"), "XDG_DATA_HOME": dir.file("data")])
    }

    /// The names of the "Playing" lines, in order.
    func played(_ r: RunResult) -> [String] {
        r.stdout.split(separator: "\n").filter { $0.hasPrefix("Playing ") }.map { line in
            String(line.split(separator: ": ", maxSplits: 1).last?.split(separator: " [").first ?? "")
        }
    }

    @Test func shuffleStartsWithTheFileNamedByStart() throws {
        defer { dir.remove() }
        let r = try play(["--shuffle", "--start", files[2]] + files)
        #expect(r.status == 0, "\(r.stderr)")
        let names = played(r)
        #expect(names.first == "c.flac" && names.sorted() == ["a.flac", "b.flac", "c.flac", "d.flac"], "\(r.stdout)")
    }

    @Test func startWithoutShufflePlaysOnInQueueOrder() throws {
        defer { dir.remove() }
        let r = try play(["--start", files[2]] + files)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(played(r) == ["c.flac", "d.flac"], "\(r.stdout)")
        #expect(r.stdout.contains("Playing 3/4: c.flac"), "\(r.stdout)")
    }

    @Test func aStartThatIsNotAmongTheFilesIsRefused() throws {
        defer { dir.remove() }
        let r = try play(["--start", dir.file("e.flac")] + files)
        #expect(r.status != 0 && r.stderr.contains("--start \(dir.file("e.flac")): not one of the files to play"), "\(r.stderr)")
        let both = try play(["--resume", "--start", files[0]])
        #expect(both.status != 0 && both.stderr.contains("cannot be used with --resume"), "\(both.stderr)")
    }
}
