// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Two `tonearm play` processes on one private session bus, as the seed has them: a
/// music player, then a video. The video's session (playback, moviePlayback) interrupts the
/// music; the video takes the `tonearm` MPRIS name, so `playerctl -p tonearm` shows and pauses
/// the video; when the video's process ends the music plays on and owns the name again.
@Suite(.serialized) struct VideoSessionCLITests {
    @Test func aVideoProcessTakesTheSessionAndTheControlsAndTheMusicGetsThemBack() async throws {
        let dir = try TempDir("video-session")
        defer { dir.remove() }
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let song = dir.file("song.flac"), clip = dir.file("clip.mp4")
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=60", "-metadata", "title=Song", song])
        try VideoFixtures.clip(clip, seconds: 30)
        var env = bus.environment
        env["XDG_STATE_HOME"] = dir.file("state")

        let follower = try bus.follow("playerctl", ["-p", "tonearm", "-F", "metadata", "--format", "{{status}} {{title}}"])
        defer { follower.terminate() }
        /// Whether the follower printed the lines `sequence` in this order, others between them
        /// allowed (within 20 s).
        func sees(_ sequence: String...) async -> Bool {
            await follower.waitForStandardOutput(timeout: 20) { out in
                var rest = out.text[...]
                for line in sequence {
                    guard let r = rest.range(of: line) else { return false }
                    rest = rest[r.upperBound...]
                }
                return true
            }
        }
        @discardableResult
        func ctl(_ args: String...) throws -> String {
            let r = try bus.client("playerctl", ["-p", "tonearm"] + args)
            #expect(r.status == 0, "playerctl \(args): \(r.stderr)")
            return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        let music = try ChildProcess([try tonearmBinary(), "play", "--plain", "--output", "null", song],
                                     environment: env, captureStandardError: true, captureStandardOutput: true)
        defer { music.terminate(SIGKILL) }
        #expect(await sees("Playing Song"), "playerctl saw: \(follower.standardOutputText)")

        let video = try ChildProcess([try tonearmBinary(), "play", "--plain", "--output", "null", "--video-output", "null", clip],
                                     environment: env, captureStandardOutput: true)
        defer { video.terminate(SIGKILL) }
        #expect(await sees("Playing clip.mp4"), "playerctl saw: \(follower.standardOutputText)")
        #expect(music.waitForStandardError(containing: "interrupted by another player", timeout: 20),
                "music: \(music.standardErrorText)")
        #expect(try ctl("metadata", "title") == "clip.mp4")
        // The desktop's pause reaches the video.
        try ctl("pause")
        #expect(await sees("Playing clip.mp4", "Paused clip.mp4"), "playerctl saw: \(follower.standardOutputText)")

        // The video's window closes (its process ends): the music plays on and is the player again.
        video.terminate(SIGTERM)
        #expect(!video.isRunning)
        #expect(await sees("Playing clip.mp4", "Paused clip.mp4", "Playing Song"), "playerctl saw: \(follower.standardOutputText)")
        #expect(try ctl("metadata", "title") == "Song")
        try ctl("pause")
        #expect(await sees("Playing clip.mp4", "Paused clip.mp4", "Playing Song", "Paused Song"),
                "playerctl saw: \(follower.standardOutputText)")
    }
}
