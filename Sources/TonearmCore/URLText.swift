// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

extension URL {
    /// A URL from what a person typed or a playlist holds: escapes already there (`%20`) are
    /// kept, and only characters a URL cannot hold (`|`, spaces, non-ASCII) are escaped.
    /// (`URL(string:)` alone escapes the `%` of existing escapes too once any character needs
    /// escaping, which changes the address.) Nil when it is not a URL even then.
    public init?(userText text: String) {
        if let url = URL(string: text, encodingInvalidCharacters: false) {
            self = url
            return
        }
        let allowed = CharacterSet.urlQueryAllowed.union(.urlPathAllowed).union(CharacterSet(charactersIn: "%#[]"))
        guard let escaped = text.addingPercentEncoding(withAllowedCharacters: allowed),
              let url = URL(string: escaped, encodingInvalidCharacters: false) else { return nil }
        self = url
    }
}
