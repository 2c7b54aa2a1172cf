// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import Glibc
import Synchronization
import TonearmCore

/// The last file probed for its streams, kept opened for the next opener of the same file.
///
/// `tonearm play VIDEO` asks whether the file has video (a probe: `avformat_open_input` and
/// `avformat_find_stream_info`), then its item opens the file for the sound and reads its video
/// tracks. Each of those used to open and probe the file again — five probes before the first
/// frame. Now ``VideoTrackInfo``'s probe leaves its opened context here, and the next
/// ``InputOpening/openProbed(_:)`` or ``AudioFile`` of the same file (same device, inode, size
/// and modification time) takes it instead of opening the file again: the probe is done once.
///
/// A few contexts at a time (``capacity``; keeping another closes the oldest), taken once (a context has one
/// owner: a demuxer is read by one decoder), and not handed out once older than ``lifetime``
/// (closed then, at the next keep or take). Only contexts that have not been read beyond the
/// probe are kept.
package enum ProbedInputs {
    /// How long a kept context waits for its taker (seconds, monotonic).
    package static let lifetime: Double = 10

    private struct Entry: @unchecked Sendable {  // the context has one owner: the slot, then its taker
        var path: String
        var identity: FileIdentity
        var context: UnsafeMutablePointer<AVFormatContext>
        var io: AnyObject?
        var kept: Double
    }

    /// How many contexts are kept at most (the oldest is closed to keep another).
    package static let capacity = 4

    private static let slot = Mutex<[Entry]>([])

    /// What the probes of kept contexts found, by file: outlives the context's taking (the
    /// picture's demuxer opens the file after the sound took its context). Same capacity and
    /// lifetime as the contexts.
    private struct Found: Sendable {
        var path: String
        var identity: FileIdentity
        var findings: ProbeFindings
        var kept: Double
    }

    private static let found = Mutex<[Found]>([])

    /// Keeps `context` (opened on `path` and probed, nothing read beyond) and its custom I/O for
    /// the next opener of the same file; closes one kept before for the same path (and the
    /// oldest when ``capacity`` are kept). A file whose identity
    /// cannot be read is closed at once.
    package static func keep(path: String, context: UnsafeMutablePointer<AVFormatContext>, io: AnyObject?) {
        guard let id = FileIdentity(path: path) else {
            close(context, io: io)
            return
        }
        let entry = Entry(path: path, identity: id, context: context, io: io, kept: monotonicSeconds())
        if let findings = ProbeFindings(context: context) {
            let f = Found(path: path, identity: id, findings: findings, kept: entry.kept)
            found.withLock { list in
                list.removeAll { $0.path == path }
                if list.count >= capacity { list.removeFirst() }
                list.append(f)
            }
        }
        let old = slot.withLock { s -> [Entry] in
            var gone = s.filter { $0.path == path }
            s.removeAll { $0.path == path }
            if s.count >= capacity { gone.append(s.removeFirst()) }
            s.append(entry)
            return gone
        }
        old.forEach(close)
    }

    /// The context kept for `path` when the file is still the one probed (and it was kept
    /// within ``lifetime``); the caller owns it (closes it with `avformat_close_input`, then
    /// releases `io`). Nil otherwise (a stale context is closed).
    package static func take(path: String) -> (context: UnsafeMutablePointer<AVFormatContext>, io: AnyObject?)? {
        let entry = slot.withLock { s -> Entry? in
            guard let i = s.firstIndex(where: { $0.path == path }) else { return nil }
            return s.remove(at: i)
        }
        guard let entry else { return nil }
        guard monotonicSeconds() - entry.kept <= lifetime, FileIdentity(path: path) == entry.identity else {
            close(entry)
            return nil
        }
        return (entry.context, entry.io)
    }

    /// What the probe of a context kept for `path` found, when the file is still the one probed
    /// (and it was kept within ``lifetime``): for a later opener that then need not probe it
    /// (``InputOpening/openProbed(_:)``). Not taken: every later opener within the lifetime may use it.
    package static func findings(path: String) -> ProbeFindings? {
        guard let f = found.withLock({ list in list.last { $0.path == path } }) else { return nil }
        guard monotonicSeconds() - f.kept <= lifetime, FileIdentity(path: path) == f.identity else {
            found.withLock { list in list.removeAll { $0.path == path && $0.kept == f.kept } }
            return nil
        }
        return f.findings
    }

    /// Closes the kept contexts (a test's clean slate).
    package static func drop() {
        found.withLock { $0 = [] }
        slot.withLock { s in
            let all = s
            s = []
            return all
        }.forEach(close)
    }

    private static func close(_ entry: Entry) {
        close(entry.context, io: entry.io)
    }

    private static func close(_ context: UnsafeMutablePointer<AVFormatContext>, io: AnyObject?) {
        var ctx: UnsafeMutablePointer<AVFormatContext>? = context
        avformat_close_input(&ctx)
        withExtendedLifetime(io) {}
    }

    private static func monotonicSeconds() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }
}

/// What tells one version of a file from another: a file replaced or rewritten since it was
/// probed is opened again.
struct FileIdentity: Equatable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modified: Int64  // nanoseconds

    init(device: UInt64, inode: UInt64, size: Int64, modified: Int64) {
        (self.device, self.inode, self.size, self.modified) = (device, inode, size, modified)
    }

    init?(path: String) {
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        self.init(device: UInt64(st.st_dev), inode: UInt64(st.st_ino), size: Int64(st.st_size),
                  modified: Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec))
    }
}

/// Counts, for the files a test names, how often each is opened for demuxing
/// (`avformat_open_input`) and probed (`avformat_find_stream_info`) through Tonearm's openers:
/// the test of "probed once before the first frame". Files not watched cost a lock and nothing else.
package enum InputOpenCounter {
    package struct Counts: Sendable, Equatable {
        package var opens = 0
        package var probes = 0
        package init(opens: Int = 0, probes: Int = 0) { (self.opens, self.probes) = (opens, probes) }
    }

    private static let watched = Mutex<[String: Counts]>([:])
    private static let any = Atomic<Bool>(false)

    /// Starts counting for `path` (from zero).
    package static func watch(_ path: String) {
        watched.withLock { $0[path] = Counts() }
        any.store(true, ordering: .releasing)
    }

    /// Stops counting for `path`; its counts.
    @discardableResult
    package static func unwatch(_ path: String) -> Counts {
        watched.withLock { w in
            let c = w.removeValue(forKey: path) ?? Counts()
            if w.isEmpty { any.store(false, ordering: .releasing) }
            return c
        }
    }

    /// The counts for `path` so far.
    package static func counts(_ path: String) -> Counts { watched.withLock { $0[path] ?? Counts() } }

    static func noteOpen(_ path: String) {
        guard any.load(ordering: .acquiring) else { return }
        watched.withLock { w in w[path]?.opens += 1 }
    }

    static func noteProbe(_ path: String) {
        guard any.load(ordering: .acquiring) else { return }
        watched.withLock { w in w[path]?.probes += 1 }
    }
}
