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
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=30", "-metadata", "title=Alpha",
                                   "-metadata", "artist=The Testers", a])
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=660:duration=30", "-metadata", "title=Beta", b])
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
            var generation: UInt64?
        }
        // The place (current item, seconds, volume) is saved apart when only it changed.
        struct Place: Decodable { var generation: UInt64; var orderPosition: Int; var position: Double; var volume: Float }
        var s = try JSONDecoder().decode(Saved.self, from: Data(saved.utf8))
        if let data = FileManager.default.contents(atPath: dir.file("state/tonearm/queue.json.place")),
           let place = try? JSONDecoder().decode(Place.self, from: data), place.generation == s.generation {
            s.order.position = place.orderPosition
            s.position = place.position
            s.volume = place.volume
        }
        #expect(s.order.order[s.order.position] == 1, "\(saved)")
        #expect((9.5...12).contains(s.position), "saved at \(s.position) s")
        #expect(abs(s.volume - 0.5) < 0.01)

        // --resume picks up there: Beta from about 10 s to its end (about 20 s of audio).
        let out = dir.file("resumed.wav")
        let r = try await run(try tonearmBinary(), ["play", "--resume", "--output", "file:\(out)"], environment: env)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("Playing 2/2: Beta"), "\(r.stdout)")
        let w = try readWAV(out)
        let seconds = Double(w.frameCount) / w.sampleRate
        #expect(abs(seconds - (30 - s.position)) < 0.05, "resumed for \(seconds) s from \(s.position) s")
        // At the saved volume: half of the sine source's 1/8 amplitude.
        let level = rms(w.channels[0][44100..<88200])
        #expect(abs(level - Float(0.125 * 0.5 / 2.0.squareRoot())) < 0.004, "RMS \(level)")
    }
    /// A network stream (`tonearm play http://…`, from the tests' HTTP server) goes through the
    /// same remote-control bridge as local files: `playerctl` pauses and plays it, reads its
    /// title, sets its volume, stops it (a stream pauses) and sees no queue to move in.
    @Test func playerctlDrivesAStream() async throws {
        let served = try TempDir("remote-stream")
        defer { served.remove() }
        let bus = try PrivateDBus()
        defer { bus.stop() }
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=30", "-c:a", "libmp3lame", "-b:a", "128k",
                                   "-metadata", "title=Streamed Song", served.file("song.mp3")])
        let server = try PrivateHTTPServer(root: served.path)
        defer { server.stop() }
        let remote = try Remote(bus: bus, playing: [server.url("/song.mp3").absoluteString], state: served.file("state"))
        defer { remote.end() }
        let follower = remote.follower
        #expect(await remote.sees("Playing Streamed Song"), "playerctl saw: \(follower.standardOutputText)")
        #expect(try remote.ctl("metadata", "title") == "Streamed Song")
        try remote.ctl("pause")
        #expect(await remote.sees("Playing Streamed Song\nPaused Streamed Song"), "\(follower.standardOutputText)")
        try remote.ctl("play")
        #expect(await remote.sees("Paused Streamed Song\nPlaying Streamed Song"), "\(follower.standardOutputText)")
        try remote.ctl("volume", "0.5")
        let volume = Double(try remote.ctl("volume"))
        #expect(volume.map { abs($0 - 0.5) < 0.01 } == true, "volume \(String(describing: volume))")
        // No queue behind a stream: nothing to go to.
        #expect(try remote.property("CanGoNext").contains("boolean false"))
        #expect(try remote.property("CanGoPrevious").contains("boolean false"))
        #expect(try remote.property("CanPause").contains("boolean true"))
        // Stop pauses a stream (its connection stays).
        try remote.ctl("stop")
        #expect(await remote.sees("Playing Streamed Song\nPaused Streamed Song\nPlaying Streamed Song\nPaused Streamed Song"),
                "\(follower.standardOutputText)")
    }

    /// The MPRIS additions: the file's own track number, OpenUri of a file and of an escaped
    /// http address (added to the queue and played), Rate within 0.5…2 (the player's speed),
    /// and Quit (CanQuit true) that ends the player as `q` does.
    @Test func trackNumberOpenUriRateAndQuit() async throws {
        let dir = try TempDir("remote-more")
        defer { dir.remove() }
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let zero = dir.file("zero.flac"), eight = dir.file("eight.flac"), extra = dir.file("extra.flac")
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=30", "-metadata", "title=Zero", zero])
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=550:duration=30", "-metadata", "title=Eight",
                                   "-metadata", "album=Octets", "-metadata", "track=8/12", eight])
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=660:duration=30", "-metadata", "title=Extra", extra])
        let served = try TempDir("remote-served")
        defer { served.remove() }
        try Fixtures.tone(path: served.file("月光 x.mp3"), codecArgs: ["-c:a", "libmp3lame", "-b:a", "128k"], seconds: 30)
        let server = try PrivateHTTPServer(root: served.path)
        defer { server.stop() }
        let remote = try Remote(bus: bus, playing: [zero, eight], state: dir.file("state"))
        defer { remote.end() }
        let (follower, player) = (remote.follower, remote.player)

        #expect(await remote.sees("Playing Zero"), "playerctl saw: \(follower.standardOutputText)")
        // No track number in the tags: none published (not the queue position 1).
        #expect(!(try remote.ctl("metadata")).contains("xesam:trackNumber"))
        try remote.ctl("next")
        #expect(await remote.sees("Playing Eight"), "\(follower.standardOutputText)")
        // The file's own number (8 of 12), though it is second in the queue.
        #expect(try remote.ctl("metadata", "xesam:trackNumber") == "8")

        // Rate: 0.5…2, and a write is the player's speed.
        #expect(try remote.property("MinimumRate").contains("double 0.5"))
        #expect(try remote.property("MaximumRate").contains("double 2"))
        let set = try remote.call("org.freedesktop.DBus.Properties.Set",
                           ["string:org.mpris.MediaPlayer2.Player", "string:Rate", "variant:double:1.5"])
        #expect(set.status == 0, "\(set.stderr)")
        #expect(try remote.property("Rate").contains("double 1.5"))
        let tooFast = try remote.call("org.freedesktop.DBus.Properties.Set",
                               ["string:org.mpris.MediaPlayer2.Player", "string:Rate", "variant:double:3"])
        #expect(tooFast.status != 0 && tooFast.stderr.contains("InvalidArgs"), "\(tooFast.stderr)")

        // OpenUri: the schemes and types are advertised; a file, then an escaped address, are played.
        let root = "org.mpris.MediaPlayer2"
        let schemes = try remote.property("SupportedUriSchemes", of: root)
        #expect(schemes.contains("\"file\"") && schemes.contains("\"http\"") && schemes.contains("\"https\""), "\(schemes)")
        #expect(try remote.property("SupportedMimeTypes", of: root).contains("\"audio/flac\""))
        try remote.ctl("open", URL(fileURLWithPath: extra).absoluteString)
        #expect(await remote.sees("Playing Extra"), "\(follower.standardOutputText)")
        try remote.ctl("open", server.baseURL.absoluteString + "/%E6%9C%88%E5%85%89%20x.mp3")
        #expect(await remote.sees("Playing 月光 x.mp3"), "\(follower.standardOutputText)")
        let asked = await server.waitForRequest(timeout: 15) { $0.target == "/%E6%9C%88%E5%85%89%20x.mp3" && $0.status != nil }
        #expect(asked.map { (200...299).contains($0.status ?? 0) } == true, "\(server.requests().map { ($0.target, $0.status) })")
        let ftp = try remote.call("org.mpris.MediaPlayer2.Player.OpenUri", ["string:ftp://example.com/a.mp3"])
        #expect(ftp.status != 0 && ftp.stderr.contains("SupportedUriSchemes"), "\(ftp.stderr)")
        #expect(try remote.ctl("metadata", "title") == "月光 x.mp3")

        // Quit ends the player as `q` does: the queue is saved, the summary printed, exit status 0.
        #expect(try remote.property("CanQuit", of: root).contains("boolean true"))
        let quit = try remote.call("org.mpris.MediaPlayer2.Quit")
        #expect(quit.status == 0, "\(quit.stderr)")
        #expect(await player.waitForExit(timeout: 15))
        #expect(player.succeeded, "exit status \(String(describing: player.status))")
        #expect(player.standardOutputText.contains("Done: "), "\(player.standardOutputText)")
    }

    /// Repeat and shuffle set over MPRIS belong to the queue: they read back the same after the
    /// song changed, and the queue follows them (loop Track plays the track again instead of
    /// going on). Before, the order recorded when the next song was scheduled replaced the
    /// queue's at the change: `None`/`Off` read back and the next song played.
    @Test func loopAndShuffleSetOverMPRISSurviveTheNextTrack() async throws {
        let dir = try TempDir("remote-modes")
        defer { dir.remove() }
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let titles = ["Ant", "Bee", "Cat"]
        var files: [String] = []
        for (i, t) in titles.enumerated() {
            let f = dir.file("\(t).flac")
            try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=\(330 + 110 * i):duration=6", "-metadata", "title=\(t)", f])
            files.append(f)
        }
        let remote = try Remote(bus: bus, playing: files, state: dir.file("state"))
        defer { remote.end() }
        let (follower, player) = (remote.follower, remote.player)
        #expect(await remote.sees("Playing Ant"), "playerctl saw: \(follower.standardOutputText)")

        try remote.ctl("shuffle", "On")
        #expect(try remote.ctl("shuffle") == "On")
        // The song changes (to another of the shuffled queue) and shows its first time line.
        let changed = await player.waitForStandardOutput(timeout: 20) {
            let songs = $0.text.components(separatedBy: "Playing ")
            return (songs.count > 2 && songs.last!.contains("  0:00 / ")) || $0.ended
        }
        #expect(changed, "\(player.standardOutputText)")
        #expect(try remote.ctl("shuffle") == "On", "\(player.standardOutputText)")

        try remote.ctl("loop", "Track")
        #expect(try remote.ctl("loop") == "Track")
        let title = try remote.ctl("metadata", "title")
        let before = player.standardOutputText.count
        // The track ends and starts again: its time goes back with no other song played
        // (`--plain` prints a time line every 5 s of playback, so the line after the restart
        // shows an earlier time than the one before it, not necessarily 0:00).
        let after = await player.waitForStandardOutput(timeout: 20) { o in
            let since = String(o.text.dropFirst(before))
            return since.contains("Playing ") || Self.timeWentBack(in: since) || o.ended
        }
        let since = String(player.standardOutputText.dropFirst(before))
        #expect(after && Self.timeWentBack(in: since) && !since.contains("Playing "), "after loop Track: \(since)")
        #expect(try remote.ctl("loop") == "Track")
        #expect(try remote.ctl("shuffle") == "On")
        #expect(try remote.ctl("metadata", "title") == title)
    }

    /// Whether `--plain` output shows a time line (`  M:SS / M:SS`) earlier than the one before it.
    static func timeWentBack(in text: String) -> Bool {
        let seconds: [Int] = text.split(separator: "\n").compactMap { line in
            let t = line.trimmingCharacters(in: .whitespaces)
            guard let slash = t.range(of: " / ") else { return nil }
            let parts = t[..<slash.lowerBound].split(separator: ":")
            guard parts.count == 2, let m = Int(parts[0]), let s = Int(parts[1]) else { return nil }
            return m * 60 + s
        }
        return zip(seconds, seconds.dropFirst()).contains { $1 < $0 }
    }

    /// `tonearm play --plain --output null ARGS` on a private session bus, and `playerctl -F`
    /// following the status and title it publishes.
    struct Remote {
        let bus: PrivateDBus
        let follower: ChildProcess
        let player: ChildProcess

        init(bus: PrivateDBus, playing arguments: [String], state: String) throws {
            self.bus = bus
            var env = bus.environment
            env["XDG_STATE_HOME"] = state
            follower = try bus.follow("playerctl", ["-p", "tonearm", "-F", "metadata", "--format", "{{status}} {{title}}"])
            do {
                player = try ChildProcess([try tonearmBinary(), "play", "--plain", "--output", "null"] + arguments,
                                          environment: env, captureStandardOutput: true)
            } catch {
                follower.terminate()
                throw error
            }
        }

        /// Kills the player, then stops following.
        func end() {
            player.terminate(SIGKILL)
            follower.terminate()
        }

        /// Whether `playerctl -F` printed `text` (within 15 s).
        func sees(_ text: String) async -> Bool {
            await follower.waitForStandardOutput(timeout: 15) { $0.text.contains(text) }
        }

        /// `playerctl -p tonearm ARGS` (expected to succeed); its output, trimmed.
        @discardableResult
        func ctl(_ args: String...) throws -> String {
            let r = try bus.client("playerctl", ["-p", "tonearm"] + args)
            #expect(r.status == 0, "playerctl \(args): \(r.stderr)")
            return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// A property of the player (or root) object, as `dbus-send` prints its value.
        func property(_ name: String, of interface: String = "org.mpris.MediaPlayer2.Player") throws -> String {
            let r = try bus.client("dbus-send", ["--session", "--print-reply", "--dest=org.mpris.MediaPlayer2.tonearm",
                                                 "/org/mpris/MediaPlayer2", "org.freedesktop.DBus.Properties.Get",
                                                 "string:\(interface)", "string:\(name)"])
            #expect(r.status == 0, "Get \(name): \(r.stderr)")
            return r.stdout
        }

        func call(_ method: String, _ args: [String] = []) throws -> RunResult {
            try bus.client("dbus-send", ["--session", "--print-reply", "--dest=org.mpris.MediaPlayer2.tonearm",
                                         "/org/mpris/MediaPlayer2", method] + args)
        }
    }
}
