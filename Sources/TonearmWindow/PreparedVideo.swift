// SPDX-License-Identifier: GPL-3.0-or-later
import CSDL2
import CSDL2Lazy
import Foundation
import Synchronization

/// Who has SDL's video in this process (one at a time): nobody, a thread that started it ahead
/// of the first window (``PreparedVideo``), one leaving again, or a window.
enum VideoOwner {
    case free
    case prepared(PreparedVideo)
    case leaving(PreparedVideo)
    case window
}

/// SDL's video started ahead of a window (``VideoWindow/prepare(videoDriver:)``): a window thread
/// that loads SDL and starts its video (connects to the display) while the caller does other
/// work, then waits for the window's configuration (``VideoWindow/init(_:)`` hands it over) and
/// goes on as any window thread. Not taken within ``lifetime``, or cancelled, it stops SDL and
/// ends (nothing is left behind).
///
/// Threading: the owner state is under ``VideoWindow``'s lock; the handover under this object's
/// condition. The thread waits for nothing else.
final class PreparedVideo: @unchecked Sendable {
    /// How long a prepared video waits for its window (seconds).
    static let lifetime: Double = 30

    /// SDL's video driver hint it was started with (nil: SDL's choice or `SDL_VIDEODRIVER`).
    let driver: String?
    private let condition = NSCondition()
    /// The window's shared state once handed over; `cancelled` once it is not wanted.
    private var handover: Shared?
    private var cancelled = false
    private var ended = false

    /// What the thread waits for before it loads SDL (nil: nothing).
    private let after: (@Sendable () -> Void)?

    init(driver: String?, after: (@Sendable () -> Void)?) {
        self.driver = driver
        self.after = after
    }

    /// Any thread: the window to run (its ``Shared``); the thread goes on with it.
    func hand(_ shared: Shared) {
        condition.lock()
        handover = shared
        condition.broadcast()
        condition.unlock()
    }

    /// Any thread: not wanted (the thread stops SDL and ends; ``waitForEnd()`` waits for that).
    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until the thread has stopped SDL and ended.
    func waitForEnd() {
        condition.lock()
        while !ended { condition.wait() }
        condition.unlock()
    }

    /// The prepared window thread, from start to end.
    func run() {
        after?()
        guard tonearm_sdl2_load() == 1 else {
            // The window's own start says why (it loads SDL first, and fails the same way).
            leave(sdlStarted: false)
            return
        }
        let failure = WindowThread.startVideo(driver: driver)
        let deadline = Date(timeIntervalSinceNow: Self.lifetime)
        condition.lock()
        var claimed = false
        while handover == nil && !cancelled {
            if claimed {
                condition.wait()
            } else if !condition.wait(until: deadline) {
                condition.unlock()
                // Not taken in time: leave, unless a window has just claimed it (its handover
                // comes then, whatever the time).
                let leaving = VideoWindow.owner.withLock { o -> Bool in
                    guard case .prepared(let p) = o, p === self else { return false }
                    o = .leaving(self)
                    return true
                }
                condition.lock()
                if leaving { cancelled = true } else { claimed = true }
            }
        }
        let shared = cancelled ? nil : handover
        condition.unlock()
        guard let shared else {
            leave(sdlStarted: failure == nil)
            return
        }
        shared.markWindowThread()
        if let failure {
            shared.started(.failure(failure))
        } else {
            WindowThread.runWindow(shared)
        }
        VideoWindow.owner.withLock { $0 = .free }
        shared.finish()
        markEnded()
    }

    /// Stops SDL (when started), gives the video back and ends.
    private func leave(sdlStarted: Bool) {
        if sdlStarted { WindowThread.stopVideo() }
        VideoWindow.owner.withLock { o in
            switch o {
            case .prepared(let p) where p === self, .leaving(let p) where p === self: o = .free
            default: break
            }
        }
        markEnded()
    }

    private func markEnded() {
        condition.lock()
        ended = true
        condition.broadcast()
        condition.unlock()
    }
}

extension VideoWindow {
    /// Starts SDL's video ahead of the first window, on the thread that will be that window's:
    /// SDL is loaded and connected to the display while the caller goes on (`tonearm play VIDEO`
    /// does this before it probes the file, so that the window opens sooner). The next
    /// ``init(_:)`` with the same `videoDriver` takes it; one with another driver stops it first.
    /// Not taken within 30 s, or after ``cancelPrepared()``, it stops SDL again.
    ///
    /// `after`, when given, runs first on that thread: what SDL's loading should not run beside
    /// (`tonearm play` waits there for FFmpeg's libraries, which load on a thread of their own:
    /// two loads at once wait for each other on the dynamic loader's lock, and the probe that
    /// needs FFmpeg would wait for SDL's).
    ///
    /// Does nothing without a display (as ``init(_:)`` would throw ``VideoWindowError/noDisplay(_:)``),
    /// or while a window is open or prepared. Any thread; returns at once.
    public static func prepare(videoDriver: String? = nil, after: (@Sendable () -> Void)? = nil) {
        guard Self.displayError(videoDriver: videoDriver) == nil else { return }
        let prepared = PreparedVideo(driver: videoDriver, after: after)
        let taken = owner.withLock { o -> Bool in
            guard case .free = o else { return false }
            o = .prepared(prepared)
            return true
        }
        guard taken else { return }
        let thread = Thread { prepared.run() }
        thread.name = "tonearm-window"
        thread.start()
    }

    /// Stops a video started by ``prepare(videoDriver:)`` and not taken by a window (when none
    /// is to open after all), and waits until SDL has stopped. Any thread; nothing to do
    /// otherwise.
    public static func cancelPrepared() {
        let prepared = owner.withLock { o -> PreparedVideo? in
            switch o {
            case .prepared(let p):
                o = .leaving(p)
                return p
            case .leaving(let p):
                return p
            case .free, .window:
                return nil
            }
        }
        prepared?.cancel()
        prepared?.waitForEnd()
    }

    /// Whether a video started by ``prepare(videoDriver:)`` waits for its window (for tests).
    public static var hasPreparedVideo: Bool {
        owner.withLock { o in
            if case .prepared = o { return true }
            return false
        }
    }
}
