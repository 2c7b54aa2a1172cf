// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Synchronization
import TonearmCompat

// Seed 000 ("iOS 音訊與影片播放"): every listing of the post — the system-sound player, the
// AVAudioPlayer music player with its delegate, the session set-up, Now Playing and the remote
// commands, the AVPlayer stream player observed by KVO and a periodic time observer, the
// AVPlayerViewController and AVPlayerLayer video players, and the interruption and route-change
// handlers — copied as they are, in the post's order, with Apple's names (TonearmCompat). The
// post's loose functions that use `audioPlayer` are in extensions of its MusicPlayer (their
// `self`). What had to change, and why:
//   - the imports (6): AudioToolbox, AVFoundation, MediaPlayer and AVKit → `import TonearmCompat`;
//   - UIKit (9): `UIImage` artwork → the cover's bytes (`MPMediaItemArtwork`, 2 lines); the
//     `UIViewController`s → plain classes (`override`/`super` calls of the view's life cycle and
//     `@IBAction` dropped, 7 lines), with UIKit's `present(_:animated:completion:)` and a root
//     `view` (its bounds, and a layer whose `addSublayer` opens the Tonearm window) as small
//     stand-ins; `// 更新 UI` → the time kept in `progress` (an added line);
//   - the app bundle, the output and the address (5): `Bundle.main` → the bundle given to
//     `init` (a folder the test makes), the AVAudioPlayer's output given as in seeds 001/002
//     (the test's private PulseAudio), the video's `https://example.com` → the address given;
//   - the Objective-C runtime (14): `addObserver(self, selector: #selector(…))` (12 lines) → the
//     block form keeping its tokens (8), `@objc` dropped (2);
//   - Linux has no KVO (1): the stream player conforms to `NSKeyValueObserving` (TonearmCompat's
//     protocol with `observeValue`'s signature: nothing can call a method by its name here), so
//     its `observeValue` overrides nothing (`override` dropped) — see KeyValueObserving.swift;
//   - the post's own mistakes (2): `class StreamPlayer` overrides `observeValue` without a
//     superclass (its line also takes the KVO protocol, which is `Sendable`: its observers are
//     called on the layer's queue), and `AudioServicesDisposeOfSystemSoundID` is not Apple's
//     name (`AudioServicesDisposeSystemSoundID`); `playNextTrack`/`playPreviousTrack` are not in the post (added, minimal); the usage
//     example's top-level code → a function (a library has none);
//   - library differences (2): Tonearm's `AVAudioPlayerDelegate` is `Sendable` (its methods
//     come from the player's thread), so the delegate class is `@unchecked Sendable`; and
//     `nowPlayingInfo` is a typed `NowPlayingInfo` (a `[String: Any]` variable does not
//     convert; the dictionary literal does).
// Counted by a line diff of the listings against this file (blank and comment lines aside): 39
// of the 289 code lines changed or left out, 81 lines new or changed here (the stand-ins, the
// initialisers and the extensions' lines most of them); 2 for library differences.

// The post reports what happens by printing; its prints also go to `seed000Log`, so that the
// tests can wait for them (test support, not part of the port).
fileprivate func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    let line = items.map { "\($0)" }.joined(separator: separator)
    Swift.print(line, terminator: terminator)
    seed000Log.append(line)
}

/// The lines the port has printed, as an async sequence per reader (from the moment it asks).
final class Seed000Log: Sendable {
    private let state = Mutex<(lines: [String], readers: [UInt64: AsyncStream<String>.Continuation], next: UInt64)>(([], [:], 0))

    func append(_ line: String) {
        let readers = state.withLock { s in
            s.lines.append(line)
            return Array(s.readers.values)
        }
        for r in readers { r.yield(line) }
    }

    var lines: [String] { state.withLock { $0.lines } }

    /// The lines printed from now on.
    func stream() -> AsyncStream<String> {
        let (stream, c) = AsyncStream<String>.makeStream()
        let id = state.withLock { s in
            defer { s.next += 1 }
            s.readers[s.next] = c
            return s.next
        }
        c.onTermination = { [weak self] _ in _ = self?.state.withLock { $0.readers.removeValue(forKey: id) } }
        return stream
    }
}

let seed000Log = Seed000Log()

// MARK: - System Sound：播放簡短音效

class SoundEffectPlayer {
    var soundID: SystemSoundID = 0
    let bundle: Bundle

    init(bundle: Bundle) { self.bundle = bundle }

    func loadSound(filename: String, ext: String) {
        if let soundURL = bundle.url(forResource: filename, withExtension: ext) {
            AudioServicesCreateSystemSoundID(soundURL as CFURL, &soundID)
        }
    }

