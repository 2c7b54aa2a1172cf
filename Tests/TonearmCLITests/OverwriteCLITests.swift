// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// One rule for every file the CLI writes: an existing file is replaced only with `--force`,
/// and the refusal says "use --force" in the same words (play --output file:, render, convert,
/// extract-audio).
@Suite  final class OverwriteCLITests: Sendable {
    let dir: TempDir
    init() throws { dir = try TempDir("overwrite-cli") }
    deinit { dir.remove() }

    @Test func playToAnExistingFileNeedsForce() throws {
        defer { dir.remove() }
        let tone = dir.file("tone.wav")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=0.3:sample_rate=44100", tone])
        let out = dir.file("kept.wav")
        let original = Data("not to be lost".utf8)
        try original.write(to: URL(fileURLWithPath: out))
        let refused = try run(try tonearmBinary(), ["play", "--output", "file:\(out)", tone])
        #expect(refused.status == 1, "\(refused.stderr)")
        #expect(refused.stderr.contains("\(out): already exists; use --force to overwrite it"), "\(refused.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == original, "the file was touched")
        let forced = try run(try tonearmBinary(), ["play", "--output", "file:\(out)", "--force", tone])
        #expect(forced.status == 0, "\(forced.stderr)")
        let w = try readWAV(out)
        #expect(abs(Double(w.frameCount) / Double(w.sampleRate) - 0.3) < 0.01, "\(w.frameCount) frames at \(w.sampleRate) Hz")
        // A new file needs nothing.
        let fresh = try run(try tonearmBinary(), ["play", "--output", "file:\(dir.file("new.wav"))", tone])
        #expect(fresh.status == 0, "\(fresh.stderr)")
    }

    @Test func everyWriterRefusesInTheSameWords() throws {
        defer { dir.remove() }
        let tone = dir.file("tone.wav")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=duration=0.3", tone])
        let existing = dir.file("existing.wav")
        try Data("keep".utf8).write(to: URL(fileURLWithPath: existing))
        let commands: [[String]] = [
            ["play", "--output", "file:\(existing)", tone],
            ["render", tone, "-o", existing],
            ["convert", tone, "-o", existing],
            ["extract-audio", tone, "-o", existing, "--preset", "pcm"],
        ]
        for c in commands {
            let r = try run(try tonearmBinary(), c)
            #expect(r.status == 1, "\(c[0]): \(r.status) \(r.stderr)")
            #expect(r.stderr.contains("tonearm: \(existing): already exists; use --force to overwrite it\n"), "\(c[0]): \(r.stderr)")
        }
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "keep")
        for c in commands {
            let r = try run(try tonearmBinary(), c + ["--force"])
            #expect(r.status == 0, "\(c[0]) --force: \(r.stderr)")
        }
    }
}
