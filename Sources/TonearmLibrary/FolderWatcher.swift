// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Glibc
import Synchronization
import TonearmCore

/// Watches folders recursively with inotify and gathers what changes in a ``ChangeCoalescer``.
///
/// Every folder under the roots has a watch (hidden ones skipped, as the scanner skips them;
/// symbolic links to folders not followed, as the scanner does not walk them). A folder that
/// appears later (made, or moved in) gets watches at once, and its files are reported as found,
/// since they may have landed before its watch existed. A folder renamed within the tree keeps
/// its watches, which then name its new path; one moved out loses them.
///
/// One reading thread, started by `init`, sleeps in `poll` on the inotify descriptor and one end
/// of a socket pair until an event comes, the batch is due (then it yields ``Signal/due``), or
/// ``stop()`` writes to the other end. It closes the descriptors when it ends. A failure (the
/// watch limit reached for a new folder) is yielded as ``Signal/failed(_:)`` and ends it.
///
/// Threading: ``take()``, ``stop()`` and ``signals`` may be used from any thread; the watch map
/// belongs to the reading thread (and to `init` before it starts).
final class FolderWatcher: @unchecked Sendable {
    enum Signal: Sendable {
        /// The batch is due: ``take()`` it.
        case due
        /// Watching failed and has stopped.
        case failed(TonearmError)
    }

    /// The watched folders (standardized absolute paths).
    let roots: [String]
    /// Yields when a batch is due, and finishes when the reading thread ends.
    let signals: AsyncStream<Signal>

    private static let mask = UInt32(IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO
                                     | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_EXCL_UNLINK)
    private enum Command: UInt8 {
        case stop = 1
        case overflow = 2
    }

