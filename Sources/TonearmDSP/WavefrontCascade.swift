// SPDX-License-Identifier: GPL-3.0-or-later

// The SIMD "wavefront" biquad cascade behind ``Equalizer``.
//
// A cascade of B biquads is sequential per sample: band b needs band b−1's output. The wavefront
// breaks that chain by letting band b work on sample n−b while band 0 works on sample n: then
// every band's input at step n is a value the previous band produced at step n−1, and all bands
// of all channels of a pass update together in a few SIMD4<Float> registers. Lanes are ordered
// band-major, channel-minor (stereo: L0 R0 L1 R1 …), so moving every band's output one band
// down is a two-lane shift (one `shufps` per register) and stereo 10 bands fill exactly five
// registers. Sections are transposed direct form II.
//
// Latency is compensated exactly, per block: a block of F frames takes F + D steps (D = bands −
// 1); in the first and last D steps the lanes whose sample lies outside the block keep their
// state (a masked update), so at the end of a block every band has processed exactly the
// block's samples, as a sequential cascade would have, and the output has no delay.
//
// Bands are placed at the END of the lanes; the lanes in front of them (when bands × channels
// is not a multiple of 4) are exact identity sections (y = x). Up to 8 registers (16 stereo or
// 32 mono bands) make one stage; more bands are split into stages run one after the other.
//
// Denormals: every real section adds a tiny constant (1e-20) to its second state each step,
// which keeps states far above the denormal range when the input falls silent (the resulting
// DC offset at the output is below 1e-12). Identity lanes get no offset and stay exact.
//
// Peaking form: when every section of a stage is a peaking (parametric) or notch section or an
// identity — biquads with b1 = a1 and b0 + b2 = 1 + a2, which pass DC with gain exactly 1; the
// whole 10-band graphic equaliser — the denormal guard is one constant (the same 1e-20) added to
// the stage's input instead of one add per section per step: the DC it puts in every state keeps
// them all normal. That is 9 vector operations per register and step instead of 10 (stereo
// 10 bands: ≈ 5 % faster, measured). When a band of such a stage changes to another type, the
// stage gives its sections their own guards again and runs the general step from then on; the
// states are the same in both forms, so nothing is reset. (A direct-form-II rewrite of these
// sections as 1 + g (1 − z⁻²) / A(z), 7 operations, was tried and measured slower: it lengthens
// the path from a band's input to its output, which the wavefront chains band after band.)

/// Registers (SIMD4<Float>) in one stage at most.
let maxStageRegisters = 8
/// The constant added to each real section's second state to keep it out of the denormal range.
let denormalGuard: Float = 1e-20

/// The coefficients and state of one stage, in a flat array of SIMD4<Float> registers:
/// `[current 6R][delta 6R][target 6R][state 2R]`, coefficients ordered b0, b1 − a1·b0,
/// b2 − a2·b0, −a1, −a2, dc (see ``WavefrontLanes/step(_:_:stereo:)``).
struct CascadeStage: Sendable {
    /// Interleaved channels this pass processes together: 1 (mono lanes) or 2 (stereo lanes).
    let laneChannels: Int
    /// The first channel of the pass in the interleaved frame.
    let channelOffset: Int
    /// The equaliser bands this stage holds, in cascade order.
    let bands: Range<Int>
    /// SIMD4 registers per coefficient or state.
    let registers: Int
    /// Identity bands in front of the real ones.
    let padBands: Int
    var memory: [SIMD4<Float>]
    /// Steps left in the current coefficient ramp (0: coefficients are at their targets).
    var rampSteps = 0
    /// Whether every target is the identity (then, once no ramp runs, the stage is skipped).
    var targetIsIdentity = true
    /// Whether the stage runs in the peaking form (input-side denormal guard; see the top of the
    /// file).
    private(set) var peaking = false

    static let coefficientCount = 6

    init(laneChannels: Int, channelOffset: Int, bands: Range<Int>) {
        self.laneChannels = laneChannels
        self.channelOffset = channelOffset
        self.bands = bands
        registers = (bands.count * laneChannels + 3) / 4
        padBands = registers * 4 / laneChannels - bands.count
        memory = Array(repeating: .zero, count: registers * (3 * Self.coefficientCount + 2))
        for section in [0, 2] { // current and target b0 = 1: identity everywhere
            for r in 0..<registers { memory[section * Self.coefficientCount * registers + r] = SIMD4(repeating: 1) }
        }
    }

