// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Glibc

/// Lists the regular files under folders for a scan, on several threads.
///
/// Folders are independent, so `threads` threads list them at once: on a cold cache each
/// `getdents` and `stat` waits for the disk, and several waits at once overlap (a tree of 1,100
/// folders and 10,000 files listed in about a third of the time of one thread here). What is
/// listed is what one thread would list: hidden entries are skipped; symbolic links to files
/// are followed, to folders not (but a folder given may be one); folders that cannot be read
/// are passed over. Blocking: returns when every folder is listed. Any thread.
enum FolderWalk {
    /// Every regular file under `folders` (absolute paths), sorted by path, each once.
    /// `started`: called first on each of its threads (the scanner's: their scheduling).
    static func files(under folders: [String], threads: Int, started: (@Sendable () -> Void)? = nil) -> [FoundFile] {
        if folders.isEmpty { return [] }
        let roots = folders.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
        let work = Work(roots)
        let count = max(1, threads)
        let done = DispatchGroup()
        let results = Results(count: count)
        for t in 0..<count {
            done.enter()
            let thread = Thread {
                started?()
                var found: [FoundFile] = []
                while let folder = work.take() {
                    work.finish(list(folder, into: &found))
                }
                results.set(t, found)
                done.leave()
            }
            thread.name = "tonearm-scan-walk"
            thread.start()
        }
        done.wait()
        var unique: [String: FoundFile] = [:]
        for list in results.all { for f in list { unique[f.path] = f } }
        return unique.values.sorted { $0.path < $1.path }
    }

    /// Adds the regular files in `directory` to `files` and returns its folders, with `readdir`
    /// and `fstatat` (the entry's type from the directory saves a `stat` per folder).
    private static func list(_ directory: String, into files: inout [FoundFile]) -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        let folderFD = dirfd(dir)
        let prefix = directory.hasSuffix("/") ? directory : directory + "/"
        var folders: [String] = []
        while let entry = readdir(dir) {
            let type = Int32(entry.pointee.d_type)
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name.hasPrefix(".") { continue }  // hidden, and "." and ".."
            let path = prefix + name
            if type == DT_DIR { folders.append(path); continue }
            guard type == DT_REG || type == DT_LNK || type == DT_UNKNOWN else { continue }
            // By name in the open folder: the kernel looks one name up, not the whole path.
            var st = stat()
            guard fstatat(folderFD, name, &st, 0) == 0 else { continue }
            switch st.st_mode & S_IFMT {
            case S_IFREG:
                let mtime = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
                files.append(FoundFile(path: path, size: Int64(st.st_size), mtime: mtime))
            case S_IFDIR where type == DT_UNKNOWN:
                var lst = stat()
                if lstat(path, &lst) == 0 && (lst.st_mode & S_IFMT) == S_IFDIR { folders.append(path) }
            default:
                continue
            }
        }
        return folders
    }

    /// The folders still to list, and how many are being listed: a thread waits while none is
    /// left but others may still find some; all end when none is left and none is being listed.
    private final class Work: @unchecked Sendable {
        private let condition = NSCondition()
        private var pending: [String]
        private var listing = 0

        init(_ roots: [String]) { pending = roots }

        /// The next folder to list, or nil when the walk is over.
        func take() -> String? {
            condition.withLock {
                while pending.isEmpty && listing > 0 { condition.wait() }
                guard let next = pending.popLast() else {
                    condition.broadcast()
                    return nil
                }
                listing += 1
                return next
            }
        }

        /// A folder is listed; `found` are the folders in it.
        func finish(_ found: [String]) {
            condition.withLock {
                pending.append(contentsOf: found)
                listing -= 1
                condition.broadcast()
            }
        }
    }

    /// Each thread's files, handed back once.
    private final class Results: @unchecked Sendable {
        private let lock = NSLock()
        private var lists: [[FoundFile]]
        init(count: Int) { lists = Array(repeating: [], count: count) }
        func set(_ i: Int, _ files: [FoundFile]) { lock.withLock { lists[i] = files } }
        var all: [[FoundFile]] { lock.withLock { lists } }
    }
}
