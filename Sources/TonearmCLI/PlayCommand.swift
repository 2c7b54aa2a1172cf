// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Dispatch
import Foundation
import Tonearm
#if canImport(Glibc)
import Glibc
#endif

struct PlayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play files, folders and playlists as one gapless queue.",
        discussion: """
            In a terminal it shows a live screen (keys: \(LiveScreen.help)). When standard output \
            is not a terminal it prints plain progress lines. Files that cannot be played are \
            reported and skipped; the exit status is 1 when any failed. The queue is saved as it \
            plays; --resume picks it up again. While playing, it is published over MPRIS \
            (playerctl, desktop media keys) when a session bus is there.
            """
    )

    @Argument(help: "Files, folders, playlists (.m3u, .m3u8, .pls, .xspf) or http(s):// streams to play.")
    var paths: [String] = []

    @Option(name: .long, help: "Where to play: \(OutputSelection.syntax). Default: PulseAudio/PipeWire if a server answers, else null.")
    var output: String?

    @Option(name: .long, help: "The PulseAudio output (sink) to play to, by name (`tonearm outputs` lists them). Default: the system's default output.")
    var device: String?

    @Option(name: .long, help: "Initial volume, 0–100.")
    var volume: Int?

    @Option(name: [.customLong("repeat"), .customLong("loop")], help: "Repeat: off, one (the current item) or all (the queue).")
    var repeatMode: String?

    @Flag(name: .long, help: "Shuffle the queue (every item once, the first one first).")
    var shuffle = false

    @Option(name: .long, help: "Crossfade between items, in seconds (0: gapless; consecutive tracks of one album always stay gapless).")
    var crossfade: Double = 0

    @Option(name: .long, help: "ReplayGain: off, track or album (album falls back to track).")
    var replaygain: String = "off"

    @Option(name: .long, help: "ReplayGain pre-amp in dB.")
    var preamp: Double = 0

    @Flag(name: .long, help: "Mix with other Tonearm players (the audio session's mixWithOthers) instead of interrupting them.")
    var mix = false

    @Flag(name: .long, help: "Resume the saved queue where it was (with any files given appended).")
    var resume = false

    @Option(name: .long, help: "Play the library's albums by this artist (case and accents ignored), in album order.")
    var artist: String?

    @Option(name: .long, help: "Play this album from the library, in disc and track order.")
    var album: String?

    @Option(name: .long, help: "Play the library's songs of this genre.")
    var genre: String?

    @Option(name: .long, help: "Play what a full-text search of the library finds (titles, artists, albums).")
    var search: String?

    @Option(name: .long, help: "Play this playlist of the media library, in its order (see tonearm library playlists).")
    var playlist: String?

    @Option(name: .long, help: "The media library database (default: $XDG_DATA_HOME/tonearm/library.sqlite).")
    var db: String?

    @OptionGroup var sound: SoundOptions

    @Flag(name: .long, help: "Plain progress lines even in a terminal.")
    var plain = false

    func validate() throws {
        if let v = volume, !(0...100).contains(v) { throw ValidationError("--volume must be between 0 and 100, not \(v)") }
        if let r = repeatMode, Self.repeatValue(r) == nil { throw ValidationError("--repeat must be off, one or all, not '\(r)'") }
        guard ReplayGainMode(rawValue: replaygain) != nil else { throw ValidationError("--replaygain must be off, track or album, not '\(replaygain)'") }
        guard (0...30).contains(crossfade) else { throw ValidationError("--crossfade must be between 0 and 30 seconds, not \(crossfade)") }
        guard (-20...20).contains(preamp) else { throw ValidationError("--preamp must be between -20 and +20 dB, not \(preamp)") }
        if let o = output {
            do { _ = try OutputSelection(parsing: o) } catch { throw ValidationError("\(error)") }
        }
        if let d = device {
            guard !d.trimmingCharacters(in: .whitespaces).isEmpty else { throw ValidationError("--device needs an output name (see tonearm outputs)") }
            if let o = output, (try? OutputSelection(parsing: o)).map({ if case .pulse = $0 { return false } else { return true } }) == true {
                throw ValidationError("--device chooses a PulseAudio output; it does not apply to --output \(o)")
            }
        }
        if paths.isEmpty && !resume && !usesLibrary {
            throw ValidationError("give files, folders or playlists to play, --resume, or --artist/--album/--genre/--search/--playlist")
        }
    }

    /// Whether the queue comes (also) from the media library.
    var usesLibrary: Bool { artist != nil || album != nil || genre != nil || search != nil || playlist != nil }

    /// What the library finds for the filters (albums in disc and track order) or the
    /// playlist (in its order), and the library.
    func libraryItems() throws -> (MediaLibrary, [MediaItem]) {
        let library = try MediaLibrary(path: db)
        if let playlist {
            // A playlist is played as it is; the filters do not narrow it.
            let items = try library.items(in: playlist)
            if items.isEmpty { throw ValidationError("the playlist '\(playlist)' is empty") }
            return (library, items)
        }
        var query = MediaQuery.albums()
        if let a = artist { query = query.filtered(by: .artist(a, .contains)) }
        if let a = album { query = query.filtered(by: .albumTitle(a, .contains)) }
        if let g = genre { query = query.filtered(by: .genre(g)) }
        if let s = search { query = query.searching(s) }
        let items = try query.collections(in: library).flatMap(\.items)
        if items.isEmpty { throw ValidationError("the library has nothing for \(libraryFilterDescription) (scan with `tonearm library scan DIR`)") }
        return (library, items)
    }

    private var libraryFilterDescription: String {
        [artist.map { "artist '\($0)'" }, album.map { "album '\($0)'" }, genre.map { "genre '\($0)'" },
         search.map { "search '\($0)'" }].compactMap { $0 }.joined(separator: ", ")
    }

    /// The URL of an `http(s)` argument that is not a playlist, else nil.
    static func streamURL(_ argument: String) -> URL? {
        guard let url = URL(userText: argument), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              url.host != nil else { return nil }
        let ext = url.pathExtension.lowercased()
        return ["m3u", "pls", "xspf"].contains(ext) ? nil : url
    }

    static func repeatValue(_ s: String) -> RepeatMode? {
        switch s.lowercased() {
        case "off", "none": return RepeatMode.none
        case "one", "track": return .one
        case "all", "queue", "playlist": return .all
        default: return nil
        }
    }

    func run() async throws {
        let selection: OutputSelection
        var notice: String?
        if let o = output {
            selection = try OutputSelection(parsing: o)
        } else {
            let auto = OutputSelection.automatic()
            selection = auto.selection
            notice = auto.notice
        }
        let interactive = !plain && Terminal.isInteractive
        let settings = PlaySession.Settings(
            volume: volume.map { Float($0) / 100 }, repeatMode: repeatMode.flatMap(Self.repeatValue), shuffle: shuffle,
            replayGain: ReplayGainMode(rawValue: replaygain) ?? .off, preamp: preamp, crossfade: crossfade, mix: mix, resume: resume,
            eq: try sound.eqChoice(), rate: Float(sound.rate), effects: try sound.effects())
        if device != nil, case .pulse = selection {} else if device != nil {
            Terminal.writeError("--device \(device!) is ignored: no sound server answered")
        }
        // One network stream: the streaming player (buffering, stalls, radio titles).
        if paths.count == 1, !resume, !usesLibrary, let url = Self.streamURL(paths[0]) {
            let session = StreamSession(url: url, selection: selection, device: device, notice: notice, settings: settings,
                                        interactive: interactive)
            let failed = await session.run()
            if let sig = session.interruptedBy { throw ExitCode(128 + sig) }
            if failed { throw ExitCode(1) }
            return
        }
        var problems: [String] = []
        let (library, fromLibrary) = usesLibrary ? try libraryItems() : (nil, [])
        let files = fromLibrary.map(\.path) + MediaPaths.expandWithPlaylists(paths, problems: &problems)
        if files.isEmpty && !resume {
            for p in problems { Terminal.writeError(p) }
            throw ValidationError("no playable files found in \(paths.joined(separator: ", "))")
        }
        // Plays and skips of the library's items are counted in the library.
        let ids = Dictionary(fromLibrary.map { ($0.path, $0.persistentID) }, uniquingKeysWith: { a, _ in a })
        let session = PlaySession(files: files, problems: problems, selection: selection, device: device, notice: notice,
                                  settings: settings, interactive: interactive, library: library, libraryIDs: ids)
        let anyFailed = await session.run()
        if let sig = session.interruptedBy { throw ExitCode(128 + sig) }  // the shell convention (130 for Ctrl-C)
        if anyFailed { throw ExitCode(1) }
    }
}

