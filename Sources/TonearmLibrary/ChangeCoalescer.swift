// SPDX-License-Identifier: GPL-3.0-or-later

/// What a folder watcher gathers between two applied batches: the paths to look at again, the
/// files still being written (left until they are closed), and when the batch is due. A pure
/// value: the watcher's reading thread feeds it events with their time, the applier takes the
/// batch once it is due; both under the watcher's lock.
///
/// Timing: a batch is due `debounce` after the last event that changed it (so a burst — an
/// album copied, a folder renamed — is applied once), but no later than `maxDelay` after its
/// first event (so a long copy still shows up as it goes), except that a batch waits for the
/// other half of a move: the two events of a rename are consecutive in the kernel's queue, so a
/// move out of the tree is only known by its missing half, and waiting `debounce` after it
/// keeps a rename within the tree in one batch (where the scanner keeps the item's identity).
struct ChangeCoalescer: Sendable {
    typealias Instant = ContinuousClock.Instant

    /// One thing the watcher saw (paths absolute, under a watched folder, never hidden).
    enum Event: Sendable, Hashable {
        /// A file (not a folder) made in a watched folder: a symbolic or hard link is complete at
        /// once; a new file is being written until it is closed.
        case created(String, isLink: Bool)
        /// A file written to: being written until it is closed (not read meanwhile).
        case modified(String)
        /// A file opened for writing was closed: complete.
        case closedAfterWriting(String)
        /// A file deleted.
        case removed(String)
        /// A folder deleted (or unmounted from the tree): its rows go.
        case folderRemoved(String)
        /// The first half of a rename (of a file, or of a folder and all under it).
        case movedFrom(String, cookie: UInt32, isFolder: Bool)
        /// The second half of a rename, or something moved in from outside (a folder's files
        /// come as ``found(_:)`` from the watcher's walk of it).
        case movedTo(String, cookie: UInt32, isFolder: Bool)
        /// A file found by walking a folder that appeared (it may have landed before the folder
        /// was watched, so no other event may come for it).
        case found(String)
        /// The kernel's event queue overflowed: events were lost, so the next batch is a full scan.
        case overflow
        /// A watched folder itself was deleted (`deleted`), or moved away or unmounted.
        case rootGone(String, deleted: Bool)
    }

    /// What to apply.
    struct Batch: Sendable, Hashable {
        /// Scan the watched folders in full (events were lost).
        var fullRescan = false
        /// Files and folders to look at again (see ``Scanner``); empty for a full rescan.
        var paths: Set<String> = []
        /// Watched folders that went away: watching ends after this batch.
        var rootsGone: [String] = []
    }

    let debounce: Duration
    let maxDelay: Duration
    private(set) var paths: Set<String> = []
    /// Files open for writing as far as the events tell: never in a batch.
    private(set) var writing: Set<String> = []
    private var overflowed = false
    private var rootsGone: [String] = []
    private var first: Instant?
    private var last: Instant?
    /// First halves of renames not yet matched, by cookie: when, and the files among them that
    /// were being written (relative to the moved path; "" for the path itself).
    private var unpaired: [UInt32: (at: Instant, from: String, writing: [String])] = [:]

    init(debounce: Duration, maxDelay: Duration? = nil) {
        self.debounce = debounce
        self.maxDelay = maxDelay ?? max(debounce * 10, .seconds(1))
    }

    /// Whether there is nothing to apply (files being written do not count).
    var isEmpty: Bool { !overflowed && rootsGone.isEmpty && paths.isSubset(of: writing) }

    /// When the batch is due; nil while there is nothing to apply.
    var deadline: Instant? {
        guard !isEmpty, let first, let last else { return nil }
        let due = min(last + debounce, first + maxDelay)
        guard let move = unpaired.values.map(\.at).max() else { return due }
        return max(due, move + debounce)
    }

    mutating func add(_ event: Event, at now: Instant) {
        switch event {
        case .created(let path, let isLink):
            if isLink {
                paths.insert(path)
            } else {
                writing.insert(path)
                return  // nothing to apply until it is closed
            }
        case .modified(let path):
            writing.insert(path)
            return
        case .closedAfterWriting(let path):
            writing.remove(path)
            paths.insert(path)
        case .removed(let path):
            writing.remove(path)
            paths.insert(path)
        case .folderRemoved(let path):
            _ = takeWriting(under: path)
            paths.insert(path)
        case .movedFrom(let path, let cookie, let isFolder):
            let moving = isFolder ? takeWriting(under: path) : (writing.remove(path) != nil ? [""] : [])
            unpaired[cookie] = (now, path, moving)
            paths.insert(path)
        case .movedTo(let path, let cookie, let isFolder):
            if let from = unpaired.removeValue(forKey: cookie) {
                for rest in from.writing { writing.insert(path + rest) }
            }
            // A folder's files come as `.found`; the folder itself need not be walked.
            if !isFolder { paths.insert(path) }
        case .found(let path):
            paths.insert(path)
        case .overflow:
            overflowed = true
            writing.removeAll()  // their closes may be among the lost events
        case .rootGone(let root, let deleted):
            if deleted { paths.insert(root) }
            rootsGone.append(root)
        }
        if first == nil { first = now }
        last = now
    }

    /// The batch, when it is due at `now` (else nil), and a fresh start for the next one. Files
    /// still being written stay out of it; their close brings them back.
    mutating func take(at now: Instant) -> Batch? {
        guard let deadline, now >= deadline else { return nil }
        let batch = Batch(fullRescan: overflowed, paths: overflowed ? [] : paths.subtracting(writing), rootsGone: rootsGone)
        paths = []
        overflowed = false
        rootsGone = []
        first = nil
        last = nil
        unpaired = [:]
        return batch
    }

    /// Removes the files being written at or under `path`, returning them relative to it.
    private mutating func takeWriting(under path: String) -> [String] {
        let under = writing.filter { $0 == path || $0.hasPrefix(path + "/") }
        writing.subtract(under)
        return under.map { String($0.dropFirst(path.count)) }
    }
}

extension Set<String> {
    /// Whether `path` is one of these paths or under one of them (a prefix ending at a "/").
    func covers(_ path: String) -> Bool {
        if contains(path) { return true }
        var end = path.endIndex
        while let slash = path[..<end].lastIndex(of: "/") {
            if slash == path.startIndex { return contains("/") }
            if contains(String(path[..<slash])) { return true }
            end = slash
        }
        return false
    }
}
