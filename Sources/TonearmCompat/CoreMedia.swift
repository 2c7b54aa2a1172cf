// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch

/// CoreMedia's `CMTime` as media code uses it: a rational time (`value / timescale` seconds) with
/// its invalid, indefinite and infinite values, made from seconds, compared and added exactly
/// when the timescales allow, and read as seconds (`CMTimeGetSeconds`, `.seconds`) for
/// Tonearm's APIs, which take seconds as `Double`.
public struct CMTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    public typealias Value = Int64
    public typealias Scale = Int32

    public var value: Value
    public var timescale: Scale
    public var flags: Flags
    public var epoch: Int64 = 0

    public struct Flags: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let valid = Flags(rawValue: 1 << 0)
        public static let hasBeenRounded = Flags(rawValue: 1 << 1)
        public static let positiveInfinity = Flags(rawValue: 1 << 2)
        public static let negativeInfinity = Flags(rawValue: 1 << 3)
        public static let indefinite = Flags(rawValue: 1 << 4)
    }

    public init(value: Value, timescale: Scale, flags: Flags = .valid, epoch: Int64 = 0) {
        self.value = value
        self.timescale = timescale
        self.flags = flags
        self.epoch = epoch
    }

    /// `CMTime(seconds:preferredTimescale:)`: `seconds` rounded to the timescale.
    public init(seconds: Double, preferredTimescale: Scale) {
        guard seconds.isFinite, preferredTimescale > 0 else {
            self = seconds.isNaN || preferredTimescale <= 0 ? .invalid : (seconds > 0 ? .positiveInfinity : .negativeInfinity)
            return
        }
        let scaled = (seconds * Double(preferredTimescale)).rounded()
        self.init(value: Value(scaled), timescale: preferredTimescale,
                  flags: scaled == seconds * Double(preferredTimescale) ? .valid : [.valid, .hasBeenRounded])
    }

    public static let zero = CMTime(value: 0, timescale: 1)
    public static let invalid = CMTime(value: 0, timescale: 0, flags: [])
    public static let indefinite = CMTime(value: 0, timescale: 0, flags: [.valid, .indefinite])
    public static let positiveInfinity = CMTime(value: 0, timescale: 0, flags: [.valid, .positiveInfinity])
    public static let negativeInfinity = CMTime(value: 0, timescale: 0, flags: [.valid, .negativeInfinity])

    public var isValid: Bool { flags.contains(.valid) }
    public var isIndefinite: Bool { isValid && flags.contains(.indefinite) }
    public var isPositiveInfinity: Bool { isValid && flags.contains(.positiveInfinity) }
    public var isNegativeInfinity: Bool { isValid && flags.contains(.negativeInfinity) }
    public var isNumeric: Bool { isValid && flags.isDisjoint(with: [.indefinite, .positiveInfinity, .negativeInfinity]) }

    /// The time in seconds: NaN for invalid or indefinite, ±infinity for the infinities.
    public var seconds: Double {
        if isPositiveInfinity { return .infinity }
        if isNegativeInfinity { return -.infinity }
        guard isNumeric, timescale != 0 else { return .nan }
        return Double(value) / Double(timescale)
    }

    public var description: String {
        isNumeric ? "\(value)/\(timescale) = \(seconds) s" : (isValid ? (isIndefinite ? "indefinite" : (isPositiveInfinity ? "+∞" : "-∞")) : "invalid")
    }

    /// Both over a common timescale (their least common multiple, when it fits; else the larger).
    private static func common(_ a: CMTime, _ b: CMTime) -> (Value, Value, Scale)? {
        guard a.isNumeric, b.isNumeric else { return nil }
        if a.timescale == b.timescale { return (a.value, b.value, a.timescale) }
        func gcd(_ x: Int64, _ y: Int64) -> Int64 { y == 0 ? x : gcd(y, x % y) }
        let l = Int64(a.timescale) / gcd(Int64(a.timescale), Int64(b.timescale)) * Int64(b.timescale)
        guard l <= Int64(Int32.max) else {
            let s = max(a.timescale, b.timescale)
            return (CMTime(seconds: a.seconds, preferredTimescale: s).value, CMTime(seconds: b.seconds, preferredTimescale: s).value, s)
        }
        return (a.value * (l / Int64(a.timescale)), b.value * (l / Int64(b.timescale)), Scale(l))
    }

    public static func + (a: CMTime, b: CMTime) -> CMTime {
        guard let (x, y, s) = common(a, b) else { return a.isValid && b.isValid ? (a.isNumeric ? b : a) : .invalid }
        return CMTime(value: x + y, timescale: s)
    }

    public static func - (a: CMTime, b: CMTime) -> CMTime {
        guard let (x, y, s) = common(a, b) else { return a.isValid && b.isValid ? (a.isNumeric ? b : a) : .invalid }
        return CMTime(value: x - y, timescale: s)
    }

    public static func < (a: CMTime, b: CMTime) -> Bool {
        if let (x, y, _) = common(a, b) { return x < y }
        return a.seconds < b.seconds
    }

    public static func == (a: CMTime, b: CMTime) -> Bool {
        if let (x, y, _) = common(a, b) { return x == y }
        return a.flags == b.flags
    }

    public func hash(into h: inout Hasher) { h.combine(isNumeric ? seconds : Double(flags.rawValue)) }
}

