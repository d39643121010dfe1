import Crypto
public import Foundation
public import SluiceCore

/// Who a presented token is: the service's own token (`admin`), or a named token from the
/// store, with its scope. Named tokens are read from the store into memory and read again
/// when they may have changed: a token made or revoked by `sluice token` or on another node
/// is seen within `freshFor`, and one made through `/tokens` on this node at once. While
/// the store cannot be read, the tokens last read still answer (a store outage locks no
/// one out), and a request never waits more than `longestWait` for the store.
public actor TokenRegistry {
    private let master: TokenDigest?
    private let store: (any TokenStore)?
    /// The named tokens last read, by the digest of their secret.
    private var known: [String: AccessToken] = [:]
    private var readAt: ContinuousClock.Instant?
    private var reading: Task<Void, Never>?
    /// Bumped by each `create` and `revoke` here: a read that began before one may miss it
    /// (a revoked token would come back), so its result is not kept.
    private var generation = 0
    private var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    private var nextWaiter: UInt64 = 0

    /// A token accepted from memory is at most this old (5 s); a revoked one stops within it.
    private let freshFor: Duration
    /// An unknown token reads the store again at most this often (1 s), so a flood of wrong
    /// tokens costs the store one read a second.
    private let rereadUnknownAfter: Duration
    static let longestWait: Duration = .milliseconds(750)

    public init(
        master: TokenDigest?, store: (any TokenStore)?, freshFor: Duration = .seconds(5), rereadUnknownAfter: Duration = .seconds(1)
    ) {
        self.master = master
        self.store = store
        self.freshFor = freshFor
        self.rereadUnknownAfter = rereadUnknownAfter
    }

    /// Whether the service checks tokens at all (it has one of its own).
    public nonisolated var isEnforced: Bool { master != nil }

    /// The service's own token, checked without waiting.
    nonisolated func isMaster(_ presented: some StringProtocol) -> Bool {
        master?.matches(presented) ?? false
    }

    /// The scope of the presented token; nil when it is no token of this service.
    public func scope(of presented: some StringProtocol) async -> TokenScope? {
        if isMaster(presented) { return .admin }
        guard store != nil, !presented.isEmpty else { return nil }
        return await scope(digest: TokenDigest.hex(presented))
    }

    /// Whether the named token with this digest is still a token of this service: false
    /// within `freshFor` of its revocation anywhere, at once for one revoked here.
    public func isValid(digest: String) async -> Bool {
        await scope(digest: digest) != nil
    }

    private func scope(digest: String) async -> TokenScope? {
        let age = readAt.map { ContinuousClock.now - $0 }
        if let age, let token = known[digest], age < freshFor { return token.scope }
        if let age, known[digest] == nil, age < rereadUnknownAfter { return nil }
        await reread()
        return known[digest]?.scope
    }

    /// The named tokens, newest read from the store.
    public func list() async throws -> [AccessToken] {
        guard let store else { return [] }
        let started = generation
        let tokens = try await store.accessTokens()
        if started == generation { remember(tokens) }
        return tokens
    }

    /// Makes a token; the secret is returned once and never kept.
    public func create(name: String, scope: TokenScope, now: Date = Date()) async throws -> (token: AccessToken, secret: String) {
        try AccessToken.validate(name: name)
        guard let store else { throw SluiceError(.invalidField, "this service has no store for tokens") }
        let secret = Self.newSecret()
        let token = AccessToken(name: name, scope: scope, digest: TokenDigest.hex(secret), createdAt: now)
        try await store.insertAccessToken(token)
        generation += 1
        known[token.digest] = token
        return (token, secret)
    }

    /// Revokes a token at once on this node; false when none has that name.
    public func revoke(name: String) async throws -> Bool {
        guard let store else { return false }
        let removed = try await store.deleteAccessToken(name: name)
        generation += 1
        known = known.filter { $0.value.name != name }
        return removed
    }

    /// 32 random bytes, base64url, after a prefix that secret scanners and people recognise.
    public static func newSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return "sluice_"
            + Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    private func remember(_ tokens: [AccessToken]) {
        known = Dictionary(tokens.map { ($0.digest, $0) }, uniquingKeysWith: { first, _ in first })
        readAt = .now
    }

    /// Reads the store once for every caller waiting, each waiting at most `longestWait`
    /// (a timer releases a waiter; a wait on the read itself would last as long as a stalled
    /// store); a failed read keeps what was known.
    private func reread() async {
        if reading == nil, let store {
            let started = generation
            reading = Task {
                let tokens = try? await store.accessTokens()
                self.finishReading(tokens, startedAt: started)
            }
        }
        guard reading != nil else { return }
        let waiter = nextWaiter
        nextWaiter += 1
        await withCheckedContinuation { continuation in
            waiters[waiter] = continuation
            Task {
                try? await Task.sleep(for: Self.longestWait)
                self.release(waiter)
            }
        }
    }

    private func release(_ waiter: UInt64) {
        waiters.removeValue(forKey: waiter)?.resume()
    }

    private func finishReading(_ tokens: [AccessToken]?, startedAt started: Int) {
        if started != generation {
            // A token made or revoked here meanwhile: the read may not show it. What is
            // known stays, and the next lookup reads again.
        } else if let tokens {
            remember(tokens)
        } else {
            readAt = .now
        }
        reading = nil
        for continuation in waiters.values { continuation.resume() }
        waiters = [:]
    }
}

extension TokenDigest {
    /// A secret's SHA-256 digest in lowercase hex, as the store keeps it.
    static func hex(_ secret: some StringProtocol) -> String {
        FileDigest.hex(SHA256.hash(data: Data(secret.utf8)))
    }
}
