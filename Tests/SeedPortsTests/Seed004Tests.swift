// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import SeedPorts
import Testing
import TonearmCompat
import TonearmTestSupport

/// Seed 004's player controller, written with Apple's names, does what the post means, against
/// real parts — a private PulseAudio server (the route), a private `dbus-daemon` and the real
/// `playerctl` (the remote commands and Now Playing, published by the shared centers by
/// themselves): the volume slider's value comes back through the volume notification; Now
/// Playing shows the song (CJK title, the NSNumber persistent ID kept whole) and is not hurt by
/// the dictionary edited afterwards; the desktop's play and pause reach the player; after the
/// music video has played to its end the commands are set again — once each, not twice
/// (`removeTarget(nil)` removes every target, as on iOS); the route names the server's output.
@Suite(.serialized) final class Seed004Tests: Sendable {
    let dir: TempDir
    init() throws { dir = try TempDir("seed004") }
    deinit { dir.remove() }

    @Test func theCompletePlayersVolumeRemoteNowPlayingAndRouteDoWhatThePostMeans() async throws {
        let pulse = try PrivatePulseServer()
        defer { pulse.stop() }
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let song = dir.file("song.mp3")
        try Fixtures.tone(path: song, codecArgs: ["-c:a", "libmp3lame", "-b:a", "128k"], seconds: 20)
        let video = dir.file("mv.mp4")
        try VideoFixtures.clip(video, seconds: 1)
        try await ProcessEnvironment.with(["DBUS_SESSION_BUS_ADDRESS": bus.address, "TONEARM_MPRIS": nil,
                                           "PULSE_SERVER": pulse.serverString]) {
            let controller = try CompletePlayerViewController(song: URL(fileURLWithPath: song), output: { NullOutput() })
            let center = MPRemoteCommandCenter.shared()
            defer {
                controller.audioPlayer.stop()
                for command in [center.playCommand, center.pauseCommand, center.nextTrackCommand] { command.removeTarget(nil) }
                MPNowPlayingInfoCenter.default().nowPlayingInfo = nil
            }

            // The volume slider: its value comes back through the notification.
            let (volumes, volumeSink) = AsyncStream<Float>.makeStream()
            let token = NotificationCenter.default.addObserver(forName: .MPMusicPlayerControllerVolumeDidChange, object: nil,
                                                               queue: nil) { _ in volumeSink.yield(MPMusicPlayerController.applicationMusicPlayer.volume) }
            defer { NotificationCenter.default.removeObserver(token) }
            controller.setupVolume()
            let before = MPMusicPlayerController.applicationMusicPlayer.volume
            let target: Float = before == 0.25 ? 0.5 : 0.25
            controller.volumeSliderChanged(target)
            _ = try await waitForEvent(volumes, "the volume notification") { $0 == target }
            #expect(controller.volumeSliderValue == target)
            #expect(controller.lines.contains("音量：\(target)"), "\(controller.lines)")
            controller.volumeSliderChanged(before)

            // Now Playing, from the NSMutableDictionary edited after it was handed over.
            controller.setupRemoteCommands()
            controller.updateNowPlayingInfo()
            let info = try #require(MPNowPlayingInfoCenter.default().nowPlayingInfo)
            #expect(info.title == "原來你也在這裡" && info.artist == "劉若英")
            #expect(info.persistentID == 9_007_199_254_740_993, "the NSNumber's id whole")
            #expect(abs((info.duration ?? 0) - controller.audioPlayer.duration) < 0.01)

            // The desktop sees the song and sends its commands.
            let name = try #require(DesktopPublishing.shared.busName)
            let suffix = String(name.dropFirst("org.mpris.MediaPlayer2.".count))
            func playerctl(_ args: String...) async throws -> String {
                let r = try await run("playerctl", ["-p", suffix] + args, environment: bus.environment)
                #expect(r.status == 0, "playerctl \(args): \(r.stderr)")
                return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            #expect(try await playerctl("metadata", "--format", "{{title}}|{{artist}}") == "原來你也在這裡|劉若英")
            _ = try await playerctl("play")
            #expect(controller.audioPlayer.isPlaying)
            #expect(try await playerctl("status") == "Playing")

            // The music video plays to its end; the commands are set again, once each.
            controller.playMusicVideo(url: URL(fileURLWithPath: video))
            try await withDeadline(30, "the video's end and the commands set again") {
                while !controller.lines.contains("影片結束，重設遙控"), !Task.isCancelled { await Task.yield() }
            }
            let pausesBefore = controller.lines.filter { $0 == "遙控：暫停" }.count
            _ = try await playerctl("pause")
            #expect(!controller.audioPlayer.isPlaying, "the desktop's pause reaches the music player after the video")
            #expect(controller.lines.filter { $0 == "遙控：暫停" }.count == pausesBefore + 1, "one pause target, not two: \(controller.lines)")
            #expect(try await playerctl("status") == "Paused")

            // The route: the server's output in use.
            controller.showCurrentRoute()
            let output = try #require(try AudioRoutes(server: pulse.serverString).currentOutput())
            #expect(controller.routeLabel.hasPrefix(output.description), "\(controller.routeLabel)")
        }
    }
}