/// `CMTimeMake(value:timescale:)`.
public func CMTimeMake(value: Int64, timescale: Int32) -> CMTime { CMTime(value: value, timescale: timescale) }
/// `CMTimeMakeWithSeconds(_:preferredTimescale:)`.
public func CMTimeMakeWithSeconds(_ seconds: Double, preferredTimescale: Int32) -> CMTime {
    CMTime(seconds: seconds, preferredTimescale: preferredTimescale)
}
/// `CMTimeGetSeconds(_:)`.
public func CMTimeGetSeconds(_ time: CMTime) -> Double { time.seconds }
/// `CMTimeCompare(_:_:)`: -1, 0 or 1.
public func CMTimeCompare(_ a: CMTime, _ b: CMTime) -> Int32 { a < b ? -1 : (a == b ? 0 : 1) }
/// `CMTimeAdd(_:_:)` and `CMTimeSubtract(_:_:)`.
public func CMTimeAdd(_ a: CMTime, _ b: CMTime) -> CMTime { a + b }
public func CMTimeSubtract(_ a: CMTime, _ b: CMTime) -> CMTime { a - b }

extension Player {
    /// `AVPlayer.currentTime()` as a `CMTime`, at a 600 timescale (video's).
    public func currentCMTime() -> CMTime { CMTime(seconds: currentTime(), preferredTimescale: 600) }

    /// `seek(to: CMTime, toleranceBefore:toleranceAfter:completionHandler:)`: the times' seconds.
    public func seek(to time: CMTime, toleranceBefore: CMTime = .positiveInfinity, toleranceAfter: CMTime = .positiveInfinity,
                     completionHandler: @escaping @Sendable (Bool) -> Void = { _ in }) {
        seek(to: time.seconds, toleranceBefore: toleranceBefore.seconds, toleranceAfter: toleranceAfter.seconds,
             completionHandler: completionHandler)
    }
}

/// `CMTimeValue` and `CMTimeScale`, as `CMTime(seconds:preferredTimescale: CMTimeScale(NSEC_PER_SEC))`
/// spells them.
public typealias CMTimeValue = Int64
public typealias CMTimeScale = Int32

/// Darwin's `NSEC_PER_SEC` and its kin (`UInt64`, as Darwin has them; Glibc has none).
public let NSEC_PER_SEC: UInt64 = 1_000_000_000
public let NSEC_PER_MSEC: UInt64 = 1_000_000
public let NSEC_PER_USEC: UInt64 = 1_000
public let USEC_PER_SEC: UInt64 = 1_000_000

/// CoreMedia's `CMTimeRange`: a start and a duration, as `loadedTimeRanges`' `timeRangeValue`
/// gives them.
public struct CMTimeRange: Sendable, Hashable, CustomStringConvertible {
    public var start: CMTime
    public var duration: CMTime
    public init(start: CMTime, duration: CMTime) {
        self.start = start
        self.duration = duration
    }
    public init(start: CMTime, end: CMTime) { self.init(start: start, duration: end - start) }
    public var end: CMTime { start + duration }
    public static let zero = CMTimeRange(start: .zero, duration: .zero)
    public var description: String { "[\(start.seconds) s, \(end.seconds) s)" }
}

