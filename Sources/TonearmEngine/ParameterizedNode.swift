// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCore
import TonearmDSP

/// A node whose parameters are described as data and can be read and set by identifier without
/// knowing the node's type: what a command line, MPRIS or a settings file uses
/// (``AudioUnitEQ`` and every ``AudioUnitEffect``).
///
/// Threading: every member may be called from any thread; changes reach the render thread
/// through the node's lock-free queue.
public protocol ParameterizedNode: AudioNode {
    /// The parameters: identifier, name, range, unit, default (and value names).
    var parameterDescriptors: [ParameterDescriptor] { get }
    /// The current value of `identifier`, or nil when the node has no such parameter.
    func value(forParameter identifier: String) -> Double?
    /// Sets `identifier`. Throws ``TonearmError/invalidArgument(_:)`` for an unknown identifier
    /// (the message lists the known ones) or a value outside the range (nothing changes then).
    func setValue(_ value: Double, forParameter identifier: String) throws(TonearmError)
}

extension AudioUnitEffect: ParameterizedNode {}

extension AudioUnitEQ: ParameterizedNode {
    public func value(forParameter identifier: String) -> Double? {
        switch identifier {
        case "bypass": return bypass ? 1 : 0
        case "globalGain": return globalGain
        default:
            guard let (i, field) = Equalizer.bandParameter(identifier, bandCount: bands.count) else { return nil }
            let b = bands[i]
            switch field {
            case "type": return Double(EQFilterType.allCases.firstIndex(of: b.filterType) ?? 0)
            case "frequency": return b.frequency
            case "bandwidth": return b.bandwidth
            case "gain": return b.gain
            case "bypass": return b.bypass ? 1 : 0
            default: return nil
            }
        }
    }

    public func setValue(_ value: Double, forParameter identifier: String) throws(TonearmError) {
        guard let d = parameterDescriptors.first(where: { $0.identifier == identifier }) else {
            throw .invalidArgument("the equalizer has no parameter '\(identifier)' (it has bypass, globalGain and band0…band\(bands.count - 1) .type/.frequency/.bandwidth/.gain/.bypass)")
        }
        guard d.accepts(value) else {
            throw .invalidArgument("\(identifier) = \(value) is outside \(d.range.lowerBound)...\(d.range.upperBound) \(d.unit.rawValue)")
        }
        switch identifier {
        case "bypass": bypass = value != 0
        case "globalGain": globalGain = value
        default:
            guard let (i, field) = Equalizer.bandParameter(identifier, bandCount: bands.count) else { return }
            switch field {
            case "type": bands[i].filterType = EQFilterType.allCases[Int(value)]
            case "frequency": bands[i].frequency = value
            case "bandwidth": bands[i].bandwidth = value
            case "gain": bands[i].gain = value
            default: bands[i].bypass = value != 0
            }
        }
    }
}

/// The effect nodes by name, for command lines and settings files: `reverb`, `delay`,
/// `time-pitch`, `varispeed` (the equalizer is a player's own, see `AudioPlayer.eq`).
public enum EffectCatalog {
    /// The names, in the order they are listed.
    public static let names = ["reverb", "delay", "time-pitch", "varispeed"]

    /// What each one does, in a few words.
    public static func summary(_ name: String) -> String {
        switch name {
        case "reverb": return "reverberation (factory presets small room … cathedral, wet/dry mix)"
        case "delay": return "echo (time, feedback, low-pass in the loop, wet/dry mix)"
        case "time-pitch": return "speed with the pitch kept, and pitch with the speed kept (librubberband)"
        case "varispeed": return "speed with the pitch following, as a tape"
        default: return ""
        }
    }

    /// A fresh node for `name`, or nil for an unknown name.
    public static func make(_ name: String) -> AudioUnitEffect? {
        switch name {
        case "reverb": return AudioUnitReverb()
        case "delay": return AudioUnitDelay()
        case "time-pitch": return AudioUnitTimePitch()
        case "varispeed": return AudioUnitVarispeed()
        default: return nil
        }
    }
}
