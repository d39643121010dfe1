import Foundation
import Logging
import SluiceCore
import SluiceServer
import SluiceTestSupport
import Testing

/// The order of a cluster node's services, which a graceful shutdown reverses
/// (docs/job-service.md, "Services and shutdown"). A second reading found two of them
/// stopping too early: the lease releaser before the downloads, whose stopped runs give
/// their leases back to it (they were never sent), and the node leaving the cluster, which
/// closes its store, before the writers' last writes.
@Suite(.enabled(if: TestPostgres.unavailable == nil, "PostgreSQL 15 cannot be installed or started here by scripts/postgres.sh"))
struct ServiceOrderTests {
    @Test func whatTheDownloadsLeaveIsWrittenBeforeTheNodeLeavesItsCluster() async throws {
        try await withTemporaryDirectory { directory in
            let data = directory.path + "/data"
            var configuration = ServiceConfiguration(dataDirectory: data)
            configuration.store = try PostgresLocation(TestPostgres.database(for: data))
            var logger = Logger(label: "test-order")
            logger.logLevel = .critical
            let names = try await withService(configuration: configuration, logger: logger) { service in
                let names = service.services.map { String(describing: type(of: $0.service)) }
                try await service.stopJobs()
                return names
            }
            func place(_ name: String) throws -> Int { try #require(names.firstIndex { $0.hasSuffix(name) }, "\(name) in \(names)") }
            // Started in this order, stopped in the reverse one.
            #expect(try place("ClusterMembership") < place("StoreHealth"))
            #expect(try place("StoreHealth") < place("JobWrites"))
            for writer in ["JobWrites", "CheckpointWriter", "LeaseReleaser"] {
                #expect(try place(writer) < place("DownloadService"), "\(writer) stops after the downloads")
            }
            #expect(try place("DownloadService") < place("RepeatingWork"), "the cluster's loops stop first")
        }
    }
}
