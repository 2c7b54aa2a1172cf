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
