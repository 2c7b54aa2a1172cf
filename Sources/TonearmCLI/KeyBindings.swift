// SPDX-License-Identifier: GPL-3.0-or-later

/// What a key does on the play screen. The raw values are the names the config file uses
/// (`[keys]` section: `volume-up = ["up", "0", "+"]`).
enum KeyAction: String, CaseIterable, Sendable {
    case pause, seekBack = "seek-back", seekForward = "seek-forward"
    case volumeUp = "volume-up", volumeDown = "volume-down", mute
    case next, previous, restart
    case `repeat`, shuffle
    case eqNext = "eq-next", slower, faster
    case help, quit
    /// Tab: the cursor goes into the queue (and back out).
    case focusQueue = "focus-queue"
    /// Opens the library picker to add songs to the queue.
    case add
    // While the queue has the focus:
    case queueUp = "queue-up", queueDown = "queue-down"
    /// Plays the item under the cursor.
    case queuePlay = "queue-play"
    case queueRemove = "queue-remove"
    /// Moves the item under the cursor up or down the queue.
    case queueMoveUp = "queue-move-up", queueMoveDown = "queue-move-down"

    /// Whether the action only applies while the queue has the focus (its keys may then mean
    /// something else outside it: ↑/↓ move the cursor there, the volume elsewhere).
    var isQueueAction: Bool { rawValue.hasPrefix("queue-") }

    /// What the key help says it does.
    var summary: String {
        switch self {
        case .pause: "pause / play"
        case .seekBack: "seek back 5 s"
        case .seekForward: "seek forward 5 s"
        case .volumeUp: "volume up"
        case .volumeDown: "volume down"
        case .mute: "mute / unmute"
        case .next: "next track"
        case .previous: "previous track"
        case .restart: "restart the track"
        case .repeat: "repeat: off, one, all"
        case .shuffle: "shuffle on / off"
        case .eqNext: "next EQ preset"
        case .slower: "slower"
        case .faster: "faster"
        case .help: "this help"
        case .quit: "quit"
        case .focusQueue: "queue: browse / leave"
        case .add: "add from the library"
        case .queueUp: "queue: cursor up"
        case .queueDown: "queue: cursor down"
        case .queuePlay: "queue: play item"
        case .queueRemove: "queue: remove item"
        case .queueMoveUp: "queue: move item up"
        case .queueMoveDown: "queue: move item down"
        }
    }
}

/// A key binding that cannot be made: the action or the key is unknown, named in the error.
enum KeyBindingError: Error, Equatable, CustomStringConvertible {
    case unknownAction(String)
    case unknownKey(String, action: String)

    /// The action the binding was for.
    var action: String {
        switch self {
        case .unknownAction(let a): a
        case .unknownKey(_, let a): a
        }
    }

    var description: String {
        switch self {
        case .unknownAction(let a):
            "unknown key action '\(a)' (known: \(KeyAction.allCases.map(\.rawValue).joined(separator: ", ")))"
        case .unknownKey(let k, let a):
            "unknown key '\(k)' for '\(a)' (a character such as q or ?, or one of: \(KeyBindings.namedKeys.joined(separator: ", ")))"
        }
    }
}

/// Which key does what on the play screen: two maps of key names (as ``PlayKeyDecoder`` names
/// keys: "q", "?", "space", "left", "shift-up", "ctrl-l", "home", "delete"…) to actions, one in
/// force everywhere and one that comes first while the queue has the focus.
struct KeyBindings: Sendable, Equatable {
    private(set) var global: [String: KeyAction]
    private(set) var queue: [String: KeyAction]

    /// The defaults: those of before, plus keys users bring from mpv, ncmpcpp and cmus that
    /// conflict with nothing (`?`, `m`, `9`/`0`, `-`/`+`, `<`/`>`, Home).
    static let defaults = KeyBindings(global: [
        "space": .pause, "left": .seekBack, "right": .seekForward,
        "up": .volumeUp, "0": .volumeUp, "+": .volumeUp, "=": .volumeUp,
        "down": .volumeDown, "9": .volumeDown, "-": .volumeDown,
        "m": .mute, "n": .next, ">": .next, "p": .previous, "<": .previous, "home": .restart,
        "r": .repeat, "l": .repeat, "s": .shuffle, "e": .eqNext, "[": .slower, "]": .faster,
        "?": .help, "q": .quit, "Q": .quit, "tab": .focusQueue, "a": .add,
    ], queue: [
        "up": .queueUp, "k": .queueUp, "down": .queueDown, "j": .queueDown, "enter": .queuePlay,
        "d": .queueRemove, "delete": .queueRemove, "K": .queueMoveUp, "shift-up": .queueMoveUp,
        "J": .queueMoveDown, "shift-down": .queueMoveDown, "escape": .focusQueue,
    ])

    private init(global: [String: KeyAction], queue: [String: KeyAction]) {
        self.global = global
        self.queue = queue
    }

