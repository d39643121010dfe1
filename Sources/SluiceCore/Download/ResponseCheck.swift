/// What a downloader learns from a response head, decided before a byte is written.
///
/// Pure: the status and a header lookup in, a verdict out. The engine acts on it.
public enum ResponseCheck {
    /// The verdict on the answer to a ranged request for bytes of a known representation.
    public enum Verdict: Equatable, Sendable {
        /// A 206 with exactly the asked range, total and validator: write its body.
        case accept
        /// The remote file is not the one on disk (200, another length or validator):
        /// discard the partial data and start over from byte 0.
        case restart(String)
        /// Retry later (408, 429, 5xx), after at least `retryAfter` seconds if given.
        case transient(retryAfter: Double?)
        /// A status that will not get better: fail with `http_status`.
        case fatal(status: Int)
        /// A malformed answer that must not be recombined (C2): retry, never write it.
        case invalid(String)
    }

    /// Checks the answer to `Range: bytes=range` sent with `If-Range` for a representation
    /// of `total` bytes last seen with `validators`.
    public static func ranged(
        status: Int, header: (String) -> String?, range: Range<Int64>, total: Int64, validators: Validators?
    ) -> Verdict {
        switch StatusDisposition(status: status) {
        case .transient:
            return .transient(retryAfter: header("Retry-After").flatMap(retryAfterSeconds))
        case .fatal:
            // 416 for bytes inside the known length: the file got shorter.
            return status == 416 ? .restart("the remote file is shorter than before") : .fatal(status: status)
        case .success:
            break
        }
        guard status == 206 else {
            return .restart("the server sent the whole file (\(status)) instead of the range")
        }
        if let contentType = header("Content-Type"), contentType.lowercased().hasPrefix("multipart/byteranges") {
            return .invalid("multipart answer to a single range")
        }
        guard let value = header("Content-Range"), let contentRange = ContentRange(parsing: value),
            case .range(let got, let complete) = contentRange
        else {
            return .invalid("206 without a valid Content-Range")
        }
        if let complete, complete != total {
            return .restart("the remote file changed length from \(total) to \(complete)")
        }
        // Every validator of the first response must come back unchanged: a missing ETag or
        // date is as much a change as another one (the bytes could be another version's).
        if let validators {
            let sentTag = header("ETag").flatMap { EntityTag(parsing: $0) }
            let sentDate = header("Last-Modified").flatMap { HTTPDate.parse($0) }
            if !validators.sameRepresentation(etag: sentTag, lastModified: sentDate) {
                return .restart("the remote file changed (its ETag or Last-Modified is not the one it had)")
            }
        }
        guard got.first == range.lowerBound, got.last == range.upperBound - 1 else {
            return .invalid("asked for bytes \(range.lowerBound)-\(range.upperBound - 1), got \(got)")
        }
        return .accept
    }

    /// What the first response of a fresh download says about the remote file.
    public struct Probe: Equatable, Sendable {
        public var totalBytes: Int64?
        public var acceptsRanges: Bool
        public var validators: Validators
    }

    /// The verdict on the probe, `GET` with `Range: bytes=0-`: a 206 from 0 means ranges
    /// work; a 200 means they do not (and the body is the whole file).
    public static func probe(status: Int, header: (String) -> String?) -> Result<Probe, ProbeFailure> {
        switch StatusDisposition(status: status) {
        case .transient:
            return .failure(.transient(retryAfter: header("Retry-After").flatMap(retryAfterSeconds)))
        case .fatal:
            return .failure(status == 416 ? .emptyRange : .fatal(status: status))
        case .success:
            break
        }
        let validators = validators(header)
        if status == 206 {
            guard let value = header("Content-Range"), case .range(let got, let complete)? = ContentRange(parsing: value),
                got.first == 0, let complete, got.last == complete - 1
            else {
                return .failure(.invalid("206 to bytes=0- without a Content-Range for the whole file"))
            }
            return .success(Probe(totalBytes: complete, acceptsRanges: true, validators: validators))
        }
        guard status == 200 else { return .failure(.fatal(status: status)) }
        let length = header("Content-Length").flatMap { Int64($0) }.flatMap { $0 >= 0 ? $0 : nil }
        return .success(Probe(totalBytes: length, acceptsRanges: false, validators: validators))
    }

