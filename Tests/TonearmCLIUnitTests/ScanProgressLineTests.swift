// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
import Tonearm
@testable import TonearmCLI

/// The live line `tonearm library scan` draws on a terminal.
@Suite struct ScanProgressLineTests {
    @Test func aBarTheCountsThePercentageAndTheFile() {
        let p = ScanProgress(filesDone: 4210, filesTotal: 10000, currentFile: "/m/Artist 042/1999 - Album/03 - Song.flac")
        let line = LibraryScanCommand.progressLine(p, width: 120)
        #expect(line == "Scanning [████████████░░░░░░░░░░░░░░░░░░] 4210/10000  42%  03 - Song.flac", "\(line)")
        let done = LibraryScanCommand.progressLine(ScanProgress(filesDone: 7, filesTotal: 7, currentFile: nil), width: 80)
        #expect(done == "Scanning [████████████████████] 7/7  100%", "\(done)")
        let none = LibraryScanCommand.progressLine(ScanProgress(filesDone: 0, filesTotal: 0, currentFile: nil), width: 80)
        #expect(none == "Scanning [░░░░░░░░░░░░░░░░░░░░] 0/0  0%")
    }

    @Test func itFitsTheTerminalAndDrawsNoControlCharacters() {
        let p = ScanProgress(filesDone: 1, filesTotal: 3, currentFile: "/m/周杰伦 晴天 \u{1B}[2J evil.flac")
        for width in [20, 40, 60, 80, 200] {
            let line = LibraryScanCommand.progressLine(p, width: width)
            #expect(TextWidth.of(line) <= max(20, width - 1), "\(width): \(line)")
            #expect(!line.unicodeScalars.contains { $0.value < 0x20 }, "\(width): \(line)")
        }
        #expect(LibraryScanCommand.progressLine(p, width: 200).hasSuffix("周杰伦 晴天 ?[2J evil.flac"))
    }
}

/// The summary `tonearm library scan` prints: skipped files counted by kind of reason, most
/// first; each one with its reason only when verbose.
@Suite struct ScanReportTests {
    @Test func skippedFilesAreCountedByKind() {
        var s = ScanSummary()
        s.added = 5
        s.skipped = [SkippedFile(path: "/m/a.txt", reason: "a text file, not media", kind: .notAudio),
                     SkippedFile(path: "/m/b.mp3", reason: "cannot be read (Permission denied)", kind: SkipKind(.notReadable(path: "/m/b.mp3", reason: "Permission denied"))),
                     SkippedFile(path: "/m/c.png", reason: "has no audio track", kind: SkipKind(.noAudioTrack(path: "/m/c.png"))),
                     SkippedFile(path: "/m/d.m4a", reason: "the codec 'alac' is not supported by this build",
                                 kind: SkipKind(.unsupportedCodec(path: "/m/d.m4a", codec: "alac")))]
        let plain = LibraryScanCommand.report(s, seconds: 1.5, verbose: false)
        #expect(plain == """
            Scanned in 1.50 s: 5 added, 0 updated, 0 moved, 0 removed, 0 unchanged, 4 skipped
            skipped 4 files: 2 not audio, 1 not decodable, 1 unreadable (--verbose lists them)

            """)
        let verbose = LibraryScanCommand.report(s, seconds: 1.5, verbose: true)
        #expect(verbose.hasSuffix("""
            skipped 4 files: 2 not audio, 1 not decodable, 1 unreadable
              skipped /m/a.txt: a text file, not media
              skipped /m/b.mp3: cannot be read (Permission denied)
              skipped /m/c.png: has no audio track
              skipped /m/d.m4a: the codec 'alac' is not supported by this build

            """))
        s.skipped = [SkippedFile(path: "/m/e.mp3", reason: "the file is empty (0 bytes)", kind: .empty)]
        #expect(LibraryScanCommand.report(s, seconds: 0, verbose: false).hasSuffix("\nskipped 1 file: 1 empty (--verbose lists them)\n"))
        s.skipped = []
        #expect(!LibraryScanCommand.report(s, seconds: 0, verbose: true).contains("skipped "), "no line when nothing was skipped")
    }
}