    /// The defaults with each action named in `overrides` bound to exactly the keys given
    /// (an empty list unbinds it); a key given to one action is taken from any other of the
    /// same map. Throws ``KeyBindingError`` naming the first unknown action or key.
    init(overrides: [String: [String]]) throws {
        let checked = Self.checking(overrides)
        if let first = checked.problems.first { throw first }
        self = checked.bindings
    }

    /// The one check of a `[keys]` table (the config file's problems, the play screen's
    /// bindings): the defaults with every good binding of `overrides` applied, and the error of
    /// each binding that is not taken, by action name.
    static func checking(_ overrides: [String: [String]]) -> (bindings: KeyBindings, problems: [KeyBindingError]) {
        var bindings = KeyBindings.defaults
        var problems: [KeyBindingError] = []
        for (name, keys) in overrides.sorted(by: { $0.key < $1.key }) {
            do { try bindings.bind(name, to: keys) } catch { problems.append(error) }
        }
        return (bindings, problems)
    }

    /// Binds the action `name` to exactly `keys`, taking them from any other action of its map.
    private mutating func bind(_ name: String, to keys: [String]) throws(KeyBindingError) {
        guard let action = KeyAction(rawValue: name) else { throw .unknownAction(name) }
        var canonical: [String] = []
        for k in keys {
            guard let c = Self.canonicalName(k) else { throw .unknownKey(k, action: name) }
            canonical.append(c)
        }
        let inQueue = action.isQueueAction
        var map = inQueue ? queue : global
        map = map.filter { $0.value != action }
        for k in canonical { map[k] = action }
        if inQueue { queue = map } else { global = map }
    }

    /// What `key` does (the queue's bindings first while it has the focus).
    func action(for key: String, queueFocused: Bool) -> KeyAction? {
        if queueFocused, let a = queue[key] { return a }
        return global[key]
    }

    /// The keys bound to `action` (a queue action: in the queue's map; any other: everywhere),
    /// in the order the help shows them: named keys, then letters, then other characters.
    func keys(for action: KeyAction) -> [String] {
        (action.isQueueAction ? queue : global).filter { $0.value == action }.map(\.key).sorted { a, b in
            let ra = Self.order(a), rb = Self.order(b)
            return ra != rb ? ra < rb : a < b
        }
    }

    /// How a key is shown in the help: arrows as arrows, the rest by name.
    static func display(_ key: String) -> String {
        switch key {
        case "left": "←"
        case "right": "→"
        case "up": "↑"
        case "down": "↓"
        case "shift-up": "S-↑"
        case "shift-down": "S-↓"
        case "enter": "Enter"
        case "tab": "Tab"
        case "escape": "Esc"
        case "home": "Home"
        case "delete": "Del"
        default: key
        }
    }

    /// Keys with a name (the rest are single characters).
    static let namedKeys: [String] = {
        var names = ["space", "enter", "tab", "shift-tab", "backspace", "escape", "insert", "delete", "home", "end",
                     "page-up", "page-down"]
        for dir in ["up", "down", "left", "right"] { names += [dir, "shift-\(dir)", "ctrl-\(dir)", "alt-\(dir)"] }
        names += (1...12).map { "f\($0)" }
        names += "abcdefghijklmnopqrstuvwxyz".map { "ctrl-\($0)" }
        return names
    }()
    private static let namedSet = Set(namedKeys)

    /// The name a key has here: a named key (case ignored; "esc", "return", "del", "pgup",
    /// "pgdn" and "ctrl+x" are understood), or one printable character other than a space.
    static func canonicalName(_ key: String) -> String? {
        if key.count == 1, let c = key.first, !c.isWhitespace, TextWidth.printable(key) == key { return key }
        var k = key.lowercased().replacingOccurrences(of: "+", with: "-")
        if k.hasPrefix("c-") { k = "ctrl-" + k.dropFirst(2) }
        if k.hasPrefix("s-") { k = "shift-" + k.dropFirst(2) }
        let aliases = ["esc": "escape", "return": "enter", "ret": "enter", "del": "delete", "pgup": "page-up",
                       "pgdn": "page-down", "pageup": "page-up", "pagedown": "page-down", "ins": "insert", "bs": "backspace",
                       "backtab": "shift-tab", "spc": "space"]
        k = aliases[k] ?? k
        return namedSet.contains(k) ? k : nil
    }

    /// Where a key comes in the help: the defaults' first keys first, then the others by name.
    private static func order(_ key: String) -> Int {
        preferred.firstIndex(of: key) ?? preferred.count + (key.count == 1 ? 0 : 1)
    }

    private static let preferred = ["space", "left", "right", "up", "down", "enter", "tab", "home", "q", "n", "p", "r", "s", "e", "m",
                                    "a", "j", "k", "d", "K", "J", "delete", "shift-up", "shift-down", "escape", "[", "]", "?", "<", ">",
                                    "9", "0", "-", "+", "=", "l", "Q"]
}
