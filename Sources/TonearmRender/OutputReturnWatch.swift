// SPDX-License-Identifier: GPL-3.0-or-later
import Glibc
import Synchronization
import TonearmCore

/// Watches for a lost output's device or server to answer again (a restarted PulseAudio, a
/// PipeWire update), and says so once: the way a player finds its sound server again by itself.
///
/// The watch asks `probe` on a thread of its own ("tonearm-output-watch"): at once, then after
/// waits that grow from `firstDelay` to `maximumDelay` (doubling, each times a random factor
/// from 0.5 to 1, so that many players that lost the same server do not all come back in the
/// same instant). Between probes it sleeps in `poll(2)`; when `wakePath` names a file (a unix
/// socket the server creates when it starts), an inotify watch on its folder wakes it the moment
/// that file appears — and then probes every 50 ms for two seconds, since a server creates its
/// socket a moment before it serves — so a restarted server is found at once and never by busy
/// polling. When the
/// probe succeeds, `onReturn` runs once on the watch's thread, and the watch ends.
///
/// Threading: `init` starts the thread; ``cancel()`` may be called from any thread (also from
/// `onReturn`), returns at once, and after it `onReturn` is not called (unless it already
/// runs). The thread ends after `onReturn` or at the first wake after `cancel()`; the watch
/// releases its resources when the thread has ended and the last reference is gone.
public final class OutputReturnWatch: Sendable {
    /// What the thread shares with the owner.
    private final class Shared: Sendable {
        let cancelled = Atomic<Bool>(false)
        /// Probes made so far (for tests and diagnostics).
        let probes = Atomic<Int>(0)
        /// A pipe that `cancel()` writes to, so that the thread's poll returns at once: the thread
        /// polls `wakeFD`, cancel writes to `signalFD`.
        let wakeFD: Int32
        let signalFD: Int32
        init() {
            var fds: [Int32] = [-1, -1]
            if pipe(&fds) == 0 {
                for fd in fds {
                    _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                }
            } else {
                fds = [-1, -1]
            }
            wakeFD = fds[0]
            signalFD = fds[1]
        }
        deinit {
            if wakeFD >= 0 { close(wakeFD) }
            if signalFD >= 0 { close(signalFD) }
        }
    }

    private let shared = Shared()

    /// Starts watching.
    /// - Parameters:
    ///   - probe: whether the device or server answers now; blocks for at most a second or so.
    ///     Called on the watch's thread only.
    ///   - wakePath: a file whose appearance means the server may be back (its unix socket);
    ///     nil: probes on the backoff alone.
    ///   - firstDelay: the wait before the second probe, in seconds (then doubling).
    ///   - maximumDelay: the longest wait between probes, in seconds.
    ///   - onReturn: called once, on the watch's thread, when `probe` answered true.
    public init(probe: @escaping @Sendable () -> Bool, wakePath: String? = nil,
                firstDelay: Double = 0.1, maximumDelay: Double = 2,
                onReturn: @escaping @Sendable () -> Void) {
        let shared = self.shared
        let first = max(0.001, firstDelay)
        let maximum = max(first, maximumDelay)
        Self.startDetached {
            nameCurrentThread("tonearm-output-watch")
            let inotify = InotifyWake(path: wakePath)
            var delay = first
            // Probes left at short intervals after the file appeared: a server binds its socket
            // (the file appears) a moment before it listens and serves.
            var quick = 0
            while !shared.cancelled.load(ordering: .acquiring) {
                shared.probes.add(1, ordering: .relaxed)
                if probe() {
                    if !shared.cancelled.load(ordering: .acquiring) { onReturn() }
                    return
                }
                let wait: Double
                if quick > 0 {
                    quick -= 1
                    wait = Self.afterAppearing
                } else {
                    wait = delay * Double.random(in: 0.5...1)
                    delay = min(maximum, delay * 2)
                }
                if Self.sleep(seconds: wait, wakeFD: shared.wakeFD, inotify: inotify) == .fileAppeared {
                    quick = Self.quickProbes
                }
            }
        }
    }

