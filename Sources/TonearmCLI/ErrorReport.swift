// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Tonearm

/// A failure a command reports: printed by the entry point (``ErrorReport``) as
/// `tonearm: <subject>: <reason>` on standard error, with exit status `status` (1 unless said).
/// The subject is what failed (a file, a playlist, an output, an option); nil names the command.
///
/// Usage errors (what the command line alone shows wrong: a missing argument, a value out of its
/// range, options that exclude each other) are `ValidationError`s, exit status 64. A command line
/// that is well formed but asks for something that is not there (a file, a playlist, an output,
/// an artist with no songs) is a failure, exit status 1.
struct CommandFailure: Error, CustomStringConvertible {
    var subject: String?
    var reason: String
    var status: Int32 = 1

    init(_ subject: String? = nil, _ reason: String, status: Int32 = 1) {
        self.subject = subject
        self.reason = reason
        self.status = status
    }

    var description: String { subject.map { "\($0): \(reason)" } ?? reason }
}

/// How the `tonearm` command prints its errors, for every subcommand alike:
///
///     tonearm: <what failed>: <why>
///
/// on standard error; for a usage error (exit status 64) the command's usage line and where its
/// help is follow. Help, `--version` and completion scripts go to standard output, status 0.
/// Errors of the library (``TonearmError``) and ``CommandFailure``s exit with status 1; an
/// `ExitCode` thrown by a command that has already reported (or that only sets the status:
/// 128 + a signal, 130 for a cancelled picker) is passed on as it is.
struct ErrorReport {
    /// The command path the arguments name (`["library", "songs"]`) and its types.
    let path: [String]
    let commands: [ParsableCommand.Type]
    /// A word where a subcommand was expected that names none (`plya`), if any.
    let unknownCommand: String?

    init(arguments: [String], root: ParsableCommand.Type = TonearmCommand.self) {
        var path: [String] = []
        var commands: [ParsableCommand.Type] = [root]
        var unknown: String?
        var skipNext = false
        for arg in arguments {
            if skipNext { skipNext = false; continue }
            if arg == "--" { break }
            // The root's own option takes a value (`tonearm --config PATH play`).
            if arg == "--config" && commands.count == 1 { skipNext = true; continue }
            if arg.hasPrefix("-") { continue }
            let subcommands = commands.last!.configuration.subcommands
            if subcommands.isEmpty { break }
            if let next = subcommands.first(where: { Self.names(of: $0).contains(arg) }) {
                path.append(arg)
                commands.append(next)
            } else {
                if arg != "help" { unknown = arg }
                break
            }
        }
        self.path = path
        self.commands = commands
        self.unknownCommand = unknown
    }

    /// The name and aliases a command is called by.
    static func names(of command: ParsableCommand.Type) -> [String] {
        [command._commandName] + command.configuration.aliases
    }

    /// `play`, `library songs`: the command as it was called (the root's name for none).
    var commandName: String { path.isEmpty ? TonearmCommand._commandName : path.joined(separator: " ") }

    /// The message (without the `tonearm: ` prefix and the newline) and the exit status for
    /// `error`; `usage` is the usage block to print after it, for usage errors.
    func render(_ error: Error) -> (message: String, usage: String?, status: Int32, toStandardOutput: Bool) {
        switch error {
        case let failure as CommandFailure:
            return ("\(failure.subject ?? commandName): \(failure.reason)", nil, failure.status, false)
        case let error as TonearmError:
            return (Self.describe(error, command: commandName), nil, 1, false)
        case let code as ExitCode:
            return ("", nil, code.rawValue, false)
        case is ValidationError:
            // Thrown from a command's run(): ArgumentParser would show the root's usage.
            return ("\(commandName): \(Self.sentence(TonearmCommand.message(for: error)))", usage(), ExitCode.validationFailure.rawValue, false)
        default:
            break
        }
        let status = TonearmCommand.exitCode(for: error)
        if status == .success {
            return (TonearmCommand.fullMessage(for: error), nil, 0, true)
        }
        if status == .validationFailure {
            if let unknown = unknownCommand {
                let parent = commands.last!
                let candidates = parent.configuration.subcommands.flatMap(Self.names(of:))
                var hint = Self.suggestion(for: unknown, among: candidates).map { "; did you mean '\($0)'?" } ?? ""
                // `tonearm song.flac`, `tonearm list.m3u`: a file where a command was expected.
                if path.isEmpty, hint.isEmpty, FileManager.default.fileExists(atPath: unknown) {
                    hint = "; to play the file: tonearm play \(unknown.hasPrefix("-") ? "-- " : "")\(unknown)"
                }
                let what = path.isEmpty ? "a tonearm command" : "a subcommand of tonearm \(commandName)"
                return ("\(unknown): not \(what)\(hint)", usage(), status.rawValue, false)
            }
            let message = Self.sentence(TonearmCommand.message(for: error))
            if path.isEmpty, let quote = message.firstIndex(of: "'"), message.last == "'" {
                // `tonearm --bogus`: the option is what failed.
                let what = message[message.index(after: quote)..<message.index(before: message.endIndex)]
                return ("\(what): \(message[..<quote].trimmingCharacters(in: .whitespaces))", usage(), status.rawValue, false)
            }
            return ("\(commandName): \(message)\(Self.fileNamedLikeAnOption(message))", usage(), status.rawValue, false)
        }
        // An error of another kind (Foundation's, the system's) that a command let through.
        let text = (error as? LocalizedError)?.errorDescription ?? "\(error)"
        return ("\(commandName): \(text)", nil, status.rawValue, false)
    }

