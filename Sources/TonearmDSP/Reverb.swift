// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore

/// The factory rooms of ``Reverb`` (the counterpart of `AVAudioUnitReverbPreset`, same order).
public enum ReverbPreset: Int, Sendable, Hashable, CaseIterable {
    case smallRoom, mediumRoom, largeRoom, mediumHall, largeHall, plate, mediumChamber, largeChamber,
         cathedral, largeRoom2, mediumHall2, mediumHall3, largeHall2

    /// The design values of the room.
    public var settings: ReverbSettings {
        switch self {
        case .smallRoom: ReverbSettings(decayTime: 0.4, roomSize: 0.45, damping: 0.45, preDelay: 0.004)
        case .mediumRoom: ReverbSettings(decayTime: 0.7, roomSize: 0.6, damping: 0.4, preDelay: 0.008)
        case .largeRoom: ReverbSettings(decayTime: 1.1, roomSize: 0.8, damping: 0.35, preDelay: 0.012)
        case .mediumHall: ReverbSettings(decayTime: 1.6, roomSize: 0.85, damping: 0.3, preDelay: 0.018)
        case .largeHall: ReverbSettings(decayTime: 2.4, roomSize: 1.0, damping: 0.3, preDelay: 0.025)
        case .plate: ReverbSettings(decayTime: 1.5, roomSize: 0.5, damping: 0.1, preDelay: 0)
        case .mediumChamber: ReverbSettings(decayTime: 1.2, roomSize: 0.7, damping: 0.25, preDelay: 0.01)
        case .largeChamber: ReverbSettings(decayTime: 1.8, roomSize: 0.9, damping: 0.25, preDelay: 0.014)
        case .cathedral: ReverbSettings(decayTime: 5.0, roomSize: 1.0, damping: 0.2, preDelay: 0.04)
        case .largeRoom2: ReverbSettings(decayTime: 1.3, roomSize: 0.85, damping: 0.5, preDelay: 0.012)
        case .mediumHall2: ReverbSettings(decayTime: 1.8, roomSize: 0.85, damping: 0.35, preDelay: 0.022)
        case .mediumHall3: ReverbSettings(decayTime: 2.0, roomSize: 0.9, damping: 0.25, preDelay: 0.018)
        case .largeHall2: ReverbSettings(decayTime: 3.0, roomSize: 1.0, damping: 0.35, preDelay: 0.03)
        }
    }
}

/// The shape of a ``Reverb`` room.
public struct ReverbSettings: Sendable, Hashable {
    /// Broadband decay time to −60 dB (RT60), in seconds (0.1 … 20).
    public var decayTime: Double
    /// Scale of the comb and diffuser delays, 0.2 … 1 (1 ≈ 22–34 ms combs).
    public var roomSize: Double
    /// High-frequency absorption in the comb loops, 0 (bright) … 0.95 (dark).
    public var damping: Double
    /// Delay before the reverberation starts, in seconds (0 … 0.1).
    public var preDelay: Double

    public init(decayTime: Double, roomSize: Double, damping: Double, preDelay: Double) {
        self.decayTime = min(max(decayTime, 0.1), 20)
        self.roomSize = min(max(roomSize, 0.2), 1)
        self.damping = min(max(damping, 0), 0.95)
        self.preDelay = min(max(preDelay, 0), Reverb.maximumPreDelay)
    }
}

/// An algorithmic stereo reverb (the DSP of `AVAudioUnitReverb`), a Schroeder–Moorer design: the
/// input (summed to mono, pre-delayed) feeds, for each output side, eight parallel comb filters
/// with a one-pole low-pass in their loops (damping), then four series all-pass diffusers. Left
/// and right use different delay lengths, so the two sides are decorrelated; a mono stream uses
/// the left side, and with more than two channels even channels take the left, odd the right.
///
/// Each comb's feedback is set from the decay time (g = 10^(−3·delay / (RT60·rate))), so every
/// comb decays by 60 dB in ``ReverbSettings/decayTime``; each comb's input is scaled by
/// √(1 − g²)/√8, so the wet level of noise is about that of the input whatever the room.
///
/// - ``wetDryMix`` (0 … 100 %) crossfades dry → wet, smoothed over 15 ms; at 0 (and not
///   ramping) ``process(_:frames:channels:)`` leaves the buffer untouched — bit-transparent —
///   and the tank is cleared when the mix rises again.
///
/// Threading: a noncopyable value, so it has one owner — one thread — at a time: it is moved
/// (to a render thread), never shared. All delay lines are allocated in `init` for the largest
/// room; processing and ``apply(_:)`` allocate nothing.
///
/// `@unchecked Sendable`: its delay lines live in a class instance that no other value can reach
/// — the type is `~Copyable`, so no copy can share it — and moving the reverb to another thread
/// moves them with it.
public struct Reverb: ~Copyable, @unchecked Sendable {
    public static let maximumPreDelay = 0.1
    static let combLengths: [Int] = [1051, 1123, 1201, 1283, 1361, 1433, 1511, 1607] // at 48 kHz, size 1
    static let allpassLengths: [Int] = [557, 431, 337, 227]
    static let stereoSpread = 31
    static let allpassGain: Float = 0.5