    /// What the answer to `Range: bytes=0-0` says a URL serves, for comparing it with the
    /// file a checkpoint's bytes came from: only a 206 for byte 0 with the whole length
    /// counts (a remote that ignores ranges could not continue those bytes anyway).
    public static func identity(status: Int, header: (String) -> String?) -> Probe? {
        guard status == 206, let value = header("Content-Range"), case .range(let got, let complete?)? = ContentRange(parsing: value),
            got.first == 0
        else { return nil }
        let validators = validators(header)
        return Probe(totalBytes: complete, acceptsRanges: true, validators: validators)
    }

    /// What the answer to `Range: bytes=OFFSET-` says about a partial file of OFFSET bytes
    /// that some other program (curl, wget, a browser) left: `curl -C -`'s question.
    public enum Continuation: Equatable, Sendable {
        /// 206 from OFFSET to the end: the rest is coming; the probe tells length and validators.
        case resume(Probe)
        /// 416 with `bytes */OFFSET`: the file is already whole.
        case complete
        /// Anything else that succeeded (a 200 is the whole file): start over from byte 0.
        case startOver
    }

    public static func continuation(status: Int, header: (String) -> String?, offset: Int64) -> Result<Continuation, ProbeFailure> {
        if status == 416 {
            if let value = header("Content-Range"), case .unsatisfied(let complete)? = ContentRange(parsing: value), complete == offset {
                return .success(.complete)
            }
            return .success(.startOver)
        }
        switch StatusDisposition(status: status) {
        case .transient:
            return .failure(.transient(retryAfter: header("Retry-After").flatMap(retryAfterSeconds)))
        case .fatal:
            return .failure(.fatal(status: status))
        case .success:
            break
        }
        guard status == 206, let value = header("Content-Range"), case .range(let got, let complete)? = ContentRange(parsing: value),
            got.first == offset, let complete, got.last == complete - 1
        else {
            return .success(.startOver)
        }
        let validators = validators(header)
        return .success(.resume(Probe(totalBytes: complete, acceptsRanges: true, validators: validators)))
    }

    /// The validators a response's `ETag`, `Last-Modified` and `Date` give.
    static func validators(_ header: (String) -> String?) -> Validators {
        Validators(
            etag: header("ETag").flatMap { EntityTag(parsing: $0) },
            lastModified: header("Last-Modified").flatMap { HTTPDate.parse($0) },
            lastModifiedIsStrong: isDateStrong(lastModified: header("Last-Modified"), date: header("Date"))
        )
    }

    public enum ProbeFailure: Error, Equatable, Sendable {
        case transient(retryAfter: Double?)
        case fatal(status: Int)
        case invalid(String)
        /// 416 to `bytes=0-`: an empty file; ask again without Range.
        case emptyRange
    }

    /// `Retry-After` as seconds: a delay or an HTTP date (relative to now is not knowable
    /// here, so dates count as one minute at most).
    public static func retryAfterSeconds(_ value: String) -> Double? {
        if let seconds = Double(value.trimmingSpaces()), seconds >= 0 { return seconds }
        return HTTPDate.parse(value) != nil ? 60 : nil
    }

    /// RFC 9110 §8.8.2.2: a Last-Modified at least a second before the response's Date is strong.
    static func isDateStrong(lastModified: String?, date: String?) -> Bool {
        guard let lastModified = lastModified.flatMap({ HTTPDate.parse($0) }) else { return false }
        guard let date = date.flatMap({ HTTPDate.parse($0) }) else { return true }
        return date - lastModified >= 1
    }
}
