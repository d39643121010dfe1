import HTTPTypes
import Hummingbird
import NIOCore
import SluiceCore

/// What the origin knows about one representation before sending any byte of it.
struct Representation: Sendable {
    /// Nil when the length is not announced (chunked body, no ranges).
    var length: Int64?
    var validators: Validators
    var contentType: String
    /// False makes the responder ignore `Range` and `If-Range`.
    var rangesEnabled: Bool
    /// Whether to send `Accept-Ranges` at all (`none` when ranges are disabled).
    var advertiseRanges: Bool = true
    var cacheControl: String?
}

/// Produces the bytes of a representation, one absolute range at a time.
protocol ByteSource: Sendable {
    /// Writes the bytes `range` to `writer`, in chunks, awaiting backpressure.
    func write(_ range: Range<Int64>, to writer: inout any ResponseBodyWriter) async throws
    /// Writes the whole representation when its length is unknown.
    func writeAll(to writer: inout any ResponseBodyWriter) async throws
    /// The bytes `range` at once, for a small range that can be answered in one buffer;
    /// nil when the source must stream (faults to inject, or no fast path).
    func bytes(_ range: Range<Int64>) throws -> ByteBuffer?
}

extension ByteSource {
    func writeAll(to writer: inout any ResponseBodyWriter) async throws {
        preconditionFailure("\(Self.self) has a known length; write(_:to:) serves it")
    }

    func bytes(_ range: Range<Int64>) throws -> ByteBuffer? { nil }
}

/// Ranges up to this size are read before the response is returned, so that Hummingbird
/// writes head and body together instead of streaming through a body writer.
let inlineBodyLimit: Int64 = 256 << 10

/// Thrown by a body writer to end a response early when the service is stopping.
struct ShutdownInProgress: Error {}
