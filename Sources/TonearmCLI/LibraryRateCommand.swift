// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Tonearm

/// `tonearm library rate 0-5 [--id PID]… [--search TEXT] [--artist X] [--album Y]`: sets the
/// rating (MPMediaItem's `rating`, 0 for none) of every item chosen — by persistentID (as
/// `songs --json` and `pick --print-ids` print them), or every item a search and filters find —
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
    @Option(name: .long, help: "A persistentID (repeatable), as `songs --json` or `pick --print-ids` print them.")
    var id: [String] = []
    @OptionGroup var selection: LibrarySelection
    @OptionGroup var database: LibraryDatabaseOption

    func validate() throws {
        guard (0...5).contains(rating) else { throw ValidationError("a rating is 0 (none) to 5 stars, not \(rating)") }
        if id.isEmpty && selection.isEmpty {
            throw ValidationError("say what to rate: --id, --search, --artist or --album")
        }
        if !id.isEmpty && !selection.isEmpty {
            throw ValidationError("give either --id or a search and filters, not both")
        }
        for text in id where UInt64(text) == nil {
            throw ValidationError("'\(text)' is not a persistentID (a whole number, as `songs --json` prints it)")
        }
    }

    /// "★★★☆☆", or "no rating" for 0.
    static func stars(_ rating: Int) -> String {
        rating == 0 ? "no rating" : String(repeating: "★", count: rating) + String(repeating: "☆", count: 5 - rating)
    }

    func run() throws {
        let library = try database.open(command: "rate")
        do {
            let items: [MediaItem]
            if !id.isEmpty {
                items = try id.compactMap(UInt64.init).map { pid throws(TonearmError) in
                    guard let item = try library.item(persistentID: pid) else {
                        throw TonearmError.invalidArgument("no item with persistentID \(pid) in \(library.path)")
                    }
                    return item
                }
            } else {
                items = try selection.items(in: library)
                if items.isEmpty {
                    throw CommandFailure(nil, "nothing in the library matches \(selection.description)")
                }
            }
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
