// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import TonearmCore
import TonearmDaemon
import TonearmLibrary
import TonearmMPDLibrary
import TonearmMPDProtocol

/// The daemon's database (issue 20): a library of its own (`library.db` in its state folder) of
/// its music folders — the first is MPD's `music_directory`, each other one a top-level folder
/// of the database under its name (as MPD's `mount`) — scanned when the daemon starts (an
/// unchanged file costs a stat; the first scan reads every file) and watched, answered by
/// ``MPDLibraryResponder`` in MPD's format. Called on the daemon's command queue.
struct DaemonDatabase: MPDDatabaseResponder, MPDDatabaseUpdater {
    let responder: MPDLibraryResponder
    /// One reload at a time: an update's and the watch's, each after its scan, so that an older
    /// reading never replaces a newer one.
    private let reloads = Reloads()

    final class Reloads: Sendable {
        let lock = Mutex(())
    }

    private func reload() {
        reloads.lock.withLock { _ in try? responder.reload() }
    }

    var commands: Set<String> {
        MPDLibraryResponder.commands.union(MPDCommandMachine.queueDatabaseCommands).union(MPDLibraryResponder.pictureCommands)
    }

    func uri(forLocalPath path: String) -> String? { responder.uri(forFilePath: path) }

    func picture(command: String, arguments: [String], binaryLimit: Int) throws(MPDAck) -> (header: String, data: [UInt8]) {
        let answer = try responder.picture(command: command, arguments: arguments, binaryLimit: binaryLimit)
        return (answer.header, answer.data)
    }

    func respond(command: String, arguments: [String], tagTypes: Set<MPDTag>) throws(MPDAck) -> String {
        try responder.respond(command: command, arguments: arguments, tagTypes: tagTypes)
    }

    /// `update`/`rescan`: the library's scan of the folder `uri` (of a song's folder for a
    /// song; "" for every music folder), then the responder reads the library again.
    /// `update` reads the files whose size or modification time changed; `rescan` reads every
    /// file again (MPD's: unmodified files too).
    func update(uri: String, rescan: Bool) async -> Bool {
        var folders = uri.isEmpty ? responder.folders.all : [responder.folders.path(forURI: uri)]
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folders[0], isDirectory: &isDirectory) else { return false }
        if !isDirectory.boolValue { folders = [(folders[0] as NSString).deletingLastPathComponent] }
        let library = responder.library
        // Nothing changed (what an update mostly finds): answered by a read and a walk, as MPD
        // answers it from memory, without the scan's threads, pragmas and commit.
        if !rescan && library.unchangedScanSummary(folders: folders) != nil { return false }
        guard let summary = try? await (rescan ? library.rescanToEnd(folders: folders) : library.scanToEnd(folders: folders)),
              summary.added + summary.updated + summary.moved + summary.removed > 0 else { return false }
        reload()
        return true
    }

    /// The library's watch of every music folder (inotify; a burst of changes is one batch, an
    /// update job while it is read). It starts with a look at the folders (no job): what changed
    /// between the start-up scan and the watch is not missed.
    func watchFolders(batches: @escaping @Sendable (MPDWatchBatch) -> Void) async throws {
        let changes = try responder.library.watch(folders: responder.folders.all, initialScan: true) { batch in
            switch batch {
            case .applying(let cause):
                if cause != .initialScan { batches(.started) }
            case .applied(let change):
                let changed = !(change.added.isEmpty && change.updated.isEmpty && change.moved.isEmpty && change.removed.isEmpty)
                if changed { reload() }
                batches(.finished(changed: changed))
            }
        }
        for try await _ in changes {}
    }

    func localPath(forURI uri: String) -> String? { responder.filePath(forURI: uri) }

    func persistentID(forLocalPath path: String) -> UInt64? { responder.persistentID(forFilePath: path) }

    func songURIs(filterArguments: [String], command: String) throws(MPDAck) -> [String] {
        try responder.songURIs(filterArguments: filterArguments, command: command)
    }

    func songURIs(under uri: String, command: String) throws(MPDAck) -> [String] {
        try responder.songURIs(under: uri, command: command)
    }

    func playlistURIs(named name: String, command: String) throws(MPDAck) -> [String] {
        try responder.playlistURIs(named: name, command: command)
    }

    func savePlaylist(named name: String, uris: [String], command: String) throws(MPDAck) {
        try responder.savePlaylist(named: name, uris: uris, command: command)
    }

    func databaseStats() -> String { responder.databaseStats() }

    /// Opens (or makes) the library file, scans the music folders into it and loads it for the
    /// responder: `musicRoot`, and `otherFolders` as top-level folders of the database. Throws
    /// the library's ``TonearmError`` (an unreadable folder, a damaged database) or the
    /// responder's ``MPDAck`` as a ``TonearmError/library(path:reason:)``.
    static func open(musicRoot: String, otherFolders: [String] = [], stateDirectory: String) async throws -> DaemonDatabase {
        try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
        let path = (stateDirectory as NSString).appendingPathComponent("library.db")
        let library = try MediaLibrary(path: path)
        let folders = MPDFolders(root: musicRoot, others: otherFolders)
        if library.unchangedScanSummary(folders: folders.all) == nil {
            _ = try await library.scanToEnd(folders: folders.all)
        }
        do {
            return DaemonDatabase(responder: try MPDLibraryResponder(library: library, musicRoot: musicRoot, otherFolders: otherFolders))
        } catch {
            throw TonearmError.library(path: path, reason: error.message)
        }
    }
}
