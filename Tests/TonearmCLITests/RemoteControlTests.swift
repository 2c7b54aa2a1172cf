// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `tonearm play` as the desktop sees it: published over MPRIS on a private session bus and
/// driven by the real `playerctl`; its queue saved as it plays and resumed after a SIGKILL.
@Suite(.serialized) struct RemoteControlTests {
    @Test func playerctlDrivesThePlayerAndTheQueueSurvivesSIGKILL() async throws {
        let dir = try TempDir("remote")
        defer { dir.remove() }
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let a = dir.file("alpha.flac"), b = dir.file("beta.flac")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=30", "-metadata", "title=Alpha",
                             "-metadata", "artist=The Testers", a])
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=660:duration=30", "-metadata", "title=Beta", b])
        var env = bus.environment
        env["XDG_STATE_HOME"] = dir.file("state")

        let follower = try bus.follow("playerctl", ["-p", "tonearm", "-F", "metadata", "--format", "{{status}} {{title}}"])
        defer { follower.terminate() }
        let player = try ChildProcess([try tonearmBinary(), "play", "--plain", "--output", "null", a, b],
                                      environment: env, captureStandardOutput: true)
        defer { player.terminate(SIGKILL) }

        func sees(_ text: String) async -> Bool {
            await follower.waitForStandardOutput(timeout: 15) { $0.text.contains(text) }
        }
        #expect(await sees("Playing Alpha"), "playerctl saw: \(follower.standardOutputText)")
        let meta = try bus.playerctl("-p", "tonearm", "metadata")
        #expect(meta.stdout.contains("xesam:artist") && meta.stdout.contains("The Testers"), "\(meta.stdout)")
        #expect(meta.stdout.contains("mpris:length") && meta.stdout.contains("30000000"), "\(meta.stdout)")
        #expect(meta.stdout.contains("mpris:trackid") && meta.stdout.contains("/org/"), "\(meta.stdout)")

        try bus.playerctl("-p", "tonearm", "next")
        #expect(await sees("Playing Beta"), "\(follower.standardOutputText)")
        try bus.playerctl("-p", "tonearm", "previous")
        #expect(await sees("Playing Alpha\nPlaying Beta\nPlaying Alpha"), "\(follower.standardOutputText)")
        try bus.playerctl("-p", "tonearm", "next")

        try bus.playerctl("-p", "tonearm", "loop", "Track")
        #expect(try bus.playerctl("-p", "tonearm", "loop").stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "Track")
        try bus.playerctl("-p", "tonearm", "loop", "None")
        try bus.playerctl("-p", "tonearm", "shuffle", "On")
        #expect(try bus.playerctl("-p", "tonearm", "shuffle").stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "On")
        try bus.playerctl("-p", "tonearm", "shuffle", "Off")
        try bus.playerctl("-p", "tonearm", "volume", "0.5")
        let volume = Double(try bus.playerctl("-p", "tonearm", "volume").stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(volume.map { abs($0 - 0.5) < 0.01 } == true, "volume \(String(describing: volume))")
        try bus.playerctl("-p", "tonearm", "position", "10")
        let position = Double(try bus.playerctl("-p", "tonearm", "position").stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        #expect((10...12).contains(position), "position \(position)")
        try bus.playerctl("-p", "tonearm", "play-pause")
        #expect(await sees("Paused Beta"), "\(follower.standardOutputText)")

        // A bad call gets a D-Bus error and the player goes on answering.
        let bad = try bus.client("dbus-send", ["--session", "--print-reply", "--dest=org.mpris.MediaPlayer2.tonearm",
                                               "/org/mpris/MediaPlayer2", "org.mpris.MediaPlayer2.Player.SetPosition",
                                               "objpath:/org/tonearm/track/1", "int64:5"])
        #expect(bad.status != 0)
        #expect(try bus.playerctl("-p", "tonearm", "status").stdout.contains("Paused"))

        // Killed outright: the saved queue says Beta, about 10 s in.
        kill(player.pid, SIGKILL)
        player.wait(timeout: 10)
        let saved = try String(contentsOfFile: dir.file("state/tonearm/queue.json"), encoding: .utf8)
        #expect(saved.contains("beta.flac"))
        struct Saved: Decodable {
            struct Order: Decodable { var order: [Int]; var position: Int }
            var position: Double
            var volume: Float
            var order: Order
        }
        let s = try JSONDecoder().decode(Saved.self, from: Data(saved.utf8))
        #expect(s.order.order[s.order.position] == 1, "\(saved)")
        #expect((9.5...12).contains(s.position), "saved at \(s.position) s")
        #expect(abs(s.volume - 0.5) < 0.01)

        // --resume picks up there: Beta from about 10 s to its end (about 20 s of audio).
        let out = dir.file("resumed.wav")
        let r = try run(try tonearmBinary(), ["play", "--resume", "--output", "file:\(out)"], environment: env)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("Playing 2/2: Beta"), "\(r.stdout)")
        let w = try readWAV(out)
        let seconds = Double(w.frameCount) / w.sampleRate
        #expect(abs(seconds - (30 - s.position)) < 0.05, "resumed for \(seconds) s from \(s.position) s")
        // At the saved volume: half of the sine source's 1/8 amplitude.
        let level = rms(w.channels[0][44100..<88200])
        #expect(abs(level - Float(0.125 * 0.5 / 2.0.squareRoot())) < 0.004, "RMS \(level)")
    }
}
