// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization
import TonearmCore
import TonearmDSP
import TonearmRender

/// The settings of one band of an ``AudioUnitEQ`` (the counterpart of
/// `AVAudioUnitEQFilterParameters`). Setting a property reaches the render thread through a
/// lock-free queue and is smoothed there (no zipper noise).
///
/// `@unchecked Sendable`: its values are under `values`; `owner` (weak) and `index` are set at
/// creation and never change.
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
///
/// `@unchecked Sendable`: `bands` is set once in `init`; the gain and bypass are under
/// `settings`; the kernel is a ``DSPSlot`` host.
public final class AudioUnitEQ: AudioNode, @unchecked Sendable {
    /// The bands, in cascade order.
    public private(set) var bands: [AudioUnitEQFilterParameters] = []
    private let eqKernel: EffectKernel<EQDSP>
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
        let k = EffectKernel<EQDSP>()
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
            eqKernel.post(ParameterMessage(index: EQDSP.globalGainIndex, value: g))
        }
    }

    /// When true, audio passes untouched.
    public var bypass: Bool {
        get { settings.withLock { $0.bypass } }
        set {
            settings.withLock { $0.bypass = newValue }
            eqKernel.post(ParameterMessage(index: EQDSP.bypassIndex, value: newValue ? 1 : 0))
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
        for (field, value) in EQDSP.values(of: b).enumerated() {
            eqKernel.post(ParameterMessage(index: EQDSP.index(band: index, field: field), value: value))
        }
    }

    override package func engineWillRender(format: AudioFormat, maximumFrames: Int) {
        eqKernel.configure(format: format, maximumFrames: maximumFrames) {
            (EQDSP.values(bypass: bypass, globalGain: globalGain, bands: bands.map(\.band)), false)
        }
    }
}

/// The equaliser as an effect DSP, hosted like every effect by ``EffectKernel`` (its
/// ``DSPSlot`` keeps the DSP the render thread uses apart from the control plane's record of
/// what it was built for, so a graph change never touches it).
///
/// Parameters as values: 0 bypass (the ``Equalizer``'s own, which restarts from a cleared state;
/// the slot's bypass stays off), 1 global gain in dB, then five per band — type (index in
/// ``EQFilterType/allCases``), frequency, bandwidth, gain, bypass.
struct EQDSP: EffectDSP {
    static let bypassIndex: Int32 = 0
    static let globalGainIndex: Int32 = 1
    static let fieldsPerBand = 5

    var eq: Equalizer

    static func index(band: Int, field: Int) -> Int32 { Int32(2 + band * fieldsPerBand + field) }

    /// The filter types by index, made once (on the control plane, which asks for them first in
    /// ``values(of:)``): `allCases` would build an array on the render thread at every change.
    static let filterTypes: [EQFilterType] = Array(EQFilterType.allCases)

    static func values(of b: EQBand) -> [Double] {
        [Double(filterTypes.firstIndex(of: b.type) ?? 0), b.frequency, b.bandwidth, b.gain, b.bypass ? 1 : 0]
    }

    static func values(bypass: Bool, globalGain: Double, bands: [EQBand]) -> [Double] {
        [bypass ? 1 : 0, globalGain] + bands.flatMap(values(of:))
    }

    /// Render thread: the type at index `value` (clamped); allocates nothing.
    static func filterType(_ value: Double) -> EQFilterType {
        filterTypes[max(0, min(filterTypes.count - 1, Int(value)))]
    }

    init(sampleRate: Double, channels: Int, maximumFrames: Int, values: [Double]) {
        let count = max(0, (values.count - 2) / Self.fieldsPerBand)
        let bands = (0..<count).map { i in
            let v = values[(2 + i * Self.fieldsPerBand)...]
            return EQBand(type: Self.filterType(v[v.startIndex]), frequency: v[v.startIndex + 1], bandwidth: v[v.startIndex + 2],
                          gain: v[v.startIndex + 3], bypass: v[v.startIndex + 4] != 0)
        }
        eq = Equalizer(bands: bands, sampleRate: sampleRate, channels: channels, globalGain: values.count > 1 ? values[1] : 0)
        eq.bypass = values.first.map { $0 != 0 } ?? false
        // The render thread's change paths, run here on the control plane on a copy (its first
        // change copies the arrays; this DSP stays as built, and unshared once the copy is gone).
        var rehearsal = self
        rehearsal.rehearseChanges(channels: channels)
    }

    /// Applies every kind of change the render thread may apply, processing a little silence
    /// after each: the Swift runtime instantiates the generic metadata and witness tables a path
    /// needs on its first use in the process (allocating, taking its lock), which must happen
    /// here and not on the render thread. Not a no-op change (an unchanged band changes nothing
    /// and reaches none of it): every filter type in turn (a peaking-form stage given a shelf
    /// converts to the general form), frequency, bandwidth, gain, a band's bypass, the global
    /// gain and the bypass, on a DSP of the same shape (the cascade's code is generic over its
    /// register count).
    private mutating func rehearseChanges(channels: Int) {
        guard !eq.bands.isEmpty else { return }
        let frames = 64
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: frames * channels)
        buffer.initialize(repeating: 0, count: frames * channels)
        defer { buffer.deallocate() }
        let band = Int(Self.index(band: 0, field: 0))
        var changes: [(index: Int, value: Double)] = (0..<Self.filterTypes.count).map { (band, Double($0)) }
        changes += [(band, 0), (band + 1, 1234), (band + 2, 2.5), (band + 3, 6), (band + 4, 1), (band + 4, 0),
                    (Int(Self.globalGainIndex), -3), (Int(Self.bypassIndex), 1), (Int(Self.bypassIndex), 0)]
        for c in changes {
            setParameter(c.index, c.value)
            process(buffer, frames: frames, channels: channels)
        }
    }

    /// Render thread: a change equal to the current value is skipped (a band's setter smooths
    /// and redesigns).
    mutating func setParameter(_ index: Int, _ value: Double) {
        switch index {
        case Int(Self.bypassIndex): if eq.bypass != (value != 0) { eq.bypass = value != 0 }
        case Int(Self.globalGainIndex): eq.globalGain = value
        default:
            let i = (index - 2) / Self.fieldsPerBand
            guard index >= 2, i < eq.bands.count else { return }
            let b = eq.bands[i]
            // In place (`updateBand`): setting `eq.bands[i].x` would copy the array.
            switch (index - 2) % Self.fieldsPerBand {
            case 0:
                let t = Self.filterType(value)
                if b.type != t { eq.updateBand(at: i) { $0.type = t } }
            case 1: if b.frequency != value { eq.updateBand(at: i) { $0.frequency = value } }
            case 2: if b.bandwidth != value { eq.updateBand(at: i) { $0.bandwidth = value } }
            case 3: if b.gain != value { eq.updateBand(at: i) { $0.gain = value } }
            default: if b.bypass != (value != 0) { eq.updateBand(at: i) { $0.bypass = value != 0 } }
            }
        }
    }

    mutating func process(_ buffer: UnsafeMutablePointer<Float>, frames: Int, channels: Int) {
        eq.process(buffer, frames: frames, channels: channels)
    }
}