    var currentBase: Int { 0 }
    var deltaBase: Int { Self.coefficientCount * registers }
    var targetBase: Int { 2 * Self.coefficientCount * registers }
    var stateBase: Int { 3 * Self.coefficientCount * registers }

    /// Whether `c` can run in the peaking form: b1 = a1 and b0 + b2 = 1 + a2 (peaking, notch,
    /// identity).
    static func fitsPeakingForm(_ c: BiquadCoefficients) -> Bool {
        c.isIdentity || (abs(c.b1 - c.a1) <= 1e-12 && abs((c.b0 + c.b2) - (1 + c.a2)) <= 1e-12)
    }

    /// Chooses the peaking form (every section must then fit it); set the targets afterwards.
    mutating func choosePeakingForm(_ on: Bool) {
        peaking = on
    }

    /// Sets the target coefficients of equaliser band `band` (which must be in ``bands``). In the
    /// peaking form, `c` must fit it (``fitsPeakingForm(_:)``); call ``convertToGeneralForm()``
    /// first otherwise.
    mutating func setTarget(band: Int, _ c: BiquadCoefficients, identity: Bool) {
        let e = padBands + (band - bands.lowerBound)
        let coefficients: (Float, Float, Float, Float, Float, Float) =
            (Float(c.b0), Float(c.b1 - c.a1 * c.b0), Float(c.b2 - c.a2 * c.b0), Float(-c.a1), Float(-c.a2),
             identity || peaking ? 0 : denormalGuard)
        for ch in 0..<laneChannels {
            let lane = e * laneChannels + ch
            let r = lane / 4, k = lane % 4
            let t = targetBase
            memory[t + 0 * registers + r][k] = coefficients.0
            memory[t + 1 * registers + r][k] = coefficients.1
            memory[t + 2 * registers + r][k] = coefficients.2
            memory[t + 3 * registers + r][k] = coefficients.3
            memory[t + 4 * registers + r][k] = coefficients.4
            memory[t + 5 * registers + r][k] = coefficients.5
        }
    }

    /// Starts moving the current coefficients linearly to the targets over `steps` steps
    /// (0: jump there now).
    mutating func beginRamp(steps: Int, targetIsIdentity identity: Bool) {
        targetIsIdentity = identity
        let n = Self.coefficientCount * registers
        if steps <= 0 {
            for i in 0..<n { memory[currentBase + i] = memory[targetBase + i]; memory[deltaBase + i] = .zero }
            rampSteps = 0
            return
        }
        let inv = 1 / Float(steps)
        for i in 0..<n { memory[deltaBase + i] = (memory[targetBase + i] - memory[currentBase + i]) * inv }
        rampSteps = steps
    }

    /// Moves a peaking-form stage to the general form: every non-identity lane of the current and
    /// target coefficients gets its own denormal guard back (the states need no change). Set new
    /// targets afterwards and begin a ramp.
    mutating func convertToGeneralForm() {
        guard peaking else { return }
        let n = registers
        // The two sections by index, not `for base in [currentBase, targetBase]`: that array
        // literal is an allocation, and this runs on the render thread.
        for section in 0..<2 {
            let base = section == 0 ? currentBase : targetBase
            for r in 0..<n {
                // Every lane that is not an exact identity gets its own guard again.
                var identity = memory[base + r] .== SIMD4(repeating: 1)
                for c in 1..<5 { identity = identity .& (memory[base + c * n + r] .== SIMD4(repeating: 0)) }
                memory[base + 5 * n + r] = SIMD4(repeating: denormalGuard).replacing(with: 0, where: identity)
            }
        }
        if rampSteps == 0 { for i in 0..<(Self.coefficientCount * n) { memory[deltaBase + i] = .zero } }
        peaking = false
    }

    /// Jumps every coefficient to its target and clears the state.
    mutating func snapAndClear() {
        beginRamp(steps: 0, targetIsIdentity: targetIsIdentity)
        for i in 0..<(2 * registers) { memory[stateBase + i] = .zero }
    }

    /// Whether processing can be skipped: identity targets reached.
    var isSkippable: Bool { targetIsIdentity && rampSteps == 0 }

