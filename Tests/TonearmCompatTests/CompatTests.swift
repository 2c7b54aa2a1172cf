// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import Testing
import TonearmCompat
import TonearmTestSupport

/// Code written as an iOS developer writes it, with Apple's names, compiles against
/// TonearmCompat and does what it does on iOS (issue 23): an AVAudioPlayer plays a file to its
/// end and its delegate (written with the iOS signature) hears it; AVAudioSession's
/// sharedInstance is the shared session and takes a category; an AVAudioEngine with an
/// AVAudioPlayerNode through a 10-band AVAudioUnitEQ plays a segment of an AVAudioFile and the
/// completion handler fires; CMTime adds, compares and reads seconds as CoreMedia's does; a
/// system sound is created, played and disposed by id.
@Suite(.serialized) final class CompatTests: Sendable {
    let dir: TempDir
    init() throws { dir = try TempDir("compat") }
    deinit { dir.remove() }

    /// An iOS-style delegate: an NSObject subclass with the iOS method.
    final class PlayerWatcher: NSObject, AVAudioPlayerDelegate, @unchecked Sendable {
        let finished = Mutex<[Bool]>([])
        func audioPlayerDidFinishPlaying(_ player: AVAudioPlayer, successfully flag: Bool) {
            finished.withLock { $0.append(flag) }
        }
    }

    @Test func anAVAudioPlayerPlaysToItsEndAndTellsItsDelegate() async throws {
        let path = dir.file("tone.wav")
        try Fixtures.tone(path: path, codecArgs: ["-c:a", "pcm_s16le"], seconds: 0.5, rate: 44_100)
        let session = AVAudioSession.sharedInstance()
        #expect(session === AudioSession.shared)
        try session.setCategory(.playback)
        let out = dir.file("out.wav")
        let player = try AVAudioPlayer(contentsOf: URL(fileURLWithPath: path), output: { FileOutput(path: out) })
        let watcher = PlayerWatcher()
        player.delegate = watcher
        let events = player.events
        #expect(player.prepareToPlay())
        #expect(abs(player.duration - 0.5) < 0.01)
        #expect(player.play())
        _ = try await waitForEvent(events) { if case .didFinishPlaying = $0 { true } else { false } }
        #expect(watcher.finished.withLock { $0 } == [true])
        #expect(try readWAV(out).frameCount == 22_050)
    }

    @Test func anAVAudioEngineSchedulesASegmentThroughAnEQ() async throws {
        let path = dir.file("engine.wav")
        try Fixtures.tone(path: path, codecArgs: ["-c:a", "pcm_f32le"], seconds: 1, rate: 48_000)
        let engine = AVAudioEngine(output: { NullOutput(untimed: true) })
        let playerNode = AVAudioPlayerNode()
        let eq = AVAudioUnitEQ(numberOfBands: 10)
        let effect: AVAudioUnitEffect = eq
        let mixer = engine.mainMixerNode
        let format = mixer.outputFormat(forBus: 0)
        engine.attach(playerNode)
        engine.attach(effect)
        try engine.connect(playerNode, to: effect, format: format)
        try engine.connect(effect, to: mixer, format: format)
        try engine.start()
        let file = try AVAudioFile(forReading: URL(fileURLWithPath: path))
        let frameCount = AVAudioFrameCount(file.length)
        #expect(Double(frameCount) / file.processingFormat.sampleRate == 1)
        let startingFrame = AVAudioFramePosition(0.5 * file.processingFormat.sampleRate)
        let (done, finished) = AsyncStream<Void>.makeStream()
        playerNode.scheduleSegment(file, startingFrame: startingFrame, frameCount: AVAudioFrameCount(file.length - startingFrame), at: nil) {
            finished.yield()
        }
        playerNode.play()
        _ = try await waitForEvent(done, "the segment's completion handler") { _ in true }
        engine.stop()
    }

