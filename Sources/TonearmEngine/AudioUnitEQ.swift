// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization
import TonearmCore
import TonearmDSP
import TonearmOutput

/// The settings of one band of an ``AudioUnitEQ`` (the counterpart of
/// `AVAudioUnitEQFilterParameters`). Setting a property reaches the render thread through a
/// lock-free queue and is smoothed there (no zipper noise).
public final class AudioUnitEQFilterParameters: @unchecked Sendable {
    private weak var owner: AudioUnitEQ?
    private let index: Int
    private let values: Mutex<EQBand>

    init(owner: AudioUnitEQ, index: Int, band: EQBand) {
        self.owner = owner
        self.index = index
        values = Mutex(band)
    }

    var band: EQBand { values.withLock { $0 } }

    private func set(_ change: (inout EQBand) -> Void) {
        let b = values.withLock { v -> EQBand in change(&v); return v }
        owner?.send(band: index, b)
    }

    public var filterType: EQFilterType {
        get { band.type }
        set { set { $0.type = newValue } }
    }
    /// Centre or corner frequency in Hz.
    public var frequency: Double {
        get { band.frequency }
        set { set { $0.frequency = min(max(newValue, EQBand.frequencyRange.lowerBound), EQBand.frequencyRange.upperBound) } }
    }
    /// Width in octaves (parametric, band-pass/-stop, resonant types).
    public var bandwidth: Double {
        get { band.bandwidth }
        set { set { $0.bandwidth = min(max(newValue, EQBand.bandwidthRange.lowerBound), EQBand.bandwidthRange.upperBound) } }
    }
    /// Gain in dB (parametric and shelves).
    public var gain: Double {
        get { band.gain }
        set { set { $0.gain = min(max(newValue, EQBand.gainRange.lowerBound), EQBand.gainRange.upperBound) } }
    }
    public var bypass: Bool {
        get { band.bypass }
        set { set { $0.bypass = newValue } }
    }
}

/// A multi-band equaliser node (the counterpart of `AVAudioUnitEQ`): any number of bands, each
/// with its filter type, frequency, bandwidth, gain and bypass; a global gain; a bypass. The DSP
/// is ``Equalizer`` (a SIMD wavefront biquad cascade); a flat or bypassed EQ is bit-transparent.
public final class AudioUnitEQ: AudioNode, @unchecked Sendable {
    /// The bands, in cascade order.
    public private(set) var bands: [AudioUnitEQFilterParameters] = []
    private let eqKernel: EQKernel
    private let settings: Mutex<(globalGain: Double, bypass: Bool)>

    /// Creates an equaliser with `numberOfBands` flat parametric bands (set them up through
    /// ``bands``), or a 10-band graphic one with ``init(preset:)``.
    public convenience init(numberOfBands: Int) {
        self.init(initialBands: (0..<max(1, numberOfBands)).map { i in
            EQBand(type: .parametric, frequency: EQBand.graphicFrequencies[min(i, 9)], bandwidth: 1, gain: 0)
        }, globalGain: 0)
    }

    /// Creates a 10-band graphic equaliser (ISO centres 31.25 Hz … 16 kHz) set to `preset`.
    public convenience init(preset: EQPreset) {
        self.init(initialBands: preset.bands, globalGain: preset.globalGain)
    }

    private init(initialBands: [EQBand], globalGain: Double) {
        let k = EQKernel(bands: initialBands, globalGain: globalGain)
        eqKernel = k
        settings = Mutex((globalGain, false))
        super.init(kernel: k, inputs: 1, outputs: 1)
        bands = initialBands.enumerated().map { AudioUnitEQFilterParameters(owner: self, index: $0.offset, band: $0.element) }
    }

    /// Gain after the bands, in dB (−96 … 24).
    public var globalGain: Double {
        get { settings.withLock { $0.globalGain } }
        set {
            let g = min(max(newValue, EQBand.gainRange.lowerBound), EQBand.gainRange.upperBound)
            settings.withLock { $0.globalGain = g }
            eqKernel.post(.init(band: -1, field: 0, value: g))
        }
    }

    /// When true, audio passes untouched.
    public var bypass: Bool {
        get { settings.withLock { $0.bypass } }
        set {
            settings.withLock { $0.bypass = newValue }
            eqKernel.post(.init(band: -1, field: 1, value: newValue ? 1 : 0))
        }
    }

