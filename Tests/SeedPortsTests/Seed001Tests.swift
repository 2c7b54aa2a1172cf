// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import SeedPorts
import Testing
import TonearmCompat
import TonearmTestSupport

/// Seed 001's two view controllers, ported with Apple's names, do what the post means them to:
/// the background player plays the bundled song, pauses when headphones are unplugged (a route
/// change whose previous route's output is "Headphones") and not for another output, and the
/// remote play and pause commands reach it; the music-library controller's query lists the
/// user's library (`MPMediaQuery.songs()` over `MPMediaLibrary.default()`), what it picks
/// becomes the player's queue, and play, next, pause and stop change the player, with the
/// state-change notifications reaching the post's handler.
@Suite(.serialized) final class Seed001Tests: Sendable {
    let dir: TempDir
    init() throws { dir = try TempDir("seed001") }
    deinit { dir.remove() }

    /// A route-change notification as the shared session posts it, its previous route one
    /// output of `type`.
    func postUnplug(_ type: AudioOutputPortType) {
        let route = AudioOutputRoute(name: "jack", description: "Jack", index: 1, isDefault: true, portType: type,
                                     activePort: nil, sampleRate: 48_000, channelCount: 2, monitorSource: "jack.monitor")
        NotificationCenter.default.post(
            name: AVAudioSession.routeChangeNotification, object: AVAudioSession.sharedInstance(),
            userInfo: [AVAudioSessionRouteChangeReasonKey: AVAudioSession.RouteChangeReason.oldDeviceUnavailable.rawValue,
                       AVAudioSessionRouteChangePreviousRouteKey: AVAudioSessionRouteDescription(outputs: [route])])
    }

    @Test func theBackgroundPlayerPausesWhenHeadphonesAreUnpluggedAndFollowsRemoteCommands() async throws {
        try Fixtures.tone(path: dir.file(kMusicFile), codecArgs: ["-c:a", "pcm_s16le", "-f", "wav"], seconds: 3)
        let controller = BackgroundMusicViewController(bundlePath: dir.path, output: { NullOutput() })
        controller.viewDidLoad()
        controller.viewWillAppear()
        defer { controller.viewWillDisappear() }
        #expect(controller.title == kMusicTitle && controller.musicSinger == kMusicSinger)
        let player = try #require(controller.audioPlayer)
        #expect(abs(player.duration - 3) < 0.01)
        #expect(AVAudioSession.sharedInstance().category == .playback)
        controller.playClick()
        #expect(player.isPlaying)
        // Speakers going away change nothing; headphones going away pause.
        postUnplug(.speaker)
        #expect(player.isPlaying)
        postUnplug(.headphones)
        #expect(!player.isPlaying)
        // The remote commands (media keys, the desktop's controls) reach the controller.
        let center = MPRemoteCommandCenter.shared()
        #expect(center.dispatch(center.playCommand) == .success)
        #expect(player.isPlaying)
        #expect(center.dispatch(center.pauseCommand) == .success)
        #expect(!player.isPlaying)
        controller.viewWillDisappear()
        #expect(center.dispatch(center.playCommand) != .success, "no target once the view disappeared")
        controller.viewWillAppear()
    }

    @Test func theLibraryControllerQueuesTheUsersSongsAndDrivesThePlayer() async throws {
        let data = dir.file("data")
        // Songs long enough that none ends by itself while the post's buttons are pressed (the
        // standard library's 0.3 s tracks played through on a loaded machine: "next" then found
        // the player songs further on, and "stop" a queue that had ended).
        let music = dir.file("Music")
        try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
        for (i, title) in ["原来你也在这里", "晴天", "Yesterday", "La Vie en rose"].enumerated() {
            try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=\(330 + 110 * i):sample_rate=44100:duration=30",
                                       "-c:a", "flac", "-metadata", "title=\(title)", "-metadata", "artist=Seed 001",
                                       "-metadata", "album=Songs", "-metadata", "track=\(i + 1)", music + "/\(i + 1).flac"])
        }
        let library = try MediaLibrary(path: data + "/tonearm/library.sqlite")
        _ = try await library.scanToEnd(folders: [music])
        let songs = try MediaQuery.songs().items(in: library)
        #expect(songs.count > 3)
        let controller = MusicLibraryViewController()
        try await ProcessEnvironment.with(["XDG_DATA_HOME": data]) {
            // The post's query and collection read the user's library.
            #expect(controller.getLocalMediaQuery().items?.map(\.persistentID) == songs.map(\.persistentID))
            #expect(controller.getLocalMediaItemCollection().items.map(\.persistentID) == songs.map(\.persistentID))
            controller.selectClick()
            let player = controller.musicPlayer
            #expect(player === MPMusicPlayerController.applicationMusicPlayer)
            #expect(player.queue.items().map(\.persistentID) == songs.map(\.persistentID))
            // The same with the query itself as the queue (setQueueWithQuery:).
            player.setQueue(with: controller.getLocalMediaQuery())
            #expect(player.queue.items().map(\.path) == songs.map(\.path))

            // The post's handler is called on each state change: an observer added after its
            // own hears each notification after it.
            let (heard, sink) = AsyncStream<MPMusicPlaybackState>.makeStream()
            let token = NotificationCenter.default.addObserver(forName: .MPMusicPlayerControllerPlaybackStateDidChange,
                                                               object: player, queue: nil) { _ in sink.yield(player.playbackState) }
            defer { NotificationCenter.default.removeObserver(token) }
            controller.playClick()
            _ = try await waitForEvent(heard, "playing") { $0 == .playing }
            controller.nextClick()
            #expect(player.indexOfNowPlayingItem == 1)
            controller.puaseClick()
            _ = try await waitForEvent(heard, "paused") { $0 == .paused }
            controller.stopClick()
            _ = try await waitForEvent(heard, "stopped") { $0 == .stopped }
            let logged = controller.stateLog
            #expect(Array(logged.reduce(into: [String]()) { if $0.last != $1 { $0.append($1) } }.suffix(3))
                    == ["正在播放...", "播放暂停.", "播放停止."], "\(logged)")
        }
    }
}
