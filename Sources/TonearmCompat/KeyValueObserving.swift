// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Observation
import Synchronization

// Key-value observing as AVFoundation code writes it (issue 23): `item.addObserver(self,
// forKeyPath: "status", options: [.new], context: nil)`, the observer's
// `observeValue(forKeyPath:of:change:context:)`, `removeObserver(_:forKeyPath:)`.
//
// Linux has no Objective-C runtime, and swift-corelibs-foundation no KVO: nothing can call a
// method an observer merely has, and `NSObject` has no `observeValue` to override. The design:
//   - the observer conforms to ``NSKeyValueObserving`` (one method, Apple's signature): an
//     observer that does not conform is a compile-time error at `addObserver`, never a silence;
//     its `observeValue` is a plain method (no `override`: there is nothing to override);
//   - the observed object is one of Tonearm's `Observable` types (``PlayerItem``, ``Player``):
//     a registration follows its key with the Observation framework (`withObservationTracking`,
//     re-armed after each change), so it costs nothing between changes and polls nothing;
//   - a key path is a string, as in KVO; the keys each type answers are listed at
//     ``KeyValueObservable/keyValueObservingValue(forKey:)``. An unknown key is logged (swift-log,
//     `tonearm.compat`) and observed never — KVO raises an exception there, which ported code
//     would not catch;
//   - the change dictionary has `.kindKey` (`NSKeyValueChange.setting`) and, as the options ask,
//     `.newKey` / `.oldKey` holding the properties' Swift values (a `PlayerItem.Status`, a
//     `[TimeRange]` whose elements have `timeRangeValue`, a `Bool`), not NSNumber/NSValue boxes.
//     A notification is sent when the value differs from the one last sent (Observation reports
//     "may have changed"; the buffer's ranges are re-announced on every arrival of bytes, and
//     KVO observers expect changes). `.initial` sends one at once, before `addObserver`
//     returns, as KVO does; `.prior` is not supported (ignored).
//   - threading: every `observeValue` of the process is called on one serial queue of this
//     layer, one call at a time, in the order of the changes (KVO calls it on the thread that
//     made the change, which for AVPlayerItem is any thread). So observers must be `Sendable`
//     (a class with its own locking, or `@unchecked Sendable` with state touched only there).
//   - the observed object and the observer are held weakly; `removeObserver` ends the
//     notifications (once it returns, none is in progress unless it is called from
//     `observeValue` itself); an observer released without removing itself is dropped, as on
//     iOS 11 and later. Removing a registration that does not exist is logged (KVO raises).

/// `NSKeyValueObservingOptions`.
public struct NSKeyValueObservingOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static let new = NSKeyValueObservingOptions(rawValue: 0x01)
    public static let old = NSKeyValueObservingOptions(rawValue: 0x02)
    public static let initial = NSKeyValueObservingOptions(rawValue: 0x04)
    /// Not supported here (see the file's comment): ignored.
    public static let prior = NSKeyValueObservingOptions(rawValue: 0x08)
}

/// `NSKeyValueChangeKey`: the keys of the change dictionary.
public struct NSKeyValueChangeKey: RawRepresentable, Sendable, Hashable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public static let kindKey = NSKeyValueChangeKey("kind")
    public static let newKey = NSKeyValueChangeKey("new")
    public static let oldKey = NSKeyValueChangeKey("old")
    public static let indexesKey = NSKeyValueChangeKey("indexes")
    public static let notificationIsPriorKey = NSKeyValueChangeKey("notificationIsPrior")
}

/// `NSKeyValueChange`: what `.kindKey` holds (always `.setting` here), as its raw `UInt`.
public enum NSKeyValueChange: UInt, Sendable {
    case setting = 1, insertion, removal, replacement
}

/// An observer of key paths: what `addObserver(_:forKeyPath:options:context:)` takes. KVO's
/// `observeValue(forKeyPath:of:change:context:)` with Apple's signature, called on the
/// compatibility layer's KVO queue (see the file's comment), one call at a time.
public protocol NSKeyValueObserving: AnyObject, Sendable {
    func observeValue(forKeyPath keyPath: String?, of object: Any?, change: [NSKeyValueChangeKey: Any]?,
                      context: UnsafeMutableRawPointer?)
}

/// A value of an observed key, as a registration compares and sends it.
public struct KeyValueSnapshot {
    /// What `.newKey` / `.oldKey` hold.
    public var value: Any?
    /// What tells two values apart (a notification is sent when it changes).
    public var identity: AnyHashable

    public init(value: Any?, identity: AnyHashable) {
        self.value = value
        self.identity = identity
    }

