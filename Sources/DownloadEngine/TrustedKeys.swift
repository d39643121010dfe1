import Foundation
public import SluiceCore

/// The operator's keys for signatures (`serve --trusted-keys DIR`, CONTRACT.md §8): the
/// OpenPGP keys of `*.asc` (armored) and `*.gpg` files, joined into one binary keyring that
/// `gpgv` reads, as apt's `trusted.gpg.d` is, and the minisign keys of `*.pub` files. Never a
/// user's keyring: a job names a signature, not who may have made it.
public struct TrustedKeys: Sendable, Equatable {
    /// The keyring `gpgv --keyring` reads; nil with no OpenPGP key.
    public let keyring: String?
    /// `gpgv`'s path, found when there are OpenPGP keys.
    public let gpgv: String?
    public let minisign: [Minisign.PublicKey]

    public var isEmpty: Bool { keyring == nil && minisign.isEmpty }

    public init(keyring: String? = nil, gpgv: String? = nil, minisign: [Minisign.PublicKey] = []) {
        self.keyring = keyring
        self.gpgv = gpgv
        self.minisign = minisign
    }

    /// Reads `directory`'s keys, writing the OpenPGP ones to `keyringPath` (mode 0600). A
    /// file that holds no key of its kind, a directory without keys, or OpenPGP keys without
    /// `gpgv` installed refuse the start, naming what is wrong.
    public static func load(directory: String, keyringPath: String) throws -> TrustedKeys {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        } catch {
            throw SluiceError(.invalidField, "--trusted-keys \(directory) cannot be read", field: "trusted-keys")
        }
        var packets: [UInt8] = []
        var minisign: [Minisign.PublicKey] = []
        for name in names where !name.hasPrefix(".") {
            let path = directory + "/" + name
            let kind = (name as NSString).pathExtension.lowercased()
            guard ["asc", "gpg", "pub"].contains(kind) else { continue }
            guard let data = FileManager.default.contents(atPath: path), data.count <= 1 << 20 else {
                throw SluiceError(.invalidField, "--trusted-keys: \(path) cannot be read, or is larger than 1 MiB", field: "trusted-keys")
            }
            let text = String(decoding: data, as: UTF8.self)
            switch kind {
            case "pub":
                guard let key = try? Minisign.PublicKey(parsing: text) else {
                    throw SluiceError(.invalidField, "--trusted-keys: \(path) is not a minisign public key", field: "trusted-keys")
                }
                minisign.append(key)
            default:
                // A `.gpg` may be armored too; a binary one is taken as it is (gpgv judges it).
                if text.contains("-----BEGIN PGP PUBLIC KEY BLOCK-----") {
                    guard let binary = OpenPGPText.dearmor(text) else {
                        throw SluiceError(.invalidField, "--trusted-keys: \(path) has a cut or damaged armored key", field: "trusted-keys")
                    }
                    packets += binary
                } else if kind == "gpg", let first = data.first, first & 0x80 != 0 {
                    packets += Array(data)
                } else {
                    throw SluiceError(.invalidField, "--trusted-keys: \(path) is not an OpenPGP public key", field: "trusted-keys")
                }
            }
        }
        guard !packets.isEmpty || !minisign.isEmpty else {
            throw SluiceError(
                .invalidField, "--trusted-keys \(directory) holds no key (*.asc or *.gpg for OpenPGP, *.pub for minisign)",
                field: "trusted-keys")
        }
        var gpgv: String?
        var keyring: String?
        if !packets.isEmpty {
            gpgv = Self.executable("gpgv")
            guard gpgv != nil else {
                throw SluiceError(
                    .invalidField, "--trusted-keys holds OpenPGP keys, and gpgv (Debian's gpgv package) is not installed",
                    field: "trusted-keys")
            }
            let written = FileManager.default.createFile(
                atPath: keyringPath, contents: Data(packets), attributes: [.posixPermissions: 0o600])
            guard written else {
                throw SluiceError(.io, "the trusted OpenPGP keys cannot be written to \(keyringPath)")
            }
            keyring = keyringPath
        }
        return TrustedKeys(keyring: keyring, gpgv: gpgv, minisign: minisign)
    }

    /// `name` in `PATH` (then `/usr/bin`), when it is there and executable.
    static func executable(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let directories = path.split(separator: ":").map(String.init) + ["/usr/bin", "/bin"]
        return directories.map { $0 + "/" + name }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
