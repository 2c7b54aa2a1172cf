// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
@testable import SeedPorts
import Testing
import TonearmCompat
import TonearmTestSupport

/// Seed 000's listings, ported with Apple's names, do what the post means them to, against real
/// parts — a private PulseAudio server (PULSE_SERVER for the players' automatic output), the test
/// HTTP server on 127.0.0.1 for the stream and the videos, Xvfb for the windows: the system sound
/// is heard and disposed with its player; the music player's delegate and the session's
/// notification handler hear a phone call (a `phone`-role stream) and pause, and resume after;
/// the remote commands and Now Playing follow the player; the stream player's KVO observer sees
/// the item become ready and its buffer grow to 100 %, and its periodic observer ticks forward on
/// the main queue; `AVPlayerViewController` presented opens a window at the video's size and
/// plays; `AVPlayerLayer` draws the picture at its aspect in the view's bounds, and follows a
/// new layout. The post reports by printing: the tests wait for its prints (`seed000Log`).
@Suite(.serialized) final class Seed000Tests: Sendable {
    let dir: TempDir
    init() throws {
        dir = try TempDir("seed000")
        PulseOutput.register()
    }
    deinit { dir.remove() }

    /// Takes off the shared center what the post's `setupRemoteControls()` put there.
    static func removeTheMusicPlayersTargets(_ center: MPRemoteCommandCenter) {
        for command in [center.playCommand, center.pauseCommand, center.nextTrackCommand, center.previousTrackCommand] {
            command.removeAllTargets()
        }
        center.changePlaybackPositionCommand.removeAllTargets()
    }

    /// The printed lines that start with `prefix`, read as the number between it and `suffix`.
    static func numbers(_ lines: [String], _ prefix: String, _ suffix: String) -> [Double] {
        lines.compactMap { line in
            guard line.hasPrefix(prefix), line.hasSuffix(suffix) else { return nil }
            return Double(line.dropFirst(prefix.count).dropLast(suffix.count))
        }
    }

    /// Waits (with a deadline) for the player to report `status`; at once when it does already.
    static func wait(_ player: AVPlayer, _ status: TimeControlStatus, _ what: String) async throws {
        let events = player.events
        if player.timeControlStatus == status { return }
        _ = try await waitForEvent(events, timeout: 30, what) { _ in player.timeControlStatus == status }
    }