    /// Runs the stage over `frames` interleaved frames of `stride` channels, in place.
    mutating func process(_ buffer: UnsafeMutablePointer<Float>, frames: Int, stride: Int) {
        if isSkippable {
            // Identity lanes hold no state after two samples; make it exact.
            for i in 0..<(2 * registers) { memory[stateBase + i] = .zero }
            return
        }
        let io = buffer + channelOffset
        let stereo = laneChannels == 2
        var ramp = rampSteps
        memory.withUnsafeMutableBufferPointer { m in
            let p = m.baseAddress!
            if peaking {
                Self.dispatch(PeakingSection.self, registers, p, io, frames, stride, stereo, &ramp)
            } else {
                Self.dispatch(GeneralSection.self, registers, p, io, frames, stride, stereo, &ramp)
            }
        }
        rampSteps = ramp
    }

    @inline(__always)
    static func dispatch<F: SectionForm>(_ form: F.Type, _ registers: Int, _ p: UnsafeMutablePointer<SIMD4<Float>>,
                                         _ io: UnsafeMutablePointer<Float>, _ frames: Int, _ stride: Int,
                                         _ stereo: Bool, _ ramp: inout Int) {
        switch registers {
        case 1: WavefrontLanes<1>.run(form, p, io, frames, stride, stereo, &ramp)
        case 2: WavefrontLanes<2>.run(form, p, io, frames, stride, stereo, &ramp)
        case 3: WavefrontLanes<3>.run(form, p, io, frames, stride, stereo, &ramp)
        case 4: WavefrontLanes<4>.run(form, p, io, frames, stride, stereo, &ramp)
        case 5: WavefrontLanes<5>.run(form, p, io, frames, stride, stereo, &ramp)
        case 6: WavefrontLanes<6>.run(form, p, io, frames, stride, stereo, &ramp)
        case 7: WavefrontLanes<7>.run(form, p, io, frames, stride, stereo, &ramp)
        default: WavefrontLanes<8>.run(form, p, io, frames, stride, stereo, &ramp)
        }
    }
}

/// One stage's coefficients and state held in registers while a block runs.
struct WavefrontLanes<let R: Int> {
    typealias Bank = InlineArray<R, SIMD4<Float>>
    var b0: Bank, b1: Bank, b2: Bank, na1: Bank, na2: Bank, dc: Bank
    var s1: Bank, s2: Bank, y: Bank

    @inline(__always)
    static func load(_ p: UnsafePointer<SIMD4<Float>>) -> Bank { Bank { p[$0] } }

    @inline(__always)
    static func store(_ bank: Bank, _ p: UnsafeMutablePointer<SIMD4<Float>>) {
        for r in 0..<R { p[r] = bank[r] }
    }

    @inline(__always)
    mutating func loadCoefficients(_ p: UnsafePointer<SIMD4<Float>>) {
        b0 = Self.load(p); b1 = Self.load(p + R); b2 = Self.load(p + 2 * R)
        na1 = Self.load(p + 3 * R); na2 = Self.load(p + 4 * R); dc = Self.load(p + 5 * R)
    }

    @inline(__always)
    func storeCoefficients(_ p: UnsafeMutablePointer<SIMD4<Float>>) {
        Self.store(b0, p); Self.store(b1, p + R); Self.store(b2, p + 2 * R)
        Self.store(na1, p + 3 * R); Self.store(na2, p + 4 * R); Self.store(dc, p + 5 * R)
    }

    @inline(__always)
    mutating func addDeltas(_ d: UnsafePointer<SIMD4<Float>>) {
        for r in 0..<R {
            b0[r] += d[r]; b1[r] += d[R + r]; b2[r] += d[2 * R + r]
            na1[r] += d[3 * R + r]; na2[r] += d[4 * R + r]; dc[r] += d[5 * R + r]
        }
    }

    /// The inputs of every lane: the new samples in the first lanes, each band's previous
    /// output moved one band along.
    @inline(__always)
    func shiftedInputs(_ i0: Float, _ i1: Float, stereo: Bool) -> Bank {
        var x = Bank(repeating: .zero)
        if stereo {
            x[0] = SIMD4(i0, i1, y[0][0], y[0][1])
            for r in 1..<R { x[r] = SIMD4(y[r - 1][2], y[r - 1][3], y[r][0], y[r][1]) }
        } else {
            x[0] = SIMD4(i0, y[0][0], y[0][1], y[0][2])
            for r in 1..<R { x[r] = SIMD4(y[r - 1][3], y[r][0], y[r][1], y[r][2]) }
        }
        return x
    }

