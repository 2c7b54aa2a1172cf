// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import Testing
import TonearmCore
import TonearmMPRIS
import TonearmNowPlaying
import TonearmTestSupport

/// A small player model driven by the remote commands: it updates the info center as a real
/// player would. Targets run on the MPRIS service's D-Bus thread.
final class ModelPlayer: Sendable {
    let info = NowPlayingInfoCenter()
    let commands = RemoteCommandCenter()
    let tracks: [NowPlayingInfo]
    private let index = Mutex(0)

    static let cover = Artwork(data: Array("not really a PNG, but bytes all the same".utf8), mimeType: "image/png")

    init() {
        tracks = [
            NowPlayingInfo(title: "First Light", artist: "The Testers", album: "Signals", albumArtist: "The Testers",
                           artwork: Self.cover, duration: 215.5, persistentID: 1001, queueIndex: 0, queueCount: 3,
                           trackURL: URL(fileURLWithPath: "/music/first light.flac")),
            NowPlayingInfo(title: "Second Wind", artist: "The Testers", album: "Signals", duration: 180,
                           persistentID: 1002, queueIndex: 1, queueCount: 3, albumTrackNumber: 8),
            NowPlayingInfo(title: "Third Time", artist: "Другой", album: "Signals", duration: 120,
                           persistentID: 18_446_744_073_709_551_615, queueIndex: 2, queueCount: 3),
        ]
        let info = info
        load(0)
        info.playbackState = .paused
        commands.play.addTarget { _ in info.playbackState = .playing; return .success }
        commands.pause.addTarget { _ in info.playbackState = .paused; return .success }
        commands.togglePlayPause.addTarget { _ in
            info.playbackState = info.playbackState == .playing ? .paused : .playing
            return .success
        }
        commands.stop.addTarget { _ in info.playbackState = .stopped; return .success }
        commands.nextTrack.addTarget { [weak self] _ in self?.skip(by: 1) ?? .commandFailed }
        commands.previousTrack.addTarget { [weak self] _ in self?.skip(by: -1) ?? .commandFailed }
        commands.changePlaybackPosition.addTarget { e in info.didSeek(to: e.positionTime); return .success }
        commands.changeRepeatMode.addTarget { e in info.repeatType = e.repeatType; return .success }
        commands.changeShuffleMode.addTarget { e in info.shuffleType = e.shuffleType; return .success }
        commands.changeVolume.addTarget { e in info.volume = e.volume; return .success }
        commands.changePlaybackRate.addTarget { e in
            info.nowPlayingInfo?.playbackRate = e.playbackRate
            return .success
        }
    }

    var currentIndex: Int { index.withLock { $0 } }

    private func load(_ i: Int) {
        index.withLock { $0 = i }
        info.nowPlayingInfo = tracks[i]
    }

    private func skip(by delta: Int) -> RemoteCommandHandlerStatus {
        let next = currentIndex + delta
        guard tracks.indices.contains(next) else { return .noSuchContent }
        load(next)
        return .success
    }
}

/// A private bus, a model player and the service publishing it (one per test).
final class Fixture: Sendable {
    let bus: PrivateDBus
    let player = ModelPlayer()
    let service: MPRISService
    let artDirectory: TempDir

    init(start: Bool = true) throws {
        bus = try PrivateDBus()
        artDirectory = try TempDir("tonearm-art")
        service = MPRISService(busName: "tonearm", identity: "Tonearm Test", supportedUriSchemes: ["file", "http"],
                               infoCenter: player.info,
                               commandCenter: player.commands, busAddress: bus.address,
                               artworkCacheDirectory: artDirectory.path)
        if start { try service.start() }
    }

