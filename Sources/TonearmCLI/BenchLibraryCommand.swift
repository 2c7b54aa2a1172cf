// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Tonearm

/// `tonearm bench-library`: times listing queries inside an open library, without the process
/// start (hidden; used by scripts/bench). Prints one JSON object per query.
struct BenchLibraryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-library",
        abstract: "Time the library's listing queries in-process and print the median of each as JSON.",
        discussion: """
            Examples:
              tonearm bench-library --db library.sqlite --artist 'Sigur Rós' --album 'Ágætis byrjun'
            """,
        shouldDisplay: false)

    @Option(name: .long, help: "The library database.")
    var db: String

    @Option(name: .long, help: "The artist whose songs are listed.")
    var artist: String

    @Option(name: .long, help: "The album whose tracks are listed.")
    var album: String

    @Option(name: .long, help: "Timed runs of each query (after one warm-up).")
    var runs = 9

    @Flag(name: .long, help: "Also time every album with all its items (slow on a large library).")
    var withItems = false

    func validate() throws {
        if runs < 1 { throw ValidationError("--runs must be at least 1") }
    }

    func run() throws {
        let openStart = DispatchTime.now().uptimeNanoseconds
        let library = try MediaLibrary(path: db)
        let openMs = Double(DispatchTime.now().uptimeNanoseconds - openStart) / 1e6
        let items = try library.statistics().items
        report("open", ms: [openMs], rows: items)
        try time("songs by artist") { try MediaQuery.songs().filtered(by: .artist(artist)).items(in: library).count }
        try time("album tracks") {
            try MediaQuery.albums().filtered(by: .albumTitle(album)).collections(in: library).reduce(0) { $0 + $1.count }
        }
        try time("albums (summaries)") { try MediaQuery.albums().collectionSummaries(in: library).count }
        try time("artists (summaries)") { try MediaQuery.artists().collectionSummaries(in: library).count }
        if withItems {
            try time("albums with items", runs: 1) { try MediaQuery.albums().collections(in: library).count }
        }
    }

    /// Runs `body` once to warm up, then `runs` times; reports each run's milliseconds.
    private func time(_ name: String, runs: Int? = nil, _ body: () throws -> Int) throws {
        var rows = try body()
        var ms: [Double] = []
        for _ in 0..<(runs ?? self.runs) {
            let start = DispatchTime.now().uptimeNanoseconds
            rows = try body()
            ms.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
        }
        report(name, ms: ms, rows: rows)
    }

    private func report(_ name: String, ms: [Double], rows: Int) {
        let sorted = ms.sorted()
        let median = sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        print(#"{"query": "\#(name)", "median_ms": \#(median), "min_ms": \#(sorted[0]), "max_ms": \#(sorted.last!), "runs": \#(ms.count), "rows": \#(rows)}"#)
    }
}
