// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmExport
import TonearmTestSupport

/// What an export leaves behind when it is cancelled, fails or meets an existing file.
@Suite  final class ExportSessionTests: Sendable {
    let dir: TempDir
    init() throws { dir = try TempDir("export-session") }
    deinit { dir.remove() }

    func session(_ src: String, _ out: String, preset: ExportPreset = .passthrough) -> AssetExportSession {
        let s = AssetExportSession(asset: Asset(url: URL(fileURLWithPath: src)), presetName: preset)
        s.outputURL = URL(fileURLWithPath: out)
        return s
    }

    /// A long AAC video, so that an export is still running when a cancel arrives mid-way.
    func longVideo() throws -> String {
        let src = dir.file("long.mp4")
        try ExportFixtures.mp4WithAAC(src, seconds: 180)
        return src
    }

    @Test func cancellingMidWayLeavesNoFile() async throws {
        let src = try longVideo(), out = dir.file("out.m4a")
        let s = session(src, out)
        let updates = s.progressUpdates()
        let watcher = Task { () -> Double? in
            for await p in updates where p > 0 && p < 1 {
                s.cancelExport()
                return p
            }
            return nil
        }
        await #expect(throws: TonearmError.exportCancelled(path: out)) { try await s.export() }
        let cancelledAt = try #require(await watcher.value)
        #expect(cancelledAt < 1)
        #expect(s.status == .cancelled)
        #expect(s.progress < 1)
        #expect(ExportFixtures.listing(dir.path) == ["long.mp4"])
    }

    @Test func cancellingTheTaskCancelsTheExport() async throws {
        let src = try longVideo(), out = dir.file("out.mka")
        let s = session(src, out)
        let updates = s.progressUpdates()
        let export = Task { () -> TonearmError? in
            do throws(TonearmError) { try await s.export() } catch { return error }
            return nil
        }
        for await p in updates where p > 0 {
            export.cancel()
            break
        }
        #expect(await export.value == TonearmError.exportCancelled(path: out))
        #expect(s.status == .cancelled)
        #expect(ExportFixtures.listing(dir.path) == ["long.mp4"])
    }

    @Test func cancelledBeforeItStartsItNeverWrites() async throws {
        let src = dir.file("a.mp4"), out = dir.file("out.m4a")
        try ExportFixtures.mp4WithAAC(src)
        let s = session(src, out)
        s.cancelExport()
        await #expect(throws: TonearmError.exportCancelled(path: out)) { try await s.export() }
        #expect(s.status == .cancelled)
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test func progressRisesToOneThenTheStreamEnds() async throws {
        let src = dir.file("a.mp4"), out = dir.file("out.m4a")
        try ExportFixtures.mp4WithAAC(src, seconds: 20)
        let s = session(src, out)
        let updates = s.progressUpdates()
        let collected = Task { () -> [Double] in
            var all: [Double] = []
            for await p in updates { all.append(p) }
            return all
        }
        try await s.export()
        let values = await collected.value
        #expect(values.first == 0)
        #expect(values.last == 1)
        #expect(values.count > 10, "\(values.count) updates")
        #expect(zip(values, values.dropFirst()).allSatisfy { $0 <= $1 })
        // After the end: the final value, then the end.
        var after: [Double] = []
        for await p in s.progressUpdates() { after.append(p) }
        #expect(after == [1])
        // A session runs once.
        await #expect(throws: TonearmError.invalidState("an export session runs once; this one is completed")) { try await s.export() }
    }

    @Test func anExistingFileIsNeverOverwrittenUnlessAsked() async throws {
        let src = dir.file("a.mp4"), out = dir.file("out.m4a")
        try ExportFixtures.mp4WithAAC(src)
        try "precious".write(toFile: out, atomically: true, encoding: .utf8)
        let s = session(src, out)
        await #expect(throws: TonearmError.fileExists(path: out)) { try await s.export() }
        #expect(try String(contentsOfFile: out, encoding: .utf8) == "precious")
        let again = session(src, out)
        again.overwritesExistingFile = true
        try await again.export()
        #expect(try ExportFixtures.packetDigests(out) == ExportFixtures.packetDigests(src))
        #expect(ExportFixtures.listing(dir.path) == ["a.mp4", "out.m4a"])
    }

    @Test func aMissingFolderIsAClearError() async throws {
        let src = dir.file("a.mp4"), out = dir.file("no/such/folder/out.m4a")
        try ExportFixtures.mp4WithAAC(src)
        let s = session(src, out)
        await #expect(throws: TonearmError.writeFailed(path: out, reason: "the folder \(dir.file("no/such/folder")) does not exist")) {
            try await s.export()
        }
        #expect(s.status == .failed)
    }

