// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import Testing
import TonearmCore
import TonearmKit
import TonearmMPRIS
import TonearmNowPlaying
import TonearmOutput
import TonearmPlayback
import TonearmSession
import TonearmTestSupport

/// The seed's app: a music player and a video player in one process, their sessions on one
/// private bus, published over MPRIS on it, driven by the real `playerctl`. The video takes the
/// session (the music is interrupted), the remote commands and Now Playing; once it is released
/// or ends, the music owns them again and plays on.
@Suite(.serialized) struct NowPlayingSessionTests {
    /// The music side, as an app writes it: its targets and info on the centers' base owner,
    /// its session `.playback` (exclusive).
    final class App: Sendable {
        let bus: PrivateDBus
        let dir: TempDir
        let info = NowPlayingInfoCenter()
        let commands = RemoteCommandCenter()
        let service: MPRISService
        let musicSession: AudioSession
        let music: MusicPlayer
        let clip: String
        private let pump: Task<Void, Never>

        init(clipSeconds: Double) throws {
            bus = try PrivateDBus()
            dir = try TempDir("now-playing-session")
            let song = dir.file("song.flac")
            try Fixtures.minuteOfTone(path: song)
            clip = dir.file("clip.mp4")
            try VideoFixtures.clip(clip, seconds: clipSeconds)
            service = MPRISService(busName: "tonearm", identity: "Tonearm Test", infoCenter: info, commandCenter: commands,
                                   busAddress: bus.address)
            try service.start()
            musicSession = AudioSession(identifier: "music", bus: .address(bus.address))
            try musicSession.setCategory(.playback)
            let music = MusicPlayer(output: { NullOutput() }, session: musicSession)
            self.music = music
            music.setQueue(withPaths: [song])
            commands.play.addTarget { _ in music.play(); return .success }
            commands.pause.addTarget { _ in music.pause(); return .success }
            commands.togglePlayPause.addTarget { _ in
                if music.playbackState == .playing { music.pause() } else { music.play() }
                return .success
            }
            info.nowPlayingInfo = NowPlayingInfo(title: "Song", duration: 60, persistentID: 1)
            let events = music.events
            pump = Task.detached { [info] in
                for await e in events {
                    guard case .stateChanged(let s) = e else { continue }
                    info.playbackState = switch s {
                    case .playing: .playing
                    case .paused: .paused
                    case .stopped: .stopped
                    case .interrupted: .interrupted
                    }
                }
            }
        }

        /// `playerctl -p tonearm ARGS`, trimmed.
        @discardableResult
        func playerctl(_ args: String..., sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
            let r = try run("playerctl", ["-p", "tonearm"] + args, environment: bus.environment)
            #expect(r.status == 0, "playerctl \(args): \(r.stderr)", sourceLocation: sourceLocation)
            return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// Follows the title shown over MPRIS (`playerctl -F`).
        func followTitle() throws -> ChildProcess {
            try bus.follow("playerctl", ["-p", "tonearm", "-F", "metadata", "--format", "{{title}}"])
        }

        /// Blocks until the followed title's last line is `title`.
        func waitForTitle(_ follower: ChildProcess, _ title: String, sourceLocation: SourceLocation = #_sourceLocation) {
            let out = follower.waitForStandardOutputBlocking(timeout: 20) { o in
                o.text.split(separator: "\n").last.map(String.init) == title || o.ended
            }
            #expect(out.text.split(separator: "\n").last.map(String.init) == title,
                    "titles shown: \(out.text.split(separator: "\n"))", sourceLocation: sourceLocation)
        }

        func stop() {
            pump.cancel()
            music.stop()
            service.stop()
            bus.stop()
            dir.remove()
        }
    }

