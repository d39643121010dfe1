#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SluiceTestSupport
import Testing

@Suite struct DiskFullTests {
    @Test(.enabled(if: SmallFileSystem.available, "mounting a tmpfs is not permitted here: disk-full behaviour is not tested"))
    func aFullDiskFailsTheJobKeepsItsDataAndResumesAfterSpaceIsFreed() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin(root: directory.path) { port in
                let data = directory.path + "/small"
                try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
                #expect(SmallFileSystem.mount(data, megabytes: 8))
                defer { SmallFileSystem.unmount(data) }
                try await ServiceHarness.with(dataDirectory: data) { (service: ServiceHarness) async throws in
                    let big = try await service.create(["url": "http://127.0.0.1:\(port)/testdata/24M?seed=5"])["id"] as! String
                    let failed = try await service.waitFor(big) { $0["state"] as? String == "failed" }
                    #expect((failed["error"] as? [String: Any])?["code"] as? String == "no_space")
                    // The service and other jobs go on.
                    #expect(try await service.request(.GET, "/healthz").status == 200)
                    let small = try await service.create(["url": "http://127.0.0.1:\(port)/testdata/100K"])["id"] as! String
                    try await service.waitFor(small) { $0["state"] as? String == "completed" }
                    #expect(FileManager.default.fileExists(atPath: data + "/cache/\(big).part"))

                    // Free space, retry: the job completes with the right content.
                    #expect(SmallFileSystem.mount(data, megabytes: 64, remount: true))
                    _ = try await service.request(.POST, "/jobs/\(big)/resume")
                    let done = try await service.waitFor(big) { $0["state"] as? String == "completed" }
                    #expect(done["sha256"] as? String == ServiceHarness.expectedSHA256(size: 24 << 20, seed: 5))
                }
            }
        }
    }
}