    public init<V: Hashable>(_ value: V) {
        self.value = value
        identity = AnyHashable(value)
    }
}

/// A Tonearm type whose properties KVO-style observers can follow by key path (``PlayerItem``,
/// ``Player``): `Observable`, so that a change of the key's property is reported.
public protocol KeyValueObservable: AnyObject, Sendable, Observable {
    /// The value of `key` now, read inside `withObservationTracking` (so the property's
    /// change is reported); nil: the type has no such key. Called on the KVO queue.
    func keyValueObservingValue(forKey key: String) -> KeyValueSnapshot?
}

extension KeyValueObservable {
    /// `addObserver(_:forKeyPath:options:context:)`: calls `observer`'s `observeValue` when the
    /// value of `keyPath` changes (and at once with `.initial`), until
    /// ``removeObserver(_:forKeyPath:)``. Any thread. An unknown key path is logged and never
    /// notified.
    public func addObserver(_ observer: any NSKeyValueObserving, forKeyPath keyPath: String,
                            options: NSKeyValueObservingOptions = [], context: UnsafeMutableRawPointer? = nil) {
        guard keyValueObservingValue(forKey: keyPath) != nil else {
            compatLogger.warning("addObserver(_:forKeyPath:): \(type(of: self)) has no observable key path \"\(keyPath)\"; nothing will be notified")
            return
        }
        let registration = KeyValueRegistration(object: self, observer: observer, keyPath: keyPath, options: options,
                                                context: context.map { Int(bitPattern: $0) })
        KeyValueRegistry.shared.add(registration)
        KeyValueRegistration.onQueue { registration.arm() }
    }

    /// `removeObserver(_:forKeyPath:)`: ends the notifications of `observer` for `keyPath` (its
    /// most recent registration). Once it returns, no `observeValue` of it is in progress
    /// (unless called from one). Any thread, also the observer's `deinit`.
    public func removeObserver(_ observer: any NSKeyValueObserving, forKeyPath keyPath: String) {
        remove(observer, keyPath: keyPath, context: nil)
    }

    /// `removeObserver(_:forKeyPath:context:)`: the registration with this context.
    public func removeObserver(_ observer: any NSKeyValueObserving, forKeyPath keyPath: String, context: UnsafeMutableRawPointer?) {
        remove(observer, keyPath: keyPath, context: .some(context.map { Int(bitPattern: $0) }))
    }

    private func remove(_ observer: any NSKeyValueObserving, keyPath: String, context: Int??) {
        guard let removed = KeyValueRegistry.shared.remove(object: ObjectIdentifier(self), observer: ObjectIdentifier(observer),
                                                            keyPath: keyPath, context: context) else {
            compatLogger.warning("removeObserver(_:forKeyPath:): \(type(of: observer)) is not an observer of \"\(keyPath)\" of \(type(of: self))")
            return
        }
        removed.active.store(false, ordering: .releasing)
        // A notification being delivered finishes before this returns.
        KeyValueRegistration.onQueue {}
    }
}

/// One `addObserver`: its state is touched on the KVO queue only (`active` excepted).
final class KeyValueRegistration: @unchecked Sendable {
    /// Where every observer is called, one at a time.
    static let queue = DispatchQueue(label: "tonearm.compat.kvo")
    private static let onQueueKey = DispatchSpecificKey<Bool>()
    private static let marked: Void = queue.setSpecific(key: onQueueKey, value: true)

    /// Runs `body` on the KVO queue and waits for it; at once when already there.
    static func onQueue(_ body: () -> Void) {
        _ = marked
        if DispatchQueue.getSpecific(key: onQueueKey) == true { body() } else { queue.sync(execute: body) }
    }

    let objectID: ObjectIdentifier
    let observerID: ObjectIdentifier
    let keyPath: String
    let options: NSKeyValueObservingOptions
    let context: Int?
    let active = Atomic<Bool>(true)
    private weak var object: (any KeyValueObservable)?
    private weak var observer: (any NSKeyValueObserving)?
    /// KVO queue only.
    private var last: KeyValueSnapshot?
    private var armed = false

    init(object: any KeyValueObservable, observer: any NSKeyValueObserving, keyPath: String,
         options: NSKeyValueObservingOptions, context: Int?) {
        objectID = ObjectIdentifier(object)
        observerID = ObjectIdentifier(observer)
        self.object = object
        self.observer = observer
        self.keyPath = keyPath
        self.options = options
        self.context = context
    }

    /// Whether the object and the observer are still there.
    var isAlive: Bool { object != nil && observer != nil }

