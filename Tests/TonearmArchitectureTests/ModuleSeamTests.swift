// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// The seams of the package, read from its manifest (`swift package dump-package`, run by the
/// test) and its sources: what may not depend on what. Each rule is one the architecture states:
/// the engine knows only the render contract (no libpulse, no libdbus); the render contract needs
/// no C library; `import Tonearm` is the playback API without MPRIS; the desktop integration is a
/// product of its own.
@Suite struct ModuleSeamTests {
    /// The manifest, read once for all the tests (each run of `dump-package` compiles it).
    private static let loaded = Result { try PackageGraph.load() }
    let graph: PackageGraph

    init() throws {
        graph = try Self.loaded.get()
    }

    @Test func theEngineNeedsNeitherLibpulseNorLibdbus() throws {
        let closure = try graph.closure(of: "TonearmEngine")
        #expect(closure.contains("TonearmRender"))
        for forbidden in ["CPulse", "CDBus", "TonearmOutput", "TonearmDBus", "TonearmSession", "TonearmMPRIS"] {
            #expect(!closure.contains(forbidden), "TonearmEngine depends on \(forbidden) through \(graph.path(from: "TonearmEngine", to: forbidden))")
        }
    }

    @Test func theRenderContractNeedsNoCLibrary() throws {
        let closure = try graph.closure(of: "TonearmRender")
        #expect(closure == ["TonearmCore"], "TonearmRender depends on \(closure.sorted())")
        let cTargets = graph.targets.values.filter { $0.type == "system" || graph.isCTarget($0.name) }.map(\.name)
        #expect(!cTargets.isEmpty)
        for c in cTargets { #expect(!closure.contains(c)) }
    }

    @Test func theUmbrellaIsThePlaybackAPIWithoutMPRIS() throws {
        let umbrella = try #require(graph.products["Tonearm"])
        var closure = Set(umbrella)
        for t in umbrella { closure.formUnion(try graph.closure(of: t)) }
        for forbidden in ["TonearmMPRIS", "TonearmDesktop"] {
            #expect(!closure.contains(forbidden), "the Tonearm product reaches \(forbidden)")
        }
        for needed in ["TonearmEngine", "TonearmRender", "TonearmPlayback", "TonearmOutput"] {
            #expect(closure.contains(needed), "the Tonearm product lacks \(needed)")
        }
    }

    @Test func theDesktopIntegrationIsAProductOfItsOwnThatTheCommandUses() throws {
        let desktop = try #require(graph.products["TonearmDesktop"])
        var closure = Set(desktop)
        for t in desktop { closure.formUnion(try graph.closure(of: t)) }
        #expect(closure.contains("TonearmMPRIS"))
        #expect(try graph.closure(of: "TonearmCLI").contains("TonearmDesktop"))
    }

    /// The video decoding core is headless: FFmpeg and the core only — no window system (SDL),
    /// no sound server, no D-Bus, no engine — so thumbnails and frame output run anywhere, and a
    /// renderer (a window, a file) depends on it, never the other way round.
    @Test func theVideoCoreIsHeadless() throws {
        let closure = try graph.closure(of: "TonearmVideo")
        #expect(closure == ["TonearmCore", "TonearmCodecs", "CFFmpeg", "CFFmpegLazy"], "TonearmVideo depends on \(closure.sorted())")
        for forbidden in graph.targets.keys where forbidden.hasPrefix("CSDL") || forbidden.contains("SDL") {
            #expect(!closure.contains(forbidden), "TonearmVideo depends on \(forbidden)")
        }
        // The umbrella carries it (AssetImageGenerator is playback API), and the command uses it.
        #expect(try graph.closure(of: "Tonearm").contains("TonearmVideo"))
        #expect(try graph.closure(of: "TonearmCLI").contains("TonearmVideo"))
    }

    /// The video window knows frames (TonearmCore's VideoFrame) and SDL, nothing of decoding or
    /// playing; and SDL stays out of the audio path and the video pipeline: the engine, the render
    /// contract, the outputs, the players and the frame scheduling do not reach it (an audio-only
    /// program loads no libSDL2; the window is one sink of frames among others). SDL itself is
    /// loaded by CSDL2Lazy when a window opens, so the window's module is the only one to reach it.
    @Test func theWindowNeedsOnlyTheCoreAndSDLAndTheAudioPathNoSDL() throws {
        #expect(try graph.closure(of: "TonearmWindow") == ["TonearmCore", "CSDL2", "CSDL2Lazy"])
        #expect(graph.products["TonearmWindow"] == ["TonearmWindow"])
        for audio in ["TonearmEngine", "TonearmRender", "TonearmOutput", "TonearmPlayback", "TonearmCodecs", "TonearmSession",
                      "TonearmVideo"] {
            let closure = try graph.closure(of: audio)
            for forbidden in ["CSDL2", "CSDL2Lazy", "TonearmWindow"] {
                #expect(!closure.contains(forbidden), "\(audio) depends on \(forbidden) through \(graph.path(from: audio, to: forbidden))")
            }
        }
    }

    /// The kit (PlayerLayer, PlayerView) joins the player to the window; nothing of the audio
    /// path, the video pipeline or the umbrella `import Tonearm` depends on it, so the umbrella
    /// and every audio-only program stay free of SDL; the command uses it for its video window.
    @Test func theKitJoinsThePlayerToTheWindowAndNoAudioModuleDependsOnIt() throws {
        let kit = try graph.closure(of: "TonearmKit")
        for needed in ["TonearmPlayback", "TonearmVideo", "TonearmWindow"] { #expect(kit.contains(needed)) }
        for audio in ["TonearmEngine", "TonearmRender", "TonearmOutput", "TonearmPlayback", "TonearmCodecs", "TonearmSession",
                      "TonearmVideo", "TonearmWindow", "TonearmNowPlaying", "TonearmMPRIS", "TonearmDesktop", "Tonearm"] {
            let closure = try graph.closure(of: audio)
            for forbidden in ["TonearmKit", "CSDL2"] where audio != "TonearmWindow" || forbidden == "TonearmKit" {
                #expect(!closure.contains(forbidden), "\(audio) depends on \(forbidden) through \(graph.path(from: audio, to: forbidden))")
            }
        }
        #expect(try graph.closure(of: "TonearmCLI").contains("TonearmKit"))
    }

    /// SwiftNIO and service-lifecycle are the daemon's alone (and its web remote's, TonearmWeb,
    /// whose Hummingbird stands on them): no other module of the package (sources or tests)
    /// imports them, so the playback API and the command never carry the server's dependencies
    /// except through TonearmDaemon and TonearmWeb. Hummingbird is TonearmWeb's alone. swift-log
    /// is the daemon's, the web remote's, the audio session's (its warnings, and the session
    /// tests that capture them) and the iOS compatibility layer's (the failures Apple's API
    /// swallows, logged instead of lost) only.
    @Test func onlyTheDaemonImportsTheServerPackages() throws {
        var found: [String] = []
        let servers: Set<String> = ["TonearmDaemon", "TonearmWeb", "TonearmWebTests"]
        let logging: Set<String> = ["TonearmDaemon", "TonearmSession", "TonearmSessionTests", "TonearmWeb", "TonearmWebTests", "TonearmCompat"]
        for target in graph.targets.values where target.type != "system" && target.name != "TonearmDaemon" {
            for (file, module) in try graph.imports(of: target)
            where ((module.hasPrefix("NIO") || module == "ServiceLifecycle") && !servers.contains(target.name))
                || (module.hasPrefix("Hummingbird") && target.name != "TonearmWeb" && target.name != "TonearmWebTests")
                || (module == "Logging" && !logging.contains(target.name)) {
                found.append("\(file) imports \(module)")
            }
        }
        #expect(found.isEmpty, "\(found.sorted().joined(separator: "\n"))")
        let daemon = try #require(graph.targets["TonearmDaemon"])
        #expect(try graph.imports(of: daemon).contains { $0.1 == "NIOPosix" })
    }

    /// The MPD client (issue 20's `tonearm remote`, `MusicPlayer.system`) stands on the protocol's
    /// text alone: not on the daemon, the playback engine or a C library, so the umbrella that
    /// carries it brings no server with it.
    @Test func theMPDClientNeedsOnlyTheProtocol() throws {
        let closure = try graph.closure(of: "TonearmMPDClient")
        #expect(closure.subtracting(["TonearmMPDClient"]) == ["TonearmMPDProtocol"], "\(closure.sorted())")
        #expect(try graph.closure(of: "Tonearm").contains("TonearmMPDClient"))
        #expect(!(try graph.closure(of: "Tonearm").contains("TonearmDaemon")))
    }

    /// A module builds into the same directory as every other, so an import of a module that is
    /// not a declared dependency can compile by luck of build order and hide a seam. Every import
    /// of one of the package's modules must be a declared (direct or transitive) dependency.
    @Test func everyImportOfAPackageModuleIsADeclaredDependency() throws {
        var undeclared: [String] = []
        for target in graph.targets.values where target.type != "system" {
            let closure = try graph.closure(of: target.name)
            for (file, module) in try graph.imports(of: target) where graph.targets[module] != nil {
                if module != target.name && !closure.contains(module) {
                    undeclared.append("\(file) imports \(module), which \(target.name) does not depend on")
                }
            }
        }
        #expect(undeclared.isEmpty, "\(undeclared.sorted().joined(separator: "\n"))")
    }
}

/// The package's targets and products with their dependencies, from `swift package dump-package`.
struct PackageGraph {
    struct Target {
        var name: String
        var type: String
        var path: String?
        /// Targets of this package it names (by name or as a target), not other packages' products.
        var dependencies: [String]
    }

    let root: URL
    let targets: [String: Target]
    /// Product name → its targets.
    let products: [String: [String]]

    /// The package root: three levels above this file (Tests/TonearmArchitectureTests/…).
    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// Runs `swift package dump-package` on the package root, with a scratch directory of its own
    /// (so it never waits for the lock of the build that runs this test), and parses the result.
    static func load() throws -> PackageGraph {
        let root = packageRoot
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("tonearm-seams-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift", "package", "--package-path", root.path, "--scratch-path", scratch.path,
                             "--disable-sandbox", "dump-package"]
        // Standard error to a file (read after the end), standard output through a pipe read to its end.
        let errorFile = scratch.path + ".stderr"
        guard FileManager.default.createFile(atPath: errorFile, contents: nil),
              let errorHandle = FileHandle(forWritingAtPath: errorFile) else {
            throw SeamTestFailure("cannot create \(errorFile)")
        }
        defer { try? FileManager.default.removeItem(atPath: errorFile) }
        let out = Pipe()
        process.standardOutput = out
        process.standardError = errorHandle
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try? errorHandle.close()
        guard process.terminationStatus == 0 else {
            let message = (try? String(contentsOfFile: errorFile, encoding: .utf8)) ?? ""
            throw SeamTestFailure("swift package dump-package failed (status \(process.terminationStatus)): \(message)")
        }
        return try parse(data, root: root)
    }

    static func parse(_ data: Data, root: URL) throws -> PackageGraph {
        guard let json = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let targetList = json["targets"] as? [[String: Any]],
              let productList = json["products"] as? [[String: Any]] else {
            throw SeamTestFailure("dump-package printed no targets and products")
        }
        var targets: [String: Target] = [:]
        for t in targetList {
            guard let name = t["name"] as? String, let type = t["type"] as? String else { continue }
            var deps: [String] = []
            for d in t["dependencies"] as? [[String: Any]] ?? [] {
                // {"byName": [name, condition]} or {"target": [name, condition]}; products are other packages'.
                if let v = (d["byName"] ?? d["target"]) as? [Any], let dep = v.first as? String { deps.append(dep) }
            }
            targets[name] = Target(name: name, type: type, path: t["path"] as? String, dependencies: deps)
        }
        // A by-name dependency that is no target of ours is another package's product.
        let names = Set(targets.keys)
        for (name, t) in targets { targets[name]?.dependencies = t.dependencies.filter { names.contains($0) } }
        var products: [String: [String]] = [:]
        for p in productList {
            if let name = p["name"] as? String, let ts = p["targets"] as? [String] { products[name] = ts }
        }
        return PackageGraph(root: root, targets: targets, products: products)
    }

    /// Every target `name` depends on, directly or not (without `name` itself).
    func closure(of name: String) throws -> Set<String> {
        guard targets[name] != nil else { throw SeamTestFailure("no target \(name) in Package.swift") }
        var seen: Set<String> = []
        var stack = targets[name]!.dependencies
        while let next = stack.popLast() {
            if seen.insert(next).inserted { stack += targets[next]?.dependencies ?? [] }
        }
        return seen
    }

    /// One chain of dependencies from `source` to `destination`, for messages (`A → B → C`).
    func path(from source: String, to destination: String) -> String {
        var previous: [String: String] = [:]
        var queue = [source]
        var seen: Set<String> = [source]
        while !queue.isEmpty {
            let node = queue.removeFirst()
            if node == destination {
                var chain = [node]
                while let p = previous[chain[0]] { chain.insert(p, at: 0) }
                return chain.joined(separator: " → ")
            }
            for d in targets[node]?.dependencies ?? [] where seen.insert(d).inserted {
                previous[d] = node
                queue.append(d)
            }
        }
        return "(no path)"
    }

    /// The target's source directory (its `path`, or Sources/NAME or Tests/NAME).
    func directory(of target: Target) -> URL {
        if let p = target.path { return root.appendingPathComponent(p) }
        let base = target.type == "test" ? "Tests" : "Sources"
        return root.appendingPathComponent(base).appendingPathComponent(target.name)
    }

    /// Whether the target is written in C (its directory holds C sources and no Swift).
    func isCTarget(_ name: String) -> Bool {
        guard let t = targets[name], t.type != "system" else { return false }
        let files = (try? FileManager.default.subpathsOfDirectory(atPath: directory(of: t).path)) ?? []
        return files.contains { $0.hasSuffix(".c") } && !files.contains { $0.hasSuffix(".swift") }
    }

    /// `(file, module)` for every `import` line of the target's Swift sources.
    func imports(of target: Target) throws -> [(String, String)] {
        let dir = directory(of: target)
        let files = (try? FileManager.default.subpathsOfDirectory(atPath: dir.path)) ?? []
        var result: [(String, String)] = []
        for file in files where file.hasSuffix(".swift") {
            let text = try String(contentsOf: dir.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
                var words = line.split(separator: " ", omittingEmptySubsequences: true)
                while let w = words.first, w.hasPrefix("@") { words.removeFirst() }  // @_exported, @testable, @preconcurrency
                guard words.count >= 2, words[0] == "import" else { continue }
                // `import struct Foundation.URL`, `import Foundation.NSData`: the module is the first part.
                let spec = words.count >= 3 && ["struct", "class", "enum", "protocol", "func", "var", "let", "typealias"].contains(words[1])
                    ? words[2] : words[1]
                let module = spec.split(separator: ".").first.map(String.init) ?? String(spec)
                result.append(("\(target.name)/\(file)", module))
            }
        }
        return result
    }
}

struct SeamTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
