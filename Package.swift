// swift-tools-version:6.2
import PackageDescription

// Our own sources build without a warning (issue 36): one is an error, in every build.
let testSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .treatAllWarnings(as: .error),
]

let swiftSettings: [SwiftSetting] =
    testSettings + [
        // Each file imports what it uses, and a module re-exports only what it means to. (Not for
        // the tests and their support: there a C struct's members can be attributed to a system
        // module that nothing names, such as `timespec` to Dispatch's C module; the sources keep
        // C structs in SluiceSystem for the same reason.)
        .enableUpcomingFeature("MemberImportVisibility"),
        .enableUpcomingFeature("InternalImportsByDefault"),
    ]

let package = Package(
    name: "sluice",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "sluice", targets: ["sluice"])
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        // Already in the graph through Hummingbird; read here for the settings' variables.
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0", traits: []),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
    ],
    targets: [
        // Pure domain logic: no I/O, no server, no client.
        .target(name: "SluiceCore", swiftSettings: swiftSettings),
        // The C library's structs (`stat`, `statvfs`, `addrinfo`) as Swift values, in a module
        // that sees no other C module, so their members cannot be attributed to SwiftNIO's
        // C shims (which made clean builds fail under member import visibility); the system
        // calls around them (the open-file limit, thread priority); and the C library itself,
        // re-exported, so another module's file imports SluiceSystem rather than Glibc.
        .target(name: "SluiceSystem", dependencies: ["SluiceCore"], swiftSettings: swiftSettings),
        // What outgoing TLS trusts (the system store, `SSL_CERT_FILE`, `--ca-file`, a client
        // certificate): shared by the engine's fetches and the PostgreSQL store's connections.
        .target(
            name: "SluiceTLS",
            dependencies: [
                "SluiceCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        // What every module that answers HTTP shares: errors as JSON bodies with a status.
        .target(
            name: "SluiceHTTP",
            dependencies: [
                "SluiceCore",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        // The built-in origin: `/files` and `/testdata` with RFC 9110 ranges and preconditions,
        // its `sendfile` fast path on the event loop.
        .target(
            name: "RangeOrigin",
            dependencies: [
                "SluiceCore",
                "SluiceSystem",
                "SluiceHTTP",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The data plane: probing, segment fetches, positional writes, checkpoints and
        // placement, one stream of events per download. It knows nothing of jobs or stores.
        .target(
            name: "DownloadEngine",
            dependencies: [
                "SluiceCore",
                "SluiceSystem",
                "SluiceTLS",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: swiftSettings
        ),
        // The control plane: the queue, one run per job, the single writer of job rows, live
        // events, and the repository protocol the stores implement.
        .target(
            name: "JobService",
            dependencies: [
                "SluiceCore",
                "DownloadEngine",
                "SluiceSystem",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The single node's store: jobs, checkpoints and named tokens in SQLite (GRDB).
        .target(
            name: "JobStore",
            dependencies: [
                "SluiceCore",
                "SluiceSystem",
                "JobService",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        // The cluster's store: jobs, claims, leases and node heartbeats in PostgreSQL, for
        // several `sluice serve` nodes sharing one database. Like the SQLite store, it does
        // not know the engine (its TLS trust is SluiceTLS's).
        .target(
            name: "PostgresStore",
            dependencies: [
                "SluiceCore",
                "JobService",
                "SluiceTLS",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // `public/` compiled in: a tool that writes it as a Swift source, the build step that
        // runs it, and the module that holds the result.
        .executableTarget(name: "EmbedPublic", swiftSettings: swiftSettings),
        .plugin(name: "EmbedPublicPlugin", capability: .buildTool(), dependencies: ["EmbedPublic"]),
        .target(name: "PublicFiles", swiftSettings: swiftSettings, plugins: ["EmbedPublicPlugin"]),
        // aria2's JSON-RPC as values: GIDs, options, download shapes, calls and answers.
        .target(name: "Aria2RPC", dependencies: ["SluiceCore"], swiftSettings: swiftSettings),
        // The HTTP API over any `JobService`: routes, middleware, the server's pipeline, and
        // the part of the configuration they read (`APIConfiguration`). It knows neither the
        // engine nor the stores (a test reads this list: `PackageEdgesTests`).
        .target(
            name: "SluiceAPI",
            dependencies: [
                "SluiceCore",
                "Aria2RPC",
                "PublicFiles",
                "SluiceHTTP",
                "JobService",
                "RangeOrigin",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),
        // The composition root: the service's configuration, and the engine, the store
        // (SQLite or PostgreSQL), the scheduler and the API put together into the service
        // `sluice serve` runs.
        .target(
            name: "SluiceServer",
            dependencies: [
                "SluiceCore",
                "SluiceTLS",
                "DownloadEngine",
                "JobService",
                "JobStore",
                "PostgresStore",
                "RangeOrigin",
                "SluiceAPI",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The executable: `serve`, `get`, `healthcheck`, `token`, and the client of a running
        // service.
        .executableTarget(
            name: "sluice",
            dependencies: [
                "SluiceCore",
                "SluiceSystem",
                "SluiceTLS",
                "DownloadEngine",
                "SluiceAPI",
                "SluiceServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        // What the tests share: servers on `127.0.0.1:0`, raw sockets, child processes, clocks.
        .target(
            name: "SluiceTestSupport",
            dependencies: [
                "SluiceCore",
                "SluiceSystem",
                "RangeOrigin",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSOCKS", package: "swift-nio-extras"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: testSettings
        ),
        .testTarget(name: "SluiceCoreTests", dependencies: ["SluiceCore", "SluiceTestSupport"], swiftSettings: testSettings),
        .testTarget(name: "Aria2RPCTests", dependencies: ["Aria2RPC", "SluiceCore"], swiftSettings: testSettings),
        .testTarget(
            name: "RangeOriginTests",
            dependencies: ["RangeOrigin", "SluiceTestSupport", "SluiceCore"],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "DownloadEngineTests",
            dependencies: [
                "DownloadEngine", "SluiceTestSupport", "SluiceCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "JobStoreTests",
            dependencies: ["JobStore", "PostgresStore", "JobService", "DownloadEngine", "SluiceCore", "SluiceTestSupport"],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "JobServiceTests",
            dependencies: [
                "JobService", "JobStore", "PostgresStore", "DownloadEngine", "SluiceCore", "SluiceTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "SluiceCLITests",
            dependencies: [
                "SluiceTestSupport", "SluiceCore", "SluiceServer", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "SluiceAPITests",
            dependencies: [
                "SluiceAPI", "SluiceServer", "JobStore", "JobService", "DownloadEngine", "RangeOrigin", "SluiceTestSupport",
                "SluiceCore", "SluiceSystem",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                "Aria2RPC",
            ],
            swiftSettings: testSettings
        ),
    ]
)
