import Foundation

/// Keys and signatures made by the real tools, for the tests of `signatureUrl` and
/// `--trusted-keys`: GnuPG (a key in a home of its own, never the user's) and minisign
/// (`scripts/signing-tools.sh install` brings them).
public enum SigningFixtures {
    /// Nil when gpg, gpgv and minisign are all here; else what is missing.
    public static let unavailable: String? = {
        let missing = ["gpg", "gpgv", "minisign"].filter { tool in
            !["/usr/bin/", "/bin/", "/usr/local/bin/"].contains { FileManager.default.isExecutableFile(atPath: $0 + tool) }
        }
        return missing.isEmpty ? nil : missing.joined(separator: ", ") + " missing (scripts/signing-tools.sh install)"
    }()

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    static func tool(_ path: String, _ arguments: [String], environment: [String: String] = [:]) throws -> String {
        var env = ["PATH": "/usr/bin:/bin", "LANG": "C"]
        env.merge(environment) { $1 }
        let result = try Spawned.run(path, arguments, environment: env)
        guard result.status == 0 else {
            throw Failure(description: "\(path) \(arguments.joined(separator: " ")): \(String(decoding: result.stderr, as: UTF8.self))")
        }
        return String(decoding: result.stdout, as: UTF8.self)
    }

    /// An OpenPGP key (Ed25519, no passphrase) in a GnuPG home of its own under `directory`.
    public struct GPGKey: Sendable {
        public let home: String
        /// The primary key's fingerprint, upper-case hexadecimal.
        public let fingerprint: String

        public init(in directory: String, name: String) throws {
            home = directory + "/gnupg-" + name
            try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            _ = try tool(
                "/usr/bin/gpg",
                [
                    "--homedir", home, "--batch", "--passphrase", "", "--quick-gen-key", "\(name) <\(name)@example.com>", "ed25519", "sign",
                    "never",
                ])
            let listing = try tool("/usr/bin/gpg", ["--homedir", home, "--batch", "--with-colons", "--list-keys"])
            guard let line = listing.split(separator: "\n").first(where: { $0.hasPrefix("fpr:") }),
                let fingerprint = line.split(separator: ":", omittingEmptySubsequences: false).dropFirst(9).first
            else { throw Failure(description: "gpg listed no fingerprint") }
            self.fingerprint = String(fingerprint)
        }

        /// The public key, armored (`*.asc`) or binary (`*.gpg`), written to `path`.
        public func export(to path: String, armored: Bool) throws {
            _ = try tool(
                "/usr/bin/gpg", ["--homedir", home, "--batch", "--yes", "--output", path] + (armored ? ["--armor"] : []) + ["--export"])
        }

        /// A detached signature of `file` at `output`, armored or binary.
        public func sign(_ file: String, to output: String, armored: Bool) throws {
            _ = try tool(
                "/usr/bin/gpg",
                ["--homedir", home, "--batch", "--yes", "--output", output] + (armored ? ["--armor"] : []) + ["--detach-sign", file])
        }

        /// Stops the gpg-agent the key's home started (keys are made and used through it).
        public func stopAgent() {
            _ = try? tool("/usr/bin/gpgconf", ["--homedir", home, "--kill", "gpg-agent"])
        }

        /// `file` signed inline (binary, the data inside the signature), at `output`.
        public func inlineSign(_ file: String, to output: String) throws {
            _ = try tool("/usr/bin/gpg", ["--homedir", home, "--batch", "--yes", "--output", output, "--sign", file])
        }

        /// `file` clear-signed, at `output`.
        public func clearSign(_ file: String, to output: String) throws {
            _ = try tool("/usr/bin/gpg", ["--homedir", home, "--batch", "--yes", "--output", output, "--clearsign", file])
        }
    }

    /// A minisign key pair without a password under `directory`.
    public struct MinisignKey: Sendable {
        public let publicKey: String
        public let secretKey: String
        /// The key id as minisign prints it.
        public let keyID: String

        public init(in directory: String, name: String) throws {
            publicKey = directory + "/" + name + ".pub"
            secretKey = directory + "/" + name + ".key"
            _ = try tool("/usr/bin/minisign", ["-G", "-f", "-W", "-p", publicKey, "-s", secretKey])
            let text = try String(contentsOfFile: publicKey, encoding: .utf8)
            // `untrusted comment: minisign public key 1A2B…`
            guard let id = text.split(separator: "\n").first?.split(separator: " ").last else {
                throw Failure(description: "minisign wrote no key id")
            }
            keyID = String(id)
        }

        /// A signature of `file` at `output`: prehashed, or legacy (`-l`).
        public func sign(_ file: String, to output: String, legacy: Bool = false) throws {
            _ = try tool("/usr/bin/minisign", ["-S", "-s", secretKey, "-x", output, "-m", file] + (legacy ? ["-l"] : []))
        }
    }
}
