import Foundation
import SluiceAPI
import SluiceCore
import SluiceTestSupport
import Testing

/// `TokenRegistry` over an in-memory store that can fail or hang: a store outage locks no one
/// out and holds no request for long, and wrong tokens cannot flood the store.
@Suite struct TokenRegistryTests {
    actor MemoryStore: TokenStore {
        enum Mode { case answering, failing, hanging, held }
        var tokens: [AccessToken] = []
        var mode = Mode.answering
        var reads = 0
        /// A held read: the tokens as they were when it began, answered on `release`.
        var gate: CheckedContinuation<Void, Never>?

        func set(_ mode: Mode) { self.mode = mode }

        func release() {
            mode = .answering
            gate?.resume()
            gate = nil
        }

        var isHolding: Bool { gate != nil }

        func accessTokens() async throws -> [AccessToken] {
            reads += 1
            switch mode {
            case .answering: return tokens
            case .held:
                let seen = tokens
                await withCheckedContinuation { gate = $0 }
                return seen
            case .failing: throw SluiceError(.storeUnavailable, "down")
            case .hanging:
                try await Task.sleep(for: .seconds(30))
                return tokens
            }
        }

        func insertAccessToken(_ token: AccessToken) async throws { tokens.append(token) }

        func deleteAccessToken(name: String) async throws -> Bool {
            let before = tokens.count
            tokens.removeAll { $0.name == name }
            return tokens.count < before
        }
    }

    @Test func theServicesTokenIsAdminAndANamedOneHasItsScope() async throws {
        let store = MemoryStore()
        let registry = TokenRegistry(master: TokenDigest("m"), store: store)
        #expect(await registry.scope(of: "m") == .admin)
        let (_, secret) = try await registry.create(name: "wall", scope: .read)
        #expect(await registry.scope(of: secret) == .read)
        #expect(await registry.scope(of: "guess") == nil)
        #expect(await registry.scope(of: "") == nil)
    }

    @Test func aStoreThatFailsOrHangsKeepsTheTokensLastRead() async throws {
        let store = MemoryStore()
        // Every lookup reads the store again.
        let registry = TokenRegistry(master: TokenDigest("m"), store: store, freshFor: .zero, rereadUnknownAfter: .zero)
        let (_, secret) = try await registry.create(name: "ext", scope: .add)
        _ = try await registry.list()
        await store.set(.failing)
        #expect(await registry.scope(of: secret) == .add)
        await store.set(.hanging)
        let start = ContinuousClock.now
        // Unknown tokens ask the store again, but never wait on it for long.
        #expect(await registry.scope(of: "unknown-\(UUID())") == nil)
        #expect(await registry.scope(of: secret) == .add)
        // Each lookup waits at most 0.75 s; one that waited on the store would take its 30 s.
        // The bound leaves room for a loaded machine (CI once took 5.2 s for the two).
        #expect(ContinuousClock.now - start < .seconds(20))
        #expect(await store.reads >= 3)
    }

    /// A read that began before a revoke here must not bring the revoked token back.
    @Test func aReadOlderThanARevokeDoesNotBringTheTokenBack() async throws {
        let store = MemoryStore()
        let registry = TokenRegistry(master: TokenDigest("m"), store: store, freshFor: .seconds(60), rereadUnknownAfter: .zero)
        let (_, secret) = try await registry.create(name: "ext", scope: .add)
        _ = try await registry.list()
        await store.set(.held)
        // An unknown token starts a read, which holds with `ext` in what it saw.
        #expect(await registry.scope(of: "unknown") == nil)
        #expect(await waitUntil(.seconds(5)) { await store.isHolding })
        #expect(try await registry.revoke(name: "ext"))
        await store.release()
        #expect(await registry.scope(of: secret) == nil)
        #expect(await registry.scope(of: secret) == nil)
    }

    @Test func wrongTokensReadTheStoreAtMostOnceASecond() async throws {
        let store = MemoryStore()
        let registry = TokenRegistry(master: TokenDigest("m"), store: store)
        _ = try await registry.list()
        let before = await store.reads
        for index in 0..<200 { _ = await registry.scope(of: "guess-\(index)") }
        // A slow machine may cross one second boundary while guessing.
        #expect(await store.reads - before <= 2)
    }
}
