// SPDX-License-Identifier: GPL-3.0-or-later

/// The keep-alive rule that ``AudioPlayerStateMachine`` and ``QueueStateMachine`` share: a
/// playing player keeps itself alive (like `AVAudioPlayer`, it plays on when its owner lets go of
/// it) and lets go once it stops. The latch hands out the retain once and the release once per
/// retain, whatever order play, pause, stop and the end come in, so that a player is never
/// retained twice (a leak) nor released while it was not retained.
struct KeepAliveLatch: Sendable, Equatable {
    /// Whether the player holds itself now.
    private(set) var held = false

    /// `action` (the machine's "retain yourself") when the player is not held yet, else nothing.
    mutating func retain<Action>(_ action: Action) -> [Action] {
        if held { return [] }
        held = true
        return [action]
    }

    /// `action` (the machine's "release yourself") when the player is held, else nothing.
    mutating func release<Action>(_ action: Action) -> [Action] {
        if !held { return [] }
        held = false
        return [action]
    }
}
