// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
@testable import TonearmLibrary
import TonearmTestSupport

/// The scan's folder listing on several threads lists what one thread would.
@Suite struct FolderWalkTests {
    /// A tree of `folders` folders two levels deep with three files each, a hidden file and a
    /// hidden folder (with a file) in each first-level folder.
    private func makeTree(at root: String, folders: Int) throws -> Set<String> {
        let fm = FileManager.default
        var expected: Set<String> = []
        for i in 0..<folders {
            let top = "\(root)/Artist \(i / 10)", folder = "\(top)/Album \(i)"
            try fm.createDirectory(atPath: "\(top)/.hidden", withIntermediateDirectories: true)
            try fm.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try Data("h".utf8).write(to: URL(fileURLWithPath: "\(top)/.hidden/x.flac"))
            try Data("h".utf8).write(to: URL(fileURLWithPath: "\(top)/.DS_Store"))
            for t in 0..<3 {
                let path = "\(folder)/\(t) – Sóng \(i).flac"
                try Data(repeating: UInt8(t), count: t + 1).write(to: URL(fileURLWithPath: path))
                expected.insert(path)
            }
        }
        return expected
    }

    @Test func listsEveryVisibleFileOnceWithSizeAndTime() throws {
        let dir = try TempDir("walk")
        defer { dir.remove() }
        let root = dir.file("Music")
        let expected = try makeTree(at: root, folders: 120)
        for threads in [1, 6] {
            let found = FolderWalk.files(under: [root], threads: threads)
            #expect(found.count == expected.count, "\(threads) threads")
            #expect(Set(found.map(\.path)) == expected, "\(threads) threads")
            #expect(found.map(\.path) == found.map(\.path).sorted(), "sorted by path")
            let one = try #require(found.first { $0.path.hasSuffix("/Album 7/2 – Sóng 7.flac") })
            let attributes = try FileManager.default.attributesOfItem(atPath: one.path)
            #expect(one.size == 3)
            let mtime = try #require(attributes[.modificationDate] as? Date).timeIntervalSince1970
            #expect(abs(Double(one.mtime) / 1e9 - mtime) < 0.001)
        }
    }

    @Test func followsLinksToFilesNotToFoldersAndListsOverlappingFoldersOnce() throws {
        let dir = try TempDir("walk-links")
        defer { dir.remove() }
        let root = dir.file("Music"), elsewhere = dir.file("Elsewhere")
        let expected = try makeTree(at: root, folders: 12)
        _ = try makeTree(at: elsewhere, folders: 2)
        let fm = FileManager.default
        try fm.createSymbolicLink(atPath: "\(root)/linked.flac", withDestinationPath: "\(elsewhere)/Artist 0/Album 1/0 – Sóng 1.flac")
        try fm.createSymbolicLink(atPath: "\(root)/linked folder", withDestinationPath: elsewhere)
        try fm.createSymbolicLink(atPath: "\(root)/dangling.flac", withDestinationPath: "\(dir.path)/nothing here")
        // A folder given twice, and one inside another: each file once.
        let found = FolderWalk.files(under: [root, root, "\(root)/Artist 0"], threads: 4)
        #expect(Set(found.map(\.path)) == expected.union(["\(root)/linked.flac"]))
        #expect(found.count == expected.count + 1)
        #expect(found.first { $0.path.hasSuffix("linked.flac") }?.size == 1, "the size of the file linked to")
        // A folder given that is a link is walked.
        let viaLink = FolderWalk.files(under: ["\(root)/linked folder"], threads: 3)
        #expect(viaLink.count == 6)
        #expect(FolderWalk.files(under: [], threads: 4).isEmpty)
        #expect(FolderWalk.files(under: [dir.file("missing")], threads: 4).isEmpty)
    }
}
