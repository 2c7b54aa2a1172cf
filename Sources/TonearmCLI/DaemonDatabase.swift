// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore
import TonearmDaemon
import TonearmLibrary
import TonearmMPDLibrary
import TonearmMPDProtocol

/// The daemon's database (issue 20): a library of its own (`library.db` in its state folder) of
/// its first music folder — MPD's `music_directory` — scanned when the daemon starts (an
/// unchanged file costs a stat; the first scan reads every file), answered by
/// ``MPDLibraryResponder`` in MPD's format. Called on the daemon's command queue.
struct DaemonDatabase: MPDDatabaseResponder {
    let responder: MPDLibraryResponder

    var commands: Set<String> { MPDLibraryResponder.commands.union(MPDCommandMachine.queueDatabaseCommands) }

    func respond(command: String, arguments: [String], tagTypes: Set<MPDTag>) throws(MPDAck) -> String {
        try responder.respond(command: command, arguments: arguments, tagTypes: tagTypes)
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
