// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
@testable import TonearmCLI

/// `tonearm library scan`'s common forms run without swift-argument-parser
/// (`LibraryScanCommand.Arguments(commandLine:)`): every form taken gives the values the parser
/// gives, and every other form is left to the parser.
@Suite struct ScanCommandLineTests {
    /// The values the parser makes of `arguments` (nil: not a scan, or refused).
    private func parsed(_ arguments: [String]) -> LibraryScanCommand.Arguments? {
        guard let command = try? TonearmCommand.parseAsRoot(arguments) as? LibraryScanCommand else { return nil }
        return LibraryScanCommand.Arguments(folders: command.folders, db: command.database.db, quiet: command.quiet,
                                            verbose: command.verbose, batchSize: command.batchSize, readers: command.readers)
    }

    @Test func theCommonFormsGiveWhatTheParserGives() throws {
        let forms: [[String]] = [
            ["library", "scan", "/music"],
            ["library", "scan", "/music", "--db", "/tmp/l.sqlite", "--quiet"],
            ["library", "scan", "--quiet", "/music", "Podcasts", "--db", "l.sqlite"],
            ["library", "scan", "--db", "/d b/ü.sqlite", "/a", "/b", "/c", "--verbose"],
            ["library", "scan", "--verbose", "--quiet", "scan", "library"],
            ["library", "scan", "周杰伦", "--db", "x"],
        ]
        for form in forms {
            let fast = try #require(LibraryScanCommand.Arguments(commandLine: form), "\(form)")
            let parser = try #require(parsed(form), "\(form)")
            #expect(fast == parser, "\(form)")
        }
        let one = LibraryScanCommand.Arguments(commandLine: ["library", "scan", "/m", "--db", "/l", "--quiet"])
        #expect(one == LibraryScanCommand.Arguments(folders: ["/m"], db: "/l", quiet: true))
    }

    @Test func everyOtherFormIsLeftToTheParser() {
        let forms: [[String]] = [
            [], ["library"], ["library", "scan"], ["library", "scan", "--quiet"], ["library", "scan", "--db", "x"],
            ["scan", "library", "/m"], ["library", "songs", "/m"], ["--config", "c.toml", "library", "scan", "/m"],
            ["library", "scan", "/m", "--help"], ["library", "scan", "/m", "-h"], ["library", "scan", "help"],
            ["library", "scan", "/m", "--db"], ["library", "scan", "/m", "--db", "--quiet"],
            ["library", "scan", "/m", "--db=x"], ["library", "scan", "/m", "--db", "a", "--db", "b"],
            ["library", "scan", "/m", "--quiet", "--quiet"], ["library", "scan", "/m", "--verbose", "--verbose"],
            ["library", "scan", "/m", "--batch-size", "3"], ["library", "scan", "/m", "--readers", "2"],
            ["library", "scan", "/m", "--"], ["library", "scan", "/m", "-"], ["library", "scan", ""],
            ["library", "scan", "/m", "-q"], ["library", "scan", "/m", "--quite"],
        ]
        for form in forms {
            #expect(LibraryScanCommand.Arguments(commandLine: form) == nil, "\(form)")
        }
        // (Forms the parser takes, with other values than the defaults the fast path would give.)
        #expect(parsed(["library", "scan", "/m", "--batch-size", "3"])?.batchSize == 3)
        #expect(parsed(["library", "scan", "/m", "--readers", "2"])?.readers == 2)
        #expect(parsed(["library", "scan", "/m", "--db=x"])?.db == "x")
    }
}
