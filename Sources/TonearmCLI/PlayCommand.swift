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
        abstract: "Play files and folders, in order.",
        discussion: """
            In a terminal it shows a live screen (keys: \(LiveScreen.help)). When standard output \
            is not a terminal it prints plain progress lines. Files that cannot be played are \
            reported and skipped; the exit status is 1 when any failed.
            """
    )

    @Argument(help: "Files or folders to play.")
    var paths: [String]

    @Option(name: .long, help: "Where to play: \(OutputSelection.syntax). Default: PulseAudio/PipeWire if a server answers, else null.")
    var output: String?

    @Option(name: .long, help: "Initial volume, 0–100.")
    var volume: Int = 100

    @Option(name: .long, help: "Repeat: off, one (the current file) or all (the list).")
    var loop: String = "off"

    @OptionGroup var sound: SoundOptions

    @Flag(name: .long, help: "Plain progress lines even in a terminal.")
    var plain = false

    func validate() throws {
        guard (0...100).contains(volume) else { throw ValidationError("--volume must be between 0 and 100, not \(volume)") }
        guard LoopMode(rawValue: loop) != nil else { throw ValidationError("--loop must be off, one or all, not '\(loop)'") }
        if let o = output {
            do { _ = try OutputSelection(parsing: o) } catch { throw ValidationError("\(error)") }
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
        let files = MediaPaths.expand(paths)
        guard !files.isEmpty else { throw ValidationError("no playable files found in \(paths.joined(separator: ", "))") }
        let interactive = !plain && Terminal.isInteractive
        let session = PlaySession(files: files, selection: selection, notice: notice,
                                  volume: Float(volume) / 100, loopMode: LoopMode(rawValue: loop) ?? .off,
                                  eq: try sound.eqChoice(), rate: Float(sound.rate), effects: try sound.effects(),
                                  interactive: interactive)
        let anyFailed = await session.run()
        if let sig = session.interruptedBy { throw ExitCode(128 + sig) }  // the shell convention (130 for Ctrl-C)
        if anyFailed { throw ExitCode(1) }
    }
}

/// Events the play loop reacts to.
enum SessionEvent: Sendable {
    case key(Key)
    case player(AudioPlayerEvent, token: Int)
    case tick
    case quit
    /// A signal asked to quit (SIGINT, SIGTERM, SIGHUP).
    case signalled(Int32)
}

/// Runs `tonearm play`: one ``AudioPlayer`` per file, a ``PlayQueue`` deciding what comes next,
/// and either the live screen or plain progress lines.
final class PlaySession: @unchecked Sendable {
    private var queue: PlayQueue
    private let selection: OutputSelection
    private let notice: String?
    private var volume: Float
    private let interactive: Bool
    private let terminal = Terminal()
    private var screen = ScreenState()
    private var player: AudioPlayer?
    private var token = 0
    private var lastPlainSecond = -1
    /// The signal that ended the session, if one did.
    private(set) var interruptedBy: Int32?
    private let events: AsyncStream<SessionEvent>
    private let continuation: AsyncStream<SessionEvent>.Continuation
    /// One file output shared by every track, so `file:` records the whole session.
    private let sharedFileOutput: SessionOutput?

    private var eqChoice: EQChoice
    private var rate: Float
    private let effectOptions: EffectOptions

    init(files: [String], selection: OutputSelection, notice: String?, volume: Float, loopMode: LoopMode,
         eq: EQChoice, rate: Float, effects: EffectOptions, interactive: Bool) {
        effectOptions = effects
        eqChoice = eq
        self.rate = rate
        queue = PlayQueue(entries: files, loopMode: loopMode)
        self.selection = selection
        self.notice = notice
        self.volume = volume
        self.interactive = interactive
        (events, continuation) = AsyncStream<SessionEvent>.makeStream()
        if case .file(let path) = selection {
            sharedFileOutput = SessionOutput(FileOutput(path: path))
        } else {
            sharedFileOutput = nil
        }
        screen.entries = files.map { ($0 as NSString).lastPathComponent }
        screen.output = selection.description
        screen.notice = notice
        screen.loopMode = loopMode
        screen.volume = volume
        screen.eq = eq.description
        screen.rate = rate
    }

