// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCompat

// Seed 004 ("打造 Player 的完整功能"): the post has no listing; its code is the calls it names,
// written here as a music app's player controller makes them, with Apple's names (TonearmCompat):
// a volume control through MPMusicPlayerController and its volume notification; the remote
// commands, set again when a video the app played with AVPlayer has ended (the post's fix for a
// video player that took them); Now Playing from an NSMutableDictionary, the persistent ID an
// NSNumber; the output in use, where AVRoutePickerView would let the user pick. What differs
// from the iOS code, and why:
//   - MPVolumeView and AVRoutePickerView are UIKit views: left out; the slider's action and the
//     route's label are plain methods (UIKit);
//   - `nowPlayingInfo = info` → `= NowPlayingInfo(info)`: Tonearm's info is typed, and Swift
//     converts only a literal (library difference);
//   - `AVAudioSession.currentRoute` is read with `try` and is the output itself, not a route
//     description of outputs (library difference);
//   - `MPMusicPlayerController.applicationMusicPlayer.volume` is the music player's own volume
//     here, where iOS (deprecated since iOS 7) moved the device's; the system volume is
//     `SystemVolume` (library difference, noted on issue 23);
//   - the players' outputs are given by the caller (the tests' silent output), as Seed002's are;
//   - what it does is also noted in `lines` (where an iOS app would update its views), for the tests.
// Of the class's 92 code lines, 21 differ from what an iOS developer writes: 2 for UIKit, 5 for
// the output, 12 for the notes, 2 for library differences (the typed info, the route); and the
// volume's meaning is a third library difference, in a line that is unchanged.

public final class CompletePlayerViewController: @unchecked Sendable {
    public let audioPlayer: AVAudioPlayer
    public var songTitle = "原來你也在這裡"
    public var songArtist = "劉若英"
    public var persistentID: UInt64 = 9_007_199_254_740_993
    public private(set) var volumeSliderValue: Float = 1  // 音量條
    public private(set) var routeLabel = ""  // 輸出裝置
    private var log: [String] = []
    private var videoPlayer: AVPlayer?
    private var observers: [NSObjectProtocol] = []
    private let lock = NSLock()
    private let output: @Sendable () throws -> any AudioOutputDriver

    public init(song: URL, output: @escaping @Sendable () throws -> any AudioOutputDriver) throws {
        self.output = output
        audioPlayer = try AVAudioPlayer(contentsOf: song, output: output)
        audioPlayer.prepareToPlay()
    }

    // Not in the post: what the controller did, for the tests.
    private func say(_ line: String) {
        lock.lock()
        defer { lock.unlock() }
        log.append(line)
    }

    public var lines: [String] {
        lock.lock()
        defer { lock.unlock() }
        return log
    }

    // MARK: 音量控制

    public func setupVolume() {
        let musicPlayer = MPMusicPlayerController.applicationMusicPlayer
        observers.append(NotificationCenter.default.addObserver(
            forName: .MPMusicPlayerControllerVolumeDidChange, object: musicPlayer, queue: nil) { [weak self] _ in
                self?.volumeSliderValue = musicPlayer.volume
                self?.say("音量：\(musicPlayer.volume)")
            })
        musicPlayer.beginGeneratingPlaybackNotifications()
        volumeSliderValue = musicPlayer.volume
    }

    public func volumeSliderChanged(_ value: Float) {
        MPMusicPlayerController.applicationMusicPlayer.volume = value
    }

    // MARK: 遙控器

    public func setupRemoteCommands() {
        let commandCenter = MPRemoteCommandCenter.shared()
        commandCenter.playCommand.removeTarget(nil)
        commandCenter.pauseCommand.removeTarget(nil)
        commandCenter.nextTrackCommand.removeTarget(nil)
        commandCenter.playCommand.addTarget { [weak self] _ in
            self?.audioPlayer.play()
            self?.updateNowPlayingInfo()
            self?.say("遙控：播放")
            return .success
        }
        commandCenter.pauseCommand.addTarget { [weak self] _ in
            self?.audioPlayer.pause()
            self?.updateNowPlayingInfo()
            self?.say("遙控：暫停")
            return .success
        }
        commandCenter.nextTrackCommand.addTarget { [weak self] _ in
            self?.say("遙控：下一首")
            return .success
        }
    }

    /// 播放 MV: when the video ends, the remote commands are set again.
    public func playMusicVideo(url: URL) {
        let item = AVPlayerItem(url: url)
        observers.append(NotificationCenter.default.addObserver(
            forName: .AVPlayerItemDidPlayToEndTime, object: item, queue: nil) { [weak self] _ in
                self?.say("影片結束，重設遙控")
                self?.setupRemoteCommands()
            })
        videoPlayer = AVPlayer(playerItem: item, output: output)
        videoPlayer?.play()
    }

    // MARK: MPNowPlayingInfoCenter

    public func updateNowPlayingInfo() {
        let info = NSMutableDictionary()
        info[MPMediaItemPropertyTitle] = songTitle
        info[MPMediaItemPropertyArtist] = songArtist
        info[MPMediaItemPropertyPersistentID] = NSNumber(value: persistentID)  // 要是 NSNumber，不是字串
        info[MPMediaItemPropertyPlaybackDuration] = audioPlayer.duration
        info[MPNowPlayingInfoPropertyElapsedPlaybackTime] = audioPlayer.currentTime
        info[MPNowPlayingInfoPropertyPlaybackRate] = audioPlayer.isPlaying ? 1.0 : 0.0
        MPNowPlayingInfoCenter.default().nowPlayingInfo = NowPlayingInfo(info)
        // The post's crash: the dictionary edited after it was handed over.
        info[MPMediaItemPropertyTitle] = "(改過的標題)"
        info.removeAllObjects()
    }

    // MARK: AirPlay

    public func showCurrentRoute() {
        let output = (try? AVAudioSession.sharedInstance().currentRoute)?.map(AVAudioSessionPortDescription.init)
        routeLabel = output.map { "\($0.portName) (\($0.portType.rawValue))" } ?? "沒有輸出裝置"
    }

    deinit {
        for o in observers { NotificationCenter.default.removeObserver(o) }
    }
}
