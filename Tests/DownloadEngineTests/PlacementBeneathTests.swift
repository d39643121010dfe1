@testable import DownloadEngine
import Foundation
import SluiceCore
import SluiceTestSupport
import Testing

/// Issue 35, finding 11: aria2's `dir` was checked by path and then linked by path, so a
/// directory swapped for a symlink in between placed the finished file outside
/// `documents/`, and the job said `completed`. The directory is opened beneath the
/// documents and the file linked into what was opened.
@Suite struct PlacementBeneathTests {
    @Test func aDirectorySwappedForASymlinkAfterItWasOpenedGetsNothingOutside() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let documents = directory.path + "/documents"
        let outside = directory.path + "/outside"
        for path in [documents + "/music", outside] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        let partial = directory.path + "/file.part"
        try Data("finished".utf8).write(to: URL(fileURLWithPath: partial))
        let placed = try FilePlacement.place(partial, under: documents, in: "music", name: "song.mp3") {
            // The swap, between the open and the link.
            try! FileManager.default.moveItem(atPath: documents + "/music", toPath: documents + "/music.checked")
            try! FileManager.default.createSymbolicLink(atPath: documents + "/music", withDestinationPath: outside)
        }
        #expect(placed == documents + "/music/song.mp3")
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside).isEmpty)
        #expect(FileManager.default.contents(atPath: documents + "/music.checked/song.mp3") == Data("finished".utf8))
        #expect(!FileManager.default.fileExists(atPath: partial))
    }

    @Test func aSymlinkOutThatIsThereBeforeIsRefusedAndMissingDirectoriesAreMadeInside() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let documents = directory.path + "/documents"
        let outside = directory.path + "/outside"
        for path in [documents, outside] { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        try FileManager.default.createSymbolicLink(atPath: documents + "/out", withDestinationPath: outside)
        try FileManager.default.createSymbolicLink(atPath: documents + "/inside", withDestinationPath: documents + "/real")
        let partial = directory.path + "/file.part"
        try Data("x".utf8).write(to: URL(fileURLWithPath: partial))
        #expect(throws: SluiceError.self) { try FilePlacement.place(partial, under: documents, in: "out/deeper", name: "a") }
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside).isEmpty, "nothing is made beneath a way out")
        // A symlink that stays inside is followed; what is missing is made.
        try FileManager.default.createDirectory(atPath: documents + "/real", withIntermediateDirectories: true)
        let placed = try FilePlacement.place(partial, under: documents, in: "inside/new/deeper", name: "a")
        #expect(placed == documents + "/inside/new/deeper/a")
        #expect(FileManager.default.fileExists(atPath: documents + "/real/new/deeper/a"))
    }

    /// A `dir` whose first part begins with a combining mark is under the documents: the
    /// test was `hasPrefix(root + "/")`, in characters, where that `/` and the mark are one
    /// character; the placement then opened the directory by its path (no walk beneath the
    /// documents, no directory made: the job failed after all its bytes).
    @Test func aDirBeginningWithACombiningMarkIsPlacedBeneathTheDocuments() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let documents = directory.path + "/documents"
        try FileManager.default.createDirectory(atPath: documents, withIntermediateDirectories: true)
        let partial = directory.path + "/file.part"
        try Data("finished".utf8).write(to: URL(fileURLWithPath: partial))
        let target = DownloadTarget(partialPath: partial, destination: .directory(documents + "/\u{308}x/y"), root: documents)
        let placed = try target.place(name: "song.mp3")
        #expect(placed == documents + "/\u{308}x/y/song.mp3")
        #expect(FileManager.default.contents(atPath: documents + "/\u{308}x/y/song.mp3") == Data("finished".utf8))
    }
}
