public import Foundation

/// The body of `POST /jobs`, validated: every field checked before anything is created.
public struct CreateJobRequest: Sendable, Equatable, Decodable {
    public var url: String
    public var filename: String?
    public var connections: Int
    /// The digest the file must have: `checksum`, or `sha256` (its other name for
    /// `sha-256=HEX`; CONTRACT.md §8).
    public var checksum: Checksum?
    /// A checksum file whose entry for the file gives the digest (`checksumUrl`), and the
    /// name to look up in it when it is not the URL's last path segment (`checksumName`).
    public var checksumURL: String?
    public var checksumName: String?
    /// A detached signature of the checksum file, or of the file itself (`signatureUrl`).
    public var signatureURL: String?
    /// More URLs of the same file (`mirrors`): at most 16, each once, none the `url`.
    public var mirrors: [String] = []
    public var headers: [String: String]
    public var priority: Int
    public var paused: Bool
    /// Jobs that must complete before this one starts.
    public var after: [String]
    /// Bytes per second for this job, under the queue's limit; nil for none.
    public var limitRate: Int64?
    /// A webhook URL told when this job ends or goes.
    public var notify: String?
    /// `http://[user:pass@]host:port` or `socks5://host:port`: this job's proxy.
    public var proxy: String?
    /// Skip the verification of the remote's TLS certificate; only where the service allows
    /// it (`--allow-insecure-tls`).
    public var insecure: Bool
    /// The sub-directory of `documents/` the file goes into, relative (`music/live`); nil
    /// for `documents/` itself. `dir` of `POST /jobs`; aria2's `dir` sets it too.
    public var directory: String?
    /// Not before this instant (RFC 3339 in the body); a past one starts now.
    public var startAt: Date?
    /// Not held by the schedule's closed windows.
    public var ignoreSchedule: Bool = false

