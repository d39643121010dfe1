import Foundation
import Logging
@testable import PostgresStore
import SluiceCore
import SluiceTestSupport
import Testing

/// The store over TLS as libpq users spell it: `sslmode` and `sslrootcert` in the URL,
/// against the test server `scripts/postgres.sh` runs with `ssl = on` and a CA of its own.
@Suite(.enabled(if: TestPostgres.unavailable == nil, "PostgreSQL 15 cannot be installed or started here by scripts/postgres.sh"))
struct PostgresTLSTests {
    static func open(_ url: String) async throws -> PostgresJobRepository {
        var logger = Logger(label: "test-store")
        logger.logLevel = .critical
        return try await PostgresJobRepository(location: try PostgresLocation(url), nodeName: "tls", timeout: .seconds(5), logger: logger)
    }

    static func usesTLS(_ store: PostgresJobRepository) async throws -> Bool? {
        try await store.connections.run("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").rows.first?.decode(Bool.self)
    }

    @Test func verifyFullConnectsOverTLSToTheServerItsCAIssued() async throws {
        let ca = try #require(TestPostgres.certificateAuthority, "scripts/postgres.sh made no CA")
        let url = try TestPostgres.newDatabase()
        let verified = try await Self.open(url + "?sslmode=verify-full&sslrootcert=\(ca)")
        #expect(try await Self.usesTLS(verified) == true)
        try await verified.insert(
            JobSnapshot(id: "j", url: "https://example.com/f", state: .queued, connections: 1, priority: 0, createdAt: Date()))
        #expect(try await verified.allJobs().map(\.id) == ["j"])
        await verified.close(removingNode: true)
        let plain = try await Self.open(url + "?sslmode=disable")
        #expect(try await Self.usesTLS(plain) == false)
        await plain.close(removingNode: true)
        // libpq's default, prefer, takes TLS where the server offers it.
        let preferred = try await Self.open(url)
        #expect(try await Self.usesTLS(preferred) == true)
        await preferred.close(removingNode: true)
    }

    @Test func verifyCAAndVerifyFullRefuseAServerAnotherCAIssued() async throws {
        let url = try TestPostgres.newDatabase()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        do {
            let other = try TestCertificateAuthority(directory: directory.path, commonName: "Not The Server's CA")
            for mode in ["verify-ca", "verify-full"] {
                let started = ContinuousClock.now
                await #expect(throws: (any Error).self, "\(mode)") {
                    try await Self.open(url + "?sslmode=\(mode)&sslrootcert=\(other.certificateFile)")
                }
                // At once, with the reason: the pool alone retries until the call's 10 s
                // deadline (12 s for both modes, before the store's start connected once
                // outside it).
                #expect(ContinuousClock.now - started < .seconds(5), "\(mode)")
            }
            // require encrypts without checking, as libpq's does.
            let required = try await Self.open(url + "?sslmode=require&sslrootcert=\(other.certificateFile)")
            #expect(try await Self.usesTLS(required) == true)
            await required.close(removingNode: true)
        }
    }

    @Test func badTLSParametersAreRefusedNamingThem() async {
        for (query, named) in [("sslmode=maybe", "sslmode"), ("sslrootcert=", "sslrootcert"), ("sslcompression=1", "sslcompression")] {
            #expect {
                _ = try PostgresLocation("postgres://u:p@127.0.0.1:5432/db?\(query)")
            } throws: { error in
                (error as? SluiceError)?.message.contains(named) == true
            }
        }
        await #expect(throws: (any Error).self) {
            try await Self.open("postgres://u:p@127.0.0.1:5432/db?sslmode=verify-full&sslrootcert=/nonexistent.pem")
        }
    }
}