    @Test func cmTimeAddsComparesAndReadsSecondsAsCoreMediaDoes() {
        let a = CMTimeMake(value: 1, timescale: 3), b = CMTimeMake(value: 1, timescale: 6)
        #expect(CMTimeAdd(a, b) == CMTimeMake(value: 1, timescale: 2))
        #expect((a + b).timescale == 6 && (a + b).value == 3)
        #expect(CMTimeGetSeconds(CMTimeSubtract(a, b)) == 1.0 / 6)
        #expect(CMTimeCompare(a, b) == 1 && CMTimeCompare(b, a) == -1 && CMTimeCompare(a, CMTimeMake(value: 2, timescale: 6)) == 0)
        let t = CMTime(seconds: 1.5, preferredTimescale: 600)
        #expect(t.value == 900 && t.timescale == 600 && t.seconds == 1.5 && t.isNumeric)
        #expect(CMTime(seconds: 1.0 / 3, preferredTimescale: 10).flags.contains(.hasBeenRounded))
        #expect(CMTimeGetSeconds(.invalid).isNaN && !CMTime.invalid.isValid)
        #expect(CMTime.positiveInfinity.seconds == .infinity && CMTime.indefinite.isIndefinite)
        #expect(CMTime.zero < t && t < .positiveInfinity)
    }

    @Test func aSystemSoundIsCreatedPlayedAndDisposedByID() async throws {
        let path = dir.file("click.wav")
        try Fixtures.tone(path: path, codecArgs: ["-c:a", "pcm_s16le"], seconds: 0.1, rate: 44_100)
        var id: SystemSoundID = 0
        #expect(AudioServicesCreateSystemSoundID(URL(fileURLWithPath: path), &id) == 0)
        #expect(id != 0)
        let (played, finish) = AsyncStream<Void>.makeStream()
        AudioServicesPlaySystemSoundWithCompletion(id) { finish.yield() }
        _ = try await waitForEvent(played, "the sound's completion") { _ in true }
        #expect(AudioServicesDisposeSystemSoundID(id) == 0)
        #expect(AudioServicesDisposeSystemSoundID(id) == kAudioServicesBadSpecifierError)
        var missing: SystemSoundID = 0
        #expect(AudioServicesCreateSystemSoundID(URL(fileURLWithPath: dir.file("nosuch.wav")), &missing) != 0)
    }
}

/// The now-playing dictionary as iOS code fills it: a literal with MediaPlayer's keys given to
/// `MPNowPlayingInfoCenter.default().nowPlayingInfo`, then edited by key — read into Tonearm's
/// typed info (what MPRIS publishes); a value of the wrong type for its key is left out.
@Suite struct NowPlayingKeysTests {
    @Test func aDictionaryLiteralAndKeyedEditsFillTheTypedInfo() {
        let center = MPNowPlayingInfoCenter()
        let duration: Double = 215
        center.nowPlayingInfo = [
            MPMediaItemPropertyTitle: "晴天",
            MPMediaItemPropertyArtist: "周杰伦",
            MPMediaItemPropertyPlaybackDuration: duration,
            MPNowPlayingInfoPropertyElapsedPlaybackTime: 12,
            MPNowPlayingInfoPropertyPlaybackRate: NSNumber(value: 1.0),
            MPMediaItemPropertyAlbumTitle: 42,  // the wrong type: left out
        ]
        var info = center.nowPlayingInfo ?? [:]
        #expect(info.title == "晴天" && info.artist == "周杰伦" && info.duration == 215 && info.album == nil)
        #expect(info[MPMediaItemPropertyTitle] as? String == "晴天")
        info[MPNowPlayingInfoPropertyElapsedPlaybackTime] = 30.5
        info[MPNowPlayingInfoPropertyPlaybackRate] = 0.0
        center.nowPlayingInfo = info
        #expect(center.nowPlayingInfo?.playbackRate == 0 && center.nowPlayingInfo?.elapsedTime == 30.5)
        #expect(MPNowPlayingInfoCenter.default() === NowPlayingInfoCenter.default)
    }

