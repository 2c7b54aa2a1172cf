// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmDSP
import TonearmKit
import TonearmMPRIS
import TonearmSession
import TonearmWindow

/// Issue 23: ported iOS code prints `error.localizedDescription`. For every public error type it
/// must be the clear text `"\(error)"` gives, not Foundation's "The operation could not be
/// completed. (TonearmCore.TonearmError error 14.)".
@Suite struct LocalizedErrorTests {
    static let errors: [any Error & CustomStringConvertible] = [
        TonearmError.fileNotFound(path: "/music/歌.flac"),
        TonearmError.network(url: "http://127.0.0.1:1/a.mp3", failure: .connectionRefused(host: "127.0.0.1", port: 1)),
        NetworkFailure.httpStatus(code: 404, reason: "Not Found"),
        EQSpecError.badFrequency(token: "x@abc"),
        DesktopNotification.Failure.noServer("no bus"),
        PlayerViewError.noItem,
        MPRISError.noSessionBus("none"),
        VideoWindowError.anotherWindowIsOpen,
        WatchFailure.folderGone,
    ]

    @Test(arguments: errors.indices)
    func localizedDescriptionIsTheErrorsOwnText(_ index: Int) {
        let error = Self.errors[index]
        let text = (error as Error).localizedDescription
        #expect(text == error.description)
        #expect(!text.contains("The operation could not be completed"), "\(text)")
    }
}