    @Test func unknownExtensionAndMissingURLAreClearErrors() async throws {
        let src = dir.file("a.mp4")
        try ExportFixtures.mp4WithAAC(src)
        let s = session(src, dir.file("out.xyz"))
        do {
            try await s.export()
            Issue.record("exported to .xyz")
        } catch {
            #expect(error.description.contains("cannot tell the file type from the extension 'xyz'"))
        }
        let none = AssetExportSession(asset: Asset(url: URL(fileURLWithPath: src)), presetName: .passthrough)
        await #expect(throws: TonearmError.invalidArgument("the export has no output URL")) { try await none.export() }
    }
}

/// Whether this process may mount a tmpfs (root with the capability to mount).
let canMountTmpfs: Bool = {
    guard getuid() == 0, let probe = try? TempDir("mount-probe") else { return false }
    defer { _ = try? run("umount", [probe.path]); probe.remove() }
    return (try? run("mount", ["-t", "tmpfs", "-o", "size=16k", "tmpfs", probe.path]))?.status == 0
}()

/// Exports onto file systems that refuse to take them: a full one and a read-only one
/// (small tmpfs mounts; skipped where this process may not mount).
@Suite(.serialized, .enabled(if: canMountTmpfs, "mounting a tmpfs needs root and CAP_SYS_ADMIN"))
final class ExportFileSystemTests: Sendable {
    let dir: TempDir
    init() throws { dir = try TempDir("export-fs") }
    deinit { dir.remove() }

    func mount(_ options: String) throws -> String {
        let point = dir.file("mnt-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(atPath: point, withIntermediateDirectories: true)
        let r = try run("mount", ["-t", "tmpfs", "-o", options, "tmpfs", point])
        if r.status != 0 { throw TestSupportError("mount failed: \(r.stderr)") }
        return point
    }

    func unmount(_ point: String) { _ = try? run("umount", [point]) }

    @Test func aFullDiskIsAClearErrorAndLeavesNothing() async throws {
        let src = dir.file("a.mp4")
        try ExportFixtures.mp4WithAAC(src, seconds: 20)  // ~320 kB of audio
        let small = try mount("size=64k")
        defer { unmount(small) }
        for ext in ["m4a", "caf", "mka"] {
            let out = "\(small)/out.\(ext)"
            let s = AssetExportSession(asset: Asset(url: URL(fileURLWithPath: src)), presetName: .passthrough)
            s.outputURL = URL(fileURLWithPath: out)
            do {
                try await s.export()
                Issue.record("\(ext): wrote 320 kB onto a 64 kB disk")
            } catch {
                guard case .writeFailed(let p, let reason) = error else { Issue.record("\(ext): got \(error)"); continue }
                #expect(p == out)
                #expect(reason.contains("No space left on device"), "\(ext): \(reason)")
            }
            #expect(s.status == .failed)
            #expect(ExportFixtures.listing(small).isEmpty, "\(ext): left \(ExportFixtures.listing(small))")
        }
    }

    @Test func aFullDiskDuringAReEncodeIsAClearError() async throws {
        let src = dir.file("long.wav")
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=5:sample_rate=48000", "-c:a", "pcm_s16le", src])
        let small = try mount("size=64k")
        defer { unmount(small) }
        for (preset, ext) in [(ExportPreset.lossless, "flac"), (.pcm, "wav"), (.appleM4A, "caf")] {
            let out = "\(small)/out.\(ext)"
            let s = AssetExportSession(asset: Asset(url: URL(fileURLWithPath: src)), presetName: preset)
            s.outputURL = URL(fileURLWithPath: out)
            do {
                try await s.export()
                Issue.record("\(ext): wrote more than 64 kB onto a 64 kB disk")
            } catch {
                guard case .writeFailed(let p, let reason) = error else { Issue.record("\(ext): got \(error)"); continue }
                #expect(p == out)
                #expect(reason.contains("No space left on device"), "\(ext): \(reason)")
            }
            #expect(ExportFixtures.listing(small).isEmpty, "\(ext): left \(ExportFixtures.listing(small))")
        }
    }

    @Test func aReadOnlyFolderIsAClearError() async throws {
        let src = dir.file("a.mp4")
        try ExportFixtures.mp4WithAAC(src)
        let ro = try mount("ro,size=64k")
        defer { unmount(ro) }
        let out = "\(ro)/out.m4a"
        let s = AssetExportSession(asset: Asset(url: URL(fileURLWithPath: src)), presetName: .passthrough)
        s.outputURL = URL(fileURLWithPath: out)
        do {
            try await s.export()
            Issue.record("wrote into a read-only folder")
        } catch {
            guard case .writeFailed(let p, let reason) = error else { Issue.record("got \(error)"); return }
            #expect(p == out)
            #expect(reason.contains("not writable") || reason.contains("Read-only file system"), "\(reason)")
        }
        #expect(ExportFixtures.listing(ro).isEmpty)
    }
}