    func playSound() {
        AudioServicesPlaySystemSound(soundID)
    }

    func playWithVibrate() {
        // 播放音效同時震動
        AudioServicesPlayAlertSound(soundID)
    }

    deinit {
        // 釋放資源
        AudioServicesDisposeSystemSoundID(soundID)
    }
}

// 使用範例
func soundEffectExample(bundle: Bundle) -> SoundEffectPlayer {
    let player = SoundEffectPlayer(bundle: bundle)
    player.loadSound(filename: "button_click", ext: "wav")
    player.playSound()
    return player
}

// MARK: - AVAudioPlayer：播放本地音訊檔案

class MusicPlayer: NSObject, AVAudioPlayerDelegate, @unchecked Sendable {
    var audioPlayer: AVAudioPlayer?
    let bundle: Bundle
    let output: (@Sendable () throws -> any AudioOutputDriver)?
    var observers: [NSObjectProtocol] = []

    init(bundle: Bundle, output: (@Sendable () throws -> any AudioOutputDriver)? = nil) {
        self.bundle = bundle
        self.output = output
    }

    func loadMusic(filename: String) {
        guard let url = bundle.url(forResource: filename, withExtension: "mp3") else {
            print("找不到檔案")
            return
        }

        do {
            audioPlayer = try output.map { try AVAudioPlayer(contentsOf: url, output: $0) } ?? AVAudioPlayer(contentsOf: url)
            audioPlayer?.delegate = self
            audioPlayer?.prepareToPlay()  // 預載，減少播放延遲

            print("音訊長度：\(audioPlayer?.duration ?? 0) 秒")

        } catch {
            print("載入失敗：\(error)")
        }
    }

    func play() {
        audioPlayer?.play()
    }

    func pause() {
        audioPlayer?.pause()
    }

    func stop() {
        audioPlayer?.stop()
        audioPlayer?.currentTime = 0  // 重設到開頭
    }

    func setVolume(_ volume: Float) {
        // 0.0 到 1.0
        audioPlayer?.volume = volume
    }

    func seek(to time: TimeInterval) {
        audioPlayer?.currentTime = time
    }

    func enableLoop(_ enable: Bool) {
        audioPlayer?.numberOfLoops = enable ? -1 : 0  // -1 表示無限循環
    }

    // 播放完成時呼叫
    func audioPlayerDidFinishPlaying(_ player: AVAudioPlayer, successfully flag: Bool) {
        print("播放完成")
        // 可以在這裡自動播放下一首
    }

    // 播放中斷時呼叫（如來電）
    func audioPlayerBeginInterruption(_ player: AVAudioPlayer) {
        print("播放被中斷")
    }

    func audioPlayerEndInterruption(_ player: AVAudioPlayer, withOptions flags: Int) {
        print("中斷結束，可以恢復播放")
        audioPlayer?.play()
    }

    deinit {
        for observer in observers { NotificationCenter.default.removeObserver(observer) }
    }
}

extension MusicPlayer {
    // MARK: 音訊 Session 配置

    func configureAudioSession() {
        do {
            let audioSession = AVAudioSession.sharedInstance()

            // 設定類別
            try audioSession.setCategory(.playback, mode: .default)

            // 啟用 session
            try audioSession.setActive(true)

        } catch {
            print("設定 Audio Session 失敗：\(error)")
        }
    }

    func configureBackgroundPlayback() {
        do {
            let audioSession = AVAudioSession.sharedInstance()
            try audioSession.setCategory(.playback, mode: .default, options: [])
            try audioSession.setActive(true)

        } catch {
            print("設定背景播放失敗：\(error)")
        }
    }

    // MARK: 整合控制中心和鎖定畫面

    func setupNowPlaying(title: String, artist: String, artwork: MPMediaItemArtwork?, duration: TimeInterval) {
        var nowPlayingInfo: NowPlayingInfo = [
            MPMediaItemPropertyTitle: title,
            MPMediaItemPropertyArtist: artist,
            MPMediaItemPropertyPlaybackDuration: duration,
            MPNowPlayingInfoPropertyElapsedPlaybackTime: audioPlayer?.currentTime ?? 0,
            MPNowPlayingInfoPropertyPlaybackRate: audioPlayer?.isPlaying == true ? 1.0 : 0.0
        ]

        // 設定專輯封面
        if let artwork = artwork {
            let artworkImage = artwork
            nowPlayingInfo[MPMediaItemPropertyArtwork] = artworkImage
        }

        MPNowPlayingInfoCenter.default().nowPlayingInfo = nowPlayingInfo
    }

