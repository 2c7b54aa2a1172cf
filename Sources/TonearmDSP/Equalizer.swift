// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore

/// A multi-band equaliser kernel (the DSP of `AVAudioUnitEQ`): any number of ``EQBand``s in
/// cascade, a global gain, per-band and global bypass, over interleaved Float32 audio of any
/// channel count.
///
/// - Speed: the bands of all channels of a pass run as one SIMD "wavefront" (see
///   `WavefrontCascade.swift`); the output equals a sequential biquad cascade up to float
///   rounding, with no added latency.
/// - Smoothing: changing ``bands`` or ``globalGain`` while playing moves the coefficients (or
///   the gain) linearly to the new values over ``smoothingFrames`` frames, so there is no zipper
///   noise; the last frame of the ramp uses the new values exactly.
/// - Transparency: when every band is an identity (bypassed, or 0 dB on a gain type) and the
///   global gain is 0 dB, or when ``bypass`` is on, ``process(_:frames:channels:)`` leaves the
///   buffer untouched — bit-transparent, not merely close to unity.
/// - Denormals: states are kept far above the denormal range by a 1e-20 offset (below 1e-12 at
///   the output), so silence after loud audio costs no more than audio.
///
/// Threading: a plain value, used by one render thread at a time. After `init`, processing and
/// changing parameters (``bands`` with the same count, ``globalGain``, ``bypass``) allocate
/// nothing, as long as the value is not copied while in use (a copy shares storage, and the
/// first mutation of either would copy it). Changing the number of bands allocates and resets.
public struct Equalizer: Sendable {
    /// The sample rate the coefficients are designed for.
    public let sampleRate: Double
    /// Interleaved channels per frame that ``process(_:frames:channels:)`` expects.
    public let channels: Int
    /// Frames a parameter change takes to reach its target.
    public let smoothingFrames: Int

    /// The bands, in cascade order. Setting them smooths to the new response; setting a
    /// different number of bands rebuilds the kernel (allocates, resets state, no smoothing).
    public var bands: [EQBand] {
        get { storedBands }
        set {
            storedBands = newValue
            bandsDidChange()
        }
    }
    /// The bands' storage: ``updateBand(at:_:)`` changes one in place. (`eq.bands[i].gain = x`
    /// through an observed property reads a copy, changes it and writes it back: the copy shares
    /// the storage, so the change copies the array — an allocation on the render thread.)
    private var storedBands: [EQBand]

    /// Changes band `index` in place and smooths to its new response: allocates nothing (the
    /// render thread's way to move one band).
    public mutating func updateBand(at index: Int, _ change: (inout EQBand) -> Void) {
        change(&storedBands[index])
        bandsDidChange()
    }

    /// Gain applied after the bands, in dB (clamped to −96 ... 24). Smoothed.
    public var globalGain: Double {
        didSet {
            globalGain = min(max(globalGain, EQBand.gainRange.lowerBound), EQBand.gainRange.upperBound)
            startGainRamp()
        }
    }

    /// When true the equaliser leaves audio untouched. Switching takes effect at once (as
    /// AVAudioUnit's `bypass`); switching back on starts from a cleared state at the current
    /// settings.
    public var bypass: Bool {
        didSet { if !bypass { resetState() } }
    }

    private var stages: [CascadeStage]
    private var designed: [BiquadCoefficients]
    private var gainCurrent: Float = 1
    private var gainTarget: Float = 1
    private var gainDelta: Float = 0
    private var gainRamp = 0

    /// Creates an equaliser for interleaved audio of `channels` channels at `sampleRate`.
    /// `smoothingTime` (seconds, default 15 ms) is how long parameter changes take.
    public init(bands: [EQBand], sampleRate: Double, channels: Int, globalGain: Double = 0,
                smoothingTime: Double = 0.015) {
        precondition(sampleRate > 0 && channels > 0, "invalid equaliser format")
        self.sampleRate = sampleRate
        self.channels = channels
        self.smoothingFrames = max(1, Int((smoothingTime * sampleRate).rounded()))
        self.storedBands = bands
        self.globalGain = min(max(globalGain, EQBand.gainRange.lowerBound), EQBand.gainRange.upperBound)
        self.bypass = false
        stages = []
        designed = []
        rebuild()
        gainTarget = Self.linear(self.globalGain)
        gainCurrent = gainTarget
    }

    /// Creates a 10-band graphic equaliser set to `preset`.
    public init(preset: EQPreset, sampleRate: Double, channels: Int, smoothingTime: Double = 0.015) {
        self.init(bands: preset.bands, sampleRate: sampleRate, channels: channels,
                  globalGain: preset.globalGain, smoothingTime: smoothingTime)
    }