    public let sampleRate: Double
    public let channels: Int
    public private(set) var settings: ReverbSettings
    /// The mix in percent, 0 (dry) … 100 (wet). Smoothed.
    public var wetDryMix: Double {
        didSet {
            wetDryMix = min(max(wetDryMix.isNaN ? 0 : wetDryMix, 0), 100)
            startMixRamp()
        }
    }

    private let storage: Storage
    private var mixCurrent: Float
    private var mixTarget: Float
    private var mixDelta: Float = 0
    private var mixRamp = 0
    private let smoothingFrames: Int

    /// Creates a reverb for `channels` interleaved channels at `sampleRate`, set to `preset`.
    public init(preset: ReverbPreset = .mediumHall, wetDryMix: Double = 100, sampleRate: Double, channels: Int) {
        precondition(sampleRate > 0 && channels > 0, "invalid reverb format")
        self.sampleRate = sampleRate
        self.channels = channels
        self.settings = preset.settings
        self.wetDryMix = min(max(wetDryMix, 0), 100)
        smoothingFrames = max(1, Int(0.015 * sampleRate))
        storage = Storage(sampleRate: sampleRate)
        mixTarget = Float(self.wetDryMix / 100)
        mixCurrent = mixTarget
        storage.configure(settings, sampleRate: sampleRate)
    }

    /// Switches to `preset`'s room (clears the tail). Allocates nothing.
    public mutating func apply(_ preset: ReverbPreset) { apply(preset.settings) }

    /// Switches to a custom room (clears the tail). Allocates nothing.
    public mutating func apply(_ newSettings: ReverbSettings) {
        settings = newSettings
        storage.configure(newSettings, sampleRate: sampleRate)
    }

    /// Whether ``process(_:frames:channels:)`` currently leaves the buffer untouched.
    public var isTransparent: Bool { mixCurrent == 0 && mixRamp == 0 }

    /// Clears the tail and ends any mix ramp (call on seek).
    public mutating func resetState() {
        storage.clear()
        mixCurrent = mixTarget
        mixRamp = 0
    }

    /// Reverberates `frames` interleaved frames in place. Allocates nothing.
    public mutating func process(_ buffer: UnsafeMutablePointer<Float>, frames: Int, channels: Int) {
        precondition(channels == self.channels, "reverb made for \(self.channels) channels, given \(channels)")
        if isTransparent || frames <= 0 { return }
        let s = storage
        let ch = channels
        let invCh = 1 / Float(ch)
        for f in 0..<frames {
            if mixRamp > 0 {
                mixRamp -= 1
                mixCurrent = mixRamp == 0 ? mixTarget : mixCurrent + mixDelta
            }
            let frame = buffer + f * ch
            var sum: Float = 0
            for c in 0..<ch { sum += frame[c] }
            let input = s.preDelay(sum * invCh)
            let l = s.tank(0, input)
            let r = ch > 1 ? s.tank(1, input) : l
            let wet = mixCurrent
            let dry = 1 - wet
            for c in 0..<ch {
                frame[c] = frame[c] * dry + (c & 1 == 0 ? l : r) * wet
            }
        }
        if mixCurrent == 0 && mixRamp == 0 { s.clear() }
    }

    private mutating func startMixRamp() {
        mixTarget = Float(wetDryMix / 100)
        if mixTarget == mixCurrent { mixRamp = 0; mixDelta = 0; return }
        if mixCurrent == 0 { storage.clear() }
        mixRamp = smoothingFrames
        mixDelta = (mixTarget - mixCurrent) / Float(smoothingFrames)
    }