    /// One step of every lane: transposed direct form II with the output substituted into the
    /// state updates (`b1`, `b2` hold b1 − a1·b0 and b2 − a2·b0), so that a state depends on the
    /// previous state rather than on this step's output — a shorter loop-carried chain.
    @inline(__always)
    mutating func step<F: SectionForm>(_ form: F.Type, _ i0: Float, _ i1: Float, stereo: Bool) {
        if F.isPeaking { peakingStep(i0, i1, stereo: stereo); return }
        let x = shiftedInputs(i0, i1, stereo: stereo)
        for r in 0..<R {
            let old1 = s1[r]
            y[r] = b0[r] * x[r] + old1
            s1[r] = b1[r] * x[r] + s2[r] + na1[r] * old1
            s2[r] = b2[r] * x[r] + dc[r] + na2[r] * old1
        }
    }

    /// One step in which only lanes whose band index `e` satisfies `low < e <= high` update
    /// their state (the others are outside the block).
    @inline(__always)
    mutating func maskedStep<F: SectionForm>(_ form: F.Type, _ i0: Float, _ i1: Float, stereo: Bool,
                                             bandOfLane: Bank, low: Float, high: Float) {
        var x = shiftedInputs(i0, i1, stereo: stereo)
        if F.isPeaking {
            x[0] += Self.inputGuard(stereo: stereo)
            for r in 0..<R {
                let valid = (bandOfLane[r] .<= SIMD4(repeating: high)) .& (bandOfLane[r] .> SIMD4(repeating: low))
                let old1 = s1[r]
                y[r] = b0[r] * x[r] + old1
                let n1 = b1[r] * x[r] + s2[r] + na1[r] * old1
                let n2 = b2[r] * x[r] + na2[r] * old1
                s1[r].replace(with: n1, where: valid)
                s2[r].replace(with: n2, where: valid)
            }
            return
        }
        for r in 0..<R {
            let valid = (bandOfLane[r] .<= SIMD4(repeating: high)) .& (bandOfLane[r] .> SIMD4(repeating: low))
            let old1 = s1[r]
            y[r] = b0[r] * x[r] + old1
            let n1 = b1[r] * x[r] + s2[r] + na1[r] * old1
            let n2 = b2[r] * x[r] + dc[r] + na2[r] * old1
            s1[r].replace(with: n1, where: valid)
            s2[r].replace(with: n2, where: valid)
        }
    }

    /// The denormal guard of a peaking-form stage, added to the new samples (first lanes).
    @inline(__always)
    static func inputGuard(stereo: Bool) -> SIMD4<Float> {
        stereo ? SIMD4(denormalGuard, denormalGuard, 0, 0) : SIMD4(denormalGuard, 0, 0, 0)
    }

    /// One step of a stage whose sections all pass DC with gain 1: the general step without the
    /// per-section guard (the guard is added once to the stage's input).
    @inline(__always)
    mutating func peakingStep(_ i0: Float, _ i1: Float, stereo: Bool) {
        var x = shiftedInputs(i0, i1, stereo: stereo)
        x[0] += Self.inputGuard(stereo: stereo)
        for r in 0..<R {
            let old1 = s1[r]
            y[r] = b0[r] * x[r] + old1
            s1[r] = b1[r] * x[r] + s2[r] + na1[r] * old1
            s2[r] = b2[r] * x[r] + na2[r] * old1
        }
    }

    @inline(__always)
    mutating func advanceRamp(_ ramp: inout Int, _ deltas: UnsafePointer<SIMD4<Float>>,
                              _ targets: UnsafePointer<SIMD4<Float>>) {
        if ramp > 0 {
            ramp -= 1
            if ramp == 0 { loadCoefficients(targets) } else { addDeltas(deltas) }
        }
    }

