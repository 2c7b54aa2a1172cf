// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCore

/// How the channels of a source go onto the engine's channels when the two layouts differ (a
/// queue's engine keeps the first item's layout; a later item may be 5.1(side) against its 5.1,
/// or 3.0 against its 2.1): each source channel goes to the output channel of the same position;
/// one the output has no speaker for goes to the nearest it has — side and rear surrounds stand
/// in for each other, the centre goes to the front pair at −3 dB, a rear centre to the surround
/// pair (else the front pair) at −3 dB, surrounds to the front pair at −3 dB when the output has
/// neither, the front-of-centre pair to the front pair — and an LFE without a place is left out
/// (as libswresample's defaults do).
///
/// Made (allocating) on the decoder thread when an item starts, and by a queue's crossfade for
/// its incoming file; ``apply(_:into:frames:)`` allocates nothing.
package struct ChannelMix {
    package struct Term {
        package var output: Int
        package var input: Int
        package var gain: Float
    }
    package let inputChannels: Int
    package let outputChannels: Int
    package let terms: [Term]

    /// The mix from `source` to `output`; nil when channels are copied as they are or the
    /// channel-count rules of ``AudioPlayerNode`` apply: the same layout, a mono side, or a
    /// layout that is not known position by position.
    package init?(from source: AudioFormat, to output: AudioFormat) {
        guard source.channelCount > 1, output.channelCount > 1,
              let from = source.effectiveChannelLayout, let to = output.effectiveChannelLayout,
              from != to, !from.positions.contains(.unknown), !to.positions.contains(.unknown) else { return nil }
        self.init(from: from, to: to)
    }

    package init(from: AudioChannelLayout, to: AudioChannelLayout) {
        inputChannels = from.channelCount
        outputChannels = to.channelCount
        typealias P = AudioChannelPosition
        func index(_ p: P) -> Int? { to.positions.firstIndex(of: p) }
        let half = Float(0.5).squareRoot()
        var terms: [Term] = []
        for (i, p) in from.positions.enumerated() {
            func to(_ targets: [(P, Float)]) -> Bool {
                let found = targets.compactMap { t in index(t.0).map { ($0, t.1) } }
                guard found.count == targets.count else { return false }
                for (o, g) in found { terms.append(Term(output: o, input: i, gain: g)) }
                return true
            }
            if let o = index(p) { terms.append(Term(output: o, input: i, gain: 1)); continue }
            switch p {
            case .sideLeft: _ = to([(.backLeft, 1)]) || to([(.frontLeft, half)])
            case .sideRight: _ = to([(.backRight, 1)]) || to([(.frontRight, half)])
            case .backLeft: _ = to([(.sideLeft, 1)]) || to([(.frontLeft, half)])
            case .backRight: _ = to([(.sideRight, 1)]) || to([(.frontRight, half)])
            case .frontCenter: _ = to([(.frontLeft, half), (.frontRight, half)])
            case .backCenter:
                _ = to([(.backLeft, half), (.backRight, half)]) || to([(.sideLeft, half), (.sideRight, half)])
                    || to([(.frontLeft, half), (.frontRight, half)])
            case .frontLeftOfCenter, .wideLeft, .stereoLeft: _ = to([(.frontLeft, 1)])
            case .frontRightOfCenter, .wideRight, .stereoRight: _ = to([(.frontRight, 1)])
            case .lowFrequency2: _ = to([(.lowFrequency, 1)])
            default: break
            }
        }
        self.terms = terms
    }

    /// Mixes `frames` interleaved frames of ``inputChannels`` channels from `src` into `dst`
    /// (``outputChannels`` channels).
    package func apply(_ src: UnsafePointer<Float>, into dst: UnsafeMutablePointer<Float>, frames: Int) {
        let (ic, oc) = (inputChannels, outputChannels)
        dst.update(repeating: 0, count: frames * oc)
        terms.withUnsafeBufferPointer { t in
            for f in 0..<frames {
                let s = src + f * ic, d = dst + f * oc
                for term in t { d[term.output] += s[term.input] * term.gain }
            }
        }
    }
}
