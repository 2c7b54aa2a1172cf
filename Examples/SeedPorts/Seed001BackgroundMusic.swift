// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import TonearmCompat

// Seed 001 ("iOS 多媒体-音频会话"), first listing: a view controller that plays one song in the
// background with AVAudioPlayer and the playback session, pauses when headphones are unplugged
// (AVAudioSessionRouteChangeNotification) and ends the session when the song has played.
// Translated from Objective-C line by line with Apple's names (TonearmCompat). What had to
// change, and why — UIKit, the Objective-C runtime and the app bundle only:
//   - `UIViewController` with outlets → a plain class; the outlets (title, singer label,
//     progress view, play button's tag) → plain properties (UIKit);
//   - `viewWillAppear:`/`viewWillDisappear:`' `beginReceivingRemoteControlEvents` /
//     `endReceivingRemoteControlEvents` (UIApplication) → `viewWillAppear()`/`viewWillDisappear()`
//     adding and removing play and pause targets on `MPRemoteCommandCenter.shared()` — what
//     receives the remote events (media keys, the desktop's controls, `playerctl`) on Linux;
//   - `[[NSBundle mainBundle] pathForResource:ofType:]` → the song's folder given to `init`
//     (the app bundle is iOS packaging), and the player's output given as Seed002's is (the
//     tests' silent output; without one it is the automatic output, as on iOS);
//   - `NSTimer scheduledTimerWithTimeInterval:target:selector:` (UIKit's main run loop) → a
//     `DispatchSourceTimer` on a queue of the controller's own; its `fireDate = distantPast / distantFuture` → `resume()` /
//     `suspend()`;
//   - `addObserver:selector:@selector(routeChange:)` (the Objective-C runtime) → the block form,
//     `removeObserver:self` in `dealloc` → the block's token in `deinit`;
//   - `[dic[key] intValue]` → `as? UInt` (Swift's reading of the NSNumber);
//   - `playClick:(UIButton *)sender` → `playClick()` keeping the tag as a property, its four
//     `setImage:forState:` lines left out; `[super view…]` calls left out.
// 29 of the listing's 104 code lines changed (UIKit 20, run loop and Objective-C runtime 7, the
// bundle and the output 2); none for a library difference.

public let kMusicFile = "刘若英 - 原来你也在这里.mp3"
public let kMusicSinger = "刘若英"
public let kMusicTitle = "原来你也在这里"

public final class BackgroundMusicViewController: AVAudioPlayerDelegate, @unchecked Sendable {
    private var _audioPlayer: AVAudioPlayer?  // 播放器
    public var title = ""
    public var controlPanel = ""  // 控制面板
    public private(set) var playProgress: Float = 0  // 播放进度
    public var musicSinger = ""  // 演唱者
    public var playOrPauseTag = 0  // 播放/暂停按钮(如果tag为0认为是暂停状态,1是播放状态)

    private var _timer: DispatchSourceTimer?  // 进度更新定时器
    private var timerRunning = false
    private var routeObserver: NSObjectProtocol?
    private var remoteTargets: [Any] = []
    private let main = DispatchQueue(label: "BackgroundMusicViewController.main")
    private let bundlePath: String
    private let output: (@Sendable () throws -> any AudioOutputDriver)?

    public init(bundlePath: String, output: (@Sendable () throws -> any AudioOutputDriver)? = nil) {
        self.bundlePath = bundlePath
        self.output = output
    }

    public func viewDidLoad() {
        setupUI()
    }

    /// 显示当面视图控制器时注册远程事件
    public func viewWillAppear() {
        // 开启远程控制
        let commandCenter = MPRemoteCommandCenter.shared()
        remoteTargets = [commandCenter.playCommand.addTarget { [weak self] _ in self?.play(); return .success },
                         commandCenter.pauseCommand.addTarget { [weak self] _ in self?.pause(); return .success }]
    }

    /// 当前控制器视图不显示时取消远程控制
    public func viewWillDisappear() {
        let commandCenter = MPRemoteCommandCenter.shared()
        commandCenter.playCommand.removeTarget(remoteTargets[0])
        commandCenter.pauseCommand.removeTarget(remoteTargets[1])
    }