    /// Plays the list; returns whether any file failed.
    func run() async -> Bool {
        if let n = notice, !interactive { Terminal.writeError(n) }
        let signals = installSignalHandlers()
        var keyThread: Thread?
        if interactive {
            terminal.enter()
            keyThread = startKeyReader()
        }
        let refresh: Duration = interactive ? .milliseconds(200) : .seconds(1)
        let ticker = Task { [continuation] in
            while !Task.isCancelled {
                try? await Task.sleep(for: refresh)  // screen refresh only
                continuation.yield(.tick)
            }
        }
        defer {
            ticker.cancel()
            signals.forEach { $0.cancel() }
            terminal.restore()
            _ = keyThread
        }
        var next: Int? = 0
        outer: while let index = next {
            guard start(index: index) else {
                next = queue.failCurrent()
                continue
            }
            draw()
            for await event in events {
                switch event {
                case .tick:
                    draw()
                case .quit:
                    stopPlayer()
                    break outer
                case .signalled(let sig):
                    interruptedBy = sig
                    stopPlayer()
                    break outer
                case .player(let e, let t):
                    guard t == token else { continue }
                    switch e {
                    case .didFinishPlaying(true):
                        next = queue.advanceAfterFinish()
                        continue outer
                    case .didFinishPlaying(false):
                        report("\(queue.current ?? ""): playback stopped: the output was lost")
                        next = queue.failCurrent()
                        continue outer
                    case .decodeErrorDidOccur(let p):
                        report(p.description)
                    case .interruptionBegan:
                        screen.message = "Interrupted by another stream; paused"
                    case .interruptionEnded(let resume):
                        screen.message = resume ? "Interruption ended; resumed" : "Interruption ended"
                    }
                    draw()
                case .key(let k):
                    if let action = handle(key: k) {
                        switch action {
                        case .quit:
                            stopPlayer()
                            break outer
                        case .go(let i):
                            stopPlayer()
                            next = i
                            continue outer
                        }
                    }
                    draw()
                }
            }
            break
        }
        stopPlayer()
        sharedFileOutput?.finish()
        if !interactive { Terminal.write("Done: \(queue.entries.count - queue.failed.count) played, \(queue.failed.count) failed\n") }
        return !queue.failed.isEmpty
    }

    private enum KeyAction { case quit, go(Int) }

    private func handle(key: Key) -> KeyAction? {
        guard let p = player else { return key == .char("q") ? .quit : nil }
        switch key {
        case .space:
            if p.isPlaying { p.pause() } else { p.play() }
        case .left: p.currentTime = max(0, p.currentTime - 5)
        case .right: p.currentTime = min(p.duration, p.currentTime + 5)
        case .up: setVolume(volume + 0.05)
        case .down: setVolume(volume - 0.05)
        case .char("n"):
            if let i = queue.next() { return .go(i) }
            return .quit
        case .char("p"):
            if p.currentTime > 3 { p.currentTime = 0; return nil }
            if let i = queue.previous() { return .go(i) }
        case .char("l"):
            queue.loopMode = queue.loopMode.next
            screen.loopMode = queue.loopMode
        case .char("]"), .char("["):
            // Speed in steps of 0.1 (pitch kept).
            let step: Float = key == .char("]") ? 0.1 : -0.1
            rate = min(2, max(0.5, ((rate + step) * 10).rounded() / 10))
            p.rate = rate
            screen.rate = rate
        case .char("e"):
            // The next preset (from a custom spec: the first preset).
            let all = EQPreset.all
            let next: EQPreset
            if case .preset(let cur) = eqChoice, let i = all.firstIndex(of: cur) {
                next = all[(i + 1) % all.count]
            } else {
                next = all[0]
            }
            eqChoice = .preset(next)
            eqChoice.apply(to: p.eq)
        effectOptions.applyEQSettings(to: p.eq)
            screen.eq = next.name
        case .char("q"), .char("Q"): return .quit
        default: break
        }
        return nil
    }

