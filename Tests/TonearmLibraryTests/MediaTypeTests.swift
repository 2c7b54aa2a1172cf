// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
import TonearmCore
@testable import TonearmLibrary

/// Rule 3 of ``MediaType/classify(metadata:path:genreKey:)``: a folder on the path (not the
/// file's own name) called Podcasts/Podcast or Audiobooks/Audiobook/Hörbücher, folded (case,
/// accents, surrounding white space), read from the path's bytes.
@Suite struct MediaTypeFolderTests {
    @Test func foldersOnThePathGiveTheType() {
        let cases: [(String, MediaType)] = [
            ("/m/Podcasts/show/1.mp3", .podcast), ("/m/PODCAST/1.mp3", .podcast), ("/m/ podcasts\t/1.mp3", .podcast),
            ("/m/Audiobooks/x.m4a", .audiobook), ("/m/audioBook/x.m4a", .audiobook), ("/m/Hörbücher/x.mp3", .audiobook),
            ("/m/HÖRBÜCHER /x.mp3", .audiobook), ("/m/Horbucher/x.mp3", .audiobook), ("/m//Podcasts//x.mp3", .podcast),
            ("/m/Podcasts", .music), ("/m/Podcasts/", .music), ("/m/Podcasts//", .music), ("/m/x/Podcasts.mp3", .music),
            ("/m/My Podcasts/x.mp3", .music), ("/m/Podcastss/x.mp3", .music), ("/m/Pod casts/x.mp3", .music),
            ("/m/Audiobooks and more/x.mp3", .music), ("/m/Artist 000/1960 - Album 000-00/01 - Song 0.flac", .music),
            ("/m/Ünïcödé/Podcasts/x.mp3", .podcast), ("relative/audiobooks/x.mp3", .audiobook), ("", .music), ("/", .music),
        ]
        for (path, type) in cases {
            #expect(MediaType.classify(metadata: AudioMetadata(), path: path, genreKey: "") == type, "\(path)")
        }
    }
}
