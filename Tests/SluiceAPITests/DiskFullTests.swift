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
                    // The message is for API users: no path of the service's own.
                    let message = (failed["error"] as? [String: Any])?["message"] as? String ?? ""
                    #expect(!message.contains(data) && !message.contains(".part"), "\(message)")
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

    /// A store that cannot write answers 503 with the JSON body, never an empty 500, and
    /// shows no path of the service's own.
    @Test(.enabled(if: SmallFileSystem.available, "mounting a tmpfs is not permitted here: a full store is not tested"))
    func aFullStoreAnswers503AndRecovers() async throws {
        try await withTemporaryDirectory { directory in
            let data = directory.path + "/small"
            try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
            #expect(SmallFileSystem.mount(data, megabytes: 4))
            defer { SmallFileSystem.unmount(data) }
            try await ServiceHarness.with(dataDirectory: data) { (service: ServiceHarness) async throws in
                let filler = data + "/filler"
                let chunk = [UInt8](repeating: 7, count: 64 << 10)
                let fd = open(filler, O_WRONLY | O_CREAT, 0o600)
                while write(fd, chunk, chunk.count) > 0 {}
                close(fd)
                let url = "http://127.0.0.1:1/" + String(repeating: "u", count: 8000)
                var statuses: [Int] = []
                for _ in 0..<80 {
                    let reply = try await service.request(.POST, "/jobs", json: #"{"url":"\#(url)","paused":true}"#)
                    statuses.append(reply.status)
                    if reply.status == 503 {
                        #expect(reply.errorCode == "store_unavailable")
                        let text = String(decoding: reply.body, as: UTF8.self)
                        #expect(!text.contains(data), "\(text)")
                        break
                    }
                }
                #expect(statuses.allSatisfy { $0 == 201 || $0 == 503 }, "\(statuses)")
                #expect(statuses.last == 503, "\(statuses)")
                #expect(try await service.request(.GET, "/healthz").status == 200)
                // Every job the API reported as created is there; the refused one is not.
                let listed = (try await service.request(.GET, "/jobs?limit=1000").json()["jobs"] as? [Any])?.count
                #expect(listed == statuses.filter { $0 == 201 }.count)
                unlink(filler)
                #expect(try await service.request(.POST, "/jobs", json: #"{"url":"http://127.0.0.1:1/x","paused":true}"#).status == 201)
            }
        }
    }
}
