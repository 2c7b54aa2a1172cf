// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
import TonearmCore
import TonearmExport

/// The export status logic as a plain value, without threads or files.
@Suite struct ExportStateMachineTests {
    @Test func waitingExportingCompleted() throws {
        var m = ExportStateMachine()
        #expect(m.status == .waiting)
        try m.start(path: "/o.m4a")
        #expect(m.status == .exporting)
        let published = m.report(progress: 0.5)
        #expect(published)
        let changed = m.finish(.success(()))
        #expect(changed)
        #expect(m.status == .completed)
        #expect(m.progress == 1)
        #expect(m.error == nil)
    }

    @Test func failureKeepsTheError() throws {
        var m = ExportStateMachine()
        try m.start(path: "/o.m4a")
        m.finish(.failure(.writeFailed(path: "/o.m4a", reason: "No space left on device")))
        #expect(m.status == .failed)
        #expect(m.error == .writeFailed(path: "/o.m4a", reason: "No space left on device"))
        // Final: nothing changes it any more.
        let cancelled = m.cancel()
        let finished = m.finish(.success(()))
        #expect(!cancelled && !finished)
        #expect(m.status == .failed)
    }

    @Test func cancelledStaysCancelled() throws {
        var m = ExportStateMachine()
        try m.start(path: "/o.m4a")
        let cancelled = m.cancel()
        #expect(cancelled)
        let published = m.report(progress: 0.9)
        let finished = m.finish(.success(()))
        #expect(!published && !finished)
        #expect(m.status == .cancelled)
        #expect(m.error == nil)
    }

    @Test func aCancelledWorkReportedAsAnErrorIsACancellation() throws {
        var m = ExportStateMachine()
        try m.start(path: "/o.m4a")
        m.finish(.failure(.exportCancelled(path: "/o.m4a")))
        #expect(m.status == .cancelled)
        #expect(m.error == nil)
    }

    @Test func cancelledBeforeStartNeverStarts() {
        var m = ExportStateMachine()
        let cancelled = m.cancel()
        #expect(cancelled)
        #expect(throws: TonearmError.exportCancelled(path: "/o.m4a")) { try m.start(path: "/o.m4a") }
        #expect(m.status == .cancelled)
    }

    @Test func aSessionRunsOnce() throws {
        var m = ExportStateMachine()
        try m.start(path: "/o.m4a")
        m.finish(.success(()))
        #expect(throws: TonearmError.invalidState("an export session runs once; this one is completed")) { try m.start(path: "/o.m4a") }
    }

    @Test func progressIsClampedMonotonicAndPublishedInSteps() throws {
        var m = ExportStateMachine()
        var published = m.report(progress: 0.5)
        #expect(!published, "no progress before the export starts")
        try m.start(path: "/o.m4a")
        published = m.report(progress: 0.1)
        #expect(published)
        published = m.report(progress: 0.102)
        #expect(!published, "below the publishing step")
        #expect(m.progress == 0.102)
        published = m.report(progress: 0.05)
        #expect(!published, "never backwards")
        #expect(m.progress == 0.102)
        published = m.report(progress: .nan)
        #expect(!published)
        published = m.report(progress: 7)
        #expect(published)
        #expect(m.progress == 1)
        published = m.report(progress: 1)
        #expect(!published, "1 is published once")
    }
}