    /// KVO queue: reads the key under observation tracking (so its next change arms again),
    /// and notifies when the value differs from the last one sent.
    func arm() {
        guard active.load(ordering: .acquiring), let object else { return }
        let key = keyPath
        let snapshot = withObservationTracking {
            object.keyValueObservingValue(forKey: key)
        } onChange: { [weak self] in
            guard let self else { return }
            Self.queue.async { self.arm() }
        }
        guard let snapshot else { return }
        let first = !armed
        armed = true
        let previous = last
        if first {
            last = snapshot
            if options.contains(.initial) { notify(new: snapshot, old: nil, object: object) }
        } else if previous?.identity != snapshot.identity {
            last = snapshot
            notify(new: snapshot, old: previous, object: object)
        }
    }

    private func notify(new: KeyValueSnapshot, old: KeyValueSnapshot?, object: any KeyValueObservable) {
        guard active.load(ordering: .acquiring) else { return }
        guard let observer else {
            // Released without removing itself: dropped, as on iOS 11 and later.
            active.store(false, ordering: .relaxed)
            KeyValueRegistry.shared.prune()
            return
        }
        var change: [NSKeyValueChangeKey: Any] = [.kindKey: NSKeyValueChange.setting.rawValue]
        if options.contains(.new) { change[.newKey] = new.value ?? NSNull() }
        if options.contains(.old), let old { change[.oldKey] = old.value ?? NSNull() }
        observer.observeValue(forKeyPath: keyPath, of: object, change: change,
                              context: context.flatMap { UnsafeMutableRawPointer(bitPattern: $0) })
    }
}

/// The registrations, for `removeObserver`.
final class KeyValueRegistry: Sendable {
    static let shared = KeyValueRegistry()
    private let registrations = Mutex<[KeyValueRegistration]>([])

    func add(_ r: KeyValueRegistration) {
        registrations.withLock { all in
            all.removeAll { !$0.isAlive || !$0.active.load(ordering: .relaxed) }
            all.append(r)
        }
    }

    /// Removes the most recent registration that matches (`context` nil: any context).
    func remove(object: ObjectIdentifier, observer: ObjectIdentifier, keyPath: String, context: Int??) -> KeyValueRegistration? {
        registrations.withLock { all in
            guard let i = all.lastIndex(where: {
                $0.objectID == object && $0.observerID == observer && $0.keyPath == keyPath && $0.active.load(ordering: .relaxed)
                    && (context == nil || $0.context == context!)
            }) else { return nil }
            return all.remove(at: i)
        }
    }

    func prune() {
        registrations.withLock { all in all.removeAll { !$0.isAlive || !$0.active.load(ordering: .relaxed) } }
    }
}

extension PlayerItem: KeyValueObservable {
    /// The keys an observer can follow, with Apple's names: `status`, `duration`,
    /// `loadedTimeRanges`, `playbackLikelyToKeepUp`, `playbackBufferEmpty`,
    /// `playbackBufferFull`, `presentationSize`, `timedMetadata` (as a `[String: String]`).
    public func keyValueObservingValue(forKey key: String) -> KeyValueSnapshot? {
        switch key {
        case "status": KeyValueSnapshot(status)
        case "duration": KeyValueSnapshot(duration)
        case "loadedTimeRanges": KeyValueSnapshot(loadedTimeRanges)
        case "playbackLikelyToKeepUp", "isPlaybackLikelyToKeepUp": KeyValueSnapshot(isPlaybackLikelyToKeepUp)
        case "playbackBufferEmpty", "isPlaybackBufferEmpty": KeyValueSnapshot(isPlaybackBufferEmpty)
        case "playbackBufferFull", "isPlaybackBufferFull": KeyValueSnapshot(isPlaybackBufferFull)
        case "presentationSize": KeyValueSnapshot(presentationSize)
        case "timedMetadata": KeyValueSnapshot(timedMetadata)
        default: nil
        }
    }
}

extension Player: KeyValueObservable {
    /// The keys an observer can follow, with Apple's names: `rate`, `timeControlStatus`,
    /// `currentItem` (the item, or NSNull), `readyForDisplay`.
    public func keyValueObservingValue(forKey key: String) -> KeyValueSnapshot? {
        switch key {
        case "rate": KeyValueSnapshot(rate)
        case "timeControlStatus": KeyValueSnapshot(timeControlStatus)
        case "currentItem":
            currentItem.map { KeyValueSnapshot(value: $0, identity: ObjectIdentifier($0)) }
                ?? KeyValueSnapshot(value: nil, identity: AnyHashable(0))
        case "readyForDisplay", "isReadyForDisplay": KeyValueSnapshot(isReadyForDisplay)
        default: nil
        }
    }
}