    /// Seed 004's pitfalls, fixed by design: the info handed over is a value, so the dictionary
    /// edited afterwards (an `NSMutableDictionary` enumerated on a background thread crashed iOS
    /// apps) changes nothing of the center's; a persistent ID given as a string (iOS passes it on,
    /// and car stereos crashed) is left out, a number kept whole; and values no number can hold
    /// (NaN, infinities, past `Int`) are left out instead of trapping in a conversion.
    @Test func editsAfterHandingOverAndAStringPersistentIDCannotHurt() {
        let center = MPNowPlayingInfoCenter()
        var info: NowPlayingInfo = [MPMediaItemPropertyTitle: "原來你也在這裡", MPMediaItemPropertyPersistentID: "1234567"]
        center.nowPlayingInfo = info
        info[MPMediaItemPropertyTitle] = "別的歌"
        #expect(center.nowPlayingInfo?.title == "原來你也在這裡", "the center holds what it was given")
        #expect(center.nowPlayingInfo?.persistentID == 0, "a string persistent ID is left out")
        info[MPMediaItemPropertyPersistentID] = NSNumber(value: UInt64.max)
        #expect(info.persistentID == UInt64.max)
        info[MPMediaItemPropertyPersistentID] = UInt64(9_007_199_254_740_993)
        #expect(info.persistentID == 9_007_199_254_740_993, "kept whole, not through a Double")
        info[MPMediaItemPropertyPersistentID] = 42
        #expect(info.persistentID == 42)
        info[MPMediaItemPropertyAlbumTrackNumber] = Double.nan
        info[MPNowPlayingInfoPropertyPlaybackQueueCount] = 1e300
        info[MPNowPlayingInfoPropertyPlaybackQueueIndex] = -Double.infinity
        info[MPMediaItemPropertyPlaybackDuration] = Double.infinity
        info[MPNowPlayingInfoPropertyElapsedPlaybackTime] = Double.nan
        #expect(info.albumTrackNumber == nil && info.queueCount == nil && info.queueIndex == nil && info.duration == nil)
        #expect(info.elapsedTime == 0)
    }
}

/// AVPlayerItem's end and MPMusicPlayerController's state changes on NotificationCenter.default,
/// observed as iOS code observes them.
@Suite struct PlayerNotificationTests {
    @Test func anItemThatPlaysToItsEndIsPostedAndAMusicPlayersStateToo() async throws {
        let dir = try TempDir("compat-notes")
        defer { dir.remove() }
        let path = dir.file("short.wav")
        try Fixtures.tone(path: path, codecArgs: ["-c:a", "pcm_s16le"], seconds: 0.2, rate: 44_100)
        let item = AVPlayerItem(url: URL(fileURLWithPath: path))
        let (ends, endSink) = AsyncStream<Void>.makeStream()
        let o1 = NotificationCenter.default.addObserver(forName: .AVPlayerItemDidPlayToEndTime, object: item, queue: nil) { _ in endSink.yield() }
        defer { NotificationCenter.default.removeObserver(o1) }
        let player = AVPlayer(playerItem: item, output: { NullOutput(untimed: true) })
        player.play()
        _ = try await waitForEvent(ends, "AVPlayerItemDidPlayToEndTime") { _ in true }

        let music = MPMusicPlayerController(output: { NullOutput(untimed: true) }, session: nil)
        let (states, stateSink) = AsyncStream<Void>.makeStream()
        let o2 = NotificationCenter.default.addObserver(forName: .MPMusicPlayerControllerPlaybackStateDidChange, object: music, queue: nil) { _ in
            stateSink.yield()
        }
        defer { NotificationCenter.default.removeObserver(o2) }
        music.beginGeneratingPlaybackNotifications()
        music.setQueue(with: [QueueItem(path: path)])
        music.play()
        _ = try await waitForEvent(states, "MPMusicPlayerControllerPlaybackStateDidChange") { _ in true }
        music.endGeneratingPlaybackNotifications()
    }
}