    private let fd: Int32
    /// The socket pair that wakes the reading thread (internal for tests).
    let wakeRead: Int32
    let wakeWrite: Int32
    private let signalSink: AsyncStream<Signal>.Continuation
    private let debounce: Duration
    /// A smaller limit of watches than the system's, for tests.
    private let maxWatches: Int?
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)

    private struct Watch {
        var path: String
        var inode: UInt64
    }
    /// Reading thread only: the folder each watch descriptor watches.
    private var watches: [Int32: Watch] = [:]
    /// Reading thread only: folders moved from, whose watches go unless they turned up in the
    /// tree again (`debounce` later).
    private var movedFolders: [(path: String, descriptors: [Int32], at: ContinuousClock.Instant)] = []

    private struct Shared {
        var coalescer: ChangeCoalescer
        /// The deadline already signalled.
        var signalled: ContinuousClock.Instant?
        var stopRequested = false
        var closed = false
    }
    private let shared: Mutex<Shared>

    /// Watches `roots` (existing folders, standardized paths) and starts the reading thread.
    /// - Throws: `TonearmError.watchFailed` when the system's limit of inotify instances or
    ///   watches is reached (naming the setting to raise), or a root cannot be watched.
    init(roots: [String], debounce: Duration, maxWatches: Int? = nil) throws(TonearmError) {
        self.roots = roots
        self.debounce = debounce
        self.maxWatches = maxWatches
        (signals, signalSink) = AsyncStream<Signal>.makeStream()
        shared = Mutex(Shared(coalescer: ChangeCoalescer(debounce: debounce)))
        let where_ = roots.first ?? "/"
        fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard fd >= 0 else {
            let e = errno
            throw .watchFailed(path: where_, failure: e == EMFILE ? .instanceLimit(limit: Self.limit("max_user_instances"))
                                                                  : .system(call: "inotify_init1", detail: String(cString: strerror(e))))
        }
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            let detail = String(cString: strerror(errno))
            close(fd)
            throw .watchFailed(path: where_, failure: .system(call: "socketpair", detail: detail))
        }
        (wakeRead, wakeWrite) = (pair[0], pair[1])
        do {
            for root in roots { _ = try addTree(root, isRoot: true) }
        } catch {
            closeDescriptors()
            throw error
        }
        let thread = Thread { [self] in run() }
        thread.name = "tonearm-watch"
        self.thread = thread
        thread.start()
    }

    /// The batch, when it is due (nil when nothing is, or something came since the signal and
    /// moved the deadline: then another signal follows).
    func take() -> ChangeCoalescer.Batch? {
        shared.withLock { $0.coalescer.take(at: .now) }
    }

    /// Stops the reading thread and returns once it has closed the descriptors (at once when it
    /// has already ended). Idempotent.
    func stop() {
        let running = shared.withLock { s -> Bool in
            if !s.closed && !s.stopRequested {
                s.stopRequested = true
                send(Command.stop)
            }
            return !s.closed
        }
        guard running, Thread.current !== thread else { return }
        finished.wait()
        finished.signal()  // for the next caller
    }

    /// Makes the reading thread act as if the kernel's queue had overflowed (for tests).
    func simulateOverflow() {
        shared.withLock { s in
            if !s.closed && !s.stopRequested { send(.overflow) }
        }
    }

    /// Writes a command for the reading thread (under the lock, while the descriptors are open).
    private func send(_ command: Command) {
        var byte = command.rawValue
        _ = Glibc.send(wakeWrite, &byte, 1, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
    }

    // MARK: The reading thread

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var failure: TonearmError?
        loop: while true {
            expireMovedFolders(now: .now)
            let timeout = shared.withLock { s -> Int32 in
                guard let deadline = s.coalescer.deadline, s.signalled != deadline else { return -1 }
                return Self.milliseconds(until: deadline)
            }
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            if poll(&fds, 2, timeout) < 0 {
                if errno == EINTR { continue }
                failure = .watchFailed(path: roots.first ?? "/", failure: .system(call: "poll", detail: String(cString: strerror(errno))))
                break
            }
            do {
                if fds[1].revents != 0 {
                    var byte: UInt8 = 0
                    let n = recv(wakeRead, &byte, 1, Int32(MSG_DONTWAIT))
                    if n == 0 || (n == 1 && byte == Command.stop.rawValue) { break loop }
                    if n == 1 && byte == Command.overflow.rawValue { try apply([.overflow]) }
                }
                if fds[0].revents != 0 { try drain(&buffer) }
            } catch {
                failure = error
                break
            }
            let now = ContinuousClock.now
            let due = shared.withLock { s -> Bool in
                guard let deadline = s.coalescer.deadline, deadline <= now, s.signalled != deadline else { return false }
                s.signalled = deadline
                return true
            }
            if due { signalSink.yield(.due) }
        }
        if let failure { signalSink.yield(.failed(failure)) }
        shared.withLock { s in
            closeDescriptors()
            s.closed = true
        }
        signalSink.finish()
        finished.signal()
    }

    /// Reads every event queued (the descriptor is non-blocking) and hands them on.
    private func drain(_ buffer: inout [UInt8]) throws(TonearmError) {
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN { return }
                throw .watchFailed(path: roots.first ?? "/", failure: .system(call: "read", detail: String(cString: strerror(errno))))
            }
            if n == 0 { return }
            var events: [ChangeCoalescer.Event] = []
            var offset = 0
            while offset + 16 <= n {
                let (wd, mask, cookie, length) = buffer.withUnsafeBytes { b in
                    (b.loadUnaligned(fromByteOffset: offset, as: Int32.self), b.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
                     b.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self), Int(b.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)))
                }
                let nameBytes = buffer[(offset + 16)..<min(n, offset + 16 + length)]
                let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                offset += 16 + length
                try translate(wd: wd, mask: mask, cookie: cookie, name: name, into: &events)
            }
            try apply(events)
        }
    }

    /// Passes events to the coalescer; an overflow also watches again every folder (events
    /// about new folders may be among those lost).
    private func apply(_ events: [ChangeCoalescer.Event]) throws(TonearmError) {
        guard !events.isEmpty else { return }
        if events.contains(.overflow) {
            for root in roots { _ = try addTree(root, isRoot: false) }
        }
        let now = ContinuousClock.now
        shared.withLock { s in
            for e in events { s.coalescer.add(e, at: now) }
        }
    }

    /// What one inotify event means for the library, and the watches it adds or drops.
    private func translate(wd: Int32, mask: UInt32, cookie: UInt32, name: String,
                           into events: inout [ChangeCoalescer.Event]) throws(TonearmError) {
        func has(_ flag: Int32) -> Bool { mask & UInt32(flag) != 0 }
        if has(IN_Q_OVERFLOW) {
            events.append(.overflow)
            return
        }
        guard let folder = watches[wd]?.path else { return }  // a watch already dropped
        if has(IN_IGNORED) {
            watches[wd] = nil
            return
        }
        if name.isEmpty {
            // The folder itself: for all but the roots, its parent's event says it.
            if has(IN_DELETE_SELF) || has(IN_MOVE_SELF) || has(IN_UNMOUNT), roots.contains(folder) {
                events.append(.rootGone(folder, deleted: has(IN_DELETE_SELF)))
            }
            return
        }
        guard !name.hasPrefix(".") else { return }
        let path = folder + "/" + name
        if has(IN_ISDIR) {
            if has(IN_CREATE) || has(IN_MOVED_TO) {
                if has(IN_MOVED_TO) { events.append(.movedTo(path, cookie: cookie, isFolder: true)) }
                for file in try addTree(path, isRoot: false) { events.append(.found(file)) }
            } else if has(IN_DELETE) {
                events.append(.folderRemoved(path))
            } else if has(IN_MOVED_FROM) {
                events.append(.movedFrom(path, cookie: cookie, isFolder: true))
                let under = watches.filter { $0.value.path == path || $0.value.path.hasPrefix(path + "/") }.map(\.key)
                movedFolders.append((path, under, .now))
            }
            return
        }
        if has(IN_CREATE) {
            var st = stat()
            let link = lstat(path, &st) == 0
                && ((st.st_mode & S_IFMT) == S_IFLNK || ((st.st_mode & S_IFMT) == S_IFREG && st.st_nlink > 1))
            events.append(.created(path, isLink: link))
        }
        if has(IN_MODIFY) { events.append(.modified(path)) }
        if has(IN_CLOSE_WRITE) { events.append(.closedAfterWriting(path)) }
        if has(IN_DELETE) { events.append(.removed(path)) }
        if has(IN_MOVED_FROM) { events.append(.movedFrom(path, cookie: cookie, isFolder: false)) }
        if has(IN_MOVED_TO) { events.append(.movedTo(path, cookie: cookie, isFolder: false)) }
    }

    /// Drops the watches of folders moved out of the tree: those of a moved folder that still
    /// name a path under where it was, unless that path is the same folder again.
    private func expireMovedFolders(now: ContinuousClock.Instant) {
        while let m = movedFolders.first, now - m.at >= debounce {
            movedFolders.removeFirst()
            for wd in m.descriptors {
                guard let w = watches[wd], w.path == m.path || w.path.hasPrefix(m.path + "/") else { continue }
                var st = stat()
                if stat(w.path, &st) == 0 && UInt64(st.st_ino) == w.inode { continue }
                inotify_rm_watch(fd, wd)
                watches[wd] = nil
            }
        }
    }

    /// Watches `top` and every folder under it (hidden ones skipped, links not followed) and
    /// returns the files found (regular files and symbolic links). A folder that cannot be
    /// watched (gone meanwhile, not readable) is left out, as the scanner leaves it; a root
    /// cannot be.
    /// - Throws: `TonearmError.watchFailed` when the watch limit is reached.
    private func addTree(_ top: String, isRoot: Bool) throws(TonearmError) -> [String] {
        var files: [String] = []
        var stack = [top]
        while let folder = stack.popLast() {
            if let maxWatches, watches.count >= maxWatches, !watches.values.contains(where: { $0.path == folder }) {
                throw .watchFailed(path: folder, failure: .watchLimit(limit: maxWatches))
            }
            let wd = inotify_add_watch(fd, folder, Self.mask)
            if wd < 0 {
                let e = errno
                if e == ENOSPC { throw .watchFailed(path: folder, failure: .watchLimit(limit: Self.limit("max_user_watches"))) }
                if isRoot && folder == top {
                    throw .watchFailed(path: folder, failure: .system(call: "inotify_add_watch", detail: String(cString: strerror(e))))
                }
                continue
            }
            var st = stat()
            watches[wd] = Watch(path: folder, inode: stat(folder, &st) == 0 ? UInt64(st.st_ino) : 0)
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
            for name in names where !name.hasPrefix(".") {
                let path = folder + "/" + name
                guard lstat(path, &st) == 0 else { continue }
                switch st.st_mode & S_IFMT {
                case S_IFDIR: stack.append(path)
                case S_IFREG, S_IFLNK: files.append(path)
                default: break
                }
            }
        }
        return files
    }

    private func closeDescriptors() {
        close(fd)
        close(wakeRead)
        close(wakeWrite)
    }

    /// The value of /proc/sys/fs/inotify/`name`, when readable.
    private static func limit(_ name: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/sys/fs/inotify/" + name, encoding: .utf8) else { return nil }
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Milliseconds from now to `deadline`, rounded up (0 when past), for `poll`.
    private static func milliseconds(until deadline: ContinuousClock.Instant) -> Int32 {
        let left = deadline - .now
        guard left > .zero else { return 0 }
        let (seconds, attoseconds) = left.components
        let ms = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(min(ms, Int64(Int32.max)))
    }
}
