// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Tonearm
import TonearmWindow
#if canImport(Glibc)
import Glibc
#endif

/// Events a play loop reacts to.
enum SessionEvent: Sendable {
    case queue(QueuePlayerEvent)
    case player(PlayerEvent)
    case tick
    /// The system volume of the output in use changed.
    case systemVolume(SystemVolumeState)
    /// A signal asked to quit (SIGINT, SIGTERM, SIGHUP).
    case signalled(Int32)
    /// A remote client (MPRIS) asked for what the session itself owns: the speed, quitting.
    case remote(RemoteBridge.Request)
    /// A key of `tonearm play`'s screen, by name (``PlayKeyDecoder``).
    case keyName(String)
    /// The terminal changed size (SIGWINCH).
    case resized
    /// Ctrl-Z (SIGTSTP): give the terminal back and stop until continued.
    case suspend
    /// SIGCONT: `fg` (or `bg`) after Ctrl-Z.
    case continued
    /// The video's window closed (q, Esc, its close button), or could not open (`problem`).
    case videoWindowClosed(problem: String?)
    /// Something to say about the video (its first frame is on screen).
    case videoNote(String)
    /// A click on the video window's built-in controls: play/pause, or a seek in the item.
    case videoControl(ControlsAction)
    /// The daemon's subsystems that changed (`tonearm remote screen`: its `idle` connection).
    case daemon([String])
    /// The daemon's `idle` connection ended (why, when it failed).
    case daemonGone(String?)
}

/// What feeds a play loop besides its player and its ``InputReader``: the screen's ticks.
enum SessionInput {
    /// Starts an ``InputReader`` of the play screen's keys and of `signals` that yields what it
    /// reads as session events: keys by name, SIGWINCH as ``SessionEvent/resized``, SIGTSTP
    /// (Ctrl-Z) as ``SessionEvent/suspend``, SIGCONT as ``SessionEvent/continued``, any other
    /// signal as ``SessionEvent/signalled(_:)``. `readsInput` false: only the signals. Its
    /// handlers are in place when this returns: take the terminal after it, so that a key that
    /// raises a signal is never lost (nor, for Ctrl-Z, left to stop the process with the
    /// terminal unrestored). Used by `tonearm play`'s sessions, files and streams alike.
    static func startReader(signals: [Int32], readsInput: Bool,
                            _ continuation: AsyncStream<SessionEvent>.Continuation) -> InputReader<PlayKeyDecoder> {
        let reader = InputReader<PlayKeyDecoder>(signals: signals, readsInput: readsInput) { event in
            switch event {
            case .input(let key): continuation.yield(.keyName(key))
            case .signal(SIGWINCH): continuation.yield(.resized)
            case .signal(SIGTSTP): continuation.yield(.suspend)
            case .signal(SIGCONT): continuation.yield(.continued)
            case .signal(let sig): continuation.yield(.signalled(sig))
            case .closed: break  // no more keys; playback goes on
            }
        }
        reader.start()
        return reader
    }

    /// Yields ``SessionEvent/tick`` every `interval` (the screen's refresh, not synchronisation).
    static func startTicker(_ continuation: AsyncStream<SessionEvent>.Continuation, every interval: Duration) -> Task<Void, Never> {
        startTicker(continuation) { interval }
    }

    /// A ticker whose next interval `next` says, each time (plain progress lines wake up only
    /// when one is due).
    static func startTicker(_ continuation: AsyncStream<SessionEvent>.Continuation,
                            next: @escaping @Sendable () -> Duration) -> Task<Void, Never> {
        Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: next())  // screen refresh only
                continuation.yield(.tick)
            }
        }
    }
}

/// A volume set from a key: clamped to 0…1 and kept on the 5 % steps the keys move by.
func volumeStep(_ v: Float) -> Float { max(0, min(1, (v * 20).rounded() / 20)) }