    /// The delay lines, allocated once for the largest room; held by exactly one (noncopyable)
    /// ``Reverb``.
    final class Storage {
        struct Line {
            var base: UnsafeMutablePointer<Float>
            var capacity: Int
            var length: Int
            var index = 0
            var filter: Float = 0
            var feedback: Float = 0
            var inputGain: Float = 0
        }
        var combs: [[Line]]
        var allpasses: [[Line]]
        var pre: Line
        private let blocks: [UnsafeMutablePointer<Float>]
        var damp: Float = 0

        init(sampleRate: Double) {
            let scale = sampleRate / 48000
            var blocks: [UnsafeMutablePointer<Float>] = []
            func line(_ n: Int) -> Line {
                let cap = max(1, n)
                let p = UnsafeMutablePointer<Float>.allocate(capacity: cap)
                p.initialize(repeating: 0, count: cap)
                blocks.append(p)
                return Line(base: p, capacity: cap, length: cap)
            }
            pre = line(Int((Reverb.maximumPreDelay * sampleRate).rounded(.up)) + 1)
            var combs: [[Line]] = [], allpasses: [[Line]] = []
            for side in 0..<2 {
                let extra = side * Reverb.stereoSpread
                combs.append(Reverb.combLengths.map { line(Int((Double($0 + extra) * scale).rounded(.up)) + 1) })
                allpasses.append(Reverb.allpassLengths.map { line(Int((Double($0 + extra) * scale).rounded(.up)) + 1) })
            }
            self.combs = combs
            self.allpasses = allpasses
            self.blocks = blocks
        }

        deinit { for b in blocks { b.deallocate() } }

        func configure(_ s: ReverbSettings, sampleRate: Double) {
            let scale = sampleRate / 48000 * s.roomSize
            let norm = 1 / Float(Reverb.combLengths.count).squareRoot()
            for side in 0..<2 {
                let extra = side * Reverb.stereoSpread
                for i in combs[side].indices {
                    let n = min(combs[side][i].capacity, max(1, Int((Double(Reverb.combLengths[i] + extra) * scale).rounded())))
                    combs[side][i].length = n
                    let g = pow(10, -3 * Double(n) / (s.decayTime * sampleRate))
                    combs[side][i].feedback = Float(g)
                    combs[side][i].inputGain = Float((1 - g * g).squareRoot()) * norm
                }
                for i in allpasses[side].indices {
                    allpasses[side][i].length = min(allpasses[side][i].capacity,
                                                    max(1, Int((Double(Reverb.allpassLengths[i] + extra) * scale).rounded())))
                }
            }
            pre.length = max(0, min(pre.capacity, Int((s.preDelay * sampleRate).rounded())))
            damp = Float(s.damping)
            clear()
        }

        func clear() {
            pre.base.update(repeating: 0, count: pre.capacity)
            pre.index = 0
            for side in 0..<2 {
                for i in combs[side].indices {
                    combs[side][i].base.update(repeating: 0, count: combs[side][i].capacity)
                    combs[side][i].index = 0
                    combs[side][i].filter = 0
                }
                for i in allpasses[side].indices {
                    allpasses[side][i].base.update(repeating: 0, count: allpasses[side][i].capacity)
                    allpasses[side][i].index = 0
                }
            }
        }

        @inline(__always) func preDelay(_ x: Float) -> Float {
            if pre.length == 0 { return x }
            let out = pre.base[pre.index]
            pre.base[pre.index] = x
            pre.index += 1
            if pre.index >= pre.length { pre.index = 0 }
            return out
        }

        @inline(__always) func tank(_ side: Int, _ x: Float) -> Float {
            var sum: Float = 0
            let d = damp
            combs[side].withUnsafeMutableBufferPointer { cs in
                for i in cs.indices {
                    let out = cs[i].base[cs[i].index]
                    // One-pole low-pass in the loop; the tiny offset keeps the state out of denormals.
                    cs[i].filter = out * (1 - d) + cs[i].filter * d + 1e-25
                    cs[i].base[cs[i].index] = x * cs[i].inputGain + cs[i].filter * cs[i].feedback
                    cs[i].index += 1
                    if cs[i].index >= cs[i].length { cs[i].index = 0 }
                    sum += out
                }
            }
            let g = Reverb.allpassGain
            allpasses[side].withUnsafeMutableBufferPointer { aps in
                for i in aps.indices {
                    let delayed = aps[i].base[aps[i].index]
                    let w = sum + g * delayed
                    aps[i].base[aps[i].index] = w
                    aps[i].index += 1
                    if aps[i].index >= aps[i].length { aps[i].index = 0 }
                    sum = delayed - g * w
                }
            }
            return sum
        }
    }
}