    /// Headers the engine sets itself; a job may not override them.
    static let reservedHeaders: Set<String> = [
        "range", "if-range", "host", "content-length", "transfer-encoding", "connection", "upgrade", "te",
        "expect", "keep-alive", "proxy-connection", "trailer",
    ]

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case url, filename, connections, sha256, headers, priority, paused, after, limitRate, notify, proxy, insecure, dir
        case startAt, ignoreSchedule, checksum, checksumUrl, checksumName, signatureUrl, mirrors
    }

    /// The fields of `POST /jobs`: any other is 400 `invalid_field` naming it, so a misspelt
    /// `filname` is never a job with another name.
    public static let fields = Set(CodingKeys.allCases.map(\.rawValue))

    public init(from decoder: any Decoder) throws {
        _ = try PatchBody(decoder, allowed: Self.fields, unknown: "is not a field of a job")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func field<T: Decodable>(_ type: T.Type, _ key: CodingKeys) throws -> T? {
            do {
                return try container.decodeIfPresent(type, forKey: key)
            } catch {
                throw SluiceError(.invalidField, "\(key.rawValue) has the wrong type or is out of range", field: key.rawValue)
            }
        }
        let url: String?
        do {
            url = try container.decodeIfPresent(String.self, forKey: .url)
        } catch {
            throw SluiceError(.invalidURL, "url must be a string holding an absolute http or https URL")
        }
        guard let url else { throw SluiceError(.invalidURL, "url is required") }
        self.url = url
        filename = try field(String.self, .filename)
        connections = try field(Int.self, .connections) ?? 4
        let sha256 = try field(String.self, .sha256)
        checksum = try field(String.self, .checksum).map { try Checksum(parsing: $0) }
        checksumURL = try field(String.self, .checksumUrl)
        checksumName = try field(String.self, .checksumName)
        signatureURL = try field(String.self, .signatureUrl)
        mirrors = try field([String].self, .mirrors) ?? []
        headers = try field([String: String].self, .headers) ?? [:]
        priority = try field(Int.self, .priority) ?? 0
        paused = try field(Bool.self, .paused) ?? false
        after = try field([String].self, .after) ?? []
        limitRate = try field(Int64.self, .limitRate)
        notify = try field(String.self, .notify)
        proxy = try field(String.self, .proxy)
        insecure = try field(Bool.self, .insecure) ?? false
        directory = try field(String.self, .dir)
        if let directory { try Self.validateDirectory(directory, field: "dir") }
        startAt = try field(String.self, .startAt).map { try Self.instant($0, field: "startAt") }
        ignoreSchedule = try field(Bool.self, .ignoreSchedule) ?? false
        try validate(sha256: sha256)
    }

    public init(
        url: String, filename: String? = nil, connections: Int = 4, sha256: String? = nil,
        headers: [String: String] = [:], priority: Int = 0, paused: Bool = false, after: [String] = [],
        limitRate: Int64? = nil, notify: String? = nil, proxy: String? = nil, insecure: Bool = false,
        directory: String? = nil, checksum: Checksum? = nil, mirrors: [String] = []
    ) throws {
        self.url = url
        self.filename = filename
        self.connections = connections
        self.checksum = checksum
        self.headers = headers
        self.priority = priority
        self.paused = paused
        self.after = after
        self.limitRate = limitRate
        self.notify = notify
        self.proxy = proxy
        self.insecure = insecure
        self.directory = directory
        self.mirrors = mirrors
        try validate(sha256: sha256)
    }

    private mutating func validate(sha256: String?) throws {
        try Self.validateURL(url)
        if let filename { try Self.validateFilename(filename) }
        if let directory { try Self.validateDirectory(directory) }
        try Self.validateConnections(connections)
        if let sha256 {
            guard let given = Checksum(.sha256, hex: sha256) else {
                throw SluiceError(.invalidField, "sha256 must be 64 hexadecimal digits", field: "sha256")
            }
            // One digest, named one way.
            guard checksum == nil else {
                throw SluiceError(
                    .invalidField, "give checksum or sha256, not both (sha256: HEX is checksum: sha-256=HEX)", field: "checksum")
            }
            checksum = given
        }
        try validateChecksumSources()
        try validateMirrors()
        try Self.validatePriority(priority)
        try Self.validateHeaders(headers)
        try Self.validateAfter(after)
        if let limitRate { try RateLimit.validate(limitRate, field: "limitRate") }
        if let notify { _ = try EndpointURL(notify, schemes: EndpointURL.webhookSchemes, field: "notify") }
        if let proxy { _ = try EndpointURL.proxy(proxy, field: "proxy") }
    }

    /// `checksumUrl` is a URL as `url` is, and not beside a digest already given;
    /// `checksumName` is a name on one line of a checksum file, and needs `checksumUrl`.
    private func validateChecksumSources() throws {
        if let checksumURL {
            try Self.validateURL(checksumURL, field: "checksumUrl")
            guard checksum == nil else {
                throw SluiceError(
                    .invalidField, "give checksum (or sha256) or checksumUrl, not both: the digest comes from one of them",
                    field: "checksumUrl")
            }
        }
        if let signatureURL { try Self.validateURL(signatureURL, field: "signatureUrl") }
        if let checksumName {
            guard checksumURL != nil else {
                throw SluiceError(
                    .invalidField, "checksumName names the file in checksumUrl's file: give checksumUrl", field: "checksumName")
            }
            guard !checksumName.isEmpty, checksumName.utf8.count <= 1024,
                checksumName.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F })
            else {
                throw SluiceError(
                    .invalidField, "checksumName must be a file name of 1 to 1024 bytes without control characters", field: "checksumName")
            }
        }
    }

    /// At most this many mirrors (CONTRACT.md §8).
    public static let maximumMirrors = 16

    private func validateMirrors() throws {
        guard mirrors.count <= Self.maximumMirrors else {
            throw SluiceError(.invalidField, "mirrors: at most \(Self.maximumMirrors) URLs", field: "mirrors")
        }
        for mirror in mirrors { try Self.validateURL(mirror, field: "mirrors") }
        guard Set(mirrors + [url]).count == mirrors.count + 1 else {
            throw SluiceError(.invalidField, "mirrors must list each URL once, and not the url itself", field: "mirrors")
        }
    }

    /// An RFC 3339 instant, or `invalid_field` naming `field`.
    public static func instant(_ text: String, field: String) throws -> Date {
        guard let date = RFC3339.date(text) else {
            throw SluiceError(.invalidField, "\(field) must be an RFC 3339 date and time, such as 2026-12-01T02:00:00+01:00", field: field)
        }
        return date
    }

    public static func validateFilename(_ filename: String) throws {
        guard FileNameSanitizer.isValid(filename) else {
            throw SluiceError(
                .invalidFilename,
                "filename must be a plain file name of at most 255 bytes, without /, \\, control or invisible format characters, . or ..",
                field: "filename"
            )
        }
    }

    /// A relative sub-directory: plain names (as a filename's) joined by single `/`s, so
    /// that no `..`, absolute or empty component can lead out of the documents directory.
    public static func validateDirectory(_ directory: String, field: String = "directory") throws {
        let components = directory.pathParts
        guard !components.isEmpty, components.count <= 32, components.allSatisfy({ FileNameSanitizer.isValid(String($0)) }) else {
            // `dir` of `POST /jobs` is a field like any other (CONTRACT §2).
            throw SluiceError(
                field == "dir" ? .invalidField : .invalidFilename,
                "\(field) must be a relative path of plain names under the documents, without . or .. or empty parts", field: field)
        }
    }

    public static func validateConnections(_ connections: Int) throws {
        guard (1...16).contains(connections) else {
            throw SluiceError(.invalidField, "connections must be between 1 and 16", field: "connections")
        }
    }

    public static func validatePriority(_ priority: Int) throws {
        guard (-1_000_000...1_000_000).contains(priority) else {
            throw SluiceError(.invalidField, "priority must be between -1000000 and 1000000", field: "priority")
        }
    }

    /// At most 64 job ids, none repeated (whether they name jobs is the service's to check).
    public static func validateAfter(_ after: [String]) throws {
        guard after.count <= 64 else {
            throw SluiceError(.invalidField, "after: at most 64 jobs", field: "after")
        }
        // Compared and counted by code point, as JSON Schema's uniqueItems and maxLength do
        // (Swift's String equality would take canonically equivalent ids for the same).
        let scalars = after.map { Array($0.unicodeScalars) }
        guard Set(scalars).count == after.count, scalars.allSatisfy({ !$0.isEmpty && $0.count <= 64 }) else {
            throw SluiceError(.invalidField, "after must list job ids, each once", field: "after")
        }
    }

    public static func validateHeaders(_ headers: [String: String]) throws {
        guard headers.count <= Self.maximumHeaderCount else {
            throw SluiceError(.invalidField, "headers: at most \(Self.maximumHeaderCount) headers", field: "headers")
        }
        let headerBytes = headers.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
        guard headerBytes <= Self.maximumHeaderBytes else {
            throw SluiceError(
                .invalidField, "headers: at most \(Self.maximumHeaderBytes / 1024) KiB of names and values in all", field: "headers")
        }
        for (name, value) in headers {
            guard !name.isEmpty, name.unicodeScalars.allSatisfy(Self.isTokenCharacter) else {
                throw SluiceError(.invalidField, "header name \(name.debugDescription) is not a valid HTTP field name", field: "headers")
            }
            guard !Self.reservedHeaders.contains(name.lowercased()) else {
                throw SluiceError(.invalidField, "header \(name) is set by Sluice itself", field: "headers")
            }
            guard value.unicodeScalars.allSatisfy({ $0 == "\t" || ($0.value >= 0x20 && $0.value != 0x7F) }) else {
                throw SluiceError(.invalidField, "header \(name) has a control character in its value", field: "headers")
            }
        }
    }

    /// The input limits (docs/security.md, "Input"): what one job may make the service store
    /// and send.
    public static let maximumURLBytes = 8 << 10
    public static let maximumHeaderCount = 64
    public static let maximumHeaderBytes = 8 << 10

    /// An absolute http or https URL with a host, at most 8 KiB.
    public static func validateURL(_ text: String, field: String = "url") throws {
        // `url`'s own codes; another field's URL (`checksumUrl`, `mirrors`) is `invalid_field`
        // naming it.
        func refusal(_ code: SluiceError.Code, _ message: String) -> SluiceError {
            field == "url" ? SluiceError(code, message) : SluiceError(.invalidField, message, field: field)
        }
        guard text.utf8.count <= maximumURLBytes else {
            throw refusal(.invalidURL, "\(field) is longer than \(maximumURLBytes / 1024) KiB")
        }
        if let hint = schemeHint(text) {
            throw refusal(.invalidURL, "\(field) has no scheme: did you mean \(hint)?")
        }
        guard let colon = text.firstIndex(of: ":") else {
            throw refusal(.invalidURL, "\(field) must be an absolute http or https URL")
        }
        let scheme = text[..<colon].lowercased()
        guard !scheme.isEmpty, scheme.allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) }) else {
            throw refusal(.invalidURL, "\(field) must be an absolute http or https URL")
        }
        guard scheme == "http" || scheme == "https" else {
            throw refusal(
                .unsupportedScheme, (field == "url" ? "" : "\(field): ") + "only http and https URLs can be downloaded, not \(scheme)")
        }
        let rest = text[text.index(after: colon)...]
        guard rest.hasPrefix("//") else { throw refusal(.invalidURL, "\(field) must be an absolute http or https URL") }
        let authority = rest.dropFirst(2).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }) else {
            throw refusal(.invalidURL, "\(field) contains spaces or control characters")
        }
        if let problem = URLAuthority.problem(authority) { throw refusal(.invalidURL, "\(field) \(problem)") }
    }

    /// `http://` and `text`, when `text` is a host (with a port, a path) that only lacks its
    /// scheme (`127.0.0.1:8080/x`, `example.com/a.iso`), as curl and wget would guess it; nil
    /// for anything else (`javascript:x`, `ftp://h/`, a bare word).
    public static func schemeHint(_ text: String) -> String? {
        guard !text.contains("://"), text.utf8.count <= maximumURLBytes, !text.isEmpty else { return nil }
        let authority = text.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, let host = parts.first, !host.isEmpty,
            host.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "." || $0 == "-" }),
            host.contains(".") || host.lowercased() == "localhost" || parts.count == 2
        else { return nil }
        if parts.count == 2 {
            guard !parts[1].isEmpty, parts[1].allSatisfy(\.isASCII), parts[1].allSatisfy(\.isNumber) else { return nil }
        }
        let candidate = "http://" + text
        return (try? validateURL(candidate)) == nil ? nil : candidate
    }

    private static func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII
            && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "!#$%&'*+-.^_`|~".unicodeScalars.contains(scalar))
    }
}
