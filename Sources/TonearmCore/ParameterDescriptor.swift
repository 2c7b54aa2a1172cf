// SPDX-License-Identifier: GPL-3.0-or-later

/// The unit of a node parameter's value (the counterpart of `AudioUnitParameterUnit`).
public enum ParameterUnit: String, Sendable, Hashable, Codable, CaseIterable {
    /// A frequency in Hz.
    case hertz
    /// A level in decibels.
    case decibels
    /// A bandwidth in octaves.
    case octaves
    /// A time in seconds.
    case seconds
    /// A proportion in percent (0...100).
    case percent
    /// A plain ratio (1 = unchanged).
    case ratio
    /// A pitch interval in cents (100 to a semitone).
    case cents
    /// A linear amplitude factor (1 = unity).
    case linearGain
    /// A switch: 0 is off, 1 is on.
    case boolean
    /// An index into ``ParameterDescriptor/valueNames`` (a filter type, a mode, …).
    case indexed
}

/// A node parameter described as data — identifier, name, range, unit and default — so that a
/// command line, MPRIS or a settings file can list the parameters of any node and set them by
/// identifier, without knowing the node's type (the counterpart of `AUParameter`'s metadata).
///
/// A descriptor is an immutable value; it can be passed between threads freely.
public struct ParameterDescriptor: Sendable, Hashable, Codable, Identifiable, CustomStringConvertible {
    /// A stable, machine-readable key, e.g. `band3.gain` or `globalGain`.
    public var identifier: String
    /// A short human-readable name, e.g. `Band 3 gain`.
    public var name: String
    /// The values the parameter accepts.
    public var range: ClosedRange<Double>
    /// What the value measures.
    public var unit: ParameterUnit
    /// The value a freshly created node has.
    public var defaultValue: Double
    /// For ``ParameterUnit/indexed`` parameters, the name of each index (empty otherwise).
    public var valueNames: [String]

    public var id: String { identifier }

    /// Creates a descriptor; `defaultValue` is clamped into `range`.
    public init(identifier: String, name: String, range: ClosedRange<Double>, unit: ParameterUnit,
                defaultValue: Double, valueNames: [String] = []) {
        self.identifier = identifier
        self.name = name
        self.range = range
        self.unit = unit
        self.valueNames = valueNames
        self.defaultValue = min(max(defaultValue, range.lowerBound), range.upperBound)
    }

    /// `value` limited to ``range`` (NaN becomes the default).
    public func clamped(_ value: Double) -> Double {
        guard !value.isNaN else { return defaultValue }
        return min(max(value, range.lowerBound), range.upperBound)
    }

    /// Whether `value` is inside ``range`` (and, for indexed or boolean parameters, whole).
    public func accepts(_ value: Double) -> Bool {
        guard range.contains(value) else { return false }
        switch unit {
        case .indexed, .boolean: return value == value.rounded()
        default: return true
        }
    }

    public var description: String {
        "\(identifier) (\(name)): \(range.lowerBound)...\(range.upperBound) \(unit.rawValue), default \(defaultValue)"
    }
}