    func setupRemoteControls() {
        let commandCenter = MPRemoteCommandCenter.shared()

        // 播放按鈕
        commandCenter.playCommand.isEnabled = true
        commandCenter.playCommand.addTarget { [weak self] _ in
            self?.audioPlayer?.play()
            self?.updateNowPlayingPlaybackRate(1.0)
            return .success
        }

        // 暫停按鈕
        commandCenter.pauseCommand.isEnabled = true
        commandCenter.pauseCommand.addTarget { [weak self] _ in
            self?.audioPlayer?.pause()
            self?.updateNowPlayingPlaybackRate(0.0)
            return .success
        }

        // 下一首
        commandCenter.nextTrackCommand.isEnabled = true
        commandCenter.nextTrackCommand.addTarget { [weak self] _ in
            self?.playNextTrack()
            return .success
        }

        // 上一首
        commandCenter.previousTrackCommand.isEnabled = true
        commandCenter.previousTrackCommand.addTarget { [weak self] _ in
            self?.playPreviousTrack()
            return .success
        }

        // 調整播放位置
        commandCenter.changePlaybackPositionCommand.isEnabled = true
        commandCenter.changePlaybackPositionCommand.addTarget { [weak self] event in
            if let event = event as? MPChangePlaybackPositionCommandEvent {
                self?.audioPlayer?.currentTime = event.positionTime
                return .success
            }
            return .commandFailed
        }
    }

    func updateNowPlayingPlaybackRate(_ rate: Double) {
        var nowPlayingInfo = MPNowPlayingInfoCenter.default().nowPlayingInfo ?? [:]
        nowPlayingInfo[MPNowPlayingInfoPropertyPlaybackRate] = rate
        nowPlayingInfo[MPNowPlayingInfoPropertyElapsedPlaybackTime] = audioPlayer?.currentTime
        MPNowPlayingInfoCenter.default().nowPlayingInfo = nowPlayingInfo
    }

    // Not in the post: the app's own queue.
    func playNextTrack() { print("下一首") }
    func playPreviousTrack() { print("上一首") }
}

// MARK: - AVPlayer：播放網路音訊和影片

class StreamPlayer: NSKeyValueObserving, @unchecked Sendable {
    var player: AVPlayer?
    var playerItem: AVPlayerItem?
    var timeObserver: Any?
    var progress: Double = 0

    func playStream(url: String) {
        guard let streamURL = URL(string: url) else { return }

        playerItem = AVPlayerItem(url: streamURL)
        player = AVPlayer(playerItem: playerItem)

        // 監控播放狀態
        playerItem?.addObserver(
            self,
            forKeyPath: "status",
            options: [.new],
            context: nil
        )

        // 監控緩衝進度
        playerItem?.addObserver(
            self,
            forKeyPath: "loadedTimeRanges",
            options: [.new],
            context: nil
        )

        // 監控播放進度（每 0.1 秒更新）
        let interval = CMTime(seconds: 0.1, preferredTimescale: CMTimeScale(NSEC_PER_SEC))
        timeObserver = player?.addPeriodicTimeObserver(
            forInterval: interval,
            queue: .main
        ) { [weak self] time in
            let currentTime = CMTimeGetSeconds(time)
            print("播放進度：\(currentTime) 秒")
            self?.progress = currentTime  // 更新 UI
        }

        player?.play()
    }

    func observeValue(
        forKeyPath keyPath: String?,
        of object: Any?,
        change: [NSKeyValueChangeKey : Any]?,
        context: UnsafeMutableRawPointer?
    ) {
        if keyPath == "status" {
            if playerItem?.status == .readyToPlay {
                print("準備就緒，可以播放")
            } else if playerItem?.status == .failed {
                print("載入失敗：\(playerItem?.error?.localizedDescription ?? "")")
            }
        } else if keyPath == "loadedTimeRanges" {
            // 計算緩衝百分比
            if let timeRanges = playerItem?.loadedTimeRanges,
               let duration = playerItem?.duration,
               !timeRanges.isEmpty {
                let timeRange = timeRanges[0].timeRangeValue
                let bufferedTime = CMTimeGetSeconds(timeRange.start) + CMTimeGetSeconds(timeRange.duration)
                let totalTime = CMTimeGetSeconds(duration)
                let bufferedPercent = bufferedTime / totalTime * 100
                print("已緩衝：\(bufferedPercent)%")
            }
        }
    }