    /// Sets the 10 graphic bands and the global gain from `preset` (smoothed when the equaliser
    /// already has 10 bands).
    public mutating func apply(_ preset: EQPreset) {
        bands = preset.bands
        globalGain = preset.globalGain
    }

    /// Whether ``process(_:frames:channels:)`` currently leaves the buffer untouched.
    public var isTransparent: Bool {
        bypass || (stages.allSatisfy(\.isSkippable) && gainRamp == 0 && gainCurrent == 1)
    }

    /// Clears the filter state and ends any ramp at its target (call on seek or stream change).
    public mutating func resetState() {
        for s in 0..<stages.count { stages[s].snapAndClear() }
        gainCurrent = gainTarget
        gainRamp = 0
        gainDelta = 0
    }

    /// Equalises `frames` interleaved frames of `channels` channels in place. `channels` must be
    /// the count the equaliser was made for. Allocates nothing.
    public mutating func process(_ buffer: UnsafeMutablePointer<Float>, frames: Int, channels: Int) {
        precondition(channels == self.channels, "equaliser made for \(self.channels) channels, given \(channels)")
        guard !bypass, frames > 0 else { return }
        for s in 0..<stages.count { stages[s].process(buffer, frames: frames, stride: channels) }
        applyGlobalGain(buffer, frames: frames)
    }

    // MARK: Internals

    /// dB to a linear factor (exactly 1 for 0 dB).
    static func linear(_ dB: Double) -> Float { dB == 0 ? 1 : Float(pow(10, dB / 20)) }

    private mutating func applyGlobalGain(_ buffer: UnsafeMutablePointer<Float>, frames: Int) {
        let ch = channels
        var f = 0
        while f < frames && gainRamp > 0 {
            gainRamp -= 1
            gainCurrent = gainRamp == 0 ? gainTarget : gainCurrent + gainDelta
            let g = gainCurrent
            for c in 0..<ch { buffer[f * ch + c] *= g }
            f += 1
        }
        if f < frames && gainCurrent != 1 {
            let g = gainCurrent
            for i in (f * ch)..<(frames * ch) { buffer[i] *= g }
        }
    }

    private mutating func startGainRamp() {
        gainTarget = Self.linear(globalGain)
        if gainTarget == gainCurrent { gainRamp = 0; gainDelta = 0; return }
        gainRamp = smoothingFrames
        gainDelta = (gainTarget - gainCurrent) / Float(smoothingFrames)
    }

    private mutating func bandsDidChange() {
        if bands.count != designed.count {
            rebuild()
            return
        }
        // Index loops over ranges, not `bands.indices` / `stages.indices` (here, in `process` and in
        // `resetState`): on the render thread an unspecialised build would fetch the arrays'
        // collection witness tables there (a lock).
        for i in 0..<bands.count {
            let c = BiquadCoefficients(band: bands[i], sampleRate: sampleRate)
            if c == designed[i] { continue }
            designed[i] = c
            for s in 0..<stages.count where stages[s].bands.contains(i) {
                stages[s].rampSteps = -1 // mark: ramp to start below
            }
        }
        for s in 0..<stages.count where stages[s].rampSteps == -1 {
            var identity = true
            var fitsPeaking = true
            for b in stages[s].bands {
                if !designed[b].isIdentity { identity = false }
                if !CascadeStage.fitsPeakingForm(designed[b]) { fitsPeaking = false }
            }
            // A peaking-form stage given another type of band continues in the general form.
            if stages[s].peaking && !fitsPeaking { stages[s].convertToGeneralForm() }
            for b in stages[s].bands { stages[s].setTarget(band: b, designed[b], identity: designed[b].isIdentity) }
            stages[s].rampSteps = 0
            stages[s].beginRamp(steps: smoothingFrames, targetIsIdentity: identity)
        }
    }

    /// Lays out the stages for the current band count (allocates) and jumps to the settings.
    private mutating func rebuild() {
        designed = bands.map { BiquadCoefficients(band: $0, sampleRate: sampleRate) }
        var newStages: [CascadeStage] = []
        var ch = 0
        while ch < channels {
            let laneChannels = channels - ch >= 2 ? 2 : 1
            let perStage = maxStageRegisters * 4 / laneChannels
            let count = bands.count
            if count > 0 {
                let stageCount = (count + perStage - 1) / perStage
                var start = 0
                for k in 0..<stageCount {
                    let n = (count - start) / (stageCount - k)
                    var stage = CascadeStage(laneChannels: laneChannels, channelOffset: ch, bands: start..<(start + n))
                    stage.choosePeakingForm(stage.bands.allSatisfy { CascadeStage.fitsPeakingForm(designed[$0]) })
                    for b in stage.bands { stage.setTarget(band: b, designed[b], identity: designed[b].isIdentity) }
                    stage.beginRamp(steps: 0, targetIsIdentity: stage.bands.allSatisfy { designed[$0].isIdentity })
                    newStages.append(stage)
                    start += n
                }
            }
            ch += laneChannels
        }
        stages = newStages
    }
}


