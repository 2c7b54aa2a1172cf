// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
@testable import TonearmNetwork

/// The request line's target: the path and query exactly as escaped in the address (servers
/// refuse the raw UTF-8 and spaces that decoding them gives).
@Suite struct RequestTargetTests {
    @Test(arguments: [
        ("http://h/%E6%9C%88%E5%85%89%20x.mp3", "/%E6%9C%88%E5%85%89%20x.mp3"),
        ("http://h/a%2Fb/c%3Fd.mp3", "/a%2Fb/c%3Fd.mp3"),
        ("http://h/radio?titles=First%20Song%7CSecond&x=%26", "/radio?titles=First%20Song%7CSecond&x=%26"),
        ("https://h:8443", "/"),
        ("http://h/plain/path.ogg?n=1", "/plain/path.ogg?n=1"),
    ])
    func theTargetIsTheAddressAsEscaped(address: String, target: String) throws {
        let url = try #require(URL(string: address))
        #expect(HTTPClient.requestTarget(url) == target)
    }

    @Test func typedAddressesAreEscapedOnceAndKeepTheirEscapes() throws {
        // As a user types it: one escape already there, characters that need one.
        let url = try #require(URL(userText: "http://h/月光 x%20y.mp3"))
        #expect(HTTPClient.requestTarget(url) == "/%E6%9C%88%E5%85%89%20x%20y.mp3")
    }
}