    /// Prints the report for `error` and returns the exit status.
    func report(_ error: Error) -> Int32 {
        let (message, usage, status, toStandardOutput) = render(error)
        if toStandardOutput {
            if !message.isEmpty { Terminal.write(message.hasSuffix("\n") ? message : message + "\n") }
        } else if !message.isEmpty {
            Terminal.writeError("tonearm: \(message)" + (usage.map { "\n" + $0 } ?? ""))
        }
        return status
    }

    /// The usage line of the command called, and where its help is.
    private func usage() -> String {
        let command = commands.last!
        let usage = command == TonearmCommand.self ? TonearmCommand.usageString() : TonearmCommand.usageString(for: command)
        let name = ([TonearmCommand._commandName] + path).joined(separator: " ")
        return "Usage: \(usage.replacingOccurrences(of: "\n", with: "\n       "))\nSee '\(name) --help' for more."
    }

    /// For "unknown option '-x.flac'" when a file of that name is there: how to give it as a file.
    static func fileNamedLikeAnOption(_ message: String) -> String {
        let prefix = "unknown option '"
        guard message.hasPrefix(prefix), message.hasSuffix("'") else { return "" }
        let name = String(message.dropFirst(prefix.count).dropLast())
        guard name.count > 1, FileManager.default.fileExists(atPath: name) else { return "" }
        return "; to give the file \(name), put it after -- or write it as ./\(name)"
    }

    /// ArgumentParser's messages start with a capital and may end with a full stop; the part
    /// after `tonearm: <command>: ` reads as the rest of a sentence.
    static func sentence(_ message: String) -> String {
        var m = message.trimmingCharacters(in: .whitespacesAndNewlines)
        // A library error passed on as a usage error (`ValidationError("\(error)")`).
        if m.hasPrefix("invalid argument: ") { m.removeFirst("invalid argument: ".count) }
        if let first = m.first, first.isUppercase, m.dropFirst().first?.isLowercase ?? true {
            m = first.lowercased() + m.dropFirst()
        }
        if m.hasSuffix(".") { m.removeLast() }
        // "Unknown option '--vlume'. Did you mean '--volume'?": as for a mistyped command.
        m = m.replacingOccurrences(of: ". Did you mean", with: "; did you mean")
        return m
    }

    /// A ``TonearmError`` in the command's words: `<file>: <why>` when it is about a file, else
    /// `<command>: <why>`.
    static func describe(_ error: TonearmError, command: String) -> String {
        switch error {
        case .invalidArgument(let text), .invalidState(let text):
            return "\(command): \(text)"
        case .fileExists(let path):
            return "\(path): \(Self.fileExistsReason)"
        default:
            return error.path != nil ? error.description : "\(command): \(error)"
        }
    }

    /// What every command says of an output file that is there already.
    static let fileExistsReason = "already exists; use --force to overwrite it"

    /// The candidate closest to `word` (an edit distance, transpositions counting one, of at
    /// most a third of its length, at least 1; or the only one it begins), if any.
    static func suggestion(for word: String, among candidates: [String]) -> String? {
        let w = Array(word.lowercased())
        let scored = candidates.map { ($0, distance(w, Array($0.lowercased()))) }
        if let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= max(1, w.count / 3) { return best.0 }
        let prefixed = candidates.filter { $0.lowercased().hasPrefix(word.lowercased()) }
        return !word.isEmpty && prefixed.count == 1 ? prefixed[0] : nil
    }

    /// The optimal string alignment distance: insertions, deletions, substitutions and swaps of
    /// neighbours.
    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1) }
            }
        }
        return d[a.count][b.count]
    }
}

extension Terminal {
    /// Reports a problem that does not stop the command (a file skipped, one of several that
    /// failed) in the form of every error: `tonearm: <what>: <why>` on standard error.
    static func writeProblem(_ text: String) {
        writeError("tonearm: \(text)")
    }

    /// Reports `error` as a problem that does not stop `command`.
    static func writeProblem(_ error: Error, command: String) {
        if let e = error as? TonearmError {
            writeProblem(ErrorReport.describe(e, command: command))
        } else {
            writeProblem("\(command): \(error)")
        }
    }
}
