// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmMPDClient
@testable import TonearmCLI

/// Where `tonearm remote`, `play --daemon` and `pick --daemon` look for the daemon: as mpc,
/// flags over `MPD_HOST`/`MPD_PORT`, a port alone on localhost (issue 20). No daemon needed.
@Suite struct DaemonAddressTests {
    typealias Case = (host: String?, port: Int?, password: String?, env: [String: String], address: MPDAddress, secret: String?)

    @Test func flagsWinOverTheEnvironmentAndAPortAloneIsLocalhost() throws {
        let cases: [Case] = [
            (nil, nil, nil, [:], .daemonSocket, nil),
            (nil, nil, nil, ["MPD_PORT": "6601"], .tcp(host: "localhost", port: 6601), nil),
            (nil, 6602, nil, [:], .tcp(host: "localhost", port: 6602), nil),
            (nil, 6602, nil, ["MPD_PORT": "6601"], .tcp(host: "localhost", port: 6602), nil),
            (nil, nil, nil, ["MPD_HOST": "pw@box", "MPD_PORT": "6601"], .tcp(host: "box", port: 6601), "pw"),
            (nil, 6603, "mine", ["MPD_HOST": "pw@box", "MPD_PORT": "6601"], .tcp(host: "box", port: 6603), "mine"),
            ("other", nil, nil, ["MPD_HOST": "pw@box", "MPD_PORT": "6601"], .tcp(host: "other", port: 6600), nil),
            ("other", 7000, "x", ["MPD_HOST": "pw@box"], .tcp(host: "other", port: 7000), "x"),
            ("other:7001", 7000, nil, [:], .tcp(host: "other", port: 7001), nil),
            ("/run/s.sock", nil, nil, ["MPD_PORT": "6601"], .unix(path: "/run/s.sock"), nil),
        ]
        for c in cases {
            let r = try RemoteOptions.daemonAddress(host: c.host, port: c.port, password: c.password, environment: c.env)
            #expect(r.address == c.address && r.password == c.secret, "\(c)")
        }
        #expect(throws: (any Error).self) { try RemoteOptions.daemonAddress(host: nil, port: 0, password: nil, environment: [:]) }
        #expect(throws: (any Error).self) { try RemoteOptions.daemonAddress(host: nil, port: nil, password: nil, environment: ["MPD_PORT": "x"]) }
        #expect(throws: (any Error).self) { try RemoteOptions.daemonAddress(host: "h:0", port: nil, password: nil, environment: [:]) }
    }

    @Test func playAndPickTakeTheFlagsWithDaemonOnly() throws {
        let play = try PlayCommand.parse(["--daemon", "--host", "box", "--port", "7000", "--password", "pw", "a.flac"])
        let (address, password) = try play.daemonAddress.resolved(environment: ["MPD_HOST": "elsewhere", "MPD_PORT": "1"])
        #expect(address == .tcp(host: "box", port: 7000) && password == "pw")
        let pick = try PickCommand.parse(["--daemon", "--port", "7002"])
        #expect(try pick.daemonAddress.resolved(environment: [:]).0 == .tcp(host: "localhost", port: 7002))
        #expect(throws: (any Error).self) { try PlayCommand.parse(["--host", "box", "a.flac"]) }
        #expect(throws: (any Error).self) { try PickCommand.parse(["--password", "pw"]) }
        #expect(throws: (any Error).self) { try PlayCommand.parse(["--daemon", "--port", "70000", "a.flac"]) }
    }
}
