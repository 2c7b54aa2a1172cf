// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch

/// Where the players' own timers and one-shot wake-ups run (the position save, the seek repeat,
/// the wait for a join, the end heard at the output): one serial queue, never
/// `DispatchQueue.global()`.
///
/// Why: on Linux a serial queue runs on libdispatch's overcommit pool, which nothing watches,
/// while the first job ever run on the global (non-overcommit) pool starts libdispatch's 1 s pool
/// monitor on its manager thread for the rest of the process — an idle `tonearm daemon` that had
/// played once woke every second. The handlers here are short (a save of the queue's state is the
/// longest) and none waits on another.
enum PlayerWakeups {
    static let queue = DispatchQueue(label: "tonearm.player.wakeups")
}