    /// A fill or drain step at step `t` of a block (lanes outside the block keep their state).
    @inline(__always)
    mutating func masked<F: SectionForm>(_ form: F.Type, _ t: Int, _ io: UnsafeMutablePointer<Float>, _ frames: Int, _ stride: Int,
                         _ stereo: Bool, _ delay: Int, _ bandOfLane: Bank, _ ramp: inout Int,
                         _ deltas: UnsafePointer<SIMD4<Float>>, _ targets: UnsafePointer<SIMD4<Float>>) {
        let inside = t < frames
        let i0 = inside ? io[t * stride] : 0
        let i1 = inside && stereo ? io[t * stride + 1] : 0
        maskedStep(form, i0, i1, stereo: stereo, bandOfLane: bandOfLane, low: Float(t - frames), high: Float(t))
        if t >= delay {
            let o = (t - delay) * stride
            io[o] = y[R - 1][stereo ? 2 : 3]
            if stereo { io[o + 1] = y[R - 1][3] }
        }
        advanceRamp(&ramp, deltas, targets)
    }

    /// Processes one block in place. `p` is the stage memory; `ramp` the steps left in the
    /// coefficient ramp (updated).
    @inline(never)
    static func run<F: SectionForm>(_ form: F.Type, _ p: UnsafeMutablePointer<SIMD4<Float>>, _ io: UnsafeMutablePointer<Float>,
                    _ frames: Int, _ stride: Int, _ stereo: Bool, _ ramp: inout Int) {
        let cn = CascadeStage.coefficientCount
        let deltas = UnsafePointer(p + cn * R)
        let targets = UnsafePointer(p + 2 * cn * R)
        let state = p + 3 * cn * R
        var lanes = WavefrontLanes(
            b0: load(p), b1: load(p + R), b2: load(p + 2 * R), na1: load(p + 3 * R), na2: load(p + 4 * R),
            dc: load(p + 5 * R), s1: load(state), s2: load(state + R), y: Bank(repeating: .zero))
        let laneChannels = stereo ? 2 : 1
        let bandOfLane = Bank { r in
            SIMD4(Float((4 * r) / laneChannels), Float((4 * r + 1) / laneChannels),
                  Float((4 * r + 2) / laneChannels), Float((4 * r + 3) / laneChannels))
        }
        let delay = 4 * R / laneChannels - 1
        let total = frames + delay
        let wasRamping = ramp > 0

        // Fill: the first bands start on the block while the later ones wait.
        let fillEnd = min(delay, frames)
        var t = 0
        while t < fillEnd {
            lanes.masked(form, t, io, frames, stride, stereo, delay, bandOfLane, &ramp, deltas, targets)
            t &+= 1
        }
        // Steady state: every lane works on a sample of this block.
        if stereo {
            while t < frames && ramp > 0 {
                let i = t &* stride
                lanes.step(form, io[i], io[i &+ 1], stereo: true)
                let o = (t &- delay) &* stride
                io[o] = lanes.y[R - 1][2]; io[o &+ 1] = lanes.y[R - 1][3]
                lanes.advanceRamp(&ramp, deltas, targets)
                t &+= 1
            }
            var i = t &* stride
            var o = (t &- delay) &* stride
            while t < frames {
                lanes.step(form, io[i], io[i &+ 1], stereo: true)
                io[o] = lanes.y[R - 1][2]; io[o &+ 1] = lanes.y[R - 1][3]
                i &+= stride; o &+= stride
                t &+= 1
            }
        } else {
            while t < frames && ramp > 0 {
                lanes.step(form, io[t &* stride], 0, stereo: false)
                io[(t &- delay) &* stride] = lanes.y[R - 1][3]
                lanes.advanceRamp(&ramp, deltas, targets)
                t &+= 1
            }
            var i = t &* stride
            var o = (t &- delay) &* stride
            while t < frames {
                lanes.step(form, io[i], 0, stereo: false)
                io[o] = lanes.y[R - 1][3]
                i &+= stride; o &+= stride
                t &+= 1
            }
        }
        // Drain: the later bands finish the block while the first ones wait.
        t = max(t, fillEnd)
        while t < total {
            lanes.masked(form, t, io, frames, stride, stereo, delay, bandOfLane, &ramp, deltas, targets)
            t &+= 1
        }

        store(lanes.s1, state)
        store(lanes.s2, state + R)
        if wasRamping { lanes.storeCoefficients(p) }
    }
}

/// Which section form a stage runs (a type parameter, so that each form gets its own loops).
protocol SectionForm {
    static var isPeaking: Bool { get }
}

/// Transposed direct form II, any biquad.
enum GeneralSection: SectionForm {
    static var isPeaking: Bool { false }
}

/// Sections that all pass DC with gain 1 (peaking, notch, identity): guard at the input.
enum PeakingSection: SectionForm {
    static var isPeaking: Bool { true }
}