    /// `playerctl -p tonearm ARGS`, its standard output trimmed; records a failure on a non-zero exit.
    @discardableResult
    func playerctl(_ args: String..., sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let r = try run("playerctl", ["-p", "tonearm"] + args, environment: bus.environment)
        #expect(r.status == 0, "playerctl \(args): \(r.stderr)", sourceLocation: sourceLocation)
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A method call with `dbus-send`, to the service's name and object.
    func dbusSend(_ method: String, _ args: [String]) throws -> RunResult {
        try bus.client("dbus-send", ["--session", "--print-reply", "--dest=org.mpris.MediaPlayer2.tonearm",
                                     "/org/mpris/MediaPlayer2", method] + args)
    }

    func stop() {
        service.stop()
        bus.stop()
        artDirectory.remove()
    }
}

@Suite struct MPRISTests {
    @Test func startWithoutABusThrowsTheTypedError() throws {
        let dir = try TempDir("tonearm-nobus")
        defer { dir.remove() }
        let service = MPRISService(infoCenter: NowPlayingInfoCenter(), commandCenter: RemoteCommandCenter(),
                                   busAddress: "unix:path=\(dir.path)/no-such-bus.sock")
        do {
            try service.start()
            Issue.record("start() succeeded without a bus")
        } catch {
            guard case .noSessionBus = error else {
                Issue.record("expected noSessionBus, got \(error)")
                return
            }
        }
        #expect(!service.isRunning)
        #expect(service.busName == nil)
        service.stop() // harmless
    }

    @Test func metadataIsPublished() throws {
        let f = try Fixture()
        defer { f.stop() }
        #expect(f.service.busName == "org.mpris.MediaPlayer2.tonearm")
        let line = try f.playerctl("metadata", "--format",
                                   "{{title}}|{{artist}}|{{album}}|{{mpris:length}}|{{mpris:trackid}}|{{mpris:artUrl}}|{{xesam:url}}")
        let parts = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        try #require(parts.count == 7, "\(line)")
        #expect(parts[0] == "First Light")
        #expect(parts[1] == "The Testers")
        #expect(parts[2] == "Signals")
        #expect(parts[3] == "215500000")
        // playerctl prints an object path as GVariant text, quoted.
        #expect(parts[4].trimmingCharacters(in: ["'"]) == "/org/tonearm/track/1001")
        let art = try #require(URL(string: parts[5]))
        #expect(art.isFileURL)
        #expect(art.path.hasPrefix(f.artDirectory.path))
        let bytes = try Data(contentsOf: art)
        #expect(Array(bytes) == ModelPlayer.cover.data)
        #expect(parts[6] == "file:///music/first%20light.flac")
        // The plain listing shows the keys too.
        let all = try f.playerctl("metadata")
        #expect(all.contains("xesam:title") && all.contains("First Light"))
    }

    @Test func playPauseAndStatusAreFollowed() async throws {
        let f = try Fixture()
        defer { f.stop() }
        #expect(try f.playerctl("status") == "Paused")
        let follower = try f.bus.follow("playerctl", ["-p", "tonearm", "-F", "status"])
        defer { follower.terminate(SIGTERM) }
        @Sendable func lines(_ o: ChildProcess.CapturedOutput) -> [String] { o.text.split(separator: "\n").map(String.init) }
        // The follower prints the current status first: then it listens.
        #expect(await follower.waitForStandardOutput(timeout: 10) { lines($0).contains("Paused") })
        try f.playerctl("play-pause")
        #expect(f.player.info.playbackState == .playing)
        #expect(await follower.waitForStandardOutput(timeout: 10) { lines($0).contains("Playing") })
        try f.playerctl("play-pause")
        #expect(await follower.waitForStandardOutput(timeout: 10) { lines($0).filter { $0 == "Paused" }.count >= 2 })
        try f.playerctl("play")
        #expect(try f.playerctl("status") == "Playing")
        try f.playerctl("stop")
        #expect(await follower.waitForStandardOutput(timeout: 10) { lines($0).contains("Stopped") })
    }

