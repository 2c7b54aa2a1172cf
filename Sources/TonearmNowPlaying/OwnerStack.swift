// SPDX-License-Identifier: GPL-3.0-or-later

/// The owners of a center as a value: the application at the bottom (id ``base``, never
/// released), one layer per temporary owner pushed above it, each with its `Value` (its
/// now-playing state; nothing for the command center, whose targets carry their owner). The top
/// layer is the active owner. ``NowPlayingOwnerStack`` and ``CommandRegistry`` both keep one.
///
/// Pure (no locks): the center keeps it under its own.
struct OwnerStack<Value: Sendable>: Sendable {
    /// The application's id (the bottom, never released).
    static var base: UInt64 { 0 }

    struct Layer: Sendable {
        let id: UInt64
        let name: String
        var value: Value
    }

    private(set) var layers: [Layer]
    private var nextID: UInt64 = 1

    /// A stack holding the application only, with `value`.
    init(base value: Value) {
        layers = [Layer(id: Self.base, name: "application", value: value)]
    }

    /// The active owner's id.
    var top: UInt64 { layers[layers.count - 1].id }
    /// The active owner's value.
    var topValue: Value { layers[layers.count - 1].value }
    /// The owners' names, bottom first.
    var names: [String] { layers.map(\.name) }

    func contains(_ id: UInt64) -> Bool { layers.contains { $0.id == id } }

    func value(of id: UInt64) -> Value? { layers.first { $0.id == id }?.value }

    /// Puts a new owner on top; its id (never reused).
    mutating func push(name: String, value: Value) -> UInt64 {
        let id = nextID
        nextID += 1
        layers.append(Layer(id: id, name: name, value: value))
        return id
    }

    /// Removes owner `id` wherever it is; false for the base and for an unknown id.
    mutating func release(_ id: UInt64) -> Bool {
        guard id != Self.base, let i = layers.firstIndex(where: { $0.id == id }) else { return false }
        layers.remove(at: i)
        return true
    }

    /// Runs `body` on owner `id`'s value; its result and whether that owner is on top (nil for
    /// an unknown id).
    mutating func update<R>(_ id: UInt64, _ body: (inout Value) -> R) -> (result: R, isTop: Bool)? {
        guard let i = layers.firstIndex(where: { $0.id == id }) else { return nil }
        let r = body(&layers[i].value)
        return (r, i == layers.count - 1)
    }
}

/// What an ``OwnerHandle`` gives itself back to: the center's owner stack, under its lock.
protocol OwnerRegistry: AnyObject, Sendable {
    /// Removes owner `id` wherever it is (the base and unknown ids: nothing). Idempotent.
    func releaseOwner(_ id: UInt64)
    /// Whether owner `id` is still in the stack.
    func ownerIsInStack(_ id: UInt64) -> Bool
}

/// A handle on a place in a center's owner stack, from ``NowPlayingInfoCenter/pushOwner(_:)``
/// (``NowPlayingInfoOwner``) or ``RemoteCommandCenter/pushOwner(_:)`` (``RemoteCommandOwner``).
///
/// ``release()`` — or the last reference going away — removes it wherever it is in the stack,
/// and the owner below is active again as it is then: an owner that forgets to give Now Playing
/// or the commands back loses them when its handle is deallocated.
///
/// Thread-safety: may be used and released from any thread.
public final class OwnerHandle<Center: AnyObject & Sendable>: Sendable {
    /// The name given to `pushOwner(_:)`.
    public let name: String
    let id: UInt64
    /// The center the handle's members act on.
    let center: Center
    private let registry: any OwnerRegistry

    init(name: String, id: UInt64, center: Center, registry: any OwnerRegistry) {
        self.name = name
        self.id = id
        self.center = center
        self.registry = registry
    }

    deinit { registry.releaseOwner(id) }

    /// Gives the center back to the owner below (idempotent).
    public func release() { registry.releaseOwner(id) }

    /// Whether this owner is still in the center's stack.
    public var isActive: Bool { registry.ownerIsInStack(id) }
}