// MARK: Parameters as data

extension Equalizer {
    /// The parameters of an equaliser with `bandCount` bands: `bypass`, `globalGain`, then for
    /// each band `band<i>.type` (indexed by ``EQFilterType/allCases``), `.frequency`,
    /// `.bandwidth`, `.gain` and `.bypass` (bands counted from 0).
    public static func parameterDescriptors(bandCount: Int) -> [ParameterDescriptor] {
        var list = [
            ParameterDescriptor(identifier: "bypass", name: "Bypass", range: 0...1, unit: .boolean, defaultValue: 0),
            ParameterDescriptor(identifier: "globalGain", name: "Global gain", range: EQBand.gainRange,
                                unit: .decibels, defaultValue: 0),
        ]
        for i in 0..<bandCount {
            let f = i < EQBand.graphicFrequencies.count ? EQBand.graphicFrequencies[i] : 1000
            list += [
                ParameterDescriptor(identifier: "band\(i).type", name: "Band \(i) type",
                                    range: 0...Double(EQFilterType.allCases.count - 1), unit: .indexed,
                                    defaultValue: 0, valueNames: EQFilterType.allCases.map(\.rawValue)),
                ParameterDescriptor(identifier: "band\(i).frequency", name: "Band \(i) frequency",
                                    range: EQBand.frequencyRange, unit: .hertz, defaultValue: f),
                ParameterDescriptor(identifier: "band\(i).bandwidth", name: "Band \(i) bandwidth",
                                    range: EQBand.bandwidthRange, unit: .octaves, defaultValue: 1),
                ParameterDescriptor(identifier: "band\(i).gain", name: "Band \(i) gain",
                                    range: EQBand.gainRange, unit: .decibels, defaultValue: 0),
                ParameterDescriptor(identifier: "band\(i).bypass", name: "Band \(i) bypass",
                                    range: 0...1, unit: .boolean, defaultValue: 0),
            ]
        }
        return list
    }

    /// This equaliser's parameters (see ``parameterDescriptors(bandCount:)``).
    public var parameterDescriptors: [ParameterDescriptor] { Self.parameterDescriptors(bandCount: bands.count) }

    /// The current value of the parameter `identifier`, or nil when there is no such parameter.
    public func value(forParameter identifier: String) -> Double? {
        switch identifier {
        case "bypass": return bypass ? 1 : 0
        case "globalGain": return globalGain
        default:
            guard let (i, field) = Self.bandParameter(identifier, bandCount: bands.count) else { return nil }
            let b = bands[i]
            switch field {
            case "type": return Double(EQFilterType.allCases.firstIndex(of: b.type)!)
            case "frequency": return b.frequency
            case "bandwidth": return b.bandwidth
            case "gain": return b.gain
            case "bypass": return b.bypass ? 1 : 0
            default: return nil
            }
        }
    }

    /// Sets the parameter `identifier` (smoothed like any change). Values outside the
    /// parameter's range are refused. Parses the identifier, so call it from a control path, not
    /// per sample.
    public mutating func setValue(_ value: Double, forParameter identifier: String) throws(TonearmError) {
        guard let d = parameterDescriptors.first(where: { $0.identifier == identifier }) else {
            throw .invalidArgument("no equaliser parameter '\(identifier)'")
        }
        guard d.accepts(value) else {
            throw .invalidArgument("\(identifier) = \(value) is outside \(d.range.lowerBound)...\(d.range.upperBound)")
        }
        switch identifier {
        case "bypass": bypass = value != 0
        case "globalGain": globalGain = value
        default:
            guard let (i, field) = Self.bandParameter(identifier, bandCount: bands.count) else { return }
            switch field {
            case "type": bands[i].type = EQFilterType.allCases[Int(value)]
            case "frequency": bands[i].frequency = value
            case "bandwidth": bands[i].bandwidth = value
            case "gain": bands[i].gain = value
            default: bands[i].bypass = value != 0
            }
        }
    }

    /// Splits `band3.gain` into (3, "gain") when band 3 exists.
    public static func bandParameter(_ identifier: String, bandCount: Int) -> (Int, String)? {
        guard identifier.hasPrefix("band"), let dot = identifier.firstIndex(of: ".") else { return nil }
        let digits = identifier[identifier.index(identifier.startIndex, offsetBy: 4)..<dot]
        guard let i = Int(digits), i >= 0, i < bandCount else { return nil }
        return (i, String(identifier[identifier.index(after: dot)...]))
    }
}