    /// Sets every band and the global gain from a 10-band preset (needs 10 bands).
    public func apply(_ preset: EQPreset) {
        for (i, b) in preset.bands.enumerated() where i < bands.count {
            bands[i].filterType = b.type
            bands[i].frequency = b.frequency
            bands[i].bandwidth = b.bandwidth
            bands[i].gain = b.gain
            bands[i].bypass = b.bypass
        }
        globalGain = preset.globalGain
    }

    /// The node's parameters as data (`band3.gain`, `globalGain`, …).
    public var parameterDescriptors: [ParameterDescriptor] { Equalizer.parameterDescriptors(bandCount: bands.count) }

    func send(band index: Int, _ b: EQBand) {
        let typeIndex = Double(EQFilterType.allCases.firstIndex(of: b.type) ?? 0)
        eqKernel.post(.init(band: Int32(index), field: 2, value: typeIndex))
        eqKernel.post(.init(band: Int32(index), field: 3, value: b.frequency))
        eqKernel.post(.init(band: Int32(index), field: 4, value: b.bandwidth))
        eqKernel.post(.init(band: Int32(index), field: 5, value: b.gain))
        eqKernel.post(.init(band: Int32(index), field: 6, value: b.bypass ? 1 : 0))
    }

    override package func engineWillRender(format: AudioFormat, maximumFrames: Int) {
        eqKernel.configure(format: format, bands: bands.map(\.band), globalGain: globalGain, bypass: bypass)
    }
}

/// A parameter change on its way to the render thread.
struct EQMessage: Sendable, BitwiseCopyable {
    /// Band index, or -1 for the whole equaliser.
    var band: Int32
    /// Whole: 0 global gain, 1 bypass. Band: 2 type, 3 frequency, 4 bandwidth, 5 gain, 6 bypass.
    var field: UInt8
    var value: Double
}

/// The EQ node's render half: applies queued parameter changes, then equalises its input.
final class EQKernel: NodeKernel, @unchecked Sendable {
    private var eq: Equalizer?               // render thread (set by configure while not rendering)
    private let messages = SPSCQueue<EQMessage>(capacity: 1024)
    private let producer = Mutex(())         // several control threads may post; one pushes at a time
    private var initialBands: [EQBand]
    private var initialGain: Double

    init(bands: [EQBand], globalGain: Double) {
        initialBands = bands
        initialGain = globalGain
    }

    /// Control plane, while not rendered: builds the equaliser for the engine's format.
    func configure(format: AudioFormat, bands: [EQBand], globalGain: Double, bypass: Bool) {
        if let e = eq, e.sampleRate == format.sampleRate, e.channels == format.channelCount { return }
        while messages.pop() != nil {}
        var e = Equalizer(bands: bands, sampleRate: format.sampleRate, channels: format.channelCount, globalGain: globalGain)
        e.bypass = bypass
        eq = e
    }

    func post(_ m: EQMessage) {
        producer.withLock { _ in _ = messages.push(m) }
    }

    func render(inputs: UnsafeBufferPointer<NodeInput>, output: UnsafeMutablePointer<Float>,
                frames: Int, channels: Int, timing: RenderTiming) {
        if let first = inputs.firstInput {
            output.update(from: first.buffer, count: frames * channels)
        } else {
            output.update(repeating: 0, count: frames * channels)
        }
        guard eq != nil else { return }
        while let m = messages.pop() { apply(m) }
        eq!.process(output, frames: frames, channels: channels)
    }

    private func apply(_ m: EQMessage) {
        if m.band < 0 {
            if m.field == 0 { eq!.globalGain = m.value } else { eq!.bypass = m.value != 0 }
            return
        }
        let i = Int(m.band)
        guard i < eq!.bands.count else { return }
        switch m.field {
        case 2:
            let all = EQFilterType.allCases
            let t = all[all.index(all.startIndex, offsetBy: max(0, min(all.count - 1, Int(m.value))))]
            if eq!.bands[i].type != t { eq!.bands[i].type = t }
        case 3: if eq!.bands[i].frequency != m.value { eq!.bands[i].frequency = m.value }
        case 4: if eq!.bands[i].bandwidth != m.value { eq!.bands[i].bandwidth = m.value }
        case 5: if eq!.bands[i].gain != m.value { eq!.bands[i].gain = m.value }
        default: if eq!.bands[i].bypass != (m.value != 0) { eq!.bands[i].bypass = m.value != 0 }
        }
    }
}
