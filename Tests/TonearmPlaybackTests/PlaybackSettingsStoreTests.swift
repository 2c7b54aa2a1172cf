// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
@testable import TonearmPlayback
import TonearmTestSupport

/// The EQ and speed kept beside the saved queue for `--resume`.
@Suite struct PlaybackSettingsStoreTests {
    @Test func savedSettingsComeBackAndTheWriteIsAtomic() throws {
        let dir = try TempDir("settings-store")
        defer { dir.remove() }
        let store = PlaybackSettingsStore(path: dir.file("state/tonearm/settings.json"))
        #expect(try store.load() == nil)
        let saved = SavedPlaybackSettings(eq: "rock", rate: 1.5, savedAt: Date(timeIntervalSince1970: 1_000_000))
        try store.save(saved)
        #expect(try store.load() == saved)
        try store.save(SavedPlaybackSettings(eq: "31:+3.0", rate: nil))
        #expect(try store.load()?.eq == "31:+3.0")
        #expect(try store.load()?.rate == nil)
        // Only the file: no temporary file is left beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.file("state/tonearm")) == ["settings.json"])
    }

    @Test func theDefaultPathIsBesideTheSavedQueue() {
        let env = ["XDG_STATE_HOME": "/s", "HOME": "/h"]
        #expect(PlaybackSettingsStore.defaultPath(environment: env) == "/s/tonearm/settings.json")
        #expect(QueueStateStore.defaultPath(environment: env) == "/s/tonearm/queue.json")
        #expect(PlaybackSettingsStore.defaultPath(environment: ["HOME": "/h"]) == "/h/.local/state/tonearm/settings.json")
    }

    @Test func aDamagedFileIsATypedErrorAndAWriteThatFailsLeavesTheOldFile() throws {
        let dir = try TempDir("settings-damaged")
        defer { dir.remove() }
        let store = PlaybackSettingsStore(path: dir.file("settings.json"))
        try Data("{\"rate\": ".utf8).write(to: URL(fileURLWithPath: store.path))
        #expect(throws: TonearmError.self) { try store.load() }
        try Data("{\"rate\": 9, \"savedAt\": 0}".utf8).write(to: URL(fileURLWithPath: store.path))
        do {
            _ = try store.load()
            Issue.record("a speed of 9 was accepted")
        } catch {
            #expect("\(error)".contains("the speed 9.0 is outside 0.5…2"), "\(error)")
        }
        // A folder where the file should go: the save fails with the path, nothing is replaced.
        let blocked = PlaybackSettingsStore(path: dir.file("blocked"))
        try FileManager.default.createDirectory(atPath: dir.file("blocked/inside"), withIntermediateDirectories: true)
        #expect(throws: TonearmError.self) { try blocked.save(SavedPlaybackSettings(eq: "flat")) }
        #expect(FileManager.default.fileExists(atPath: dir.file("blocked/inside")))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["blocked", "settings.json"])
    }
}