    private func setVolume(_ v: Float) {
        volume = max(0, min(1, (v * 20).rounded() / 20))
        player?.volume = volume
        screen.volume = volume
    }

    /// Opens and starts entry `index`; false (with the error reported) when it cannot be played.
    private func start(index: Int) -> Bool {
        let path = queue.entries[index]
        screen.index = index
        screen.message = nil
        let file: AudioFile
        do {
            file = try AudioFile(path: path)
        } catch {
            report("\(error)")
            return false
        }
        for w in file.warnings { report(w.description) }
        let md = file.metadata
        let f = file.fileFormat
        screen.title = md.title ?? (path as NSString).lastPathComponent
        screen.artist = md.artist
        screen.album = md.album
        screen.format = describeFormat(codec: f.codecName, sampleRate: f.sampleRate, bits: f.bitsPerSample,
                                       channelLayout: f.channelLayout, bitRate: f.bitRate)
        screen.duration = file.duration
        screen.elapsed = 0
        let selection = self.selection
        let shared = sharedFileOutput
        let streamName = screen.title
        let p = AudioPlayer(file: file, output: {
            if let shared { return shared }
            return selection.makeDriver(streamName: streamName)
        })
        p.volume = volume
        eqChoice.apply(to: p.eq)
        effectOptions.applyEQSettings(to: p.eq)
        p.enableRate = true
        p.rate = rate
        p.effects = effectOptions.makeNodes()
        token += 1
        let t = token
        let stream = p.events
        let cont = continuation
        Task { for await e in stream { cont.yield(.player(e, token: t)) } }
        player = p
        do {
            try p.prepare()
        } catch {
            report("\(path): cannot play on output '\(selection)': \(error)")
            player = nil
            return false
        }
        guard p.play() else {
            report("\(path): cannot start playback on output '\(selection)'")
            player = nil
            return false
        }
        screen.status = .playing
        lastPlainSecond = -1
        if !interactive {
            var line = "Playing \(index + 1)/\(queue.entries.count): \(screen.title)"
            if let a = screen.artist { line += " — \(a)" }
            Terminal.write(line + " [\(screen.format), \(formatTime(file.duration))]\n")
        }
        return true
    }

    private func stopPlayer() {
        player?.stop()
        player = nil
    }

    private func report(_ message: String) {
        if interactive {
            screen.message = message
        } else {
            Terminal.writeError(message)
        }
    }

    private func draw() {
        if let p = player {
            screen.elapsed = p.currentTime
            screen.status = p.isPlaying ? .playing : .paused
        }
        screen.failed = queue.failed
        if interactive {
            Terminal.write("\u{1B}[H\u{1B}[J" + LiveScreen.render(screen, width: Terminal.width))
        } else if player != nil {
            let sec = Int(screen.elapsed)
            if sec / 5 != lastPlainSecond / 5 || lastPlainSecond < 0 {
                lastPlainSecond = sec
                Terminal.write("  \(formatTime(screen.elapsed)) / \(formatTime(screen.duration))\n")
            }
        }
    }

    private func installSignalHandlers() -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM, SIGHUP].map { sig in
            signal(sig, SIG_IGN)
            let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            let cont = continuation
            s.setEventHandler { cont.yield(.signalled(sig)) }
            s.resume()
            return s
        }
    }

    private func startKeyReader() -> Thread {
        let cont = continuation
        let t = Thread {
            var decoder = KeyDecoder()
            var byte: UInt8 = 0
            while read(0, &byte, 1) == 1 {
                if let k = decoder.feed(byte) { cont.yield(.key(k)) }
            }
        }
        t.name = "tonearm.keys"
        t.start()
        return t
    }
}
