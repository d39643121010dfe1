import Foundation
import SluiceCore
import SluiceTestSupport
import Testing
import NIOHTTP1

/// Issue 10, names: a long name that is taken, invisible characters, and deleting files
/// whose names hold `%`.
@Suite struct NamesTests {
    @Test func aNameAt255BytesThatIsTakenStillGetsPlaced() async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            let name = String(repeating: "n", count: 251) + ".bin"
            var paths: [String] = []
            for _ in 0..<3 {
                let id = try await service.create(["url": service.testdata("/testdata/10K"), "filename": name])["id"] as! String
                let job = try await service.waitFor(id) { ["completed", "failed"].contains($0["state"] as? String) }
                #expect(job["state"] as? String == "completed", "\(job)")
                paths.append(job["path"] as? String ?? "")
            }
            #expect(paths[0] == name)
            #expect(paths[1].hasSuffix(" (1).bin") && paths[1].utf8.count <= 255)
            #expect(paths[2].hasSuffix(" (2).bin") && paths[2].utf8.count <= 255)
            for path in paths { #expect(FileManager.default.fileExists(atPath: service.data + "/documents/" + path)) }
        }
    }

    @Test func invisibleCharactersAreRefusedInGivenNames() async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            for name in ["evil\u{202E}txt.exe", "a\u{85}b", "zero\u{200B}width"] {
                let body = String(
                    decoding: try JSONSerialization.data(withJSONObject: ["url": "http://127.0.0.1:1/x", "filename": name]), as: UTF8.self)
                let reply = try await service.request(.post, "/jobs", json: body)
                #expect(reply.status == 400)
                #expect(reply.errorCode == "invalid_filename")
            }
        }
    }

    @Test func deleteFileRemovesNamesWithPercentSigns() async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            for name in ["100% done.txt", "a%2Fb.txt", "x%00y.bin", "%41.txt"] {
                let id = try await service.create(["url": service.testdata("/testdata/1K"), "filename": name])["id"] as! String
                let job = try await service.waitFor(id) { $0["state"] as? String == "completed" }
                let path = try #require(job["path"] as? String)
                #expect(path == name)
                #expect(FileManager.default.fileExists(atPath: service.data + "/documents/" + path))
                #expect(try await service.request(.delete, "/jobs/\(id)?deleteFile=true").status == 204)
                #expect(!FileManager.default.fileExists(atPath: service.data + "/documents/" + path), "\(name)")
            }
            // Only the deleted ones went: nothing else in documents/ was touched.
            #expect(try FileManager.default.contentsOfDirectory(atPath: service.data + "/documents").isEmpty)
        }
    }
}