    @Test func aVideoTakesTheCommandsAndNowPlayingAndGivesThemBackWhenReleased() async throws {
        let app = try App(clipSeconds: 30)
        defer { app.stop() }
        let musicEvents = app.music.events
        app.music.play()
        #expect(app.music.playbackState == .playing)
        let titles = try app.followTitle()
        defer { titles.terminate(SIGTERM) }
        app.waitForTitle(titles, "Song")

        // The video: its own session, taken when it plays.
        let player = Player(playerItem: PlayerItem(url: URL(fileURLWithPath: app.clip)), output: { NullOutput() })
        let videoSession = AudioSession(identifier: "video", bus: .address(app.bus.address))
        var session: NowPlayingSession? = NowPlayingSession(player: player, audioSession: videoSession,
                                                            infoCenter: app.info, commandCenter: app.commands)
        let playerEvents = player.events
        player.play()
        _ = try await waitForEvent(musicEvents, timeout: 20, "the music interrupted") { $0 == .stateChanged(.interrupted) }
        app.waitForTitle(titles, "clip.mp4")
        #expect(videoSession.category == .playback && videoSession.mode == .moviePlayback && videoSession.isActive)
        #expect(app.commands.ownerNames == ["application", "video"])
        #expect(session?.ownsRemoteControl == true)
        // The desktop's pause reaches the video, not the music.
        try app.playerctl("pause")
        _ = try await waitForEvent(playerEvents, timeout: 20, "the video paused") { $0 == .rateChanged(0) }
        #expect(player.rate == 0)
        #expect(app.music.playbackState == .interrupted)
        #expect(!app.commands.nextTrack.isAvailable)  // the video has no queue

        // Released (the app drops it, never calling anything): everything goes back.
        session = nil
        _ = try await waitForEvent(musicEvents, timeout: 20, "the music resumed") { $0 == .stateChanged(.playing) }
        app.waitForTitle(titles, "Song")
        #expect(try app.playerctl("metadata", "title") == "Song")
        #expect(app.commands.ownerNames == ["application"])
        #expect(!videoSession.isActive)
        // The desktop's commands reach the music player again, and no longer the video.
        try app.playerctl("pause")
        _ = try await waitForEvent(musicEvents, timeout: 20, "the music paused") { $0 == .stateChanged(.paused) }
        try app.playerctl("play")
        _ = try await waitForEvent(musicEvents, timeout: 20, "the music played") { $0 == .stateChanged(.playing) }
        #expect(player.rate == 0)
    }

    @Test func aVideoThatEndsGivesEverythingBackAndTheMusicResumes() async throws {
        let app = try App(clipSeconds: 1.5)
        defer { app.stop() }
        let musicEvents = app.music.events
        app.music.play()
        let titles = try app.followTitle()
        defer { titles.terminate(SIGTERM) }
        app.waitForTitle(titles, "Song")

        let player = Player(playerItem: PlayerItem(url: URL(fileURLWithPath: app.clip)), output: { NullOutput() })
        let videoSession = AudioSession(identifier: "video", bus: .address(app.bus.address))
        let session = NowPlayingSession(player: player, audioSession: videoSession, infoCenter: app.info,
                                        commandCenter: app.commands)
        let playerEvents = player.events
        player.play()
        _ = try await waitForEvent(musicEvents, timeout: 20, "the music interrupted") { $0 == .stateChanged(.interrupted) }
        app.waitForTitle(titles, "clip.mp4")
        _ = try await waitForEvent(playerEvents, timeout: 20, "the video's end") { $0 == .didPlayToEndTime }
        _ = try await waitForEvent(musicEvents, timeout: 20, "the music resumed") { $0 == .stateChanged(.playing) }
        app.waitForTitle(titles, "Song")
        #expect(!session.ownsRemoteControl)
        #expect(app.commands.ownerNames == ["application"])
        try app.playerctl("pause")
        _ = try await waitForEvent(musicEvents, timeout: 20, "the music paused") { $0 == .stateChanged(.paused) }
    }

    /// The video in a PlayerView window (Xvfb): closing the window with the window manager's
    /// close button gives everything back.
    @Test func closingTheVideosWindowGivesEverythingBack() async throws {
        let app = try App(clipSeconds: 30)
        defer { app.stop() }
        let musicEvents = app.music.events
        app.music.play()
        let titles = try app.followTitle()
        defer { titles.terminate(SIGTERM) }
        app.waitForTitle(titles, "Song")
        try await KitDisplay.with { display in
            let player = Player(playerItem: PlayerItem(url: URL(fileURLWithPath: app.clip)), output: { NullOutput() })
            let view = try await PlayerView.open(for: player)
            defer { view.close() }
            view.nowPlayingSession = NowPlayingSession(player: player, audioSession: AudioSession(identifier: "video", bus: .address(app.bus.address)),
                                                       infoCenter: app.info, commandCenter: app.commands)
            let running = Task { await view.run() }
            player.play()
            _ = try await waitForEvent(musicEvents, timeout: 20, "the music interrupted") { $0 == .stateChanged(.interrupted) }
            app.waitForTitle(titles, "clip.mp4")
            try display.send(toWindowTitled: "clip.mp4", ["close"])
            try await withDeadline(20, "PlayerView.run() to return") { await running.value }
            #expect(player.rate == 0)
            _ = try await waitForEvent(musicEvents, timeout: 20, "the music resumed") { $0 == .stateChanged(.playing) }
            app.waitForTitle(titles, "Song")
            #expect(view.nowPlayingSession?.ownsRemoteControl == false)
            #expect(app.commands.ownerNames == ["application"])
        }
    }

