// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Dispatch
import Foundation
import Tonearm
import TonearmWindow
#if canImport(Glibc)
import Glibc
#endif

struct PlayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play files, folders and playlists as one gapless queue.",
        discussion: """
            In a terminal it shows a live screen (keys:\(LiveScreen.help); also m mute, 9/0 and \
            -/+ volume, </> previous/next, Home restart, a add songs from the library). Tab \
            browses the queue: ↑/↓ or j/k move, Enter plays, d or Delete removes, J/K or \
            Shift-↑/↓ move the item; ? shows every key. With --plain, or when standard output is \
            not a terminal, it prints plain progress lines (the keys still work when standard \
            input is a terminal). Files that cannot be played are reported and skipped (on the \
            screen, with why, and listed again on standard error at the end); the exit status is \
            1 when any failed. The queue is saved as it \
            plays; --resume picks it up again (with the EQ and speed it ended with). The volume \
            is the last run's unless --volume is given. Settings not given as flags come from the \
            config file (`tonearm config` shows them and where each came from). While playing, it is published over MPRIS \
            (playerctl, desktop media keys) when a session bus is there. \
            A video opens a window at the video's size (scaled down to fit the screen) \
            when a display is there (DISPLAY or WAYLAND_DISPLAY); its keys are space, ←/→, ↑/↓, \
            m, f (full screen), j (the next subtitle, as in mpv) and q or Esc (close, which ends \
            the command), beside the \
            terminal's. Videos and songs share a queue: the window opens when a video's turn \
            comes and closes when a song follows (the picture against the queue's sound, the \
            songs gapless as ever). An http(s) video (a progressive file, or an HLS \
            stream whose variants carry video) opens its window the same way once it has \
            loaded, downloaded once for the sound and the picture. Without a display, or with --no-video, the sound plays.

            Examples:
              tonearm play ~/Music/Album                        # a folder, as one gapless queue
              tonearm play a.flac b.mp3 list.m3u8 --shuffle --repeat all
              tonearm play --artist 'nina simone' --eq jazz     # from the library
              tonearm play --playlist 'Top 25 Most Played' --crossfade 4
              tonearm play https://radio.example/stream.mp3     # a network stream
              tonearm play clip.mp4                             # a video, in a window (q closes it)
              tonearm play a.flac clip.mp4 b.flac               # songs and a video, one queue
              tonearm play film.mkv --audio-track 2             # its second audio track
              tonearm play --resume                             # the saved queue, where it was
            """
    )

    @Argument(help: "Files, folders, playlists (.m3u, .m3u8, .pls, .xspf) or http(s):// streams to play.", completion: .file())
    var paths: [String] = []

    @Flag(name: .long, help: "Resume the saved queue where it was, with its EQ and speed (files given that it does not hold are appended).")
    var resume = false

    @Option(name: .long, help: "Play the library's songs by this artist or album artist (\"various artists\" plays compilations; case and accents ignored), album by album.")
    var artist: String?

    @Option(name: .long, help: "Play this album from the library, in disc and track order.")
    var album: String?

    @Option(name: .long, help: "Play the library's songs of this genre.")
    var genre: String?

    @Option(name: .long, help: "Play what a full-text search of the library finds (titles, artists, albums).")
    var search: String?

    @Option(name: .long, help: "Play this playlist of the media library, in its order, or a smart one such as \"Top 25 Most Played\" (see tonearm library playlists).", completion: Completions.playlists)
    var playlist: String?

    @Option(name: .long, help: "The media library database (default: the config file's [library] database, else $XDG_DATA_HOME/tonearm/library.sqlite).", completion: .file(extensions: ["sqlite"]))
    var db: String?

    @Option(name: .long, help: "Start with this file (one of those to play); with --shuffle it plays first, the rest in a random order.")
    var start: String?

    @Flag(name: .customLong("no-video"), help: "Play a video's sound only (no window, the picture not decoded).")
    var noVideo = false

    @Flag(name: .long, help: "Open a video's window full screen.")
    var fullscreen = false

    @Option(name: .customLong("video-output"), help: "Where the videos' picture goes: \(VideoOutputChoice.syntax). file:OUT.y4m writes every frame shown, in order, as YUV4MPEG2 — in a queue, those of every video in turn (with --output null:untimed or file:OUT.wav every frame of the videos, as fast as possible); null decodes and presents to nothing. Default: a window when a display is there (DISPLAY or WAYLAND_DISPLAY), else the sound only.")
    var videoOutput: String?

    @Option(name: .customLong("audio-track"), help: ArgumentHelp("Play the Nth audio track (1 is the first; audio tracks counted in the order tonearm info lists them, which marks each with its N) of each local file: a video's other language, a file with several. A file with fewer is an error that says how many it has.", valueName: "N"))
    var audioTrack: Int?

    @Option(name: .customLong("sub"), help: ArgumentHelp("Draw this subtitle file (.srt, .ass, .vtt) over the video (one local video). Without --sub or --sub-track, an .srt beside the video with the same name (film.srt for film.mkv) is drawn — for each video of a queue too. j in the video window draws the next subtitle (the .srt, then each text track, then none), as in mpv.", valueName: "FILE"), completion: .file(extensions: ["srt", "ass", "ssa", "vtt"]))
    var sub: String?

    @Option(name: .customLong("sub-track"), help: ArgumentHelp("Draw the video's Nth subtitle track, text or bitmap (PGS, DVD, DVB) (1 is the first; tonearm info lists them). A file with fewer is an error that says how many it has; in a queue, each video that has that many draws it (the others their .srt, if any).", valueName: "N"))
    var subTrack: Int?

    @Flag(name: .long, help: "Hand the files to the running daemon's queue (tonearm daemon) instead of playing them here; it plays them when it was not playing.")
    var daemon = false

    @OptionGroup var daemonAddress: DaemonAddressOptions

    @OptionGroup var playback: PlaybackOptions

    /// What to play must be given. Checked in run(), not validate(): ArgumentParser validates
    /// before it reports arguments it did not take, so `play -x.flac` (a file named like an
    /// option) would be told to give files instead of being told about `-x.flac`.
    private func checkSomethingToPlay() throws {
        if paths.isEmpty && !resume && !usesLibrary {
            throw ValidationError("give files, folders or playlists to play, --resume, or --artist/--album/--genre/--search/--playlist")
        }
    }

    func validate() throws {
        if let v = videoOutput {
            _ = try VideoOutputChoice(parsing: v)
            if noVideo { throw ValidationError("--no-video and --video-output cannot be used together (--no-video plays no picture)") }
        }
        if let n = audioTrack, n < 1 { throw ValidationError("--audio-track counts from 1 (the first audio track), not \(n)") }
        if let n = subTrack, n < 1 { throw ValidationError("--sub-track counts from 1 (the first subtitle track), not \(n)") }
        if sub != nil && subTrack != nil { throw ValidationError("--sub and --sub-track cannot be used together (one subtitle is drawn)") }
        if (sub != nil || subTrack != nil) && noVideo { throw ValidationError("--no-video plays no picture to draw subtitles on") }
        if start != nil && resume { throw ValidationError("--start chooses the first file of a new queue; it cannot be used with --resume") }
        if daemonAddress.isGiven && !daemon { throw ValidationError("--host, --port and --password say where the daemon is: they go with --daemon") }
        if daemon { _ = try daemonAddress.resolved() }
    }

    /// Whether the queue comes (also) from the media library.
    var usesLibrary: Bool { artist != nil || album != nil || genre != nil || search != nil || playlist != nil }

    /// What the library finds for the filters (albums in disc and track order) or the
    /// playlist (in its order), and the library.
    func libraryItems() throws -> (MediaLibrary, [MediaItem]) {
        let library = try MediaLibrary(path: db ?? playback.config.loadOrExit(command: "play")?.library.database)
        if let playlist {
            // A playlist is played as it is; the filters do not narrow it.
            let items = try library.items(inPlaylistOrSmartPlaylist: playlist)
            if items.isEmpty { throw CommandFailure("playlist '\(playlist)'", "the playlist is empty") }
            return (library, items)
        }
        var query = MediaQuery.albums()
        if let a = artist { query = query.filtered(by: .artistOrAlbumArtist(a, .contains)) }
        if let a = album { query = query.filtered(by: .albumTitle(a, .contains)) }
        if let g = genre { query = query.filtered(by: .genre(g)) }
        if let s = search { query = query.searching(s) }
        let items = try query.collections(in: library).flatMap(\.items)
        if items.isEmpty {
            // An empty library says how to fill it; a scanned one, that nothing matches.
            if try library.statistics().items == 0 {
                throw CommandFailure(library.path, "the library is empty; scan folders into it: tonearm library scan DIR")
            }
            throw CommandFailure(nil, "nothing in the library matches \(libraryFilterDescription)")
        }
        return (library, items)
    }

    private var libraryFilterDescription: String {
        [artist.map { "artist '\($0)'" }, album.map { "album '\($0)'" }, genre.map { "genre '\($0)'" },
         search.map { "search '\($0)'" }].compactMap { $0 }.joined(separator: ", ")
    }

    /// The URL of an `http(s)` argument that is not a playlist, else nil.
    /// `play VIDEO --video-output …` (see ``VideoPlayback``): offline, the decoder writes every
    /// frame and the sound renders after; in real time, a ``Player`` plays both (the one
    /// ``StreamSession`` runs, with the file's URL), the picture presented against the sound.
    static func streamURL(_ argument: String) -> URL? {
        guard let url = URL(userText: argument), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              url.host != nil else { return nil }
        let ext = url.pathExtension.lowercased()
        return ["m3u", "pls", "xspf"].contains(ext) ? nil : url
    }

    func run() async throws {
        try checkSomethingToPlay()
        if daemon {
            if resume { throw ValidationError("--resume plays the saved queue here; the daemon keeps its own (use tonearm remote play)") }
            var problems: [String] = []
            let files = (usesLibrary ? try libraryItems().1.map(\.path) : []) + MediaPaths.expandWithPlaylists(paths, problems: &problems)
            for p in problems { Terminal.writeProblem(p) }
            if files.isEmpty { throw CommandFailure(nil, "no playable files in \(paths.joined(separator: ", "))") }
            try await RemoteHandOff.hand(files, options: daemonAddress)
            return
        }
        try playback.checkOutputFile()
        // One network stream: the streaming player (buffering, stalls, radio titles).
        if paths.count == 1, !resume, !usesLibrary, let url = Self.streamURL(paths[0]) {
            if audioTrack != nil { throw ValidationError("--audio-track chooses among a local file's tracks, not a network stream's") }
            let settings = try playback.effective(command: "play", resume: false)
            let (selection, notice): (OutputSelection, String?)
            do { (selection, notice) = try playback.selection(settings) } catch let e as PlaybackSetupError {
                throw CommandFailure(nil, "\(e)")
            }
            // A progressive file's or an HLS stream's picture goes where `--video-output` says
            // (the player reads it from the sound's download or segments); without it, a window opens when a display is there and
            // the item turns out to have video, as for a local video; `--no-video`: the sound.
            var video: StreamSession.Video?
            var whenFound: StreamSession.StreamVideoWhenFound?
            if !noVideo {
                if let v = videoOutput {
                    let choice = try VideoOutputChoice(parsing: v)
                    if case .file(let out) = choice { try Overwrite.check(out, force: playback.force) }
                    video = StreamSession.Video(output: choice, fullScreen: fullscreen)
                } else {
                    switch selection {
                    case .pulse, .null:  // real time: a picture to present against the sound
                        whenFound = VideoPlayback.hasDisplay ? .window(fullScreen: fullscreen) : .noDisplay
                    case .nullUntimed, .file:
                        break
                    }
                }
            }
            let session = StreamSession(url: url, selection: selection, device: settings.device.value, notice: notice,
                                        settings: try settings.sessionSettings(mix: playback.mix, resume: false, effects: try playback.sound.effects()),
                                        interactive: playback.interactive, video: video, videoWhenFound: whenFound)
            let failed = await session.run()
            if let sig = session.interruptedBy { throw ExitCode(128 + sig) }
            if failed { throw ExitCode(1) }
            return
        }
        // One local video (and a place for its picture): the player with a window or a video
        // output. Without a display, or with --no-video, its sound plays in the queue below.
        var videoNotice: String?
        if let v = videoOutput, paths.count == 1, !resume, !usesLibrary, let path = paths.first, Self.isSingleFile(path),
           !VideoPlayback.hasVideo(path) {
            throw CommandFailure(path, "it has no video stream; play it without --video-output (\(v))")
        }
        let choice = try videoOutput.map { try VideoOutputChoice(parsing: $0) }
        // When a window is likely to open for one local video, SDL starts (and connects to the
        // display) on the window's thread while the file is probed and the item loads — once
        // FFmpeg has loaded (started ahead by `main`), not beside it; it stops again when no
        // window takes it.
        let mayOpenWindow = paths.count == 1 && !resume && !usesLibrary && !noVideo && (choice ?? .window) == .window
            && VideoPlayback.hasDisplay && VideoPlayback.mayHaveVideo(paths[0])
        if mayOpenWindow { VideoWindow.prepare(after: { _ = FFmpegLibraries.load() }) }
        defer { if mayOpenWindow { VideoWindow.cancelPrepared() } }
        if paths.count == 1, !resume, !usesLibrary, !noVideo, let track = VideoPlayback.videoTracks(paths[0]).first {
            let output = choice ?? .window
            if output != .window || VideoPlayback.hasDisplay {
                var stream: Int?
                if let n = audioTrack { stream = try await VideoPlayback.audioStream(n, of: paths[0]) }
                let subtitle = try VideoPlayback.subtitle(for: paths[0], file: sub, track: subTrack)
                try await playVideo(URL(fileURLWithPath: paths[0]), output: output, audioStream: stream, subtitle: subtitle,
                                    size: VideoSize(width: track.displayWidth, height: track.displayHeight))
                return
            }
            videoNotice = VideoPlayback.noDisplayNotice
        }
        if mayOpenWindow { VideoWindow.cancelPrepared() }
        if sub != nil {
            throw ValidationError("--sub draws on one local video's picture (a window or --video-output); in a queue each video draws the .srt beside it")
        }
        var problems: [String] = []
        let (library, fromLibrary) = usesLibrary ? try libraryItems() : (nil, [])
        let files = fromLibrary.map(\.path) + MediaPaths.expandWithPlaylists(paths, problems: &problems)
        if files.isEmpty && !resume {
            for p in problems { Terminal.writeProblem(p) }
            throw CommandFailure(nil, "no playable files in \(paths.joined(separator: ", "))")
        }
        // Videos in a queue: their picture in turn (a window opens when a video's turn comes),
        // against the queue's sound; without a display, their sound, said once.
        var video: QueueVideo.Request?
        if videoNotice == nil, !noVideo {
            if let choice {
                if !resume, !usesLibrary, !files.contains(where: VideoPlayback.hasVideo) {
                    throw CommandFailure(nil, "none of the files to play has a video stream; play them without --video-output (\(choice))")
                }
                if case .file(let path) = choice { try Overwrite.check(path, force: playback.force) }
                video = QueueVideo.Request(output: choice, fullScreen: fullscreen)
            } else if VideoPlayback.hasDisplay {
                video = QueueVideo.Request(output: .window, fullScreen: fullscreen)
            } else if files.contains(where: VideoPlayback.hasVideo) {
                videoNotice = VideoPlayback.noDisplayNotice
            }
        }
        // --sub-track: each video draws its Nth text track when it has that many (the .srt beside
        // it otherwise); a queue none of whose videos has that many is refused before it starts.
        if let n = subTrack {
            guard video != nil else { throw ValidationError("--sub-track draws on the videos' picture (a window or --video-output)") }
            let videos = files.filter(VideoPlayback.hasVideo)
            if !videos.isEmpty, !videos.contains(where: { (try? SubtitleTrackInfo.track(n, inFileAt: $0)) != nil }) {
                throw CommandFailure(nil, "--sub-track \(n): none of the videos has \(n == 1 ? "a subtitle track" : "\(n) subtitle tracks")")
            }
            video?.subtitleTrack = n
        }
        // --audio-track: the stream of each local file (a file with fewer audio tracks stops the run before it starts).
        var audioStreams: [String: Int] = [:]
        if let n = audioTrack {
            for f in files where !QueueItem(pathOrURL: f).isRemote && audioStreams[f] == nil {
                audioStreams[f] = try await VideoPlayback.audioStream(n, of: f)
            }
        }
        // Plays and skips of the library's items are counted in the library, whatever named them.
        var ids = Dictionary(fromLibrary.map { ($0.path, $0.persistentID) }, uniquingKeysWith: { a, _ in a })
        var recordIn = library
        if let (known, found) = Self.libraryItems(among: files.filter { ids[$0] == nil }, library: library, db: db) {
            recordIn = known
            ids.merge(found) { a, _ in a }
        }
        try await playback.play(files: files, problems: problems, resume: resume, start: try startIndex(in: files),
                                library: recordIn, libraryIDs: ids, extraNotice: videoNotice, audioStreams: audioStreams, video: video)
    }

    /// Plays one local video through the player, its picture to `output`, with the stream
    /// session's screen and keys (the window's keys beside them).
    private func playVideo(_ url: URL, output: VideoOutputChoice, audioStream: Int?, subtitle: SubtitleSelection?,
                           size: VideoSize?) async throws {
        let streams = audioStream.map { [url.path: $0] } ?? [:]
        if case .file(let path) = output { try Overwrite.check(path, force: playback.force) }
        let settings = try playback.effective(command: "play", resume: false)
        let (selection, notice): (OutputSelection, String?)
        do { (selection, notice) = try playback.selection(settings) } catch let e as PlaybackSetupError {
            throw CommandFailure(nil, "\(e)")
        }
        // Offline (`--output null:untimed` or `file:OUT.wav`) there is no clock to present
        // against: the decoder writes every frame, then the sound renders as every `play` does
        // (``VideoPlayback/writeAllFrames(of:to:)``).
        switch (selection, output) {
        case (.nullUntimed, .file), (.nullUntimed, .null), (.file, .file), (.file, .null):
            let frames = try VideoPlayback.writeAllFrames(of: url.path, to: output, subtitle: subtitle)
            if case .file(let out) = output {
                Terminal.write("Video: \(frames) frames written to \(out)\n")
            } else {
                Terminal.write("Video: \(frames) frames decoded\n")
            }
            guard VideoPlayback.hasAudio(url.path) else {
                Terminal.write("Done: 1 played, 0 failed (no sound)\n")
                return
            }
            try await playback.play(files: [url.path], audioStreams: streams)
            return
        case (.nullUntimed, .window), (.file, .window):
            VideoWindow.cancelPrepared()
            Terminal.writeProblem(VideoPlayback.offlineNotice)
            try await playback.play(files: [url.path], audioStreams: streams)
            return
        default:
            break
        }
        let session = StreamSession(url: url, selection: selection, device: settings.device.value, notice: notice,
                                    settings: try settings.sessionSettings(mix: playback.mix, resume: false, effects: try playback.sound.effects()),
                                    interactive: playback.interactive, video: StreamSession.Video(output: output, fullScreen: fullscreen, presentationSize: size),
                                    audioStream: audioStream, subtitle: subtitle)
        let failed = await session.run()
        if let sig = session.interruptedBy { throw ExitCode(128 + sig) }
        if failed { throw ExitCode(1) }
    }

    /// Whether the command line `arguments` (without the program's name) are a `play` of a local
    /// file whose name says it may hold video (and not a hand-off to the daemon): judged from the
    /// words alone, before parsing, to load FFmpeg ahead (``FFmpegLibraries/loadInBackground()``).
    static func namesVideo(_ arguments: [String]) -> Bool {
        guard arguments.first == "play", !arguments.contains("--daemon") else { return false }
        return arguments.dropFirst().contains { a in
            !a.hasPrefix("-") && !a.contains("://")
                && VideoPlayback.videoExtensions.contains(URL(fileURLWithPath: a).pathExtension.lowercased())
        }
    }

    /// Whether `path` names one local file (not a folder, a playlist or an address).
    static func isSingleFile(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        guard !path.contains("://"), FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return false }
        return !isDirectory.boolValue && !["m3u", "m3u8", "pls", "xspf"].contains(URL(fileURLWithPath: path).pathExtension.lowercased())
    }

    /// The index in `files` of --start's file (compared as absolute paths, or as addresses),
    /// nil without --start. Throws when it is not one of them.
    func startIndex(in files: [String]) throws -> Int? {
        guard let start else { return nil }
        let wanted = QueueItem(pathOrURL: start).path
        guard let i = files.firstIndex(where: { QueueItem(pathOrURL: $0).path == wanted }) else {
            throw ValidationError("--start \(start): not one of the files to play")
        }
        return i
    }

    /// The library (`library`, else the one at `db` or the default place when its database
    /// exists) and the persistent IDs of those of the local `files` it holds, looked up by path
    /// (nothing is scanned); nil when there is no library or it holds none of them.
    static func libraryItems(among files: [String], library: MediaLibrary?, db: String?) -> (MediaLibrary, [String: UInt64])? {
        // The library stores absolute, standardised paths.
        var byPath: [String: [String]] = [:]
        for f in files where !QueueItem(pathOrURL: f).isRemote {
            byPath[URL(fileURLWithPath: f).standardizedFileURL.path, default: []].append(f)
        }
        guard !byPath.isEmpty else { return nil }
        let opened: MediaLibrary
        if let library {
            opened = library
        } else {
            let path = db ?? MediaLibrary.defaultPath
            guard FileManager.default.fileExists(atPath: path), let l = try? MediaLibrary(path: path) else { return nil }
            opened = l
        }
        guard let found = try? opened.persistentIDs(forPaths: Array(byPath.keys)), !found.isEmpty else { return nil }
        var ids: [String: UInt64] = [:]
        for (path, id) in found { for f in byPath[path] ?? [] { ids[f] = id } }
        return (opened, ids)
    }
}