    deinit { cancel() }

    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Runs `body` on a new detached thread (its resources are freed when it ends). When no
    /// thread can be made, runs nothing: the watch then never reports a return.
    private static func startDetached(_ body: @escaping @Sendable () -> Void) {
        var attr = pthread_attr_t()
        pthread_attr_init(&attr)
        defer { pthread_attr_destroy(&attr) }
        pthread_attr_setdetachstate(&attr, Int32(PTHREAD_CREATE_DETACHED))
        let box = Unmanaged.passRetained(Body(body)).toOpaque()
        var tid = pthread_t()
        let rc = pthread_create(&tid, &attr, { arg in
            Unmanaged<Body>.fromOpaque(arg!).takeRetainedValue().run()
            return nil
        }, box)
        if rc != 0 { Unmanaged<Body>.fromOpaque(box).release() }
    }

    /// Stops watching: `onReturn` will not be called (unless it is already running). Any thread.
    public func cancel() {
        guard !shared.cancelled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var one: UInt8 = 1
        _ = write(shared.signalFD, &one, 1)
    }

    /// How many times the watch has asked `probe`.
    public var probeCount: Int { shared.probes.load(ordering: .relaxed) }

    /// The wait between the probes after the watched file appeared, in seconds.
    static let afterAppearing = 0.05
    /// How many probes are made at that interval (two seconds of a server's start-up).
    static let quickProbes = 40

    private enum Wake { case timeout, cancelled, fileAppeared }

    /// Sleeps up to `seconds`, waking early when `cancel()` writes to `wakeFD` or the watched
    /// file appears.
    private static func sleep(seconds: Double, wakeFD: Int32, inotify: InotifyWake?) -> Wake {
        var fds = [pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
        if let inotify { fds.append(pollfd(fd: inotify.fd, events: Int16(POLLIN), revents: 0)) }
        let deadline = monotonicNanoseconds() + UInt64(seconds * 1e9)
        while true {
            let now = monotonicNanoseconds()
            guard now < deadline else { return .timeout }
            let ms = Int32(min(Double(deadline - now) / 1e6 + 1, Double(Int32.max)))
            let n = poll(&fds, nfds_t(fds.count), ms)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return .timeout }
            if fds[0].revents != 0 { return .cancelled }
            if fds.count > 1, fds[1].revents != 0, let inotify {
                fds[1].revents = 0
                if inotify.fileAppeared() { return .fileAppeared }
            }
        }
    }
}

/// An inotify watch on the folder of one file, telling whether that file was created (or moved
/// or linked into place). Owned by one watch thread.
private final class InotifyWake {
    let fd: Int32
    private let name: [UInt8]

    /// Nil when `path` is nil, has no folder, or inotify cannot watch its folder.
    init?(path: String?) {
        guard let path, let slash = path.lastIndex(of: "/") else { return nil }
        let folder = slash == path.startIndex ? "/" : String(path[..<slash])
        let file = String(path[path.index(after: slash)...])
        guard !file.isEmpty else { return nil }
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { return nil }
        guard inotify_add_watch(fd, folder, UInt32(IN_CREATE | IN_MOVED_TO | IN_ATTRIB)) >= 0 else {
            close(fd)
            return nil
        }
        self.fd = fd
        self.name = Array(file.utf8)
    }

    deinit { close(fd) }

    /// Reads the pending events; whether one of them names the file.
    func fileAppeared() -> Bool {
        var found = false
        let size = 4096
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let n = read(fd, buffer, size)
            if n <= 0 { return found }
            var offset = 0
            let header = MemoryLayout<inotify_event>.size
            while offset + header <= n {
                let length = Int(buffer.load(fromByteOffset: offset + 12, as: UInt32.self))
                let nameStart = buffer + offset + header
                if length > 0 {
                    let bytes = UnsafeRawBufferPointer(start: nameStart, count: length)
                    let end = bytes.firstIndex(of: 0) ?? length
                    if end == name.count && bytes.prefix(end).elementsEqual(name) { found = true }
                }
                offset += header + length
            }
        }
    }
}
