import Foundation
import SluiceTestSupport
import Testing

@Suite struct PathSafetyTests {
    static let attempts = [
        "/files/../secret.txt",
        "/files/%2e%2e/secret.txt",
        "/files/%2E%2E/secret.txt",
        "/files/sub/../../secret.txt",
        "/files/sub/%2e%2e/%2e%2e/secret.txt",
        "/files/..%2fsecret.txt",
        "/files/sub%2f..%2f..%2fsecret.txt",
        "/files/%252e%252e/secret.txt",
        "/files/..%5csecret.txt",
        "/files/a%00b",
        "/files/%00",
        "/files//etc/passwd",
        "/files/%2fetc%2fpasswd",
        "/files/link-out",
        "/files/sub/link-out",
        "/files/dir-link-out/secret.txt",
        "/files/sub",
        "/files/",
    ]

    @Test(arguments: attempts)
    func nothingOutsideTheRootIsServed(path: String) async throws {
        try await withTemporaryDirectory { outside in
            let secret = try outside.write("secret.txt", Array("top secret".utf8))
            let root = "\(outside.path)/root"
            try FileManager.default.createDirectory(atPath: "\(root)/sub", withIntermediateDirectories: true)
            try Array("inside".utf8).withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: "\(root)/sub/inside.txt")) }
            try FileManager.default.createSymbolicLink(atPath: "\(root)/link-out", withDestinationPath: secret)
            try FileManager.default.createSymbolicLink(atPath: "\(root)/sub/link-out", withDestinationPath: "../../secret.txt")
            try FileManager.default.createSymbolicLink(atPath: "\(root)/dir-link-out", withDestinationPath: outside.path)
            try await withOrigin(root: root) { port in
                let response = try await RawHTTPClient.request(port: port, path: path)
                #expect(response.status == 404 || response.status == 400, "\(path) answered \(response.status)")
                #expect(!String(decoding: response.body, as: UTF8.self).contains("top secret"))
            }
        }
    }

    @Test func symlinksThatStayInsideAreServed() async throws {
        try await withTemporaryDirectory { directory in
            try directory.write("sub/real.txt", Array("hello".utf8))
            try FileManager.default.createSymbolicLink(atPath: "\(directory.path)/alias.txt", withDestinationPath: "sub/real.txt")
            try await withOrigin(root: directory.path) { port in
                let response = try await RawHTTPClient.request(port: port, path: "/files/alias.txt")
                #expect(response.status == 200)
                #expect(response.body == Array("hello".utf8))
                let encoded = try await RawHTTPClient.request(port: port, path: "/files/s%75b/real.txt")
                #expect(encoded.body == Array("hello".utf8))
            }
        }
    }
}
