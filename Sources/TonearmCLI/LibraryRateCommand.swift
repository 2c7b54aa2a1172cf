// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Tonearm

/// `tonearm library rate 0-5 [FILE…] [--id PID]… [--search TEXT] [--artist X] [--album Y]`: sets
/// the rating (MPMediaItem's `rating`, 0 for none) of every item chosen — files of the library by
/// path, by persistentID (as `songs --json` and `pick --print-ids` print them), or every item a
/// search and filters find —
/// and prints each with its stars. What is rated shows in the "Top Rated" smart playlist.
/// A rating out of range, no selector, or nothing found: an error, exit status 1 (2 for usage).
struct LibraryRateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rate",
        abstract: "Rate songs 1 to 5 stars (0 removes the rating): by persistentID, or every song a search finds.",
        discussion: """
            Examples:
              tonearm library rate 5 --album 'Kind of Blue'
              tonearm library rate 4 --id 1234567890123
              tonearm library rate 0 --search 'demo'
            """)

    @Argument(help: ArgumentHelp("Stars, 0 (none) to 5.", valueName: "RATING"))
    var rating: Int
    @OptionGroup var selection: LibrarySelection
    @OptionGroup var database: LibraryDatabaseOption

    func validate() throws {
        guard (0...5).contains(rating) else { throw ValidationError("a rating is 0 (none) to 5 stars, not \(rating)") }
        if selection.isEmpty {
            throw ValidationError("say what to rate: files, --id, --search, --artist or --album")
        }
    }

    /// "★★★☆☆", or "no rating" for 0.
    static func stars(_ rating: Int) -> String {
        rating == 0 ? "no rating" : String(repeating: "★", count: rating) + String(repeating: "☆", count: 5 - rating)
    }

    func run() throws {
        let library = try database.open(command: "rate")
        do {
            let items = try selection.requireItems(in: library, command: "rate")
            try library.setRating(rating, of: items.map(\.persistentID))  // all or none
            var text = ""
            for item in items {
                let where_ = [item.artist, item.albumTitle].compactMap { $0 }.joined(separator: " — ")
                text += "\(Self.stars(rating))  \(item.title)\(where_.isEmpty ? "" : "  (\(where_))")\n"
            }
            Terminal.write(text)
        }
    }
}
