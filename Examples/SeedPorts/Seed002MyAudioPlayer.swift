// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import TonearmCompat

// Seed 002 ("动手做一个iOS音乐播放器（2）AVAudioPlayer与AVAudioEngine"): the post's MyAudioPlayer,
// an AVAudioPlayer look-alike on AVAudioEngine with a 10-band AVAudioUnitEQ, translated from
// Objective-C line by line with Apple's names (TonearmCompat). What had to change, and why:
//   - Objective-C → Swift (properties, blocks → closures, `weself` → `[weak self]`);
//   - the post calls `audioPlayerDidFinishPlaying:` on an `AVAudioPlayerDelegate` with itself
//     cast to `(id)` — an Objective-C trick Swift has no form for: a delegate protocol of its own
//     with the same method;
//   - `NSTimer scheduledTimerWithTimeInterval:repeats:block:` needs a run loop (UIKit's main
//     one); a `DispatchSourceTimer` on a queue of its own does the same here;
//   - `dispatch_get_main_queue()` (UIKit's main thread) → a serial queue of the player's own;
//   - `[[AVAudioEngine alloc] init]` → `AVAudioEngine(output:)` when the caller gives the output
//     (the tests' null output); without one it is the automatic output, as on iOS.

/// The post's delegate, for what it calls on the finish.
public protocol MyAudioPlayerDelegate: AnyObject {
    func audioPlayerDidFinishPlaying(_ player: MyAudioPlayer, successfully flag: Bool)
}

public final class MyAudioPlayer: @unchecked Sendable {
    private var _currentTime: TimeInterval = 0
    public var duration: TimeInterval = 0
    public var url: URL
    public weak var delegate: MyAudioPlayerDelegate?

    var engine: AVAudioEngine!
    var playerNode: AVAudioPlayerNode!
    var audioEQ: AVAudioUnitEQ!
    var audioFile: AVAudioFile!
    var timer: DispatchSourceTimer?
    private var lastStartFramePosition: AVAudioFramePosition = 0
    private let makeOutput: (@Sendable () throws -> any AudioOutputDriver)?
    private let main = DispatchQueue(label: "MyAudioPlayer.main")

    public init(contentsOf url: URL, output: (@Sendable () throws -> any AudioOutputDriver)? = nil) throws {
        self.url = url
        makeOutput = output
        try myInit()
    }

    func myInit() throws {
        // create engine
        engine = makeOutput.map { AVAudioEngine(output: $0) } ?? AVAudioEngine()
        // 音源
        playerNode = AVAudioPlayerNode()
        // 一个10段均衡器
        audioEQ = AVAudioUnitEQ(numberOfBands: 10)
        let effect: AVAudioUnitEffect = audioEQ
        // 各种连线，注意顺序
        let mixer = engine.mainMixerNode
        let format = mixer.outputFormat(forBus: 0)
        engine.attach(playerNode)
        engine.attach(effect)
        try engine.connect(playerNode, to: effect, format: format)
        try engine.connect(effect, to: mixer, format: format)
        // 打开电源开关
        try engine.start()
        // 根据url创建一个audioFile
        audioFile = try AVAudioFile(forReading: url)
        let frameCount = AVAudioFrameCount(audioFile.length)
        let sampleRate = audioFile.processingFormat.sampleRate
        if sampleRate != 0 {
            duration = Double(frameCount) / sampleRate
        } else {
            duration = 1
        }
        // 我这里用setCurrentTime的方法来控制播放进度
        currentTime = 0.01
        let timer = DispatchSource.makeTimerSource(queue: main)
        timer.schedule(deadline: .now() + 0.01, repeating: 0.01)
        timer.setEventHandler { [weak self] in self?.catchCurrentTime() }
        timer.resume()
        self.timer = timer
    }

    public func play() {
        // 记得要电源开着的时候才能让playerNode play
        if !engine.isRunning {
            engine.prepare()  // 预防中断恢复后crash！！！
            try? engine.start()
        }
        playerNode.play()
    }

    public func pause() {
        engine.stop()
        playerNode.pause()
    }

    public func stop() {
        delegate = nil  // 手动停的必须设delegate nil
        if isPlaying {
            playerNode.stop()
        }
        engine.stop()
    }

    func didFinishPlay() {
        // 这里还用着原来的AVAudioPlayerDelegate (the post asks `respondsToSelector:` here, at once)
        if delegate != nil {
            let playing = isPlaying
            main.async { [weak self] in
                guard let self else { return }
                self.delegate?.audioPlayerDidFinishPlaying(self, successfully: playing)
            }
        }
    }

    public var isPlaying: Bool { playerNode.isPlaying }

    public var currentTime: TimeInterval {
        get { _currentTime }
        set {
            _currentTime = newValue
            let isPlaying = self.isPlaying
            let lastDelegate = delegate
            delegate = nil
            playerNode.stop()
            delegate = lastDelegate
            let startingFrame = AVAudioFramePosition(newValue * audioFile.processingFormat.sampleRate)
            // 要根据总时长和当前进度，找出起始的frame位置和剩余的frame数量
            let frameCount = AVAudioFrameCount(audioFile.length - startingFrame)
            if frameCount > 1000 {  // 当剩余数量小于0时会crash，随便设个数
                lastStartFramePosition = startingFrame
                playerNode.scheduleSegment(audioFile, startingFrame: startingFrame, frameCount: frameCount, at: nil) { [weak self] in
                    self?.didFinishPlay()
                }
            }
            if isPlaying {
                playerNode.play()  // 恢复播放
            }
        }
    }

    // 获取当前播放时间
    func catchCurrentTime() {
        if isPlaying, let nodeTime = playerNode.lastRenderTime, let playerTime = playerNode.playerTime(forNodeTime: nodeTime) {
            _currentTime = Double(lastStartFramePosition + playerTime.sampleTime) / playerTime.sampleRate
        }
        if _currentTime > duration {
            playerNode.stop()
        }
    }

    deinit {
        timer?.cancel()
        playerNode.stop()
        engine.stop()
    }
}
