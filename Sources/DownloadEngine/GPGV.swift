import Foundation
import SluiceCore

/// OpenPGP signatures through Debian's `gpgv`, as apt checks its archives: the operator's
/// keyring only (`--keyring`, a throwaway `--homedir`, so no user's keys or options count),
/// the verdict from its status lines (`--status-fd 1`), never from a parser of ours.
enum GPGV {
    /// At most this much of gpgv's status output is read (a few lines per signature).
    static let maximumStatus = 1 << 20

    static func check(_ signature: [UInt8], of signed: SignatureVerifier.Signed, keyring: String, gpgv: String) async throws
        -> SignatureCheck
    {
        // A detached signature only: a signed message given as the signature (a clear-signed
        // or inline-signed document of a trusted key) is verified by gpgv over its own text,
        // whatever the data file holds. Armor must be a signature's; and gpgv's PLAINTEXT
        // status (literal data in the signature) refuses it below whatever its form.
        if let text = String(bytes: signature.prefix(64), encoding: .utf8), text.contains("-----BEGIN PGP"),
            !text.contains("-----BEGIN PGP SIGNATURE-----")
        {
            return SignatureCheck(format: .openpgp, key: nil, verified: false)
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-gpgv-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let signaturePath = directory + "/signature"
        guard FileManager.default.createFile(atPath: signaturePath, contents: Data(signature)) else {
            throw SluiceError(.io, "the signature cannot be written for gpgv")
        }
        let dataPath: String
        switch signed {
        case .bytes(let bytes):
            dataPath = directory + "/signed"
            guard FileManager.default.createFile(atPath: dataPath, contents: Data(bytes)) else {
                throw SluiceError(.io, "the signed file cannot be written for gpgv")
            }
        case .file(let file, _):
            dataPath = file.path
        }
        let (status, output) = try await run(
            gpgv, ["--homedir", directory, "--status-fd", "1", "--keyring", keyring, "--", signaturePath, dataPath])
        // 0: a good signature; 1: a bad one; 2: no key, or a signature gpgv cannot read.
        let key = status == 0 ? OpenPGPText.verifiedKey(status: output) : nil
        return SignatureCheck(format: .openpgp, key: key, verified: key != nil)
    }

    /// Runs `executable` with `arguments`, stdin empty, stderr discarded; its exit status
    /// and what it wrote to stdout (at most `maximumStatus` bytes). A cancelled task
    /// terminates it.
    static func run(_ executable: String, _ arguments: [String]) async throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ["LANG": "C", "LC_ALL": "C", "PATH": "/usr/bin:/bin"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let exited = AsyncStream<Int32>.makeStream()
        process.terminationHandler = { finished in
            exited.continuation.yield(finished.terminationStatus)
            exited.continuation.finish()
        }
        do {
            try process.run()
        } catch {
            throw SluiceError(.io, "gpgv cannot be started: \(error.localizedDescription)")
        }
        return try await withTaskCancellationHandler {
            // Read to the end on a thread of its own (a full pipe would stop gpgv), bounded.
            let text = await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
                Thread {
                    var kept = Data()
                    while let chunk = try? output.fileHandleForReading.read(upToCount: 64 << 10), !chunk.isEmpty {
                        if kept.count < maximumStatus { kept.append(chunk.prefix(maximumStatus - kept.count)) }
                    }
                    continuation.resume(returning: String(decoding: kept, as: UTF8.self))
                }.start()
            }
            var statuses = exited.stream.makeAsyncIterator()
            guard let status = await statuses.next() else { throw CancellationError() }
            try Task.checkCancellation()
            return (status, text)
        } onCancel: {
            if process.isRunning { process.terminate() }
        }
    }
}