    /// Issue 23: code ported from iOS sets the info's playback rate (1 playing, 0 paused) and
    /// never `playbackState`: the desktop (playerctl) follows it.
    @Test func theInfosRateAloneIsFollowedAsOnIOS() throws {
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let info = NowPlayingInfoCenter(), commands = RemoteCommandCenter()
        commands.play.addTarget { _ in .success }
        let service = MPRISService(busName: "tonearm", identity: "Tonearm Test", infoCenter: info, commandCenter: commands,
                                   busAddress: bus.address)
        try service.start()
        defer { service.stop() }
        func status() throws -> String {
            try run("playerctl", ["-p", "tonearm", "status"], environment: bus.environment).stdout
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        info.nowPlayingInfo = NowPlayingInfo(title: "Seed", duration: 100, elapsedTime: 5, playbackRate: 1)
        #expect(try status() == "Playing")
        info.nowPlayingInfo = NowPlayingInfo(title: "Seed", duration: 100, elapsedTime: 7, playbackRate: 0)
        #expect(try status() == "Paused")
        let position = try run("playerctl", ["-p", "tonearm", "position"], environment: bus.environment).stdout
        #expect(Double(position.trimmingCharacters(in: .whitespacesAndNewlines)) == 7, "\(position)")
    }

    @Test func nextAndPreviousChangeTheTrack() async throws {
        let f = try Fixture()
        defer { f.stop() }
        let follower = try f.bus.follow("playerctl", ["-p", "tonearm", "-F", "metadata", "--format", "{{title}}"])
        defer { follower.terminate(SIGTERM) }
        #expect(await follower.waitForStandardOutput(timeout: 10) { $0.text.contains("First Light") })
        try f.playerctl("next")
        #expect(f.player.currentIndex == 1)
        #expect(await follower.waitForStandardOutput(timeout: 10) { $0.text.contains("Second Wind") })
        try f.playerctl("next")
        #expect(try f.playerctl("metadata", "mpris:trackid").trimmingCharacters(in: ["'"]) == "/org/tonearm/track/18446744073709551615")
        #expect(try f.playerctl("metadata", "artist") == "Другой")
        try f.playerctl("previous")
        try f.playerctl("previous")
        #expect(f.player.currentIndex == 0)
        #expect(try f.playerctl("metadata", "title") == "First Light")
        // There is nothing before the first track: the target's status comes back as an error.
        let r = try await run("playerctl", ["-p", "tonearm", "previous"], environment: f.bus.environment)
        #expect(r.status != 0 || r.stderr.contains("NoSuchContent"))
        #expect(f.player.currentIndex == 0)
    }

    @Test func positionVolumeLoopAndShuffleAreSet() throws {
        let f = try Fixture()
        defer { f.stop() }
        try f.playerctl("position", "30")
        let position = try #require(Double(try f.playerctl("position")))
        #expect(position >= 30 && position < 31, "\(position)")
        #expect(f.player.info.nowPlayingInfo?.elapsedTime == 30)

        try f.playerctl("volume", "0.5")
        #expect(f.player.info.volume == 0.5)
        #expect(try Double(f.playerctl("volume")) == 0.5)

        try f.playerctl("loop", "Track")
        #expect(f.player.info.repeatType == .one)
        #expect(try f.playerctl("loop") == "Track")
        try f.playerctl("loop", "Playlist")
        #expect(f.player.info.repeatType == .all)

        try f.playerctl("shuffle", "On")
        #expect(f.player.info.shuffleType == .songs)
        #expect(try f.playerctl("shuffle") == "On")
        try f.playerctl("shuffle", "Off")
        #expect(f.player.info.shuffleType == .off)
    }

    @Test func capabilitiesFollowTheCommandsAndTheirOwner() async throws {
        let f = try Fixture()
        defer { f.stop() }
        func canGoNext() throws -> String {
            let r = try f.bus.client("gdbus", ["call", "--session", "--dest", "org.mpris.MediaPlayer2.tonearm",
                                               "--object-path", "/org/mpris/MediaPlayer2", "--method",
                                               "org.freedesktop.DBus.Properties.Get", "org.mpris.MediaPlayer2.Player",
                                               "CanGoNext"])
            return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(try canGoNext() == "(<true>,)")
        f.player.commands.nextTrack.isEnabled = false
        #expect(try canGoNext() == "(<false>,)")
        f.player.commands.nextTrack.isEnabled = true
        // A temporary owner with only play/pause takes the commands: no next track while it is on top.
        let video = f.player.commands.pushOwner("video")
        f.player.commands.togglePlayPause.addTarget(owner: video) { _ in .success }
        #expect(try canGoNext() == "(<false>,)")
        let r = try await run("playerctl", ["-p", "tonearm", "next"], environment: f.bus.environment)
        #expect(r.status != 0)
        #expect(f.player.currentIndex == 0)
        video.release()
        #expect(try canGoNext() == "(<true>,)")
        try f.playerctl("next")
        #expect(f.player.currentIndex == 1)
    }

    @Test func badCallsGetErrorRepliesAndTheServiceGoesOn() throws {
        let f = try Fixture()
        defer { f.stop() }
        let props = "org.freedesktop.DBus.Properties"
        let player = "string:org.mpris.MediaPlayer2.Player"
        let cases: [(String, [String], String)] = [
            ("\(props).Set", [player, "string:PlaybackStatus", "variant:string:Playing"], "PropertyReadOnly"),
            ("\(props).Set", ["string:org.mpris.MediaPlayer2", "string:Identity", "variant:string:x"], "PropertyReadOnly"),
            ("\(props).Set", [player, "string:Volume", "variant:string:loud"], "InvalidArgs"),
            ("\(props).Set", [player, "string:LoopStatus", "variant:string:Sometimes"], "InvalidArgs"),
            ("\(props).Set", [player, "string:Rate", "variant:double:1000"], "InvalidArgs"),
            ("\(props).Set", [player, "string:Colour", "variant:string:red"], "UnknownProperty"),
            ("\(props).Get", [player, "string:Colour"], "UnknownProperty"),
            ("\(props).Get", ["int32:4", "string:Volume"], "InvalidArgs"),
            ("\(props).GetAll", ["string:org.example.Nothing"], "UnknownInterface"),
            ("org.mpris.MediaPlayer2.Player.SetPosition", ["objpath:/org/tonearm/track/999", "int64:1000000"], "InvalidArgs"),
            ("org.mpris.MediaPlayer2.Player.SetPosition", ["objpath:/org/tonearm/track/1001", "int64:-5"], "InvalidArgs"),
            ("org.mpris.MediaPlayer2.Player.Seek", ["string:far"], "InvalidArgs"),
            ("org.mpris.MediaPlayer2.Player.OpenUri", ["string:file:///x.mp3"], "NotSupported"),
            ("org.mpris.MediaPlayer2.Player.Dance", [], "UnknownMethod"),
            ("org.mpris.MediaPlayer2.Quit", [], "NotSupported"),
            ("org.example.Nothing.Call", [], "UnknownInterface"),
        ]
        for (method, args, expected) in cases {
            let r = try f.dbusSend(method, args)
            #expect(r.status != 0, "\(method) \(args) succeeded: \(r.stdout)")
            #expect(r.stderr.contains(expected), "\(method) \(args): \(r.stderr)")
        }
        // Still answering, with unchanged state.
        #expect(try f.playerctl("status") == "Paused")
        #expect(f.player.info.volume == 1)
        // And a good Set through dbus-send works.
        let ok = try f.dbusSend("\(props).Set", [player, "string:Volume", "variant:double:0.25"])
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(f.player.info.volume == 0.25)
    }

    @Test func introspectionIsValidAndComplete() throws {
        let f = try Fixture()
        defer { f.stop() }
        let r = try f.bus.client("gdbus", ["introspect", "--session", "--dest", "org.mpris.MediaPlayer2.tonearm",
                                           "--object-path", "/org/mpris/MediaPlayer2"])
        #expect(r.status == 0, "\(r.stderr)")
        for name in ["interface org.mpris.MediaPlayer2 ", "interface org.mpris.MediaPlayer2.Player ",
                     "interface org.freedesktop.DBus.Properties ", "SetPosition(", "Seeked(x Position)",
                     "readwrite s LoopStatus", "readonly a{sv} Metadata"] {
            #expect(r.stdout.contains(name), "\(name)")
        }
        let root = try f.bus.client("gdbus", ["call", "--session", "--dest", "org.mpris.MediaPlayer2.tonearm",
                                              "--object-path", "/org/mpris/MediaPlayer2", "--method",
                                              "org.freedesktop.DBus.Properties.GetAll", "org.mpris.MediaPlayer2"])
        #expect(root.stdout.contains("'Identity': <'Tonearm Test'>"), "\(root.stdout)")
        #expect(root.stdout.contains("'CanQuit': <false>"))
    }

    @Test func trackNumberIsTheTracksOwnAndOmittedWhenUnknown() throws {
        let f = try Fixture()
        defer { f.stop() }
        // The first track has no number: none is published (not its queue position).
        #expect(!(try f.playerctl("metadata")).contains("xesam:trackNumber"))
        try f.playerctl("next")
        // Track 8 of its album, second in the queue.
        #expect(try f.playerctl("metadata", "xesam:trackNumber") == "8")
    }

    @Test func quitOpenUriAndRateReachTheirCommands() throws {
        let f = try Fixture()
        defer { f.stop() }
        let opened = Mutex<[URL]>([]), quits = Mutex(0)
        f.player.commands.openURL.addTarget { e in opened.withLock { $0.append(e.url) }; return .success }
        f.player.commands.quit.addTarget { _ in quits.withLock { $0 += 1 }; return .success }
        let root = try f.bus.client("gdbus", ["call", "--session", "--dest", "org.mpris.MediaPlayer2.tonearm",
                                              "--object-path", "/org/mpris/MediaPlayer2", "--method",
                                              "org.freedesktop.DBus.Properties.GetAll", "org.mpris.MediaPlayer2"])
        #expect(root.stdout.contains("'CanQuit': <true>"), "\(root.stdout)")
        // `playerctl open` of a file (its path escaped) and of an address; a scheme not offered is refused.
        try f.playerctl("open", "file:///music/a%20b.flac")
        try f.playerctl("open", "http://example.com/r%C3%BC.mp3")
        #expect(opened.withLock { $0 } == [URL(fileURLWithPath: "/music/a b.flac"), URL(string: "http://example.com/r%C3%BC.mp3")!])
        let refused = try f.dbusSend("org.mpris.MediaPlayer2.Player.OpenUri", ["string:https://example.com/x.mp3"])
        #expect(refused.status != 0 && refused.stderr.contains("SupportedUriSchemes"), "\(refused.stderr)")
        let quit = try f.dbusSend("org.mpris.MediaPlayer2.Quit", [])
        #expect(quit.status == 0, "\(quit.stderr)")
        #expect(quits.withLock { $0 } == 1)
        // Rate: the default 0.5…2, a write reaches the command, and the rate is kept while paused.
        let props = "org.freedesktop.DBus.Properties"
        #expect(try f.dbusSend("\(props).Get", ["string:org.mpris.MediaPlayer2.Player", "string:MinimumRate"]).stdout.contains("double 0.5"))
        let set = try f.dbusSend("\(props).Set", ["string:org.mpris.MediaPlayer2.Player", "string:Rate", "variant:double:1.5"])
        #expect(set.status == 0, "\(set.stderr)")
        f.player.info.nowPlayingInfo?.playbackRate = 0
        f.player.info.nowPlayingInfo?.defaultPlaybackRate = 1.5
        #expect(try f.dbusSend("\(props).Get", ["string:org.mpris.MediaPlayer2.Player", "string:Rate"]).stdout.contains("double 1.5"))
    }

    @Test func seekedIsSignalled() async throws {
        let f = try Fixture()
        defer { f.stop() }
        let monitor = try f.bus.follow("dbus-monitor", ["--session", "type='signal',member='Seeked'"])
        defer { monitor.terminate(SIGTERM) }
        // dbus-monitor prints the NameAcquired signal of its own connection once it listens.
        #expect(await monitor.waitForStandardOutput(timeout: 10) { $0.text.contains("NameAcquired") })
        f.player.info.didSeek(to: 42)
        #expect(await monitor.waitForStandardOutput(timeout: 10) { $0.text.contains("int64 42000000") })
    }

    @Test func aTakenNameGetsAnInstanceSuffix() throws {
        let f = try Fixture()
        defer { f.stop() }
        let second = MPRISService(busName: "tonearm", infoCenter: NowPlayingInfoCenter(), commandCenter: RemoteCommandCenter(),
                                  busAddress: f.bus.address, artworkCacheDirectory: f.artDirectory.path)
        try second.start()
        defer { second.stop() }
        #expect(second.busName == "org.mpris.MediaPlayer2.tonearm.instance\(getpid())")
        second.stop()
        #expect(second.busName == nil)
        #expect(throws: MPRISError.alreadyRunning) {
            try f.service.start()
        }
    }

    /// A video's service takes the well-known name from the player that has it, which waits in
    /// the bus's queue under its instance name and gets the name back when the video's service
    /// stops: calls to `org.mpris.MediaPlayer2.tonearm` reach the video, then the music again.
    /// (Both services are in this process, which `playerctl` shows as one player: the calls are
    /// made with `dbus-send`; `VideoSessionCLITests` drives two processes with `playerctl`.)
    @Test func aServiceThatTakesOverTheNameGivesItBackWhenItStops() async throws {
        let f = try Fixture()
        defer { f.stop() }
        #expect(f.service.busName == "org.mpris.MediaPlayer2.tonearm")
        let owners = try f.bus.follow("dbus-monitor", ["--session", "type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged'"])
        defer { owners.terminate(SIGTERM) }
        // dbus-monitor prints the NameAcquired signal of its own connection once it listens.
        #expect(await owners.waitForStandardOutput(timeout: 10) { $0.text.contains("NameAcquired") })
        let videoInfo = NowPlayingInfoCenter(), videoCommands = RemoteCommandCenter()
        videoInfo.nowPlayingInfo = NowPlayingInfo(title: "The Clip", duration: 30, persistentID: 7)
        let paused = Mutex(false)
        videoCommands.pause.addTarget { _ in paused.withLock { $0 = true }; return .success }
        let video = MPRISService(busName: "tonearm", infoCenter: videoInfo, commandCenter: videoCommands,
                                 busAddress: f.bus.address, artworkCacheDirectory: f.artDirectory.path, takesOverName: true)
        try video.start()
        #expect(video.busName == "org.mpris.MediaPlayer2.tonearm")
        let metadata = ["string:org.mpris.MediaPlayer2.Player", "string:Metadata"]
        #expect(try f.dbusSend("org.freedesktop.DBus.Properties.Get", metadata).stdout.contains("The Clip"))
        #expect(try f.dbusSend("org.mpris.MediaPlayer2.Player.Pause", []).status == 0)
        #expect(paused.withLock { $0 })
        #expect(f.player.info.playbackState == .paused)
        // The music's service waits under its instance name.
        let instance = "org.mpris.MediaPlayer2.tonearm.instance\(getpid())"
        #expect(await owners.waitForStandardOutput(timeout: 10) { $0.text.contains("\"\(instance)\"") })

        video.stop()
        // The bus gives the name back (its owner changes a second time) and the instance name goes.
        #expect(await owners.waitForStandardOutput(timeout: 10) { out in
            out.text.components(separatedBy: "string \"org.mpris.MediaPlayer2.tonearm\"").count - 1 >= 2
                && out.text.components(separatedBy: "string \"\(instance)\"").count - 1 >= 2
        }, "\(owners.standardOutputText)")
        #expect(f.service.busName == "org.mpris.MediaPlayer2.tonearm")
        #expect(try f.dbusSend("org.freedesktop.DBus.Properties.Get", metadata).stdout.contains("First Light"))
        #expect(try f.dbusSend("org.mpris.MediaPlayer2.Player.Play", []).status == 0)
        #expect(f.player.info.playbackState == .playing)
    }

    @Test func theServiceSurvivesTheBusGoingAway() throws {
        let f = try Fixture()
        defer { f.stop() }
        f.bus.stop()
        // The D-Bus thread sees the hang-up (or the changes below) and ends; this process goes on,
        // and stop() returns.
        f.player.info.playbackState = .playing
        f.service.stop()
        #expect(!f.service.isRunning)
    }
}
