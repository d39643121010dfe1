import Foundation
import Glibc
@testable import RangeOrigin
import SluiceCore
import SluiceTestSupport
import Synchronization
import Testing

/// `/files` opens a request's file beneath the root, one component at a time (issue 21):
/// symlinks inside the root work, relative or absolute, and nothing swapped in while a path
/// is opened leads out of it.
@Suite struct OpenBeneathRootTests {
    static func path(_ text: String) throws -> SafeRelativePath { try #require(SafeRelativePath(encoded: text)) }

    @Test func symlinksInsideTheRootAreFollowedRelativeOrAbsolute() async throws {
        try await withTemporaryDirectory { directory in
            let root = try FileRoot(path: directory.path).resolvedRoot
            try directory.write("sub/real.txt", Array("hello".utf8))
            let links = [
                ("absolute.txt", root + "/sub/real.txt"),
                ("absolute-dir", root + "/sub"),
                ("sub/up.txt", "../sub/real.txt"),
                ("chain.txt", "absolute.txt"),
                ("sub/dot.txt", "./real.txt"),
            ]
            for (path, target) in links {
                try FileManager.default.createSymbolicLink(atPath: "\(root)/\(path)", withDestinationPath: target)
            }
            let fileRoot = try FileRoot(path: root)
            let real = try #require(fileRoot.open(try Self.path("sub/real.txt")))
            for path in ["absolute.txt", "absolute-dir/real.txt", "sub/up.txt", "chain.txt", "sub/dot.txt", "absolute-dir/up.txt"] {
                let file = fileRoot.open(try Self.path(path))
                #expect(file?.identity == real.identity, "\(path)")
            }
        }
    }

    /// The root named through a symlink (`--origin-root /srv/files` where `/srv` leads
    /// elsewhere): absolute symlinks written with that name stay inside, as realpath saw them.
    @Test func absoluteSymlinksMayNameTheRootAsTheOperatorDid() async throws {
        try await withTemporaryDirectory { directory in
            try directory.write("real/sub/real.txt", Array("hello".utf8))
            try FileManager.default.createSymbolicLink(atPath: directory.path + "/named", withDestinationPath: directory.path + "/real")
            let given = directory.path + "/named/"
            try FileManager.default.createSymbolicLink(
                atPath: directory.path + "/real/alias.txt", withDestinationPath: given + "sub/real.txt")
            try FileManager.default.createSymbolicLink(
                atPath: directory.path + "/real/out.txt", withDestinationPath: directory.path + "/named-other/x")
            let fileRoot = try FileRoot(path: given)
            #expect(fileRoot.givenRoot == directory.path + "/named")
            let real = try #require(fileRoot.open(try Self.path("sub/real.txt")))
            #expect(fileRoot.open(try Self.path("alias.txt"))?.identity == real.identity)
            #expect(fileRoot.open(try Self.path("out.txt")) == nil)
        }
    }

    /// A symlink's target is split at every `/`, as the kernel splits it. Split by Swift's
    /// characters, a `/` followed by a combining mark was no separator: `out/\u{308}x` was one
    /// name, which `openat` resolved through `out`, a symlink out of the root, to a file outside.
    @Test func aSlashBeforeACombiningMarkStillSeparatesALinksTarget() async throws {
        try await withTemporaryDirectory { directory in
            try directory.write("outside/plain", Array("top secret".utf8))
            // A name that begins with a combining mark, written with the C library as it is.
            let secret = open(directory.path + "/outside/\u{308}x", O_WRONLY | O_CREAT | O_EXCL, 0o600)
            #expect(secret >= 0)
            close(secret)
            try directory.write("root/keep.txt", Array("inside".utf8))
            let root = directory.path + "/root"
            try FileManager.default.createSymbolicLink(atPath: root + "/out", withDestinationPath: directory.path + "/outside")
            try FileManager.default.createSymbolicLink(atPath: root + "/link", withDestinationPath: "out/\u{308}x")
            let fileRoot = try FileRoot(path: root)
            #expect(fileRoot.open(try Self.path("keep.txt")) != nil)
            #expect(fileRoot.open(try Self.path("link")) == nil)
        }
    }

    /// An absolute link to a file under the root whose first part there begins with a
    /// combining mark is inside the root (compared byte by byte, not in characters).
    @Test func anAbsoluteLinkToANameBeginningWithACombiningMarkIsFollowed() async throws {
        try await withTemporaryDirectory { directory in
            let root = try FileRoot(path: directory.path).resolvedRoot
            #expect(mkdir(root + "/\u{308}d", 0o700) == 0)
            let file = open(root + "/\u{308}d/f.txt", O_WRONLY | O_CREAT | O_EXCL, 0o600)
            #expect(file >= 0)
            close(file)
            try FileManager.default.createSymbolicLink(atPath: root + "/link.txt", withDestinationPath: root + "/\u{308}d/f.txt")
            let fileRoot = try FileRoot(path: root)
            #expect(fileRoot.open(try Self.path("link.txt")) != nil)
        }
    }

    @Test func loopsEscapesAndNonFilesAreRefused() async throws {
        try await withTemporaryDirectory { directory in
            try directory.write("secret.txt", Array("top secret".utf8))
            try directory.write("root/sub/inside.txt", Array("inside".utf8))
            let root = try FileRoot(path: directory.path + "/root").resolvedRoot
            let links = [
                ("loop-a", "loop-b"), ("loop-b", "loop-a"), ("self", "self"),
                ("up-out.txt", "../secret.txt"), ("sub/deep-out.txt", "../../secret.txt"),
                ("absolute-out.txt", directory.path + "/secret.txt"),
                // The root's own path as a prefix of a sibling's name is not inside it.
                ("sibling.txt", root + "-other/secret.txt"),
                ("dir-only", "sub"), ("dangling", "missing.txt"),
            ]
            try FileManager.default.createDirectory(atPath: root + "-other", withIntermediateDirectories: true)
            try Array("other".utf8).withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: root + "-other/secret.txt")) }
            for (path, target) in links {
                try FileManager.default.createSymbolicLink(atPath: "\(root)/\(path)", withDestinationPath: target)
            }
            #expect(mkfifo(root + "/fifo", 0o600) == 0)
            let fileRoot = try FileRoot(path: root)
            for path in links.map(\.0) + ["fifo", "sub", "sub/missing", "loop-a/x"] {
                #expect(fileRoot.open(try Self.path(path)) == nil, "\(path)")
            }
            #expect(fileRoot.open(try Self.path("sub/inside.txt")) != nil)
        }
    }

    /// A directory swapped for a symlink out of the root while requests open a file in it.
    /// With `realpath` and then `open` (main before), a path checked while the directory was
    /// real could be opened once it was the symlink, serving the file outside.
    @Test func aDirectorySwappedForASymlinkNeverLeadsOut() async throws {
        try await withTemporaryDirectory { directory in
            try directory.write("outside/secret.txt", Array("top secret".utf8))
            try directory.write("root/d/secret.txt", Array("inside".utf8))
            let root = try FileRoot(path: directory.path + "/root")
            let outside = try #require(
                try FileManager.default.attributesOfItem(atPath: directory.path + "/outside/secret.txt")[.systemFileNumber] as? Int
            )
            let swapping = Atomic<Bool>(true)
            let swaps = Atomic<Int>(0)
            let d = root.resolvedRoot + "/d"
            let swapper = Thread {
                while swapping.load(ordering: .relaxed) {
                    rename(d, d + ".real")
                    symlink(directory.path + "/outside", d)
                    unlink(d)
                    rename(d + ".real", d)
                    swaps.add(1, ordering: .relaxed)
                }
            }
            swapper.start()
            defer { swapping.store(false, ordering: .relaxed) }
            let path = try Self.path("d/secret.txt")
            var opened = 0
            var leaked = 0
            let clock = ContinuousClock()
            let end = clock.now + .seconds(2)
            while clock.now < end, leaked == 0 {
                guard let file = root.open(path) else { continue }
                opened += 1
                if file.identity.inode == UInt64(outside) { leaked += 1 }
            }
            swapping.store(false, ordering: .relaxed)
            print("open beneath: \(opened) opened, \(leaked) outside, \(swaps.load(ordering: .relaxed)) swaps")
            #expect(leaked == 0)
            if leaked == 0 {
                // The two really raced for the whole time.
                #expect(swaps.load(ordering: .relaxed) > 20)
                #expect(opened > 20)
            }
        }
    }
}