    @Test func theSystemSoundIsHeardAndDisposedWithItsPlayer() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=0.4*sin(2*PI*660*t)|0.4*sin(2*PI*660*t):s=48000:d=0.3",
                                   dir.file("button_click.wav")])
        let bundle = try #require(Bundle(path: dir.path))
        let rec = try server.startRecording(to: dir.file("heard.wav"))
        var id: SystemSoundID = 0
        try await ProcessEnvironment.with(["PULSE_SERVER": server.serverString]) {
            var player: SoundEffectPlayer? = soundEffectExample(bundle: bundle)
            id = try #require(player?.soundID)
            #expect(id != 0, "the sound was loaded")
            // Played again, to know when it has been heard (the post's playSound has no completion).
            let (done, finished) = AsyncStream<Void>.makeStream()
            AudioServicesPlaySystemSoundWithCompletion(id) { finished.yield() }
            _ = try await waitForEvent(done, timeout: 10, "the second play's end") { _ in true }
            player = nil
        }
        rec.stop()
        #expect(AudioServicesDisposeSystemSoundID(id) == kAudioServicesBadSpecifierError, "deinit disposed of the sound")
        let heard = try readWAV(dir.file("heard.wav"))
        let span = try #require(nonSilentSpan(heard.channels[0], sampleRate: heard.sampleRate), "nothing was heard")
        let seconds = Double(span.count) / heard.sampleRate
        #expect(seconds >= 0.29, "heard \(seconds) s of a 0.3 s sound played twice")
        let part = heard.channels[0][span.lowerBound..<(span.lowerBound + 9600)]
        #expect(goertzelPower(part, frequency: 660, sampleRate: heard.sampleRate)
                    > 100 * goertzelPower(part, frequency: 660 * 1.37, sampleRate: heard.sampleRate), "the sound is the file's 660 Hz")
    }

    @Test func theMusicPlayerPausesForAPhoneCallAndFollowsTheRemoteCommands() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        try Fixtures.tone(path: dir.file("song.mp3"), codecArgs: ["-c:a", "libmp3lame", "-b:a", "128k"], seconds: 30)
        let call = dir.file("call.wav")
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=880:duration=0.5:sample_rate=48000", call])
        let serverString = server.serverString
        let music = MusicPlayer(bundle: try #require(Bundle(path: dir.path)),
                                output: { PulseOutput(server: serverString, streamName: "music", role: "music") })
        let center = MPRemoteCommandCenter.shared()
        defer {
            music.stop()
            Self.removeTheMusicPlayersTargets(center)
        }
        let log = seed000Log.stream()
        music.configureAudioSession()
        #expect(AVAudioSession.sharedInstance().category == .playback)
        music.observeAudioSessionNotifications()
        music.loadMusic(filename: "song")
        let length = try #require(Self.numbers(seed000Log.lines, "音訊長度：", " 秒").last)
        #expect(abs(length - 30) < 0.1, "the duration printed: \(length) s")
        let player = try #require(music.audioPlayer)
        let events = player.events
        music.play()
        #expect(player.isPlaying)

        // A phone call (a `phone`-role stream corks the music): the delegate hears its start and
        // the shared session posts it, whose handler pauses; at its end the delegate's
        // audioPlayerEndInterruption(_:withOptions:) and the handler (shouldResume) play again.
        let before = seed000Log.lines.count
        @Sendable func printed(_ wanted: [String]) -> Bool {
            let lines = seed000Log.lines.dropFirst(before)
            return wanted.allSatisfy(lines.contains)
        }
        let paplay = try server.startPaplay(call, role: "phone")
        _ = try await waitForEvent(log, "the delegate's and the handler's interruption") { _ in
            printed(["播放被中斷", "音訊被中斷，暫停播放"])
        }
        #expect(!player.isPlaying)
        _ = try await waitForEvent(log, "the delegate's and the handler's resumption") { _ in
            printed(["中斷結束，可以恢復播放", "恢復播放"])
        }
        // Each prints, then plays (on its own thread: the delegate's, the notification's); the
        // player has no event for play(), so the condition is awaited right after the prints.
        try await withDeadline(10, "the player playing again") {
            while !player.isPlaying, !Task.isCancelled { await Task.yield() }
        }
        _ = paplay.wait(timeout: 10)

        // Headphones unplugged (the route change as the shared session posts it): the handler pauses.
        let session = AVAudioSession.sharedInstance()
        NotificationCenter.default.post(name: AVAudioSession.routeChangeNotification, object: session,
                                        userInfo: [AVAudioSessionRouteChangeReasonKey: AVAudioSession.RouteChangeReason.oldDeviceUnavailable.rawValue])
        #expect(seed000Log.lines.last == "耳機被拔掉，暫停播放")
        #expect(!player.isPlaying)
        // Another session's notification is not the shared session's: nothing happens.
        NotificationCenter.default.post(name: AVAudioSession.routeChangeNotification, object: nil,
                                        userInfo: [AVAudioSessionRouteChangeReasonKey: AVAudioSession.RouteChangeReason.newDeviceAvailable.rawValue])
        #expect(seed000Log.lines.last == "耳機被拔掉，暫停播放")

        // Now Playing and the remote commands.
        let cover = Artwork(data: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], mimeType: "image/png")
        music.setupNowPlaying(title: "原來你也在這裡", artist: "劉若英", artwork: cover, duration: player.duration)
        let info = try #require(MPNowPlayingInfoCenter.default().nowPlayingInfo)
        #expect(info.title == "原來你也在這裡" && info.artist == "劉若英" && info.artwork == cover)
        #expect(info.duration == player.duration && info.playbackRate == 0)
        music.setupRemoteControls()
        #expect(center.dispatch(center.playCommand) == .success)
        #expect(player.isPlaying)
        #expect(MPNowPlayingInfoCenter.default().nowPlayingInfo?.playbackRate == 1)
        #expect(center.dispatch(center.changePlaybackPositionCommand, MPChangePlaybackPositionCommandEvent(positionTime: 12)) == .success)
        #expect(abs(player.currentTime - 12) < 0.5, "the position command moved to \(player.currentTime) s")
        #expect(center.dispatch(center.pauseCommand) == .success)
        #expect(!player.isPlaying)
        let paused = try #require(MPNowPlayingInfoCenter.default().nowPlayingInfo)
        #expect(paused.playbackRate == 0 && abs(paused.elapsedTime - player.currentTime) < 0.1)
        #expect(center.dispatch(center.nextTrackCommand) == .success && seed000Log.lines.last == "下一首")
        #expect(center.dispatch(center.previousTrackCommand) == .success && seed000Log.lines.last == "上一首")

        // The end: the delegate's audioPlayerDidFinishPlaying.
        music.seek(to: player.duration - 0.3)
        music.play()
        _ = try await waitForEvent(events, timeout: 10, "the end") { $0 == .didFinishPlaying(successfully: true) }
        #expect(seed000Log.lines.contains("播放完成"))
    }

    /// The post's Now Playing and remote controls reach the desktop with no code of the port's
    /// own, as they reach iOS's lock screen: `MPRemoteCommandCenter.shared()` and
    /// `MPNowPlayingInfoCenter.default()` publish the process over MPRIS on the session bus the
    /// environment names (a private `dbus-daemon`), and the real `playerctl` sees the song (its
    /// CJK title and artist, its length), a state derived from the rate the post sets (it never
    /// sets `playbackState`), and plays, moves, pauses and skips the post's player.
    @Test func theDesktopShowsTheSongAndSendsItsControlsWithNoCodeOfThePorts() async throws {
        try Fixtures.tone(path: dir.file("song.mp3"), codecArgs: ["-c:a", "libmp3lame", "-b:a", "128k"], seconds: 30)
        let bus = try PrivateDBus()
        defer { bus.stop() }
        try await ProcessEnvironment.with(["DBUS_SESSION_BUS_ADDRESS": bus.address, "TONEARM_MPRIS": nil]) {
            let music = MusicPlayer(bundle: try #require(Bundle(path: dir.path)), output: { NullOutput() })
            let center = MPRemoteCommandCenter.shared()
            defer {
                music.stop()
                Self.removeTheMusicPlayersTargets(center)
                MPNowPlayingInfoCenter.default().nowPlayingInfo = nil
            }
            music.configureAudioSession()
            music.loadMusic(filename: "song")
            let player = try #require(music.audioPlayer)
            music.setupNowPlaying(title: "原來你也在這裡", artist: "劉若英", artwork: nil, duration: player.duration)
            music.setupRemoteControls()

            let name = try #require(DesktopPublishing.shared.busName, "the shared centers were published")
            #expect(name.hasPrefix("org.mpris.MediaPlayer2." + DesktopPublishing.shared.busNameSuffix))
            let suffix = String(name.dropFirst("org.mpris.MediaPlayer2.".count))
            func playerctl(_ args: String...) async throws -> String {
                let r = try await run("playerctl", ["-p", suffix] + args, environment: bus.environment)
                #expect(r.status == 0, "playerctl \(args): \(r.stderr)")
                return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            #expect(try await playerctl("metadata", "--format", "{{title}}|{{artist}}|{{mpris:length}}")
                    == "原來你也在這裡|劉若英|\(Int((player.duration * 1e6).rounded()))")
            #expect(try await playerctl("status") == "Paused")
            _ = try await playerctl("play")
            #expect(player.isPlaying, "playerctl play reached the post's play target")
            #expect(try await playerctl("status") == "Playing", "the state follows the rate the post set")
            _ = try await playerctl("position", "12")
            #expect(abs(player.currentTime - 12) < 0.5, "playerctl position moved the player to \(player.currentTime) s")
            _ = try await playerctl("pause")
            #expect(!player.isPlaying, "playerctl pause reached the post's pause target")
            #expect(try await playerctl("status") == "Paused")
            _ = try await playerctl("next")
            #expect(seed000Log.lines.last == "下一首")
        }
    }

    @Test func theStreamPlayerObservesReadinessBufferingAndTime() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        try Fixtures.tone(path: dir.file("stream.mp3"), codecArgs: ["-c:a", "libmp3lame", "-b:a", "128k"], seconds: 4)
        let http = try PrivateHTTPServer(root: dir.path)
        defer { http.stop() }
        try await ProcessEnvironment.with(["PULSE_SERVER": server.serverString]) {
            let log = seed000Log.stream()
            let before = seed000Log.lines.count
            var stream: StreamPlayer? = StreamPlayer()
            // 16 kB/s: the 64 kB file arrives over about four seconds.
            stream?.playStream(url: http.baseURL.absoluteString + "/stream.mp3?rate=16000")
            _ = try await waitForEvent(log, timeout: 20, "readyToPlay observed") { $0 == "準備就緒，可以播放" }
            _ = try await waitForEvent(log, timeout: 30, "the whole stream buffered") { line in
                (Self.numbers([line], "已緩衝：", "%").first ?? 0) >= 99
            }
            let player = try #require(stream?.player)
            try await Self.wait(player, .playing, "the stream playing")
            _ = try await waitForEvent(log, timeout: 20, "a second played") { line in
                (Self.numbers([line], "播放進度：", " 秒").first ?? 0) >= 1
            }
            let lines = Array(seed000Log.lines.dropFirst(before))
            let buffered = Self.numbers(lines, "已緩衝：", "%")
            #expect(buffered.count >= 3, "the buffer's growth was observed: \(buffered)")
            #expect(buffered.first.map { $0 < 90 } == true, "the first buffered percent (\(buffered)) came before the whole stream")
            #expect(zip(buffered, buffered.dropFirst()).allSatisfy { $0 <= $1 + 0.5 }, "buffered: \(buffered)")
            let ticks = Self.numbers(lines, "播放進度：", " 秒")
            #expect(ticks.count >= 5, "ticks: \(ticks)")
            #expect(zip(ticks, ticks.dropFirst()).allSatisfy { $0 <= $1 }, "the ticks go forward: \(ticks)")
            // The UI's time: each block prints, then sets it (on the main queue, in order), so
            // the block before the last printed one has set it.
            #expect((stream?.progress ?? 0) >= ticks.dropLast().last ?? .infinity, "progress \(stream?.progress ?? 0), ticks \(ticks)")
            #expect(try server.sinkInputCount() == 1, "the stream plays on the sound server")
            #expect(!lines.contains { $0.hasPrefix("載入失敗") })
            // Released: its deinit removes its observers; the player stops with it.
            player.pause()
            stream = nil
        }
    }

    @Test func aStreamThatCannotLoadIsReportedAsFailed() async throws {
        let http = try PrivateHTTPServer(root: dir.path)
        defer { http.stop() }
        let log = seed000Log.stream()
        let stream = StreamPlayer()
        stream.playStream(url: http.baseURL.absoluteString + "/status/404")
        let line = try await waitForEvent(log, timeout: 20, "the failure observed") { $0.hasPrefix("載入失敗：") }
        #expect(line.contains("404"), "\(line)")
        stream.player?.pause()
    }

    /// Runs `body` with a private sound server and an Xvfb display as the players' automatic
    /// output and SDL's display, giving it the address of an 8 s 160×90 clip on the test HTTP
    /// server, and the display.
    func withVideoParts(_ body: (String, VirtualDisplay) async throws -> Void) async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        try VideoFixtures.clip(dir.file("clip.mp4"), seconds: 8)
        let http = try PrivateHTTPServer(root: dir.path)
        defer { http.stop() }
        let display = try VirtualDisplay(width: 640, height: 480)
        defer { display.stop() }
        var environment = display.sdlEnvironment
        environment["PULSE_SERVER"] = server.serverString
        try await ProcessEnvironment.with(environment) { try await body(http.baseURL.absoluteString + "/clip.mp4", display) }
    }

    @Test func presentingAVPlayerViewControllerOpensTheVideoAtItsSizeAndPlays() async throws {
        try await withVideoParts { clip, display in
            let controller = VideoListViewController()
            controller.playVideo(url: clip)
            let presented = try #require(controller.presentedViewController)
            defer { presented.dismiss() }
            let player = try #require(presented.player)
            // The completion plays once the window is up.
            try await Self.wait(player, .playing, "the presented video playing")
            let view = try #require(presented.view, "the view is up before the completion runs")
            let shown = try #require(view.window.waitForPresentation(timeout: 30) { $0.frameTime != nil }, "no frame was drawn")
            #expect(shown.outputWidth == 160 && shown.outputHeight == 90, "the video's size: \(shown.outputWidth)×\(shown.outputHeight)")
            #expect(presented.presentationError == nil)
            // q closes it: the presentation ends and the player pauses, as a dismissal does.
            try display.send(toWindowTitled: "clip.mp4", ["key:q"])
            try await withDeadline(20, "the dismissal") { await presented.waitUntilDismissed() }
            #expect(presented.view == nil && !view.window.isOpen)
            #expect(player.rate == 0)
        }
    }

    @Test func theCustomPlayersLayerDrawsAtThePicturesAspectAndFollowsTheLayout() async throws {
        try await withVideoParts { clip, _ in
            let custom = CustomVideoPlayer(videoAddress: clip,
                                           bounds: CGRect(x: 0, y: 0, width: 320, height: 320))
            custom.viewDidLoad()
            defer { custom.playerLayer?.removeFromSuperlayer() }
            #expect(custom.view.layer.error == nil)
            let layer = try #require(custom.playerLayer?.playerLayer, "the window opened")
            #expect(custom.playerLayer?.videoGravity == .resizeAspect)
            let player = try #require(custom.player)
            custom.playTapped()
            try await Self.wait(player, .playing, "playing after playTapped")
            // The 16:9 picture letterboxed in the square view: 320×180, centred.
            let square = try #require(layer.window.waitForPresentation(timeout: 30) { $0.frameTime != nil }, "no frame was drawn")
            #expect(square.outputWidth == 320 && square.outputHeight == 320)
            #expect(square.videoRect == VideoRect(x: 0, y: 70, width: 320, height: 180), "\(square.videoRect)")
            // The player marks its first frame shown from its pipeline's event, a moment after
            // the window drew it: awaited when not marked yet.
            let shownEvents = player.events
            if !player.isReadyForDisplay {
                _ = try await waitForEvent(shownEvents, "the player's readyForDisplay") {
                    if case .readyForDisplay = $0 { true } else { false }
                }
            }
            #expect(custom.playerLayer?.isReadyForDisplay == true)
            // A new layout: the window follows the view's bounds.
            custom.view.bounds = CGRect(x: 0, y: 0, width: 480, height: 270)
            custom.viewDidLayoutSubviews()
            let wide = try #require(layer.window.waitForPresentation(timeout: 30) { $0.outputWidth == 480 && $0.frameTime != nil },
                                    "the window did not follow the layout")
            #expect(wide.outputHeight == 270 && wide.videoRect == VideoRect(x: 0, y: 0, width: 480, height: 270), "\(wide.videoRect)")
            custom.pauseTapped()
            try await Self.wait(player, .paused, "paused after pauseTapped")
        }
    }
}
