#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import RangeOrigin
import SluiceTestSupport
import Testing

/// docs/security.md, "Files": only regular files are served, without blocking, and no file date
/// can crash the process.
@Suite struct HostileFilesTests {
    @Test func aFIFOIsRefusedAtOnceAndBlocksNothing() async throws {
        try await withTemporaryDirectory { root in
            #expect(mkfifo(root.path + "/pipe", 0o644) == 0)
            _ = try root.write("plain.txt", Array("plain".utf8))
            try await withOrigin(root: root.path) { port in
                // Several at once: each used to hold a thread of the cooperative pool in open().
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<4 {
                        group.addTask { try await RawHTTPClient.request(port: port, path: "/files/pipe").status }
                    }
                    for try await status in group { #expect(status == 404) }
                }
                let start = ContinuousClock.now
                #expect(try await RawHTTPClient.request(port: port, path: "/files/plain.txt").status == 200)
                #expect(ContinuousClock.now - start < .seconds(2))
            }
        }
    }

    /// A device node inside the root (not a link out of it, which path safety refuses
    /// anyway): only regular files are served.
    @Test func devicesAreRefused() async throws {
        try await withTemporaryDirectory { root in
            guard mknod(root.path + "/null", S_IFCHR | 0o666, dev_t(1 << 8 | 3)) == 0 else {  // makedev(1, 3): /dev/null
                Issue.record("cannot make a device node here (mknod: \(String(cString: strerror(errno))))")
                return
            }
            let status = try await withOrigin(root: root.path) { port in
                try await RawHTTPClient.request(port: port, path: "/files/null").status
            }
            #expect(status == 404)
        }
    }

    @Test(arguments: [
        Int64(10_413_792_000),  // 2300-01-01
        Int64(253_402_300_799),  // 9999-12-31T23:59:59
        Int64(1) << 40,  // far past any calendar HTTP can write
        Int64(-2_208_988_800),  // 1900-01-01
    ])
    func anyFileDateIsServed(mtime: Int64) async throws {
        try await withTemporaryDirectory { root in
            _ = try root.write("dated.bin", Array("dated".utf8))
            var times = [timespec(tv_sec: Int(mtime), tv_nsec: 999_999_999), timespec(tv_sec: Int(mtime), tv_nsec: 999_999_999)]
            #expect(utimensat(AT_FDCWD, root.path + "/dated.bin", &times, 0) == 0)
            try await withOrigin(root: root.path) { port in
                let reply = try await RawHTTPClient.request(port: port, path: "/files/dated.bin")
                #expect(reply.status == 200)
                #expect(String(decoding: reply.body, as: UTF8.self) == "dated")
                let tag = try #require(reply.header("ETag"))
                let again = try await RawHTTPClient.request(
                    port: port, path: "/files/dated.bin", headers: ["Range": "bytes=1-2", "If-Range": tag]
                )
                #expect(again.status == 206)
            }
        }
    }

    @Test func faultBookkeepingForgetsOldURLs() {
        let counters = FaultCounters(capacity: 100)
        for index in 0..<10_000 {
            #expect(counters.next("/testdata/1?status=503&times=1&n=\(index)") == 1)
            #expect(counters.count <= 100)
        }
        // A URL in use keeps counting while others come and go.
        let kept = "/testdata/1?status=503&times=3"
        for round in 1...50 {
            #expect(counters.next(kept) == round)
            _ = counters.next("/other?\(round)")
        }
    }
}

@Suite struct FileShrinkingWhileSentTests {
    /// A file cut short while it is being sent: the connection is closed (as when the
    /// router's reader finds it shorter), not left waiting, and not spinning on a
    /// `sendfile` that has nothing left to send.
    @Test func aFileTruncatedWhileSentEndsTheConnection() async throws {
        try await withTemporaryDirectory { root in
            let path = root.path + "/big.bin"
            let size = 64 << 20
            #expect(FileManager.default.createFile(atPath: path, contents: nil))
            #expect(truncate(path, off_t(size)) == 0)
            try await withOrigin(root: root.path) { port in
                let request = "GET /files/big.bin HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                let started = ContinuousClock.now
                let received = try await RawHTTPClient.exchange(
                    port: port, request: Array(request.utf8), timeout: 20,
                    midway: (after: 1 << 20, action: { #expect(truncate(path, off_t(2 << 20)) == 0) })
                )
                #expect(received.count < size)
                #expect(ContinuousClock.now - started < .seconds(15))
            }
        }
    }
}