    deinit {
        // 移除觀察者
        if let timeObserver = timeObserver {
            player?.removeTimeObserver(timeObserver)
        }
        playerItem?.removeObserver(self, forKeyPath: "status")
        playerItem?.removeObserver(self, forKeyPath: "loadedTimeRanges")
    }
}

// MARK: - 播放影片

/// UIKit's view controller, as far as the post uses it (`present`): a plain class.
class VideoListViewController {
    private(set) var presentedViewController: AVPlayerViewController?

    func present(_ viewController: AVPlayerViewController, animated: Bool, completion: (@Sendable () -> Void)?) {
        presentedViewController = viewController
        viewController.present(animated: animated, completion: completion)
    }

    func playVideo(url: String) {
        guard let videoURL = URL(string: url) else { return }

        let player = AVPlayer(url: videoURL)
        let playerViewController = AVPlayerViewController()
        playerViewController.player = player

        present(playerViewController, animated: true) {
            player.play()
        }
    }
}

/// UIKit's root view, as far as the post uses it: its bounds, and its layer, whose sublayer is
/// shown in the Tonearm window (titled with the view's title).
final class RootView {
    final class Layer {
        let title: String
        private(set) var sublayers: [AVPlayerLayer] = []
        /// Why the window could not open (UIKit's `addSublayer` cannot fail).
        private(set) var error: VideoWindowError?
        init(title: String) { self.title = title }
        func addSublayer(_ layer: AVPlayerLayer) {
            sublayers.append(layer)
            do { try layer.show(title: title) } catch { self.error = error }
        }
    }
    var bounds: CGRect
    let layer: Layer
    init(title: String, bounds: CGRect) {
        self.bounds = bounds
        layer = Layer(title: title)
    }
}

class CustomVideoPlayer {
    var player: AVPlayer?
    var playerLayer: AVPlayerLayer?
    let videoAddress: String
    let view: RootView

    init(videoAddress: String, bounds: CGRect) {
        self.videoAddress = videoAddress
        view = RootView(title: "CustomVideoPlayer", bounds: bounds)
    }

    func viewDidLoad() {
        let videoURL = URL(string: videoAddress)!
        player = AVPlayer(url: videoURL)

        playerLayer = AVPlayerLayer(player: player)
        playerLayer?.frame = view.bounds
        playerLayer?.videoGravity = .resizeAspect
        view.layer.addSublayer(playerLayer!)
    }

    func viewDidLayoutSubviews() {
        playerLayer?.frame = view.bounds
    }

    func playTapped() {
        player?.play()
    }

    func pauseTapped() {
        player?.pause()
    }
}

// MARK: - 處理中斷和音訊路由變更

extension MusicPlayer {
    func observeAudioSessionNotifications() {
        observers.append(NotificationCenter.default.addObserver(
            forName: AVAudioSession.interruptionNotification,
            object: AVAudioSession.sharedInstance(), queue: nil
        ) { [weak self] notification in self?.handleInterruption(notification: notification) })

        observers.append(NotificationCenter.default.addObserver(
            forName: AVAudioSession.routeChangeNotification,
            object: AVAudioSession.sharedInstance(), queue: nil
        ) { [weak self] notification in self?.handleRouteChange(notification: notification) })
    }

    func handleInterruption(notification: Notification) {
        guard let userInfo = notification.userInfo,
              let typeValue = userInfo[AVAudioSessionInterruptionTypeKey] as? UInt,
              let type = AVAudioSession.InterruptionType(rawValue: typeValue) else {
            return
        }

        switch type {
        case .began:
            // 中斷開始（如來電）
            print("音訊被中斷，暫停播放")
            audioPlayer?.pause()

        case .ended:
            // 中斷結束
            if let optionsValue = userInfo[AVAudioSessionInterruptionOptionKey] as? UInt {
                let options = AVAudioSession.InterruptionOptions(rawValue: optionsValue)
                if options.contains(.shouldResume) {
                    // 系統建議恢復播放
                    print("恢復播放")
                    audioPlayer?.play()
                }
            }

        @unknown default:
            break
        }
    }

    func handleRouteChange(notification: Notification) {
        guard let userInfo = notification.userInfo,
              let reasonValue = userInfo[AVAudioSessionRouteChangeReasonKey] as? UInt,
              let reason = AVAudioSession.RouteChangeReason(rawValue: reasonValue) else {
            return
        }

        switch reason {
        case .oldDeviceUnavailable:
            // 音訊裝置中斷（如拔掉耳機）
            print("耳機被拔掉，暫停播放")
            audioPlayer?.pause()

        case .newDeviceAvailable:
            // 新裝置可用（如插入耳機）
            print("耳機插入")

        default:
            break
        }
    }
}
