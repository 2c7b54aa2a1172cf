// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Dispatch
import Foundation
import Glibc
import Tonearm

/// `tonearm library watch DIR… [--db PATH] [--no-scan] [--debounce MS]`: scans the folders (the
/// summary as `scan` prints it), says it is watching, then prints one line per applied change
/// ("added 2 (…), removed 1 (…)") until SIGINT (Ctrl-C), SIGTERM or SIGHUP, and exits with
/// 128 + the signal's number, as a shell reports a process killed by it (130, 143, 129). A
/// folder that is missing, a database that cannot be opened, or watching that fails (the
/// system's watch limit, a watched folder deleted): an error, exit status 1.
struct LibraryWatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Scan folders, then keep the library up to date as files are added, changed, moved or deleted (until Ctrl-C).",
        discussion: """
            Examples:
              tonearm library watch ~/Music
              tonearm library watch ~/Music --no-scan --debounce 2000
            """)

    @Argument(help: ArgumentHelp("Folders to watch (recursively).", valueName: "DIR"))
    var folders: [String]

    @OptionGroup var database: LibraryDatabaseOption

    @Flag(name: .customLong("no-scan"), help: "Do not scan the folders first: only apply the changes made from now on.")
    var noScan = false

    @Option(name: .long, help: ArgumentHelp("Milliseconds without events before changes are applied.", valueName: "MS"))
    var debounce = 300

    func validate() throws {
        if debounce < 0 { throw ValidationError("--debounce must be 0 or more") }
    }

    private enum Event: Sendable {
        case change(LibraryChange)
        case ended
        case failed(String)
        case signalled(Int32)
    }

    func run() async throws {
        let library = try database.open(command: "watch")
        let (events, sink) = AsyncStream<Event>.makeStream()
        let signals = SignalWatch { sink.yield(.signalled($0)) }
        defer { signals.cancel() }
        let changes: AsyncThrowingStream<LibraryChange, any Error>
        changes = try library.watch(folders: folders, debounce: .milliseconds(debounce), initialScan: !noScan)
        let start = Date()
        let pump = Task {
            do {
                for try await change in changes { sink.yield(.change(change)) }
                sink.yield(.ended)
            } catch {
                sink.yield(.failed("\(error)"))
            }
        }
        if noScan { announce() }
        var status: Int32 = 0
        loop: for await event in events {
            switch event {
            case .change(let change) where change.cause == .initialScan:
                Terminal.write(LibraryScanCommand.report(change.summary, seconds: Date().timeIntervalSince(start)))
                announce()
            case .change(let change):
                Terminal.write(Self.line(change) + "\n")
            case .signalled(let sig):
                status = 128 + sig
                break loop
            case .ended:
                break loop
            case .failed(let message):
                Terminal.writeProblem("library watch: \(message)")
                status = 1
                break loop
            }
        }
        pump.cancel()  // stops the watcher: its thread ends and closes its descriptors
        await pump.value
        if status != 0 { throw ExitCode(status) }
    }

    private func announce() {
        let what = folders.count == 1 ? folders[0] : "\(folders.count) folders"
        Terminal.write("Watching \(what) for changes (Ctrl-C to stop)\n")
    }

    /// One change as a line: each kind with its count and paths (ten at most), e.g.
    /// "added 2 (/m/a.mp3, /m/b.mp3), moved 1 (/m/c.mp3 → /m/d/c.mp3), skipped 1 (/m/x.txt: a text file, not media)".
    static func line(_ change: LibraryChange) -> String {
        func list(_ items: [String]) -> String {
            items.prefix(10).joined(separator: ", ") + (items.count > 10 ? ", and \(items.count - 10) more" : "")
        }
        var parts: [String] = []
        if !change.added.isEmpty { parts.append("added \(change.added.count) (\(list(change.added)))") }
        if !change.updated.isEmpty { parts.append("updated \(change.updated.count) (\(list(change.updated)))") }
        if !change.moved.isEmpty { parts.append("moved \(change.moved.count) (\(list(change.moved.map { "\($0.from) → \($0.to)" })))") }
        if !change.removed.isEmpty { parts.append("removed \(change.removed.count) (\(list(change.removed)))") }
        if !change.skipped.isEmpty { parts.append("skipped \(change.skipped.count) (\(list(change.skipped.map { "\($0.path): \($0.reason)" })))") }
        let text = parts.isEmpty ? "no changes" : parts.joined(separator: ", ")
        return change.cause == .rescan ? "rescanned everything (the system dropped events): " + text : text
    }
}