    /// Whether this process has no session bus (no `DBUS_SESSION_BUS_ADDRESS`, no
    /// `$XDG_RUNTIME_DIR/bus`), as on a machine without a desktop session.
    static var noSessionBus: Bool {
        let env = ProcessInfo.processInfo.environment
        if let a = env["DBUS_SESSION_BUS_ADDRESS"], !a.isEmpty { return false }
        guard let dir = env["XDG_RUNTIME_DIR"], !dir.isEmpty else { return true }
        return !FileManager.default.fileExists(atPath: dir + "/bus")
    }

    /// No session bus at all: the music player's session and the video's (the default one a
    /// NowPlayingSession makes) meet in the process — the video interrupts the music, and at its
    /// end the music resumes — and the commands go back.
    @Test(.enabled(if: noSessionBus, "runs where no session bus is configured"))
    func withoutASessionBusTheVideoStillInterruptsTheMusicOfItsProcess() async throws {
        let dir = try TempDir("now-playing-no-bus")
        defer { dir.remove() }
        let song = dir.file("song.flac")
        try Fixtures.minuteOfTone(path: song)
        let clip = dir.file("clip.mp4")
        try VideoFixtures.clip(clip, seconds: 1.5)
        let musicSession = AudioSession(identifier: "music-no-bus")
        #expect(!musicSession.isConnectedToBus)
        try musicSession.setCategory(.playback)
        let music = MusicPlayer(output: { NullOutput() }, session: musicSession)
        defer { music.stop() }
        music.setQueue(withPaths: [song])
        let musicEvents = music.events
        music.play()
        #expect(music.playbackState == .playing)

        let info = NowPlayingInfoCenter(), commands = RemoteCommandCenter()
        let shown = info.changes, owners = commands.changes
        let player = Player(playerItem: PlayerItem(url: URL(fileURLWithPath: clip)), output: { NullOutput() })
        let session = NowPlayingSession(player: player, infoCenter: info, commandCenter: commands)
        #expect(!session.audioSession.isConnectedToBus)
        let playerEvents = player.events
        player.play()
        _ = try await waitForEvent(musicEvents, timeout: 20, "the music interrupted") { $0 == .stateChanged(.interrupted) }
        // The video took Now Playing (after the session: the music may hear of it first).
        _ = try await waitForEvent(shown, timeout: 20, "the video shown") {
            if case .nowPlayingInfo(let i) = $0 { i?.title == "clip.mp4" } else { false }
        }
        _ = try await waitForEvent(playerEvents, timeout: 20, "the video's end") { $0 == .didPlayToEndTime }
        _ = try await waitForEvent(musicEvents, timeout: 20, "the music resumed") { $0 == .stateChanged(.playing) }
        // The commands go back right after the session (the music may resume first).
        _ = try await waitForEvent(owners, timeout: 20, "the commands given back") { _ in commands.ownerNames == ["application"] }
        #expect(info.ownerNames == ["application"])
        #expect(!session.ownsRemoteControl)
    }

    @Test func anAudioOnlyPlayerTakesNothing() async throws {
        let app = try App(clipSeconds: 1)
        defer { app.stop() }
        let musicEvents = app.music.events
        app.music.play()
        let interrupted = Mutex(false)
        let watch = Task.detached {
            for await e in musicEvents where e == .stateChanged(.interrupted) { interrupted.withLock { $0 = true } }
        }
        defer { watch.cancel() }
        let tone = app.dir.file("tone.wav")
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=660:duration=1", tone])
        let player = Player(playerItem: PlayerItem(url: URL(fileURLWithPath: tone)), output: { NullOutput() })
        let videoSession = AudioSession(identifier: "other", bus: .address(app.bus.address))
        let session = NowPlayingSession(player: player, audioSession: videoSession, infoCenter: app.info,
                                        commandCenter: app.commands)
        let playerEvents = player.events
        player.play()
        _ = try await waitForEvent(playerEvents, timeout: 20, "the tone's end") { $0 == .didPlayToEndTime }
        #expect(!session.ownsRemoteControl)
        #expect(!videoSession.isActive)
        #expect(app.commands.ownerNames == ["application"])
        #expect(app.music.playbackState == .playing)
        #expect(!interrupted.withLock { $0 })
        #expect(try app.playerctl("metadata", "title") == "Song")
    }
}
