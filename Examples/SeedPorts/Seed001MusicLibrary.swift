// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import TonearmCompat

// Seed 001 ("iOS 多媒体-音频会话"), second listing: a view controller that plays the music
// library with MPMusicPlayerController — a query of the songs, a collection made from it, the
// player's queue set from what was picked, its state-change notifications, play, pause, stop,
// next and previous. Translated from Objective-C line by line with Apple's names
// (TonearmCompat). What had to change, and why:
//   - `UIViewController` → a plain class; the `IBAction`s → methods without the sender (UIKit);
//   - `MPMediaPickerController` (a view controller the user picks songs in) and
//     `presentViewController:`/`dismissViewControllerAnimated:` → none: `selectClick()` picks the
//     library's songs with the post's own `getLocalMediaItemCollection` (which the post offers
//     for doing without the picker) and hands them to the picker's delegate method (UIKit);
//   - `addObserver:selector:@selector(playbackStateChange:)` (the Objective-C runtime) → the
//     block form, kept for `dealloc`'s `endGeneratingPlaybackNotifications` (and removed there);
//   - `[MPMusicPlayerController systemMusicPlayer]` → `.applicationMusicPlayer` — a library
//     difference left: Tonearm's system player (`tonearm daemon`'s queue) is
//     `try await MusicPlayer.system`, another type reached asynchronously;
//   - the commented-out `valueForKey:` lines and `UIImage` line are left out;
//   - added: `stateLog`, what `playbackStateChange:` logs with NSLog kept for the tests to read
//     (3 lines beside the NSLogs, 3 for the property).
// 26 of the listing's 96 code lines changed (UIKit 24 — 13 of them the picker's, left out —,
// Objective-C runtime 1, library 1); 7 added (the observer's removal, and 6 for the tests).

public final class MusicLibraryViewController: @unchecked Sendable {
    private var _musicPlayer: MPMusicPlayerController?  // 音乐播放器
    private var observer: NSObjectProtocol?

    public init() {}

    public func viewDidLoad() {}

    deinit {
        _musicPlayer?.endGeneratingPlaybackNotifications()
        if let observer { NotificationCenter.default.removeObserver(observer) }
    }

    /// 获得音乐播放器
    public var musicPlayer: MPMusicPlayerController {
        if _musicPlayer == nil {
            _musicPlayer = MPMusicPlayerController.applicationMusicPlayer
            _musicPlayer!.beginGeneratingPlaybackNotifications()  // 开启通知,否则监控不到MPMusicPlayerController的通知
            addNotification()  // 添加通知
            // 如果不使用MPMediaPickerController可以使用如下方法获得音乐库媒体队列
            // _musicPlayer!.setQueue(with: getLocalMediaItemCollection())
        }
        return _musicPlayer!
    }

    /// 取得媒体队列
    public func getLocalMediaQuery() -> MPMediaQuery {
        let mediaQueue = MPMediaQuery.songs()
        for item in mediaQueue.items ?? [] {
            NSLog("标题:%@,%@", item.title, item.albumTitle ?? "")
        }
        return mediaQueue
    }

    /// 取得媒体集合
    public func getLocalMediaItemCollection() -> MPMediaItemCollection {
        let mediaQueue = MPMediaQuery.songs()
        var array: [MPMediaItem] = []
        for item in mediaQueue.items ?? [] {
            array.append(item)
            NSLog("标题:%@,%@", item.title, item.albumTitle ?? "")
        }
        let mediaItemCollection = MPMediaItemCollection(items: array)
        return mediaItemCollection
    }

    // MARK: - MPMediaPickerController代理方法
    // 选择完成
    public func mediaPicker(didPickMediaItems mediaItemCollection: MPMediaItemCollection) {
        let mediaItem = mediaItemCollection.items.first!  // 第一个播放音乐
        NSLog("标题:%@,表演者:%@,专辑:%@", mediaItem.title, mediaItem.artist ?? "", mediaItem.albumTitle ?? "")
        musicPlayer.setQueue(with: mediaItemCollection)
    }

    // MARK: - 通知
    /// 添加通知
    func addNotification() {
        let notificationCenter = NotificationCenter.default
        observer = notificationCenter.addObserver(forName: .MPMusicPlayerControllerPlaybackStateDidChange, object: musicPlayer, queue: nil) {
            [weak self] notification in self?.playbackStateChange(notification)
        }
    }

    /// 播放状态改变通知
    private let log = Mutex<[String]>([])
    /// What `playbackStateChange` logged, in order (read by the tests).
    public var stateLog: [String] { log.withLock { $0 } }
    func playbackStateChange(_ notification: Notification) {
        switch musicPlayer.playbackState {
        case .playing:
            NSLog("正在播放...")
            log.withLock { $0.append("正在播放...") }
        case .paused:
            NSLog("播放暂停.")
            log.withLock { $0.append("播放暂停.") }
        case .stopped:
            NSLog("播放停止.")
            log.withLock { $0.append("播放停止.") }
        default:
            break
        }
    }

    // MARK: - UI事件
    public func selectClick() {
        mediaPicker(didPickMediaItems: getLocalMediaItemCollection())
    }

    public func playClick() {
        musicPlayer.play()
    }

    public func puaseClick() {
        musicPlayer.pause()
    }

    public func stopClick() {
        musicPlayer.stop()
    }

    public func nextClick() {
        musicPlayer.skipToNextItem()
    }

    public func prevClick() {
        musicPlayer.skipToPreviousItem()
    }
}
