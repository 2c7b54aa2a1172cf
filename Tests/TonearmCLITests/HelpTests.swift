// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// The help of every command, the manual page and the shell completions, through the real
/// binary; the commands are enumerated from the binary's own description of itself (the root
/// configuration), not from a list here.
@Suite(.offThePool) struct HelpTests {
    /// Every command's `--help` shows examples and a usage line with the command's own name.
    @Test func everyHelpHasExamplesAndItsOwnUsage() throws {
        let bin = try tonearmBinary()
        let tree = try CommandTree.load(bin: bin)
        let all = tree.all
        #expect(all.count > 30, "\(all.map(\.path))")
        for (path, _) in all {
            let r = try run(bin, path + ["--help"])
            let name = (["tonearm"] + path).joined(separator: " ")
            #expect(r.status == 0 && r.stderr.isEmpty, "\(name): \(r.stderr)")
            #expect(r.stdout.contains("Examples:\n"), "\(name) --help has no examples:\n\(r.stdout)")
            let usage = r.stdout.split(separator: "\n").first { $0.hasPrefix("USAGE: ") }.map(String.init) ?? ""
            #expect(usage.hasPrefix("USAGE: \(name)") && (usage == "USAGE: \(name)" || usage.dropFirst("USAGE: \(name)".count).first == " "),
                    "\(name): \(usage)")
            // The examples show the command itself (a group's show its subcommands).
            let examples = r.stdout.components(separatedBy: "Examples:\n").last ?? ""
            #expect(examples.contains("  \(name)") || examples.contains("(\(name)"), "\(name): examples of other commands only:\n\(examples)")
        }
    }

    /// `library songs` and the other lists are commands of their own, not aliases of `list`.
    @Test func libraryListsHaveTheirOwnNames() throws {
        let bin = try tonearmBinary()
        for kind in ["songs", "albums", "artists", "genres", "composers", "podcasts", "audiobooks"] {
            let r = try run(bin, ["library", kind, "--help"])
            #expect(r.stdout.contains("USAGE: tonearm library \(kind) "), "\(kind): \(r.stdout)")
        }
        // `volume` takes one value.
        let volume = try run(bin, ["volume", "--help"])
        #expect(volume.stdout.contains("USAGE: tonearm volume [<VALUE>] [--device <NAME>]"), "\(volume.stdout)")
    }

    /// The manual page names every command and every option, and groff formats it without a
    /// warning.
    @Test func theManualPageCoversEveryCommandAndRendersCleanly() throws {
        let bin = try tonearmBinary()
        let dir = try TempDir("man-page")
        defer { dir.remove() }
        let page = try run(bin, ["install-extras", "--man-page"])
        #expect(page.status == 0, "\(page.stderr)")
        let file = dir.file("tonearm.1")
        try page.stdout.write(toFile: file, atomically: true, encoding: .utf8)
        // -ww: every warning; -z: no output, only diagnostics.
        let groff = try run("groff", ["-man", "-Tutf8", "-ww", "-z", file])
        #expect(groff.status == 0 && groff.stderr.isEmpty, "groff: \(groff.stderr)")
        let text = try run("groff", ["-man", "-Tutf8", "-P", "-cbou", file], environment: ["MANWIDTH": "100"])
        #expect(text.status == 0)
        let shown = text.stdout
        let tree = try CommandTree.load(bin: bin)
        for (path, command) in tree.all where !path.isEmpty {
            let name = (["tonearm"] + path).joined(separator: " ")
            #expect(shown.contains(name), "the page does not name \(name)")
            for argument in command.arguments ?? [] where argument.shouldDisplay && !argument.isHelpOrVersion {
                for n in argument.names ?? [] {
                    let spelt = (n.kind == "long" ? "--" : "-") + n.name
                    #expect(shown.contains(spelt), "the page does not name \(spelt) of \(name)")
                }
            }
        }
        #expect(shown.contains("EXIT STATUS") && shown.contains("64"))
    }

    /// The bash completion, sourced in a real bash, completes the values of options: EQ presets
    /// after `play --eq`, repeat modes after `play --repeat`, subcommands after `library`.
    @Test func bashCompletesValues() throws {
        let dir = try TempDir("completion")
        defer { dir.remove() }
        let complete = try Self.bashCompletion(in: dir, environment: ["XDG_DATA_HOME": dir.file("data")])
        let presets = try complete(["tonearm", "play", "--eq", ""])
        for p in ["rock", "jazz", "flat", "bass-boost"] { #expect(presets.contains(p), "--eq offers \(presets)") }
        #expect(try complete(["tonearm", "play", "--eq", "ro"]) == ["rock"])
        #expect(try complete(["tonearm", "play", "--repeat", ""]).sorted() == ["all", "off", "one"])
        let library = try complete(["tonearm", "library", ""])
        for c in ["scan", "songs", "albums", "playlist"] { #expect(library.contains(c), "library offers \(library)") }
        #expect(try complete(["tonearm", "pl"]).contains("play"))
        // Playlists: the library's own, then the smart ones, of the library --db names.
        let db = dir.file("library.sqlite")
        let made = try run(try tonearmBinary(), ["library", "playlist", "create", "Road trip", "--db", db])
        #expect(made.status == 0, "\(made.stderr)")
        let playlists = try complete(["tonearm", "play", "--db", db, "--playlist", ""])
        #expect(playlists.contains("Road trip") && playlists.contains("Top 25 Most Played"), "\(playlists)")
        #expect(try complete(["tonearm", "library", "playlist", "show", "--db", db, "Ro"]) == ["Road trip"])
        // No library: nothing offered, and none made by asking.
        #expect(try complete(["tonearm", "play", "--playlist", ""]).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: dir.file("data/tonearm/library.sqlite")))
    }

    /// What the bash completion script of the binary offers for a command line (its last word
    /// being completed), sourced in a real bash as `complete -F` would call it.
    static func bashCompletion(in dir: TempDir, environment: [String: String] = [:]) throws -> ([String]) throws -> [String] {
        let bin = try tonearmBinary()
        let script = try run(bin, ["install-extras", "--completion", "bash"])
        guard script.status == 0 else { throw TestSupportError("--completion bash: \(script.stderr)") }
        let file = dir.file("tonearm.bash")
        try script.stdout.write(toFile: file, atomically: true, encoding: .utf8)
        // The script calls `tonearm` for custom values: the binary under test first in PATH.
        let path = (bin as NSString).deletingLastPathComponent + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        return { words in
            let quoted = words.map { "'\($0.replacingOccurrences(of: "'", with: "'\\''"))'" }.joined(separator: " ")
            let r = try run("bash", ["-c", """
                source \(file)
                COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1)
                COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}
                _tonearm "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
                printf '%s\\n' "${COMPREPLY[@]}"
                """], environment: environment.merging(["PATH": path]) { _, new in new })
            guard r.status == 0 else { throw TestSupportError("completing \(words): \(r.stderr)") }
            return r.stdout.split(separator: "\n").map { String($0).trimmingCharacters(in: .whitespaces) }
        }
    }

    /// The zsh and fish scripts are well formed (checked by the shells, where installed).
    @Test func zshAndFishScriptsParse() throws {
        let bin = try tonearmBinary()
        let dir = try TempDir("completion")
        defer { dir.remove() }
        for (shell, check) in [("zsh", ["zsh", "-n"]), ("fish", ["fish", "-n"])] {
            let script = try run(bin, ["install-extras", "--completion", shell])
            #expect(script.status == 0 && !script.stdout.isEmpty, "\(shell): \(script.stderr)")
            let file = dir.file("tonearm.\(shell)")
            try script.stdout.write(toFile: file, atomically: true, encoding: .utf8)
            guard FileManager.default.isExecutableFile(atPath: "/usr/bin/\(shell)") else { continue }  // scripts/install-deps installs both
            let r = try run(check[0], Array(check.dropFirst()) + [file])
            #expect(r.status == 0 && r.stderr.isEmpty, "\(shell) -n: \(r.stderr)")
            if shell == "fish" {
                // fish can be asked what it would complete: EQ presets after --eq.
                let offered = try run("fish", ["--no-config", "-c", "source \(file); complete -C 'tonearm play --eq ro'"])
                #expect(offered.stdout.split(separator: "\n").map { $0.split(separator: "\t").first.map(String.init) ?? "" } == ["rock"],
                        "\(offered.stdout) \(offered.stderr)")
            }
        }
    }

    /// docs/commands.md (which the README links as the command reference) is what the binary
    /// makes of its own definitions, so it names every command and option there is. After a
    /// change to a command's help: `tonearm install-extras --markdown > docs/commands.md`.
    @Test func theCommandReferenceIsCurrentAndNamesEveryOption() throws {
        let bin = try tonearmBinary()
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/commands.md").standardized.path
        let committed = try String(contentsOfFile: file, encoding: .utf8)
        let made = try run(bin, ["install-extras", "--markdown"])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(committed == made.stdout, "docs/commands.md is out of date: tonearm install-extras --markdown > docs/commands.md")
        // Each command's section, by its heading.
        var sections: [String: String] = [:]
        for part in committed.components(separatedBy: "\n## tonearm ").dropFirst() {
            let heading = part.prefix { $0 != "\n" }.replacingOccurrences(of: " (for benchmarks)", with: "")
            sections[heading] = part
        }
        for (path, command) in try CommandTree.load(bin: bin).all where !path.isEmpty {
            let name = path.joined(separator: " ")
            let section = try #require(sections[name], "no section for tonearm \(name)")
            for argument in command.arguments ?? [] where argument.shouldDisplay && !argument.isHelpOrVersion {
                for n in argument.names ?? [] {
                    let spelt = (n.kind == "long" ? "--" : "-") + n.name
                    #expect(section.contains("`\(spelt)") || section.contains(", \(spelt)"), "tonearm \(name): no \(spelt)")
                }
            }
        }
    }

    /// `install-extras --prefix` puts the four files where man and the shells look.
    @Test func installExtrasWritesTheStandardPlaces() throws {
        let bin = try tonearmBinary()
        let dir = try TempDir("extras")
        defer { dir.remove() }
        let r = try run(bin, ["install-extras", "--prefix", dir.path])
        #expect(r.status == 0, "\(r.stderr)")
        for file in ["share/man/man1/tonearm.1", "share/bash-completion/completions/tonearm",
                     "share/zsh/site-functions/_tonearm", "share/fish/vendor_completions.d/tonearm.fish"] {
            let size = (try? FileManager.default.attributesOfItem(atPath: dir.file(file))[.size] as? Int) ?? 0
            #expect(size > 1000, "\(file): \(size) bytes")
            #expect(r.stdout.contains("Installed \(dir.file(file))"))
        }
    }
}
