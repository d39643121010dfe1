import DownloadEngine
import Foundation
import SluiceCore
import SluiceTestSupport
import Testing

/// `serve --trusted-keys DIR`: the OpenPGP keys joined into the binary keyring gpgv reads
/// (armor taken off as `gpg --dearmor` does), minisign's keys read; a directory that holds
/// no usable key refuses the start naming the file.
@Suite(.enabled(if: SigningFixtures.unavailable == nil, "\(SigningFixtures.unavailable ?? "")"))
struct TrustedKeysTests {
    @Test func armoredAndBinaryKeysMakeTheKeyringGpgWouldMake() async throws {
        try await withTemporaryDirectory { directory in
            let keys = directory.path + "/keys"
            try FileManager.default.createDirectory(atPath: keys, withIntermediateDirectories: true)
            let one = try SigningFixtures.GPGKey(in: directory.path, name: "one")
            let two = try SigningFixtures.GPGKey(in: directory.path, name: "two")
            defer {
                one.stopAgent()
                two.stopAgent()
            }
            try one.export(to: keys + "/a-one.asc", armored: true)
            try two.export(to: keys + "/b-two.gpg", armored: false)
            let minisign = try SigningFixtures.MinisignKey(in: keys, name: "release")
            // Files of other kinds are not keys, and are left alone.
            try Data("notes".utf8).write(to: URL(fileURLWithPath: keys + "/README"))
            let loaded = try TrustedKeys.load(directory: keys, keyringPath: directory.path + "/ring.gpg")
            #expect(loaded.minisign.map(\.idText) == [minisign.keyID])
            #expect(loaded.gpgv != nil)
            let dearmored = try Spawned.run("/usr/bin/gpg", ["--dearmor", "--output", "-", keys + "/a-one.asc"]).stdout
            let binary = try Data(contentsOf: URL(fileURLWithPath: keys + "/b-two.gpg"))
            #expect(try Data(contentsOf: URL(fileURLWithPath: directory.path + "/ring.gpg")) == dearmored + binary)
            let mode = try FileManager.default.attributesOfItem(atPath: directory.path + "/ring.gpg")[.posixPermissions] as? Int
            #expect(mode == 0o600)
        }
    }

    @Test(arguments: [
        ("empty", [String: String](), "holds no key"),
        ("a .pub that is not minisign's", ["x.pub": "untrusted comment: hi\nnot base64 at all\n"], "x.pub is not a minisign public key"),
        ("an .asc that is not a key", ["x.asc": "hello\n"], "x.asc is not an OpenPGP public key"),
        ("a cut armored key", ["x.asc": "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nAQID\n"], "x.asc has a cut or damaged armored key"),
    ])
    func aDirectoryWithoutUsableKeysRefusesTheStart(label: String, files: [String: String], words: String) async throws {
        try await withTemporaryDirectory { directory in
            for (name, text) in files { try Data(text.utf8).write(to: URL(fileURLWithPath: directory.path + "/" + name)) }
            let error = #expect(throws: SluiceError.self, "\(label)") {
                _ = try TrustedKeys.load(directory: directory.path, keyringPath: directory.path + "/../ring-\(label.count).gpg")
            }
            #expect(error?.message.contains(words) == true, "\(error?.message ?? "")")
        }
        #expect(throws: SluiceError.self) { _ = try TrustedKeys.load(directory: "/nonexistent/keys", keyringPath: "/tmp/x.gpg") }
    }
}
