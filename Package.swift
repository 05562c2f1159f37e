// swift-tools-version:6.1
// StoreLedger: Apple App Store purchase events in, a trustworthy, replayable subscription ledger out.

import PackageDescription

/// Settings every target shares: Swift 6 mode plus the upcoming features the Hummingbird family enables.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "StoreLedger",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "storeledger", targets: ["StoreLedgerCLI"]),
        .library(name: "StoreLedgerCore", targets: ["StoreLedgerCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.10.0"),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.0.0"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.10.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.24.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.1.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.25.0"),
    ],
    targets: [
        // Pure domain: typed ids, Apple payload models, the subscription fold. No I/O.
        .target(
            name: "StoreLedgerCore",
            swiftSettings: swiftSettings
        ),
        // JWS + x5c chain + Apple's claims, with a chain cache.
        .target(
            name: "StoreLedgerVerification",
            dependencies: [
                "StoreLedgerCore",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // Postgres: configuration, migrations, the event log, the queue, facts and the read model.
        .target(
            name: "StoreLedgerStore",
            dependencies: [
                "StoreLedgerCore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.copy("Migrations")],
            swiftSettings: swiftSettings
        ),
        // The one event handler every caller shares: verify, record facts, project.
        .target(
            name: "StoreLedgerProcessing",
            dependencies: [
                "StoreLedgerCore",
                "StoreLedgerVerification",
                "StoreLedgerStore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The development CA, App Store-shaped signing and lifecycle simulation (`storeledger simulate`); the test
        // PKI builds on it.
        .target(
            name: "StoreLedgerSimulation",
            dependencies: [
                "StoreLedgerCore",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: swiftSettings
        ),
        // A client of Apple's App Store Server API (AsyncHTTPClient, ES256 tokens, retries, pagination).
        .target(
            name: "StoreLedgerAppStoreAPI",
            dependencies: [
                "StoreLedgerCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // Hummingbird routers: the receiver, health endpoints, the app-facing API and the web console (admin port).
        .target(
            name: "StoreLedgerHTTP",
            dependencies: [
                "StoreLedgerCore",
                "StoreLedgerStore",
                "StoreLedgerProcessing",
                "StoreLedgerVerification",
                "StoreLedgerAppStoreAPI",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            resources: [.copy("Console/Resources")],
            swiftSettings: swiftSettings
        ),
        // The claim loop service that runs the handler over the queue.
        .target(
            name: "StoreLedgerWorker",
            dependencies: [
                "StoreLedgerCore",
                "StoreLedgerStore",
                "StoreLedgerProcessing",
                "StoreLedgerVerification",
                "StoreLedgerAppStoreAPI",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The assembled processes: settings read through one swift-configuration reader, and the builders of `serve`'s
        // public and admin applications, `work`'s services and `dev`, which the executable calls and the tests build.
        .target(
            name: "StoreLedgerServer",
            dependencies: [
                "StoreLedgerCore",
                "StoreLedgerVerification",
                "StoreLedgerStore",
                "StoreLedgerProcessing",
                "StoreLedgerHTTP",
                "StoreLedgerWorker",
                "StoreLedgerSimulation",
                "StoreLedgerAppStoreAPI",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The thin `storeledger` executable: argument parsing, then a call into StoreLedgerServer or a store.
        .executableTarget(
            name: "StoreLedgerCLI",
            dependencies: [
                "StoreLedgerCore",
                "StoreLedgerVerification",
                "StoreLedgerStore",
                "StoreLedgerProcessing",
                "StoreLedgerHTTP",
                "StoreLedgerWorker",
                "StoreLedgerSimulation",
                "StoreLedgerAppStoreAPI",
                "StoreLedgerServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // Core's test fixtures, free of Postgres and Hummingbird: the lifecycle catalogue, keyless folds, seeded fact
        // permutations and Apple's sample payloads; shared by StoreLedgerCoreTests and StoreLedgerTests.
        .target(
            name: "StoreLedgerCoreTestSupport",
            dependencies: [
                "StoreLedgerCore",
                "StoreLedgerSimulation",
            ],
            resources: [.copy("AppleSamples")],
            swiftSettings: swiftSettings
        ),
        // Test helpers: a throwaway-schema Postgres fixture and the test PKI (on StoreLedgerSimulation's signing).
        .target(
            name: "StoreLedgerTestSupport",
            dependencies: [
                "StoreLedgerCore",
                "StoreLedgerStore",
                "StoreLedgerSimulation",
                "StoreLedgerAppStoreAPI",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ],
            swiftSettings: swiftSettings
        ),
        // The pure core's tests: no database, no HTTP server (`swift test --filter StoreLedgerCoreTests` needs nothing running).
        .testTarget(
            name: "StoreLedgerCoreTests",
            dependencies: [
                "StoreLedgerCore",
                "StoreLedgerCoreTestSupport",
                "StoreLedgerSimulation",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "StoreLedgerTests",
            dependencies: [
                "StoreLedgerCore",
                "StoreLedgerVerification",
                "StoreLedgerStore",
                "StoreLedgerProcessing",
                "StoreLedgerHTTP",
                "StoreLedgerWorker",
                "StoreLedgerServer",
                "StoreLedgerTestSupport",
                "StoreLedgerCoreTestSupport",
                "StoreLedgerSimulation",
                "StoreLedgerAppStoreAPI",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Configuration", package: "swift-configuration"),
            ],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),
    ]
)
