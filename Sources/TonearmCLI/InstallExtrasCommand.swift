// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation

/// `tonearm install-extras [--prefix DIR]`: installs the manual page and the bash, zsh and fish
/// completions, all made by this binary from its own command definitions, where `man` and the
/// shells look for them under the prefix; `--man-page` and `--completion SHELL` print one
/// instead (for packagers and for the tests).
struct InstallExtrasCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "install-extras",
        abstract: "Install the manual page and the bash, zsh and fish completions (or print one).",
        discussion: """
            Under the prefix (default /usr/local) it writes share/man/man1/tonearm.1, \
            share/bash-completion/completions/tonearm, share/zsh/site-functions/_tonearm and \
            share/fish/vendor_completions.d/tonearm.fish. The completions complete values too: \
            EQ presets, repeat modes, the sound server's outputs and the library's playlists.

            Examples:
              sudo tonearm install-extras
              tonearm install-extras --prefix ~/.local
              tonearm install-extras --man-page | man -l -
              tonearm install-extras --completion fish > ~/.config/fish/completions/tonearm.fish
            """)

    @Option(name: .long, help: ArgumentHelp("Where to install (the files go under share/).", valueName: "DIR"),
            completion: .directory)
    var prefix = "/usr/local"

    @Flag(name: .long, help: "Print the manual page (roff) instead of installing.")
    var manPage = false

    @Flag(name: .long, help: ArgumentHelp("Print the command reference in Markdown (docs/commands.md).", visibility: .hidden))
    var markdown = false

    @Option(name: .long, help: ArgumentHelp("Print the completion script for this shell (bash, zsh or fish) instead of installing.",
                                            valueName: "SHELL"),
            completion: .list(["bash", "zsh", "fish"]))
    var completion: String?

    func validate() throws {
        if manPage && completion != nil { throw ValidationError("--man-page, --completion: choose one") }
        if let completion, CompletionShell(rawValue: completion) == nil {
            throw ValidationError("--completion must be bash, zsh or fish, not '\(completion)'")
        }
        if prefix.trimmingCharacters(in: .whitespaces).isEmpty { throw ValidationError("--prefix needs a directory") }
    }

    /// Where each file goes under the prefix, and what it holds.
    static func files(prefix: String) throws -> [(path: String, text: String)] {
        let share = (prefix as NSString).expandingTildeInPath + "/share"
        return [
            ("\(share)/man/man1/tonearm.1", try ManPage.render()),
            ("\(share)/bash-completion/completions/tonearm", TonearmCommand.completionScript(for: .bash)),
            ("\(share)/zsh/site-functions/_tonearm", TonearmCommand.completionScript(for: .zsh)),
            ("\(share)/fish/vendor_completions.d/tonearm.fish", TonearmCommand.completionScript(for: .fish)),
        ]
    }

    func run() throws {
        if manPage { return Terminal.write(try ManPage.render()) }
        if markdown { return Terminal.write(try CommandReference.markdown()) }
        if let shell = completion.flatMap(CompletionShell.init(rawValue:)) {
            return Terminal.write(TonearmCommand.completionScript(for: shell))
        }
        for (path, text) in try Self.files(prefix: prefix) {
            let dir = (path as NSString).deletingLastPathComponent
            do {
                try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
                try text.write(toFile: path, atomically: true, encoding: .utf8)
            } catch {
                throw CommandFailure(path, "cannot be written (\((error as NSError).localizedDescription))"
                                     + (getuid() == 0 ? "" : "; install under a prefix of your own (--prefix ~/.local) or as root"))
            }
            Terminal.write("Installed \(path)\n")
        }
    }
}
