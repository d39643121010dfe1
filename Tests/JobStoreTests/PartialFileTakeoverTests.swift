import Foundation
@testable import JobService
import SluiceTestSupport
import Testing

/// A run takes over a job's partial file: a copy of the checkpointed ranges into a new
/// file when another node ran it (a fenced node may still write the old one), a rename when
/// this node did.
@Suite struct PartialFileTakeoverTests {
    @Test func anotherNodesFileIsCopiedRangeByRangeIntoANewInodeAndItsNameRemoved() throws {
        try withTemporaryDirectorySync { directory in
            let old = PartialFileTakeover.path(cacheDirectory: directory, id: "j", epoch: 1)
            try Data((0..<16).map { UInt8($0 + 1) }).write(to: URL(fileURLWithPath: old))
            let oldInode = try inode(old)
            try PartialFileTakeover.adopt(cacheDirectory: directory, id: "j", epoch: 2, ownFile: false, written: [0..<4, 8..<12])
            let new = PartialFileTakeover.path(cacheDirectory: directory, id: "j", epoch: 2)
            #expect(!FileManager.default.fileExists(atPath: old))
            #expect(try inode(new) != oldInode)
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: new)))
            // Only what the checkpoint vouches for; the rest is fetched again.
            #expect(bytes == [1, 2, 3, 4, 0, 0, 0, 0, 9, 10, 11, 12])
        }
    }

    @Test func itsOwnFileIsRenamedAndOlderOnesGo() throws {
        try withTemporaryDirectorySync { directory in
            let older = directory + "/j.part"
            let own = PartialFileTakeover.path(cacheDirectory: directory, id: "j", epoch: 3)
            try Data([1]).write(to: URL(fileURLWithPath: older))
            try Data([7, 7, 7]).write(to: URL(fileURLWithPath: own))
            let ownInode = try inode(own)
            try PartialFileTakeover.adopt(cacheDirectory: directory, id: "j", epoch: 4, ownFile: true, written: [])
            let new = PartialFileTakeover.path(cacheDirectory: directory, id: "j", epoch: 4)
            #expect(try inode(new) == ownInode)
            #expect(PartialFileTakeover.all(cacheDirectory: directory, id: "j") == [new])
            // Another job's files are not touched.
            #expect(PartialFileTakeover.all(cacheDirectory: directory, id: "k").isEmpty)
        }
    }

    @Test func nothingCheckpointedMeansAnEmptyStart() throws {
        try withTemporaryDirectorySync { directory in
            let old = PartialFileTakeover.path(cacheDirectory: directory, id: "j", epoch: 1)
            try Data([1, 2]).write(to: URL(fileURLWithPath: old))
            try PartialFileTakeover.adopt(cacheDirectory: directory, id: "j", epoch: 2, ownFile: false, written: [])
            #expect(PartialFileTakeover.all(cacheDirectory: directory, id: "j").isEmpty)
        }
    }

    @Test func onlyThePreviousLeasesFileIsTakenAndALaterOnesNeverTouched() throws {
        try withTemporaryDirectorySync { directory in
            // e5 is this disk's stale file; e6 ran on another node's disk; e8 is a newer owner's.
            let stale = PartialFileTakeover.path(cacheDirectory: directory, id: "j", epoch: 5)
            let newer = PartialFileTakeover.path(cacheDirectory: directory, id: "j", epoch: 8)
            try Data([5, 5, 5, 5]).write(to: URL(fileURLWithPath: stale))
            try Data([8]).write(to: URL(fileURLWithPath: newer))
            try PartialFileTakeover.adopt(cacheDirectory: directory, id: "j", epoch: 7, ownFile: false, written: [0..<4])
            // Nothing copied from e5 (its bytes are not what e6's checkpoint describes).
            #expect(!FileManager.default.fileExists(atPath: PartialFileTakeover.path(cacheDirectory: directory, id: "j", epoch: 7)))
            #expect(!FileManager.default.fileExists(atPath: stale))
            #expect(try Data(contentsOf: URL(fileURLWithPath: newer)) == Data([8]))
        }
    }

    private func inode(_ path: String) throws -> UInt64 {
        (try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? NSNumber)?.uint64Value ?? 0
    }

    private func withTemporaryDirectorySync(_ body: (String) throws -> Void) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try body(directory.path)
    }
}
