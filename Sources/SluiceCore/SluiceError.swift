/// The one error type of Sluice: a stable machine-readable code, a message for people,
/// and optionally the underlying cause. The code is stored with failed jobs, shown by the
/// API and the dashboard, and mapped to an HTTP status at the API edge.
public struct SluiceError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        // Request errors.
        public static let invalidJSON = Code(rawValue: "invalid_json")
        public static let invalidURL = Code(rawValue: "invalid_url")
        public static let unsupportedScheme = Code(rawValue: "unsupported_scheme")
        public static let invalidFilename = Code(rawValue: "invalid_filename")
        public static let invalidField = Code(rawValue: "invalid_field")
        public static let unauthorized = Code(rawValue: "unauthorized")
        public static let notFound = Code(rawValue: "not_found")
        public static let invalidTransition = Code(rawValue: "invalid_transition")
        public static let payloadTooLarge = Code(rawValue: "payload_too_large")
        public static let unsupportedMediaType = Code(rawValue: "unsupported_media_type")
        public static let methodNotAllowed = Code(rawValue: "method_not_allowed")
        /// The job's URL names an address the service may not reach (docs/security.md,
        /// "Targets"); also a download failure when a name or a redirect leads there.
        public static let forbiddenTarget = Code(rawValue: "forbidden_target")
        /// 421: the `Host` is not one this service answers for (DNS rebinding).
        public static let misdirectedRequest = Code(rawValue: "misdirected_request")
        /// 403: a state-changing request from another site's page (CSRF).
        public static let crossOrigin = Code(rawValue: "cross_origin")
        /// 503: the job store cannot write (disk full, read-only, locked).
        public static let storeUnavailable = Code(rawValue: "store_unavailable")
        /// 431: a request's header section is larger than the service accepts.
        public static let headersTooLarge = Code(rawValue: "headers_too_large")
        /// 409: a job's `after` would make a cycle of dependencies.
        public static let dependencyCycle = Code(rawValue: "dependency_cycle")
        /// An `Idempotency-Key` sent again with a different request.
        public static let idempotencyKeyReused = Code(rawValue: "idempotency_key_reused")
        /// A valid token whose scope does not cover the request (RFC 6750's name).
        public static let insufficientScope = Code(rawValue: "insufficient_scope")
        public static let tokenExists = Code(rawValue: "token_exists")

        // Download failures.
        public static let httpStatus = Code(rawValue: "http_status")
        public static let checksumMismatch = Code(rawValue: "checksum_mismatch")
        /// A `checksumUrl` that could not be fetched or read, or that has no entry for the
        /// job's file: the job fails before its first byte (CONTRACT.md §8).
        public static let checksumUnavailable = Code(rawValue: "checksum_unavailable")
        /// A `signatureUrl` whose signature no trusted key verifies (CONTRACT.md §8).
        public static let signatureInvalid = Code(rawValue: "signature_invalid")
        /// A `signatureUrl` that could not be fetched.
        public static let signatureUnavailable = Code(rawValue: "signature_unavailable")
        public static let remoteChanged = Code(rawValue: "remote_changed")
        public static let noSpace = Code(rawValue: "no_space")
        public static let fileTooLarge = Code(rawValue: "file_too_large")
        public static let network = Code(rawValue: "network")
        /// A TLS handshake that failed: a certificate not trusted, expired or issued for
        /// another name, or a protocol failure. Never retried.
        public static let tls = Code(rawValue: "tls")
        public static let tooManyRedirects = Code(rawValue: "too_many_redirects")
        public static let invalidResponse = Code(rawValue: "invalid_response")
        public static let io = Code(rawValue: "io")
        public static let cancelled = Code(rawValue: "cancelled")
        /// A job one of whose dependencies (`after`) failed or was deleted before completing.
        public static let dependencyFailed = Code(rawValue: "dependency_failed")
    }

    public var code: Code
    public var message: String
    /// The request field at fault (`invalid_field`): a body key, a query parameter or a
    /// header name. Part of the error body when set.
    public var field: String?
    /// A description of the underlying error, for debug logs only (it is in a library's
    /// words); not part of equality, nor of `description`.
    public var cause: String?

    public init(_ code: Code, _ message: String, field: String? = nil, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.field = field
        self.cause = cause.map { String(describing: $0) }
    }

    /// The code and the message: what a log line or a person reads.
    public var description: String { "\(code): \(message)" }

    public static func == (lhs: SluiceError, rhs: SluiceError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
    }
}