/// `CMTimeRangeMake(start:duration:)` and `CMTimeRangeGetEnd(_:)`.
public func CMTimeRangeMake(start: CMTime, duration: CMTime) -> CMTimeRange { CMTimeRange(start: start, duration: duration) }
public func CMTimeRangeGetEnd(_ range: CMTimeRange) -> CMTime { range.end }

/// The timescale of the times this layer makes from Tonearm's seconds: microseconds (exact for
/// every time the players report to the microsecond; Apple's items use their media's timescale).
let compatTimescale: CMTimeScale = 1_000_000

extension TimeRange {
    /// `NSValue.timeRangeValue`: `AVPlayerItem.loadedTimeRanges` is `[NSValue]` on iOS, read
    /// with `timeRanges[0].timeRangeValue`; here it is `[TimeRange]` (seconds), and this is the
    /// same range as a `CMTimeRange`.
    public var timeRangeValue: CMTimeRange {
        CMTimeRange(start: CMTime(seconds: start, preferredTimescale: compatTimescale),
                    duration: CMTime(seconds: duration, preferredTimescale: compatTimescale))
    }

    /// A range made from a `CMTimeRange` (`NSValue(timeRange:)`).
    public init(timeRange: CMTimeRange) { self.init(start: timeRange.start.seconds, duration: timeRange.duration.seconds) }
}

extension PlayerItem.Duration {
    /// `AVPlayerItem.duration` as the `CMTime` iOS gives: `indefinite` until the item has loaded
    /// and for a live stream, else the seconds.
    public var cmTime: CMTime {
        if case .seconds(let s) = self { return CMTime(seconds: s, preferredTimescale: compatTimescale) }
        return .indefinite
    }
}

/// `CMTimeGetSeconds(item.duration)`: the item's length in seconds; NaN before it has loaded
/// and for a live stream, as iOS gives for its indefinite duration.
public func CMTimeGetSeconds(_ duration: PlayerItem.Duration) -> Double { duration.cmTime.seconds }

extension Player {
    /// `addPeriodicTimeObserver(forInterval:queue:using:)` with a `CMTime` interval and block,
    /// as AVPlayer has it: ``addPeriodicTimeObserver(forInterval:queue:using:)`` in seconds
    /// (the block is called every `interval` of playback and when playback starts, stops or
    /// jumps, on `queue` — a private serial queue when nil). The token is what
    /// `removeTimeObserver(_:)` takes (kept as `Any` by iOS code).
    public func addPeriodicTimeObserver(forInterval interval: CMTime, queue: DispatchQueue?,
                                        using block: @escaping @Sendable (CMTime) -> Void) -> TimeObserverToken {
        addPeriodicTimeObserver(forInterval: interval.seconds, queue: queue) { seconds in
            block(CMTime(seconds: seconds, preferredTimescale: compatTimescale))
        }
    }

    /// `addBoundaryTimeObserver(forTimes:queue:using:)` with `NSValue`-wrapped times as
    /// `CMTime`s; the block gets no argument, as on iOS.
    public func addBoundaryTimeObserver(forTimes times: [CMTime], queue: DispatchQueue?,
                                        using block: @escaping @Sendable () -> Void) -> TimeObserverToken {
        addBoundaryTimeObserver(forTimes: times.map(\.seconds), queue: queue) { _ in block() }
    }

    /// `removeTimeObserver(_:)` with the token kept as `Any` (anything but a token removes
    /// nothing, and is logged: AVPlayer raises an exception there).
    public func removeTimeObserver(_ observer: Any) {
        guard let token = observer as? TimeObserverToken else {
            compatLogger.warning("AVPlayer.removeTimeObserver(_:): \(type(of: observer)) is not a time observer's token")
            return
        }
        removeTimeObserver(token)
    }
}

/// What `item.status == .failed` compares with: `AVPlayerItem.Status.failed` is a case of its
/// own on iOS; Tonearm's ``PlayerItem/Status/failed(_:)`` carries the error, so `.failed` alone
/// is this value, true for any error (`switch` matches `case .failed:` as it is).
public struct AVPlayerItemFailedStatus: Sendable, Hashable {
    public static let failed = AVPlayerItemFailedStatus()
}

public func == (status: PlayerItem.Status?, failed: AVPlayerItemFailedStatus) -> Bool {
    if case .failed? = status { return true }
    return false
}

public func != (status: PlayerItem.Status?, failed: AVPlayerItemFailedStatus) -> Bool { !(status == failed) }
