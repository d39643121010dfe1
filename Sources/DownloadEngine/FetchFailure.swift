import AsyncHTTPClient
import NIOSSL
public import SluiceCore

/// A failure worth retrying, with what to report if retries run out.
struct TransientFailure: Error {
    var error: SluiceError
    var retryAfter: Double?
}

/// An event for the retry machine, decided from a response before its body was read.
struct MachineEvent: Error {
    var event: RetryMachine.Event
}

/// A connection that went silent or slower than the floor: replaced, and not forgiven by
/// the few bytes it brought.
struct StallFailure: Error {
    var reason: String
}

/// The remote asked for a wait long enough that the download should give its slot back:
/// stop (after a checkpoint) and be started again after `delay`.
public struct RetryLater: Error, Sendable {
    public var delay: Duration
    /// Consecutive failures so far, for the next run to go on counting.
    public var failures: Int
    public var error: SluiceError
}

/// A source whose first answer is not the file an earlier source served (`agreeWith`):
/// another length, or a digest header that says otherwise. It is `excluded`.
public struct SourceDisagrees: Error, Sendable {
    public var reason: String
}

/// The remote file is not the one the partial data came from: start over from byte 0.
struct RestartFromZero: Error {
    var reason: String
}

extension SluiceError {
    /// Classifies an error thrown while talking to `target` (`host:port`), in plain words
    /// (`TransportFailureText`).
    static func fromTransport(_ error: any Error, target: String, scheme: String? = nil) -> Result<TransientFailure, SluiceError> {
        if let error = error as? SluiceError {
            return .failure(error)
        }
        // Redirects are followed (and counted) by `Fetcher`, and a read timeout is a stall
        // (`Download.event(for:)`): what is left of the client's errors is the URL's fault.
        if let error = error as? HTTPClientError, error == .invalidURL || error == .emptyHost || error == .emptyScheme {
            return .failure(SluiceError(.invalidURL, "the URL cannot be fetched", cause: error))
        }
        // A TLS connection cut mid-way is a network failure too; no message names a
        // library's internals (the cause keeps them, for debug logs).
        return .success(
            TransientFailure(
                error: SluiceError(.network, TransportFailureText.describe(error, target: target, scheme: scheme), cause: error)))
    }
}