    /// 初始化UI
    func setupUI() {
        title = kMusicTitle
        musicSinger = kMusicSinger
    }

    var timer: DispatchSourceTimer {
        if _timer == nil {
            let t = DispatchSource.makeTimerSource(queue: main)
            t.schedule(deadline: .now() + 0.5, repeating: 0.5)
            t.setEventHandler { [weak self] in self?.updateProgress() }
            _timer = t
        }
        return _timer!
    }

    /// 创建播放器
    public var audioPlayer: AVAudioPlayer? {
        if _audioPlayer == nil {
            let urlStr = (bundlePath as NSString).appendingPathComponent(kMusicFile)
            let url = URL(fileURLWithPath: urlStr)
            var error: Error?
            // 初始化播放器,注意这里的Url参数只能时文件路径,不支持HTTP Url
            do {
                _audioPlayer = try output.map { try AVAudioPlayer(contentsOf: url, output: $0) } ?? AVAudioPlayer(contentsOf: url)
            } catch let e {
                error = e
            }
            // 设置播放器属性
            _audioPlayer?.numberOfLoops = 0  // 设置为0不循环
            _audioPlayer?.delegate = self
            _audioPlayer?.prepareToPlay()  // 加载音频文件到缓存
            if let error {
                NSLog("初始化播放器过程发生错误,错误信息:%@", error.localizedDescription)
                return nil
            }
            // 设置后台播放模式
            let audioSession = AVAudioSession.sharedInstance()
            try? audioSession.setCategory(.playback)
            // try? audioSession.setCategory(.playback, options: .allowBluetooth)
            try? audioSession.setActive(true)
            // 添加通知,拔出耳机后暂停播放
            routeObserver = NotificationCenter.default.addObserver(forName: AVAudioSession.routeChangeNotification, object: nil, queue: nil) {
                [weak self] notification in self?.routeChange(notification)
            }
        }
        return _audioPlayer
    }

    /// 播放音频
    public func play() {
        if !(audioPlayer?.isPlaying ?? false) {
            audioPlayer?.play()
            if !timerRunning { timer.resume(); timerRunning = true }  // 恢复定时器
        }
    }

    /// 暂停播放
    public func pause() {
        if audioPlayer?.isPlaying ?? false {
            audioPlayer?.pause()
            if timerRunning { timer.suspend(); timerRunning = false }  // 暂停定时器,注意不能调用invalidate方法,此方法会取消,之后无法恢复
        }
    }

    /// 点击播放/暂停按钮
    public func playClick() {
        if playOrPauseTag != 0 {
            playOrPauseTag = 0
            pause()
        } else {
            playOrPauseTag = 1
            play()
        }
    }

    /// 更新播放进度
    func updateProgress() {
        let progress = Float(audioPlayer!.currentTime / audioPlayer!.duration)
        playProgress = progress
    }

    /// 一旦输出改变则执行此方法
    func routeChange(_ notification: Notification) {
        let dic = notification.userInfo
        let changeReason = dic?[AVAudioSessionRouteChangeReasonKey] as? UInt
        // 等于AVAudioSessionRouteChangeReasonOldDeviceUnavailable表示旧输出不可用
        if changeReason == AVAudioSession.RouteChangeReason.oldDeviceUnavailable.rawValue {
            let routeDescription = dic?[AVAudioSessionRouteChangePreviousRouteKey] as? AVAudioSessionRouteDescription
            let portDescription = routeDescription?.outputs.first
            // 原设备为耳机则暂停
            if portDescription?.portType.rawValue == "Headphones" {
                pause()
            }
        }
    }

    deinit {
        if let routeObserver { NotificationCenter.default.removeObserver(routeObserver) }
        if let t = _timer {
            if !timerRunning { t.resume() }
            t.cancel()
        }
    }

    // MARK: - 播放器代理方法
    public func audioPlayerDidFinishPlaying(_ player: AVAudioPlayer, successfully flag: Bool) {
        NSLog("音乐播放完成...")
        // 根据实际情况播放完成可以将会话关闭,其他音频应用继续播放
        try? AVAudioSession.sharedInstance().setActive(false)
    }
}
