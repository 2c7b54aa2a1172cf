// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
@testable import TonearmCLI

/// Which command lines set up the daemon's process (its own executor for Swift concurrency, two
/// malloc arenas) before anything runs: `tonearm daemon …`, also after the root's `--config`, and
/// no other command (they keep libdispatch's global executor), nor the daemon's help.
struct DaemonPrepareTests {
    @Test func theDaemonCommandLineIsFoundAfterTheRootsConfigOption() {
        #expect(DaemonCommand.isDaemon(["daemon"]))
        #expect(DaemonCommand.isDaemon(["daemon", "--music", "/m", "--output", "null"]))
        #expect(DaemonCommand.isDaemon(["--config", "/c.toml", "daemon", "--detach"]))
        #expect(DaemonCommand.isDaemon(["--config=/c.toml", "daemon"]))
    }

    @Test func otherCommandsAndTheDaemonsHelpAreNot() {
        #expect(!DaemonCommand.isDaemon([]))
        #expect(!DaemonCommand.isDaemon(["play", "daemon"]))
        #expect(!DaemonCommand.isDaemon(["remote", "status"]))
        #expect(!DaemonCommand.isDaemon(["--config", "daemon"]))
        #expect(!DaemonCommand.isDaemon(["daemon", "--help"]))
        #expect(!DaemonCommand.isDaemon(["daemon", "-h"]))
    }
}
