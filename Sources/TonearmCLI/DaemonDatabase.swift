// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import TonearmCore
import TonearmDaemon
import TonearmLibrary
import TonearmMPDLibrary
import TonearmMPDProtocol

/// The daemon's database (issue 20): a library of its own (`library.db` in its state folder) of
/// its first music folder — MPD's `music_directory` — scanned when the daemon starts (an
/// unchanged file costs a stat; the first scan reads every file), answered by
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
    /// song; "" for the whole music folder), then the responder reads the library again.
    /// `update` reads the files whose size or modification time changed; `rescan` reads every
    /// file again (MPD's: unmodified files too).
    func update(uri: String, rescan: Bool) async -> Bool {
        let root = responder.musicRoot
        var folder = uri.isEmpty ? root : (root as NSString).appendingPathComponent(uri)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory) else { return false }
        if !isDirectory.boolValue { folder = (folder as NSString).deletingLastPathComponent }
        let library = responder.library
        guard let summary = try? await (rescan ? library.rescanToEnd(folders: [folder]) : library.scanToEnd(folders: [folder])),
              summary.added + summary.updated + summary.moved + summary.removed > 0 else { return false }
        reload()
        return true
    }

    /// The library's watch of the music folder (inotify; a burst of changes is one batch).
    func watchFolders(changed: @escaping @Sendable () -> Void) async throws {
        let changes = try responder.library.watch(folders: [responder.musicRoot], initialScan: false)
        for try await change in changes where !(change.added.isEmpty && change.updated.isEmpty && change.moved.isEmpty && change.removed.isEmpty) {
            reload()
            changed()
        }
    }

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

    /// Opens (or makes) the library file, scans `musicRoot` into it and loads it for the
    /// responder. Throws the library's ``TonearmError`` (an unreadable folder, a damaged
    /// database) or the responder's ``MPDAck`` as a ``TonearmError/library(path:reason:)``.
    static func open(musicRoot: String, stateDirectory: String) async throws -> DaemonDatabase {
        try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
        let path = (stateDirectory as NSString).appendingPathComponent("library.db")
        let library = try MediaLibrary(path: path)
        _ = try await library.scanToEnd(folders: [musicRoot])
        do {
            return DaemonDatabase(responder: try MPDLibraryResponder(library: library, musicRoot: musicRoot))
        } catch {
            throw TonearmError.library(path: path, reason: error.message)
        }
    }
}
