// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Tonearm
#if canImport(Glibc)
import Glibc
#endif

/// `tonearm pick [SEARCH…]`: the media picker (MPMediaPickerController) in the terminal. Type to
/// search, browse artists, albums, genres and playlists, select several; Enter plays them (or
/// queues, prints or adds them to a playlist). Keys come from standard input, which must be a
/// terminal (exit status 2 otherwise); the screen is drawn on standard output when it is a
/// terminal, else on the controlling terminal, so `$(tonearm pick --print)` works.
struct PickCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pick",
        abstract: "Pick songs from the media library in the terminal, then play, queue or print them.",
        discussion: """
            Type to search (each word starts a word of a title, artist or album; case and accents \
            are ignored). ↑/↓, PgUp/PgDn, Home/End move; space selects the highlighted row (an \
            artist, album, genre or playlist: all its songs) — while typing, space is a space: \
            press ↓ first, or Ctrl-Space; Ctrl-A selects every row shown; → opens an artist, \
            album, genre or playlist, ← (or Backspace in an empty search) goes back; Tab and \
            Shift-Tab change view (songs, artists, albums, genres, playlists, the selection), \
            keeping the search; Ctrl-U clears the search, Ctrl-W deletes a word. Enter takes the \
            selection, in the order it was made, or the highlighted row when nothing is selected. \
            Esc or Ctrl-C cancels (exit status 130). Standard input must be a terminal (status 2 \
            otherwise).

            Examples:
              tonearm pick                                  # search and play
              tonearm pick --view albums --type music
              tonearm pick nina --queue                     # add to the saved queue
              tonearm pick --add-to Favourites
              mpv --playlist=<(tonearm pick --print)        # picks for another player
            """
    )

    @Argument(help: "Text to start the search with.")
    var search: [String] = []

    @Option(name: .long, help: "The view to start in: songs, artists, albums, genres, playlists.", completion: .list(Completions.pickViews))
    var view: String = "songs"

    @Option(name: .long, help: "Only music, podcasts or audiobooks (default: all three).", completion: .list(Completions.mediaTypes))
    var type: String?

    @OptionGroup var database: LibraryDatabaseOption

    @Flag(name: .long, help: "Append the picks to the saved queue and play on from where it was (as `play --resume`).")
    var queue = false

    @Flag(name: .long, help: "Print the picked files' paths, one per line (an M3U playlist), instead of playing.")
    var print = false

    @Flag(name: .long, help: "Print the picked files' paths each ended by a NUL byte (for xargs -0), instead of playing.")
    var print0 = false

    @Flag(name: .long, help: "Print the picked items' persistent IDs, one per line, instead of playing.")
    var printIds = false

    @Option(name: .long, help: ArgumentHelp("Append the picks to this library playlist (made if missing) instead of playing.", valueName: "NAME"), completion: Completions.playlists)
    var addTo: String?

    @Flag(name: .long, help: "Add the picks to the running daemon's queue (tonearm daemon) instead of playing them here.")
    var daemon = false

    @OptionGroup var daemonAddress: DaemonAddressOptions

    @OptionGroup var playback: PlaybackOptions

    func validate() throws {
        let modes = [queue ? "--queue" : nil, print ? "--print" : nil, print0 ? "--print0" : nil, printIds ? "--print-ids" : nil,
                     addTo.map { _ in "--add-to" }, daemon ? "--daemon" : nil].compactMap { $0 }
        if modes.count > 1 { throw ValidationError("\(modes.joined(separator: ", ")): choose one") }
        if let addTo, addTo.trimmingCharacters(in: .whitespaces).isEmpty { throw ValidationError("--add-to needs a playlist name") }
        if daemonAddress.isGiven && !daemon { throw ValidationError("--host, --port and --password say where the daemon is: they go with --daemon") }
        if daemon { _ = try daemonAddress.resolved() }
        guard let v = MediaPicker.View(rawValue: view.lowercased()), v != .selected else {
            throw ValidationError("--view must be songs, artists, albums, genres or playlists, not '\(view)'")
        }
        if let type, MediaType(rawValue: type.lowercased()) == nil {
            throw ValidationError("--type must be music, podcast or audiobook, not '\(type)'")
        }
    }

    /// What Enter does, in the help line.
    private var verb: String {
        if queue { return "queue" }
        if print || print0 || printIds { return "print" }
        if addTo != nil || daemon { return "add" }
        return "play"
    }

    func run() async throws {
        try playback.checkOutputFile()
        let path = database.db ?? MediaLibrary.defaultPath
        guard FileManager.default.fileExists(atPath: path) else {
            throw CommandFailure(nil, "there is no library at \(path); scan folders into one first: "
                                 + "tonearm library scan DIR\(database.db.map { " --db \($0)" } ?? "")")
        }
        let library = try MediaLibrary(path: path)
        if let mediaType = type.flatMap({ MediaType(rawValue: $0.lowercased()) }) {
            // A library without this type says so, rather than that it is empty.
            let s = try library.statistics()
            let (count, plural) = switch mediaType {
            case .music: (s.songs, "songs")
            case .podcast: (s.podcasts, "podcasts")
            case .audiobook: (s.audiobooks, "audiobooks")
            }
            if count == 0 && s.items > 0 { throw CommandFailure(nil, "the library at \(path) has no \(plural) (\(s.songs) songs, \(s.podcasts) podcasts, \(s.audiobooks) audiobooks)") }
        }
        // The library first (its errors need no terminal), then the terminal.
        guard isatty(0) == 1 else {
            throw CommandFailure(nil, "standard input is not a terminal; the picker reads its keys from one "
                                 + "(in scripts: tonearm library songs --search TEXT --json)", status: 2)
        }
        guard let screen = Self.screen() else {
            throw CommandFailure(nil, "no terminal to draw on (standard output is not one, and /dev/tty cannot be opened)", status: 2)
        }
        defer { if screen != 1 && screen != 2 { close(screen) } }
        let source = MediaPicker.LibrarySource(library: library, mediaType: type.flatMap { MediaType(rawValue: $0.lowercased()) })
        let picker = MediaPicker(source: source, view: MediaPicker.View(rawValue: view.lowercased()) ?? .songs,
                                 search: search.joined(separator: " "),
                                 pageSize: PickerScreen.pageSize(height: Terminal.size(of: screen).rows))
        let session = PickSession(picker: picker, terminal: Terminal(output: screen, bracketedPaste: true), verb: verb,
                                  libraryPath: library.path)
        let items: [MediaItem]
        switch await session.run() {
        case .picked(let picked): items = picked
        case .cancelled: throw ExitCode(130)  // as fzf: Escape is an interruption
        case .signalled(let sig): throw ExitCode(128 + sig)
        }

        if print || print0 || printIds {
            let lines = items.map { printIds ? String($0.persistentID) : $0.path }
            Terminal.write(lines.map { $0 + (print0 ? "\0" : "\n") }.joined())
            return
        }
        if let addTo {
            do {
                if try library.playlist(named: addTo) == nil { try library.createPlaylist(named: addTo) }
                let p = try library.addItems(items.map(\.persistentID), to: addTo)
                Terminal.write("Added \(items.count == 1 ? "1 track" : "\(items.count) tracks") to '\(p.name)' (\(p.count) in all)\n")
            }
            return
        }
        if daemon {
            try await RemoteHandOff.hand(items.map(\.path), options: daemonAddress)
            return
        }
        // Picked items' plays and skips are counted in the library.
        let ids = Dictionary(items.map { ($0.path, $0.persistentID) }, uniquingKeysWith: { a, _ in a })
        try await playback.play(files: items.map(\.path), resume: queue, library: library, libraryIDs: ids)
    }

    /// The descriptor to draw on: standard output when it is a terminal, else the controlling
    /// terminal (opened), else standard error when it is one; nil when there is none.
    static func screen() -> Int32? {
        if isatty(1) == 1 { return 1 }
        let tty = open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC)
        if tty >= 0 { return tty }
        return isatty(2) == 1 ? 2 : nil
    }
}
